// kiln-run --describe: what an artifact holds, as readable text. Needs no
// GPU: everything comes from the verified file.
#ifndef KILN_TOOLS_KILN_RUN_DESCRIBE_H_
#define KILN_TOOLS_KILN_RUN_DESCRIBE_H_

#include <cstdint>
#include <string>

#include "runtime/artifact/artifact.h"

namespace kiln {

// The artifact read from `path` (`file_bytes` long): what compiled it, its
// target and precision, the weights it carries; every entry with its inputs and
// outputs (name, dtype and shape, role: batch input with its valid values, or
// supplied by the runtime); the parameters, model state, optimizer moments,
// gradients, master weights and constants, each with its initialiser or its
// first carried values; the kernels by family; the memory: resident bytes and
// each entry's arena.
std::string DescribeArtifact(const artifact::Artifact& artifact,
                             const std::string& path, uint64_t file_bytes);

// "1311232 bytes (1.25 MiB)"; "512 bytes" below 1 KiB.
std::string BytesText(uint64_t bytes);

// A kernel's family: its name without the content hash kilnc appends
// ("kiln_conv_split_sum_f645387601d8" -> "kiln_conv_split_sum").
std::string KernelFamily(const std::string& kernel_name);

// How an entry's binding is used: "batch input, values in [0, 10) (labels
// of ...)", "parameter, supplied by the runtime", "returned", ...
std::string InputRole(const artifact::Artifact& artifact,
                      const artifact::TensorBinding& input);
std::string OutputRole(const artifact::Artifact& artifact,
                       const artifact::TensorBinding& output);

// "parameter", "model state", "optimizer moment", "gradient", "master
// weight", "constant".
std::string RoleText(artifact::BufferRole role);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_DESCRIBE_H_
