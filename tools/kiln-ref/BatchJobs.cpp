//===- BatchJobs.cpp - kiln-ref --batch's list of runs --------------------===//

#include "tools/kiln-ref/BatchJobs.h"

#include "llvm/ADT/SmallVector.h"

namespace kiln::tools {

namespace {

/// Why one line's fields are not a run, or empty when they are.
std::string checkJob(const BatchJob &job) {
  if (!job.model.size() || !job.function.size() || !job.inputs.size() ||
      !job.output.size())
    return "a field is empty";
  if (llvm::StringRef(job.model).ends_with(".onnx"))
    return "'" + job.model +
           "' is an ONNX model: --batch takes kiln .mlir models (run an "
           "ONNX model on its own)";
  if (job.precision != "f32" && job.precision != "f64")
    return "precision must be f32 or f64, got '" + job.precision + "'";
  return "";
}

} // namespace

std::vector<BatchJob> parseBatchJobs(llvm::StringRef path, llvm::StringRef text,
                                     std::string &error) {
  std::vector<BatchJob> jobs;
  unsigned number = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    ++number;
    line = line.rtrim("\r");
    if (line.trim().empty() || line.starts_with("#"))
      continue;
    llvm::SmallVector<llvm::StringRef, 5> fields;
    line.split(fields, '\t');
    std::string where = path.str() + ":" + std::to_string(number) + ": ";
    if (fields.size() != 5) {
      error = where +
              "expected 5 tab-separated fields (model, function, "
              "precision, inputs, output), got " +
              std::to_string(fields.size());
      return {};
    }
    BatchJob job{number,          fields[0].str(), fields[1].str(),
                 fields[2].str(), fields[3].str(), fields[4].str()};
    if (std::string why = checkJob(job); !why.empty()) {
      error = where + why;
      return {};
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

} // namespace kiln::tools
