// TMA tensor maps of launch arguments: the artifact's description of a
// tensor in global memory, encoded by the driver once its address is known.
#ifndef KILN_RUNTIME_SESSION_TENSOR_MAP_H_
#define KILN_RUNTIME_SESSION_TENSOR_MAP_H_

#include <cuda.h>

#include "absl/status/statusor.h"
#include "runtime/artifact/artifact.h"
#include "runtime/cuda/driver.h"

namespace kiln {

// The opaque 128 bytes the kernel takes as a __grid_constant__ parameter.
// `map` was checked by ValidateArtifact; the driver still refuses what the
// device cannot copy (InvalidArgument naming the encoding call).
absl::StatusOr<CUtensorMap> EncodeTensorMap(const CudaDriver& driver,
                                            const artifact::TensorMap& map,
                                            CUdeviceptr address);

}  // namespace kiln

#endif  // KILN_RUNTIME_SESSION_TENSOR_MAP_H_
