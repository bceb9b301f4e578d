// Tensors: a shared device buffer viewed with a shape, dtype and strides.
//
// A Tensor holds a DeviceBuffer (shared ownership of a pool block) plus a
// shape, element strides and an element offset into the buffer. Reshape,
// Transpose, Slice and Broadcast return views of the same buffer: they copy
// nothing and keep the buffer alive. Strides and offsets count elements,
// never bytes; all strides are >= 0 (a broadcast dimension has stride 0).
#ifndef KILN_TENSOR_H_
#define KILN_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kiln/device_buffer.h"
#include "kiln/dtype.h"

namespace kiln {

using Shape = std::vector<int64_t>;

// "[2, 3, 4]"
std::string ShapeString(absl::Span<const int64_t> shape);
// Row-major strides of a dense tensor of `shape` (in elements).
std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape);
// Product of the dims (1 for rank 0).
int64_t NumElements(absl::Span<const int64_t> shape);

class Tensor {
 public:
  // An empty tensor: no buffer, rank 0.
  Tensor() = default;

  // A new dense tensor from `pool`, usable on `stream`.
  static absl::StatusOr<Tensor> Allocate(DevicePool& pool, DType dtype,
                                         Shape shape, StreamId stream = 0);
  // A dense view of the start of `buffer`; the buffer must be large enough.
  static absl::StatusOr<Tensor> FromBuffer(DeviceBuffer buffer, DType dtype,
                                           Shape shape);
  // An arbitrary strided view; every element must lie inside the buffer.
  static absl::StatusOr<Tensor> FromBuffer(DeviceBuffer buffer, DType dtype,
                                           Shape shape,
                                           std::vector<int64_t> strides,
                                           int64_t offset);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t num_elements() const { return NumElements(shape_); }
  // Bytes of the logical elements (num_elements * element size).
  size_t size_bytes() const { return num_elements() * DTypeSize(dtype_); }
  const DeviceBuffer& buffer() const { return buffer_; }
  // Device address of the element at index (0, ..., 0).
  DevicePtr data() const {
    return buffer_.data() + static_cast<DevicePtr>(offset_) * DTypeSize(dtype_);
  }

  // True when the elements are dense and row-major (dims of size 1 may have
  // any stride; a tensor without elements is contiguous).
  bool IsContiguous() const;

  // Same elements, new shape. One dim may be -1 (inferred). Only for
  // contiguous tensors: a transposed, sliced or broadcast view is an error
  // (copy it first).
  absl::StatusOr<Tensor> Reshape(Shape shape) const;
  // Dimension i of the result is dimension perm[i] of this tensor.
  absl::StatusOr<Tensor> Transpose(absl::Span<const int> perm) const;
  // Elements start, start + step, ... (< limit) along `dim`; 0 <= start <=
  // limit <= dim size, step >= 1.
  absl::StatusOr<Tensor> Slice(int dim, int64_t start, int64_t limit,
                               int64_t step = 1) const;
  // NumPy broadcasting to `shape`: dims are aligned from the right; a dim of
  // size 1 (or a missing leading dim) becomes stride 0, others must match.
  absl::StatusOr<Tensor> Broadcast(Shape shape) const;

  // The buffer offset (in elements) of every logical element, in row-major
  // order: what a gather from this view reads. Used to download views.
  std::vector<int64_t> ElementOffsets() const;

  // "f32[2, 3] strides [3, 1] offset 0"
  std::string DebugString() const;

 private:
  Tensor(DeviceBuffer buffer, DType dtype, Shape shape,
         std::vector<int64_t> strides, int64_t offset)
      : buffer_(std::move(buffer)),
        dtype_(dtype),
        shape_(std::move(shape)),
        strides_(std::move(strides)),
        offset_(offset) {}

  DeviceBuffer buffer_;
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
};

}  // namespace kiln

#endif  // KILN_TENSOR_H_
