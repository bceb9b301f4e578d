#include "kiln/tensor.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/status.h"
#include "runtime/memory/pool.h"

namespace kiln {
namespace {

absl::Status CheckShape(absl::Span<const int64_t> shape) {
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", ShapeString(shape), " has a negative dimension"));
    }
    if (d != 0 && total > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ShapeString(shape), " is too large"));
    }
    total *= d;
  }
  return absl::OkStatus();
}

}  // namespace

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  return total;
}

absl::StatusOr<Tensor> Tensor::Allocate(DevicePool& pool, DType dtype,
                                        Shape shape, StreamId stream) {
  KILN_RETURN_IF_ERROR(CheckShape(shape));
  const size_t bytes = NumElements(shape) * DTypeSize(dtype);
  KILN_ASSIGN_OR_RETURN(DeviceBuffer buffer, pool.Allocate(bytes, stream));
  std::vector<int64_t> strides = ContiguousStrides(shape);
  return Tensor(std::move(buffer), dtype, std::move(shape), std::move(strides),
                0);
}

absl::StatusOr<Tensor> Tensor::FromBuffer(DeviceBuffer buffer, DType dtype,
                                          Shape shape) {
  KILN_RETURN_IF_ERROR(CheckShape(shape));
  std::vector<int64_t> strides = ContiguousStrides(shape);
  return FromBuffer(std::move(buffer), dtype, std::move(shape),
                    std::move(strides), 0);
}

absl::StatusOr<Tensor> Tensor::FromBuffer(DeviceBuffer buffer, DType dtype,
                                          Shape shape,
                                          std::vector<int64_t> strides,
                                          int64_t offset) {
  KILN_RETURN_IF_ERROR(CheckShape(shape));
  if (strides.size() != shape.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strides ", ShapeString(strides),
                     " do not match the rank of shape ", ShapeString(shape)));
  }
  if (offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative offset ", offset));
  }
  int64_t last = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "strides ", ShapeString(strides), " have a negative entry"));
    }
    if (shape[i] > 0) last += (shape[i] - 1) * strides[i];
  }
  const size_t capacity = buffer.size() / DTypeSize(dtype);
  if (NumElements(shape) > 0 && static_cast<size_t>(last) >= capacity) {
    return absl::OutOfRangeError(
        absl::StrCat(DTypeName(dtype), ShapeString(shape), " with strides ",
                     ShapeString(strides), " and offset ", offset,
                     " reaches element ", last, " but the buffer holds ",
                     capacity, " elements (", buffer.size(), " bytes)"));
  }
  return Tensor(std::move(buffer), dtype, std::move(shape), std::move(strides),
                offset);
}

bool Tensor::IsContiguous() const {
  if (num_elements() == 0) return true;
  int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

absl::StatusOr<Tensor> Tensor::Reshape(Shape shape) const {
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "reshape to ", ShapeString(shape), ": more than one -1"));
      }
      inferred = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reshape to ", ShapeString(shape), ": negative dimension"));
    } else {
      known *= shape[i];
    }
  }
  const int64_t total = num_elements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot reshape ", ShapeString(shape_), " (", total,
                       " elements) to ", ShapeString(shape)));
    }
    shape[inferred] = total / known;
    known = total;
  }
  if (known != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape ", ShapeString(shape_), " (", total, " elements) to ",
        ShapeString(shape), " (", known, " elements)"));
  }
  if (!IsContiguous()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot reshape a non-contiguous view (", DebugString(),
                     "): copy it to a contiguous tensor first"));
  }
  std::vector<int64_t> strides = ContiguousStrides(shape);
  return Tensor(buffer_, dtype_, std::move(shape), std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::Transpose(absl::Span<const int> perm) const {
  if (static_cast<int>(perm.size()) != rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transpose permutation [", absl::StrJoin(perm, ", "), "] has ",
        perm.size(), " entries for a rank-", rank(), " tensor"));
  }
  std::vector<bool> seen(rank(), false);
  Shape shape(rank());
  std::vector<int64_t> strides(rank());
  for (int i = 0; i < rank(); ++i) {
    int p = perm[i];
    if (p < 0 || p >= rank() || seen[p]) {
      return absl::InvalidArgumentError(
          absl::StrCat("transpose permutation [", absl::StrJoin(perm, ", "),
                       "] is not a permutation of 0..", rank() - 1));
    }
    seen[p] = true;
    shape[i] = shape_[p];
    strides[i] = strides_[p];
  }
  return Tensor(buffer_, dtype_, std::move(shape), std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::Slice(int dim, int64_t start, int64_t limit,
                                     int64_t step) const {
  if (dim < 0 || dim >= rank()) {
    return absl::InvalidArgumentError(absl::StrCat("slice dimension ", dim,
                                                   " out of range for shape ",
                                                   ShapeString(shape_)));
  }
  if (step < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("slice step must be >= 1, got ", step));
  }
  if (start < 0 || start > limit || limit > shape_[dim]) {
    return absl::OutOfRangeError(
        absl::StrCat("slice [", start, ", ", limit, ") of dimension ", dim,
                     " (size ", shape_[dim], ") of ", ShapeString(shape_),
                     ": need 0 <= start <= limit <= size"));
  }
  Shape shape = shape_;
  std::vector<int64_t> strides = strides_;
  shape[dim] = (limit - start + step - 1) / step;
  strides[dim] = strides_[dim] * step;
  // An empty slice keeps the offset in bounds (start may equal the size).
  int64_t offset = shape[dim] == 0 ? offset_ : offset_ + start * strides_[dim];
  return Tensor(buffer_, dtype_, std::move(shape), std::move(strides), offset);
}

absl::StatusOr<Tensor> Tensor::Broadcast(Shape shape) const {
  const int out_rank = static_cast<int>(shape.size());
  if (out_rank < rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot broadcast ", ShapeString(shape_), " to ",
                     ShapeString(shape), ": the target has lower rank"));
  }
  KILN_RETURN_IF_ERROR(CheckShape(shape));
  std::vector<int64_t> strides(out_rank, 0);
  const int lead = out_rank - rank();
  for (int i = 0; i < rank(); ++i) {
    const int64_t from = shape_[i];
    const int64_t to = shape[lead + i];
    if (from == to) {
      strides[lead + i] = strides_[i];
    } else if (from == 1) {
      strides[lead + i] = 0;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot broadcast ", ShapeString(shape_), " to ", ShapeString(shape),
          ": dimension ", i, " has size ", from, ", expected 1 or ", to));
    }
  }
  return Tensor(buffer_, dtype_, std::move(shape), std::move(strides), offset_);
}

std::vector<int64_t> Tensor::ElementOffsets() const {
  std::vector<int64_t> offsets;
  const int64_t total = num_elements();
  if (total == 0) return offsets;
  offsets.reserve(total);
  std::vector<int64_t> index(rank(), 0);
  int64_t position = offset_;
  for (int64_t n = 0; n < total; ++n) {
    offsets.push_back(position);
    // Advance the row-major index, adjusting the position incrementally.
    for (int d = rank() - 1; d >= 0; --d) {
      if (++index[d] < shape_[d]) {
        position += strides_[d];
        break;
      }
      position -= (shape_[d] - 1) * strides_[d];
      index[d] = 0;
    }
  }
  return offsets;
}

std::string Tensor::DebugString() const {
  return absl::StrCat(DTypeName(dtype_), ShapeString(shape_), " strides ",
                      ShapeString(strides_), " offset ", offset_);
}

}  // namespace kiln
