// Tensors of the files other tools write, for `make_dataset --from`:
// safetensors, NumPy .npy (np.save) and .npz (np.savez, np.savez_compressed:
// a zip of .npy members, stored or deflated, read with libzip). Any numeric
// dtype of those files loads; what it may become is the importer's business.

#ifndef KILN_SAMPLES_DATA_IMPORT_TENSOR_FILES_H_
#define KILN_SAMPLES_DATA_IMPORT_TENSOR_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::data_import {

enum class ElementKind { kFloat, kSigned, kUnsigned, kBool };

struct SourceTensor {
  std::string name;   // "" for the one array of a .npy file
  std::string dtype;  // as the file spells it: "F64", "<i8"
  ElementKind kind = ElementKind::kFloat;
  int element_bytes = 4;
  bool bfloat16 = false;  // a 2-byte float that is bf16, not IEEE half
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // row-major, little endian
  // Why the tensor cannot be read (a dtype kiln does not take, ...): an
  // error only when a field picks it, so that a file may hold others.
  std::string error;

  int64_t elements() const;
  // Element `i` of a float tensor, exactly.
  double FloatAt(int64_t i) const;
  // Element `i` of an integer or bool tensor, exactly.
  absl::int128 IntegerAt(int64_t i) const;
};

// The tensors of `path`, by its extension: .safetensors, .npy or .npz.
// Errors name the file (and the member of an .npz) and what is wrong:
// unsupported dtypes (complex, strings, objects, structured), big-endian or
// Fortran-ordered arrays, sizes that disagree with the shape.
absl::StatusOr<std::vector<SourceTensor>> ReadTensorFile(
    const std::string& path);

// The parsers behind it, on file contents; `where` names the file in errors.
absl::StatusOr<SourceTensor> ParseNpy(absl::string_view where,
                                      absl::string_view bytes);
absl::StatusOr<std::vector<SourceTensor>> ParseSafetensorsFile(
    absl::string_view where, absl::string_view bytes);

// "[2, 0, 5]": the element `flat` of `shape`, for messages.
std::string ElementIndex(const std::vector<int64_t>& shape, int64_t flat);

}  // namespace kiln::data_import

#endif  // KILN_SAMPLES_DATA_IMPORT_TENSOR_FILES_H_
