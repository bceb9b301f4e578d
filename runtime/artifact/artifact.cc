#include "runtime/artifact/artifact.h"

#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace artifact {

bool IsValidDType(DType dtype) {
  return static_cast<uint8_t>(dtype) <= static_cast<uint8_t>(DType::kI1);
}

bool IsValidInitKind(InitKind init) {
  return static_cast<uint8_t>(init) <= static_cast<uint8_t>(InitKind::kKaiming);
}

std::string DTypeLabel(DType dtype) {
  if (!IsValidDType(dtype)) {
    return absl::StrCat("invalid(", static_cast<int>(dtype), ")");
  }
  return std::string(::kiln::DTypeName(dtype));
}

bool IsKnownArch(absl::string_view arch) {
  static constexpr const char* kArchs[] = {
      "sm_70",   "sm_72",  "sm_75",   "sm_80",   "sm_86",  "sm_87",   "sm_89",
      "sm_90",   "sm_90a", "sm_100",  "sm_100a", "sm_101", "sm_101a", "sm_103",
      "sm_103a", "sm_120", "sm_120a", "sm_121",  "sm_121a"};
  for (const char* a : kArchs) {
    if (arch == a) return true;
  }
  return false;
}

int ArchNumber(absl::string_view arch) {
  if (arch.substr(0, 3) != "sm_") return 0;
  int n = 0;
  size_t i = 3;
  while (i < arch.size() && arch[i] >= '0' && arch[i] <= '9' && n < 100000) {
    n = n * 10 + (arch[i] - '0');
    ++i;
  }
  return i > 3 ? n : 0;
}

bool IsArchSpecific(absl::string_view arch) {
  return ArchNumber(arch) != 0 && !arch.empty() && arch.back() == 'a';
}

bool ImageServesTarget(absl::string_view image_arch, absl::string_view target) {
  if (image_arch == target) return true;
  return IsArchSpecific(image_arch) && !IsArchSpecific(target) &&
         image_arch.substr(0, image_arch.size() - 1) == target;
}

LoadableImages FindLoadableImages(const Kernel& kernel, int sm) {
  LoadableImages found;
  for (const KernelImage& image : kernel.images) {
    const int arch = ArchNumber(image.arch);
    if (arch == sm && !image.cubin.empty()) found.cubin = &image;
    const bool compilable =
        IsArchSpecific(image.arch) ? arch == sm : arch <= sm;
    if (!image.ptx.empty() && compilable &&
        (found.ptx == nullptr || arch > ArchNumber(found.ptx->arch))) {
      found.ptx = &image;
    }
  }
  return found;
}

Arg Arg::Buffer(BufferRef ref) {
  Arg a;
  a.kind = ArgKind::kBuffer;
  a.buffer = ref;
  return a;
}

Arg Arg::TensorMapOf(BufferRef ref, TensorMap map) {
  Arg a;
  a.kind = ArgKind::kTensorMap;
  a.buffer = ref;
  a.tensor_map = std::move(map);
  return a;
}

namespace {
Arg Scalar(ArgKind kind, uint64_t bits) {
  Arg a;
  a.kind = kind;
  a.buffer = BufferRef{static_cast<MemorySpace>(0), 0, 0, 0};
  a.scalar = bits;
  return a;
}
}  // namespace

Arg Arg::I32(int32_t v) {
  return Scalar(ArgKind::kI32, static_cast<uint32_t>(v));
}
Arg Arg::I64(int64_t v) {
  return Scalar(ArgKind::kI64, static_cast<uint64_t>(v));
}
Arg Arg::F32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return Scalar(ArgKind::kF32, bits);
}
Arg Arg::F64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return Scalar(ArgKind::kF64, bits);
}

