// `make_dataset --from`: the records of a tensor file or a CSV file, field by
// field as --field specs choose (field_spec.h), converted to f32 or i32 with
// every value checked (docs/data-formats.md).

#ifndef KILN_SAMPLES_DATA_IMPORT_IMPORT_H_
#define KILN_SAMPLES_DATA_IMPORT_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/dataset.h"
#include "samples/data_import/csv.h"
#include "samples/data_import/field_spec.h"
#include "samples/data_import/tensor_files.h"

namespace kiln::data_import {

struct ImportedField {
  io::DatasetField field;  // name, dtype (f32 or i32), per-record shape
  // records * field.bytes, record after record.
  std::vector<uint8_t> data;
  // A class field's names by id.
  std::vector<std::string> classes;
  std::string source;  // what it came from, for messages
};

struct ImportedData {
  uint64_t records = 0;
  std::vector<ImportedField> fields;
};

// Imports `path` (its extension says the kind). Errors name the file and the
// place: FILE:LINE:COLUMN of a CSV cell, the tensor and element of a tensor
// file.
absl::StatusOr<ImportedData> ImportFile(const std::string& path,
                                        const std::vector<FieldSpec>& specs);

// The same on sources already read.
absl::StatusOr<ImportedData> ImportTensors(
    const std::string& path, const std::vector<SourceTensor>& tensors,
    const std::vector<FieldSpec>& specs);
absl::StatusOr<ImportedData> ImportCsv(const CsvTable& table,
                                       const std::vector<FieldSpec>& specs);

struct WriteOptions {
  std::string out;
  // With a held-out file, its last `heldout_fraction` of the records (after
  // the shuffle) go there.
  std::string heldout_out;
  double heldout_fraction = 0.1;
  // Shuffles the records under `seed` (the same file on every machine).
  bool shuffle = false;
  uint64_t seed = 1;
};

struct WriteSummary {
  uint64_t written = 0;
  uint64_t held_out = 0;
};

// Writes the records of `data` as KILNDATA files (docs/data-formats.md); an
// output path ending in .safetensors gets one tensor per field instead,
// [records, field shape...], a batch for kiln-run --inputs.
absl::StatusOr<WriteSummary> WriteDatasets(const ImportedData& data,
                                           const WriteOptions& options);

}  // namespace kiln::data_import

#endif  // KILN_SAMPLES_DATA_IMPORT_IMPORT_H_
