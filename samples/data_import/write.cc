#include <algorithm>
#include <numeric>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/io/safetensors.h"
#include "samples/data_import/import.h"

namespace kiln::data_import {
namespace {

// Uniform in [0, n) from the raw 64-bit draws of the engine (which the C++
// standard fixes), so the order is the same whatever the standard library.
uint64_t Below(std::mt19937_64& rng, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >>
                               64);
}

// The records [begin, end) of `order` as one safetensors file: a tensor per
// field, [records, field shape...] (a batch for kiln-run --inputs or the
// runtime API).
absl::Status WriteTensors(const std::string& path, const ImportedData& data,
                          const std::vector<uint64_t>& order, uint64_t begin,
                          uint64_t end) {
  io::Safetensors out;
  for (const ImportedField& f : data.fields) {
    io::HostTensor& tensor = out.tensors[f.field.name];
    tensor.dtype = f.field.dtype;
    tensor.shape = {static_cast<int64_t>(end - begin)};
    tensor.shape.insert(tensor.shape.end(), f.field.shape.begin(),
                        f.field.shape.end());
    const uint64_t bytes = f.data.size() / std::max<uint64_t>(data.records, 1);
    for (uint64_t i = begin; i < end; ++i) {
      const uint8_t* p = f.data.data() + order[i] * bytes;
      tensor.data.insert(tensor.data.end(), p, p + bytes);
    }
  }
  absl::Status written = io::WriteSafetensorsFile(path, out);
  if (written.ok()) return written;
  return absl::Status(written.code(),
                      absl::StrCat(path, ": ", written.message()));
}

bool IsSafetensorsPath(const std::string& path) {
  return absl::EndsWith(path, ".safetensors");
}

absl::Status WriteRecords(const std::string& path, const ImportedData& data,
                          const std::vector<uint64_t>& order, uint64_t begin,
                          uint64_t end) {
  if (IsSafetensorsPath(path)) return WriteTensors(path, data, order, begin, end);
  std::vector<io::DatasetField> fields;
  for (const ImportedField& f : data.fields) fields.push_back(f.field);
  absl::StatusOr<std::unique_ptr<io::DatasetWriter>> writer =
      io::DatasetWriter::Create(path, fields);
  if (!writer.ok()) {
    return absl::Status(writer.status().code(),
                        absl::StrCat(path, ": ", writer.status().message()));
  }
  std::vector<uint8_t> record;
  for (uint64_t i = begin; i < end; ++i) {
    record.clear();
    for (size_t f = 0; f < data.fields.size(); ++f) {
      const uint64_t bytes = (*writer)->fields()[f].bytes;
      const uint8_t* p = data.fields[f].data.data() + order[i] * bytes;
      record.insert(record.end(), p, p + bytes);
    }
    absl::Status appended = (*writer)->Append(record.data(), record.size());
    if (!appended.ok()) return appended;
  }
  return (*writer)->Finish();
}

}  // namespace

absl::StatusOr<WriteSummary> WriteDatasets(const ImportedData& data,
                                           const WriteOptions& options) {
  std::vector<uint64_t> order(data.records);
  std::iota(order.begin(), order.end(), 0);
  if (options.shuffle && !order.empty()) {
    std::mt19937_64 rng(options.seed);
    for (uint64_t i = order.size() - 1; i > 0; --i)
      std::swap(order[i], order[Below(rng, i + 1)]);
  }
  WriteSummary summary;
  if (!options.heldout_out.empty()) {
    summary.held_out = static_cast<uint64_t>(static_cast<double>(data.records) *
                                             options.heldout_fraction);
    if (summary.held_out == 0 || summary.held_out == data.records) {
      return absl::InvalidArgumentError(
          absl::StrCat(data.records, " records are too few to hold out ",
                       options.heldout_fraction, " of them"));
    }
  }
  summary.written = data.records - summary.held_out;
  absl::Status written =
      WriteRecords(options.out, data, order, 0, summary.written);
  if (!written.ok()) return written;
  if (summary.held_out > 0) {
    absl::Status held = WriteRecords(options.heldout_out, data, order,
                                     summary.written, data.records);
    if (!held.ok()) return held;
  }
  return summary;
}

}  // namespace kiln::data_import
