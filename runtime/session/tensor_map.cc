#include "runtime/session/tensor_map.h"

#include <vector>

namespace kiln {
namespace {

CUtensorMapDataType DataTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::kF16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    default:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  }
}

CUtensorMapSwizzle SwizzleOf(uint32_t bytes) {
  switch (bytes) {
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    default:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

}  // namespace

absl::StatusOr<CUtensorMap> EncodeTensorMap(const CudaDriver& driver,
                                            const artifact::TensorMap& map,
                                            CUdeviceptr address) {
  const std::vector<cuuint64_t> dims(map.dims.begin(), map.dims.end());
  const std::vector<cuuint64_t> strides(map.strides.begin(), map.strides.end());
  const std::vector<cuuint32_t> element_strides(map.element_strides.begin(),
                                                map.element_strides.end());
  CUtensorMap encoded;
  void* global = reinterpret_cast<void*>(address);
  // Lines are promoted to L2 in 256-byte sectors: the copies read whole
  // swizzle rows of consecutive addresses. Out-of-bounds elements read as
  // zeros (the padding of a convolution, a partial last tile).
  const std::vector<cuuint32_t> box(map.box.begin(), map.box.end());
  const absl::Status status =
      map.mode == artifact::TensorMapMode::kIm2col
          ? KILN_CU(&driver, cuTensorMapEncodeIm2col, &encoded,
                    DataTypeOf(map.dtype), static_cast<cuuint32_t>(map.rank()),
                    global, dims.data(), strides.data(),
                    map.lower_corner.data(), map.upper_corner.data(),
                    map.channels_per_pixel, map.pixels_per_column,
                    element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                    SwizzleOf(map.swizzle_bytes),
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
          : KILN_CU(&driver, cuTensorMapEncodeTiled, &encoded,
                    DataTypeOf(map.dtype), static_cast<cuuint32_t>(map.rank()),
                    global, dims.data(), strides.data(), box.data(),
                    element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                    SwizzleOf(map.swizzle_bytes),
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (!status.ok()) return status;
  return encoded;
}

}  // namespace kiln