const Entry* Artifact::FindEntry(absl::string_view name) const {
  for (const Entry& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bool operator==(const BufferRef& a, const BufferRef& b) {
  return std::tie(a.space, a.index, a.offset, a.size) ==
         std::tie(b.space, b.index, b.offset, b.size);
}
InitialValue InitialValue::Copy(absl::string_view bytes) {
  auto copy = std::make_shared<const std::string>(bytes);
  return InitialValue{*copy, copy};
}
bool operator==(const InitialValue& a, const InitialValue& b) {
  return a.bytes == b.bytes;
}
bool operator==(const ResidentBuffer& a, const ResidentBuffer& b) {
  return std::tie(a.name, a.byte_size, a.role, a.dtype, a.shape, a.donated,
                  a.in_place, a.initial_value) ==
         std::tie(b.name, b.byte_size, b.role, b.dtype, b.shape, b.donated,
                  b.in_place, b.initial_value);
}
std::string ValueRange::ToString() const {
  std::string out = absl::StrCat("[", low, ", ", high, ")");
  if (ignore_index) absl::StrAppend(&out, " or ", *ignore_index);
  return out;
}

bool operator==(const ValueRange& a, const ValueRange& b) {
  return std::tie(a.low, a.high, a.ignore_index, a.use) ==
         std::tie(b.low, b.high, b.ignore_index, b.use);
}
bool operator==(const TensorBinding& a, const TensorBinding& b) {
  return std::tie(a.name, a.dtype, a.shape, a.buffer, a.valid_range) ==
         std::tie(b.name, b.dtype, b.shape, b.buffer, b.valid_range);
}
bool operator==(const TensorMap& a, const TensorMap& b) {
  return std::tie(a.mode, a.dtype, a.dims, a.strides, a.box, a.element_strides,
                  a.lower_corner, a.upper_corner, a.channels_per_pixel,
                  a.pixels_per_column, a.swizzle_bytes) ==
         std::tie(b.mode, b.dtype, b.dims, b.strides, b.box, b.element_strides,
                  b.lower_corner, b.upper_corner, b.channels_per_pixel,
                  b.pixels_per_column, b.swizzle_bytes);
}
bool operator==(const Arg& a, const Arg& b) {
  return std::tie(a.kind, a.buffer, a.scalar, a.tensor_map) ==
         std::tie(b.kind, b.buffer, b.scalar, b.tensor_map);
}
bool operator==(const Dim3& a, const Dim3& b) {
  return std::tie(a.x, a.y, a.z) == std::tie(b.x, b.y, b.z);
}
bool operator==(const Launch& a, const Launch& b) {
  return std::tie(a.kernel, a.grid, a.block, a.dynamic_shared_bytes, a.args,
                  a.cluster, a.cooperative, a.persistent_blocks_per_sm) ==
         std::tie(b.kernel, b.grid, b.block, b.dynamic_shared_bytes, b.args,
                  b.cluster, b.cooperative, b.persistent_blocks_per_sm);
}
bool operator==(const CollectiveTensor& a, const CollectiveTensor& b) {
  return std::tie(a.name, a.dtype, a.buffer) ==
         std::tie(b.name, b.dtype, b.buffer);
}
bool operator==(const Collective& a, const Collective& b) {
  return std::tie(a.kind, a.after_launches, a.wait_before, a.tensors) ==
         std::tie(b.kind, b.after_launches, b.wait_before, b.tensors);
}
bool operator==(const Entry& a, const Entry& b) {
  return std::tie(a.name, a.inputs, a.outputs, a.arena_size, a.arena_alignment,
                  a.launches, a.collectives) ==
         std::tie(b.name, b.inputs, b.outputs, b.arena_size, b.arena_alignment,
                  b.launches, b.collectives);
}
bool operator==(const KernelImage& a, const KernelImage& b) {
  return std::tie(a.arch, a.ptx, a.cubin, a.waits_for_predecessor) ==
         std::tie(b.arch, b.ptx, b.cubin, b.waits_for_predecessor);
}
bool operator==(const Kernel& a, const Kernel& b) {
  return std::tie(a.name, a.content_hash, a.images, a.static_shared_bytes,
                  a.max_threads, a.params) ==
         std::tie(b.name, b.content_hash, b.images, b.static_shared_bytes,
                  b.max_threads, b.params);
}
bool operator==(const Parameter& a, const Parameter& b) {
  // Floats compare by bit pattern so that a loaded artifact equals its source
  // exactly (the validator rejects NaN and infinity anyway).
  return std::tie(a.name, a.shape, a.dtype, a.init, a.seed_stream, a.buffer) ==
             std::tie(b.name, b.shape, b.dtype, b.init, b.seed_stream,
                      b.buffer) &&
         std::memcmp(&a.init_a, &b.init_a, sizeof(float)) == 0 &&
         std::memcmp(&a.init_b, &b.init_b, sizeof(float)) == 0;
}
bool operator==(const Artifact& a, const Artifact& b) {
  return std::tie(a.format_version, a.target_archs, a.entries,
                  a.resident_buffers, a.kernels, a.parameters, a.producer,
                  a.checksum) == std::tie(b.format_version, b.target_archs,
                                          b.entries, b.resident_buffers,
                                          b.kernels, b.parameters, b.producer,
                                          b.checksum);
}

}  // namespace artifact
}  // namespace kiln
