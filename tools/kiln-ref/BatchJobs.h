//===- BatchJobs.h - kiln-ref --batch's list of runs ------------*- C++ -*-===//
//
// kiln-ref --batch FILE evaluates many functions in one process (one parse
// of each model): every process start of an MLIR tool costs more than
// evaluating a small graph. FILE holds one run a line, five fields separated
// by tabs:
//
//   MODEL  FUNCTION  PRECISION  INPUTS  OUTPUT
//
// MODEL a kiln .mlir file, PRECISION f32 or f64, INPUTS a safetensors file
// with the arguments by name ('-' for none: then every argument needs a
// kiln.value), OUTPUT the safetensors file to write. Empty lines and lines
// starting with '#' are skipped. Paths are as on the command line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_REF_BATCHJOBS_H
#define KILN_TOOLS_KILN_REF_BATCHJOBS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln::tools {

struct BatchJob {
  unsigned line = 0; // of the batch file, from 1
  std::string model, function, precision, inputs, output;
};

/// The runs of a batch file's `text`, or, in `error`, the first bad line as
/// "FILE:LINE: what is wrong" (FILE being `path`).
std::vector<BatchJob> parseBatchJobs(llvm::StringRef path, llvm::StringRef text,
                                     std::string &error);

} // namespace kiln::tools

#endif // KILN_TOOLS_KILN_REF_BATCHJOBS_H
