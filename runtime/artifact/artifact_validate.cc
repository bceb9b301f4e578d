// ValidateArtifact: every check that does not need a GPU. The loader runs it on
// each file after the FlatBuffers verifier; the writer runs it before it
// writes.

#include <cmath>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/launch_limits.h"

namespace kiln {
namespace artifact {
namespace {

using launch_limits::kMaxBlockXY;
using launch_limits::kMaxBlockZ;
using launch_limits::kMaxGridX;
using launch_limits::kMaxGridYZ;
using launch_limits::kMaxKernelParamBytes;
using launch_limits::kMaxKernelParams;
using launch_limits::kMaxThreadsPerBlock;
constexpr uint64_t kMaxArenaAlignment = 1 << 16;
constexpr uint64_t kMaxArenaSize = 1ULL << 48;
constexpr size_t kMaxNameBytes = 4096;

template <typename... Args>
absl::Status Invalid(absl::string_view path, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", args...));
}

#define KILN_RETURN_IF_ERROR(expr)     \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (false)

// The driver's limits on tensor maps (cuTensorMapEncodeTiled/Im2col).
constexpr uint32_t kMaxTensorMapBox = 256;
constexpr uint32_t kMaxTensorMapElementStride = 8;
constexpr uint32_t kMaxIm2colPixels = 1024;
constexpr uint64_t kMaxTensorMapStride = 1ULL << 40;

// Checks `map` as the driver will, and that the tensor it describes lies in
// the bytes of `ref`.
absl::Status CheckTensorMap(const std::string& path, const TensorMap& map,
                            const BufferRef& ref) {
  const bool im2col = map.mode == TensorMapMode::kIm2col;
  if (map.mode != TensorMapMode::kTiled && !im2col) {
    return Invalid(path + ".mode", "unknown tensor-map mode ",
                   static_cast<int>(map.mode));
  }
  if (map.dtype != DType::kF32 && map.dtype != DType::kBF16 &&
      map.dtype != DType::kF16) {
    return Invalid(path + ".dtype", "a tensor map holds f32, bf16 or f16, not ",
                   DTypeLabel(map.dtype));
  }
  const uint64_t esize = static_cast<uint64_t>(::kiln::DTypeSize(map.dtype));
  const size_t rank = map.rank();
  const size_t min_rank = im2col ? 3 : 1;
  if (rank < min_rank || rank > 5) {
    return Invalid(path + ".dims", "rank ", rank, " is not in [", min_rank,
                   ", 5]");
  }
  if (map.strides.size() != rank - 1 || map.element_strides.size() != rank) {
    return Invalid(path, "rank ", rank, " needs ", rank - 1, " strides and ",
                   rank, " element strides, got ", map.strides.size(), " and ",
                   map.element_strides.size());
  }
  if (map.swizzle_bytes != 0 && map.swizzle_bytes != 32 &&
      map.swizzle_bytes != 64 && map.swizzle_bytes != 128) {
    return Invalid(path + ".swizzle_bytes", map.swizzle_bytes,
                   " is not 0, 32, 64 or 128");
  }
  if (ref.offset % 16 != 0) {
    return Invalid(path, "the buffer's offset ", ref.offset,
                   " is not a multiple of 16 bytes");
  }
  // The last byte the tensor reaches; the buffer must hold it.
  uint64_t extent = esize;
  for (size_t d = 0; d < rank; ++d) {
    const std::string dpath = absl::StrCat(path, ".dims[", d, "]");
    if (map.dims[d] == 0 || map.dims[d] > (1ULL << 32)) {
      return Invalid(dpath, map.dims[d], " is not in [1, 2^32]");
    }
    if (map.element_strides[d] == 0 ||
        map.element_strides[d] > kMaxTensorMapElementStride) {
      return Invalid(absl::StrCat(path, ".element_strides[", d, "]"),
                     map.element_strides[d], " is not in [1, ",
                     kMaxTensorMapElementStride, "]");
    }
    const uint64_t stride = d == 0 ? esize : map.strides[d - 1];
    if (d > 0 && (stride % 16 != 0 || stride >= kMaxTensorMapStride)) {
      return Invalid(absl::StrCat(path, ".strides[", d - 1, "]"), stride,
                     " bytes is not a multiple of 16 below 2^40");
    }
    uint64_t reach = 0;
    if (__builtin_mul_overflow(map.dims[d] - 1, stride, &reach) ||
        __builtin_add_overflow(extent, reach, &extent)) {
      return Invalid(path, "the tensor's extent overflows 64 bits");
    }
  }
  if (extent > ref.size) {
    return Invalid(path, "the tensor reaches ", extent,
                   " bytes into a buffer of ", ref.size);
  }
  // The innermost extent of one copy, in bytes.
  uint64_t inner = 0;
  if (im2col) {
    if (!map.box.empty()) {
      return Invalid(path + ".box", "must be empty for an im2col map");
    }
    // The corners' range shrinks with the rank (16 bits over the spatial
    // dimensions).
    const int32_t limit = rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4;
    if (map.lower_corner.size() != rank - 2 ||
        map.upper_corner.size() != rank - 2) {
      return Invalid(path, "an im2col map of rank ", rank, " needs ", rank - 2,
                     " corner coordinates on each side");
    }
    for (size_t d = 0; d < rank - 2; ++d) {
      for (int32_t corner : {map.lower_corner[d], map.upper_corner[d]}) {
        if (corner < -limit || corner >= limit) {
          return Invalid(absl::StrCat(path, ".corner[", d, "]"), corner,
                         " is not in [", -limit, ", ", limit, ")");
        }
      }
    }
    if (map.channels_per_pixel == 0 ||
        map.channels_per_pixel > kMaxTensorMapBox ||
        map.pixels_per_column == 0 ||
        map.pixels_per_column > kMaxIm2colPixels) {
      return Invalid(path, map.channels_per_pixel, " channels and ",
                     map.pixels_per_column,
                     " pixels per copy are not in [1, 256] and [1, 1024]");
    }
    inner = map.channels_per_pixel * esize;
  } else {
    if (map.box.size() != rank) {
      return Invalid(path + ".box", map.box.size(), " box dimensions for rank ",
                     rank);
    }
    for (size_t d = 0; d < rank; ++d) {
      if (map.box[d] == 0 || map.box[d] > kMaxTensorMapBox) {
        return Invalid(absl::StrCat(path, ".box[", d, "]"), map.box[d],
                       " is not in [1, ", kMaxTensorMapBox, "]");
      }
    }
    if (!map.lower_corner.empty() || !map.upper_corner.empty() ||
        map.channels_per_pixel != 0 || map.pixels_per_column != 0) {
      return Invalid(path, "a tiled map takes no im2col fields");
    }
    inner = map.box[0] * esize;
  }
  if (inner % 16 != 0) {
    return Invalid(path, "one copy's innermost ", inner,
                   " bytes are not a multiple of 16");
  }
  if (map.swizzle_bytes != 0 && inner > map.swizzle_bytes) {
    return Invalid(path, "one copy's innermost ", inner,
                   " bytes exceed the swizzle span of ", map.swizzle_bytes);
  }
  return absl::OkStatus();
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::Status CheckName(const std::string& path, const std::string& name) {
  if (name.empty()) return Invalid(path, "must not be empty");
  if (name.size() > kMaxNameBytes) {
    return Invalid(path, "length ", name.size(), " exceeds ", kMaxNameBytes);
  }
  if (name.find('\0') != std::string::npos) {
    return Invalid(path, "contains a NUL byte");
  }
  return absl::OkStatus();
}

// Checks dtype and shape at `path` and stores the tensor's byte size.
absl::Status CheckTensor(const std::string& path, DType dtype,
                         const std::vector<int64_t>& shape, uint64_t* bytes) {
  if (!IsValidDType(dtype)) {
    return Invalid(path + ".dtype", "unknown dtype ", static_cast<int>(dtype));
  }
  if (shape.size() > kMaxRank) {
    return Invalid(path + ".shape", "rank ", shape.size(), " exceeds ",
                   kMaxRank);
  }
  uint64_t n = static_cast<uint64_t>(::kiln::DTypeSize(dtype));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return Invalid(absl::StrCat(path, ".shape[", i, "]"), "negative extent ",
                     shape[i]);
    }
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shape[i]), &n)) {
      return Invalid(path + ".shape", "byte size of ", ShapeString(shape),
                     " overflows 64 bits");
    }
  }
  *bytes = n;
  return absl::OkStatus();
}

class Validator {
 public:
  explicit Validator(const Artifact& a) : a_(a) {}

  absl::Status Run() {
    if (a_.format_version < kOldestFormatVersion ||
        a_.format_version > kFormatVersion) {
      return Invalid("format_version", "unsupported version ",
                     a_.format_version, " (this runtime reads ",
                     kOldestFormatVersion, " to ", kFormatVersion, ")");
    }
    KILN_RETURN_IF_ERROR(CheckArchs());
    for (size_t i = 0; i < a_.resident_buffers.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckResident(i));
    }
    for (size_t i = 0; i < a_.kernels.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckKernel(i));
    }
    std::set<std::string> names;
    for (size_t i = 0; i < a_.entries.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckEntry(i));
      if (!names.insert(a_.entries[i].name).second) {
        return Invalid(absl::StrCat("entries[", i, "].name"), "duplicate '",
                       a_.entries[i].name, "'");
      }
    }
    KILN_RETURN_IF_ERROR(CheckParameters());
    return CheckInitialValues();
  }

 private:
  absl::Status CheckArchs() {
    if (a_.target_archs.empty()) {
      return Invalid("target_archs", "must not be empty");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < a_.target_archs.size(); ++i) {
      const std::string path = absl::StrCat("target_archs[", i, "]");
      const std::string& arch = a_.target_archs[i];
      if (!IsKnownArch(arch)) {
        return Invalid(path, "unknown architecture '", absl::CEscape(arch),
                       "'");
      }
      if (!seen.insert(arch).second) {
        return Invalid(path, "duplicate '", arch, "'");
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckResident(size_t i) {
    const ResidentBuffer& b = a_.resident_buffers[i];
    const std::string path = absl::StrCat("resident_buffers[", i, "]");
    KILN_RETURN_IF_ERROR(CheckName(path + ".name", b.name));
    if (!resident_names_.insert(b.name).second) {
      return Invalid(path + ".name", "duplicate '", b.name, "'");
    }
    const uint8_t role = static_cast<uint8_t>(b.role);
    if (role < 1 || role > 6) {
      return Invalid(path + ".role", "unknown role ", static_cast<int>(role));
    }
    uint64_t bytes = 0;
    KILN_RETURN_IF_ERROR(CheckTensor(path, b.dtype, b.shape, &bytes));
    if (bytes != b.byte_size) {
      return Invalid(path + ".byte_size", b.byte_size, " does not match shape ",
                     ShapeString(b.shape), " x ", DTypeLabel(b.dtype), " = ",
                     bytes, " bytes");
    }
    if (b.role == BufferRole::kConstant && (b.in_place || b.donated)) {
      return Invalid(path, "a constant buffer cannot be donated or in place");
    }
    return absl::OkStatus();
  }

  absl::Status CheckKernel(size_t k) {
    const Kernel& kernel = a_.kernels[k];
    const std::string path = absl::StrCat("kernels[", k, "]");
    KILN_RETURN_IF_ERROR(CheckName(path + ".name", kernel.name));
    if (!kernel_names_.insert(kernel.name).second) {
      return Invalid(path + ".name", "duplicate '", kernel.name, "'");
    }
    if (kernel.max_threads < 1 || kernel.max_threads > kMaxThreadsPerBlock) {
      return Invalid(path + ".max_threads", kernel.max_threads,
                     " is outside [1, ", kMaxThreadsPerBlock, "]");
    }
    if (kernel.static_shared_bytes > kMaxSharedBytes) {
      return Invalid(path + ".static_shared_bytes", kernel.static_shared_bytes,
                     " exceeds ", kMaxSharedBytes);
    }
    if (kernel.params.size() > kMaxKernelParams) {
      return Invalid(path + ".params", kernel.params.size(),
                     " parameters exceed ", kMaxKernelParams);
    }
    uint64_t param_bytes = 0;
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      const uint8_t kind = static_cast<uint8_t>(kernel.params[p]);
      if (kind < 1 || kind > 6) {
        return Invalid(absl::StrCat(path, ".params[", p, "]"),
                       "unknown argument kind ", static_cast<int>(kind));
      }
      param_bytes = launch_limits::WithParam(
          param_bytes, kernel.params[p] == ArgKind::kTensorMap);
    }
    if (param_bytes > kMaxKernelParamBytes) {
      return Invalid(path + ".params", param_bytes,
                     " bytes of parameters exceed ", kMaxKernelParamBytes);
    }
    std::set<std::string> archs;
    for (size_t i = 0; i < kernel.images.size(); ++i) {
      const KernelImage& image = kernel.images[i];
      const std::string ipath = absl::StrCat(path, ".images[", i, "]");
      bool is_target = false;
      for (const std::string& t : a_.target_archs) {
        is_target |= ImageServesTarget(image.arch, t);
      }
      if (!is_target || !IsKnownArch(image.arch)) {
        return Invalid(ipath + ".arch", "'", absl::CEscape(image.arch),
                       "' is not a target architecture or its arch-specific "
                       "variant (",
                       absl::StrJoin(a_.target_archs, ", "), ")");
      }
      if (!archs.insert(image.arch).second) {
        return Invalid(ipath + ".arch", "duplicate '", image.arch, "'");
      }
      if (image.waits_for_predecessor && ArchNumber(image.arch) < 90) {
        return Invalid(ipath + ".waits_for_predecessor", "set for ", image.arch,
                       ", which has no grid dependency control (sm_90 and "
                       "newer)");
      }
      if (image.ptx.empty()) return Invalid(ipath + ".ptx", "is empty");
      const size_t nul = image.ptx.find('\0');
      if (nul != std::string::npos) {
        return Invalid(ipath + ".ptx", "contains a NUL byte at ", nul);
      }
    }
    for (const std::string& t : a_.target_archs) {
      bool served = false;
      for (const std::string& arch : archs) {
        served |= ImageServesTarget(arch, t);
      }
      if (!served) {
        return Invalid(path + ".images", "no image for target architecture ",
                       t);
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRef(const std::string& path, const BufferRef& ref,
                        const Entry& entry) {
    uint64_t capacity = 0;
    std::string what;
    switch (ref.space) {
      case MemorySpace::kArena:
        if (ref.index != 0) {
          return Invalid(path, "an arena reference must have index 0, got ",
                         ref.index);
        }
        capacity = entry.arena_size;
        what = "arena size";
        break;
      case MemorySpace::kResident:
        if (ref.index >= a_.resident_buffers.size()) {
          return Invalid(path, "resident buffer index ", ref.index,
                         " out of range (", a_.resident_buffers.size(),
                         " resident buffers)");
        }
        capacity = a_.resident_buffers[ref.index].byte_size;
        what = absl::StrCat("size of resident buffer ", ref.index, " '",
                            a_.resident_buffers[ref.index].name, "'");
        break;
      default:
        return Invalid(path, "unknown memory space ",
                       static_cast<int>(ref.space));
    }
    if (ref.offset > capacity || ref.size > capacity - ref.offset) {
      return Invalid(path, "offset ", ref.offset, " + ", ref.size,
                     " bytes exceeds ", what, " ", capacity);
    }
    return absl::OkStatus();
  }

  absl::Status CheckBindings(const std::string& path,
                             const std::vector<TensorBinding>& bindings,
                             const Entry& entry, bool inputs) {
    std::set<std::string> names;
    for (size_t i = 0; i < bindings.size(); ++i) {
      const TensorBinding& b = bindings[i];
      const std::string bpath = absl::StrCat(path, "[", i, "]");
      KILN_RETURN_IF_ERROR(CheckName(bpath + ".name", b.name));
      if (!names.insert(b.name).second) {
        return Invalid(bpath + ".name", "duplicate '", b.name, "'");
      }
      uint64_t bytes = 0;
      KILN_RETURN_IF_ERROR(CheckTensor(bpath, b.dtype, b.shape, &bytes));
      KILN_RETURN_IF_ERROR(CheckRef(bpath + ".buffer", b.buffer, entry));
      if (b.buffer.size != bytes) {
        return Invalid(bpath + ".buffer", "size ", b.buffer.size,
                       " bytes does not match shape ", ShapeString(b.shape),
                       " x ", DTypeLabel(b.dtype), " = ", bytes, " bytes");
      }
      if (b.valid_range && !inputs) {
        return Invalid(bpath + ".valid_range", "on an output");
      }
      if (b.valid_range) {
        KILN_RETURN_IF_ERROR(CheckRange(bpath + ".valid_range", b));
      }
    }
    return absl::OkStatus();
  }

  // A value range is for the caller's i32 inputs and is not empty.
  absl::Status CheckRange(const std::string& path, const TensorBinding& b) {
    if (b.dtype != DType::kI32) {
      return Invalid(path, "on a binding of ", DTypeLabel(b.dtype),
                     " (ranges are for i32 inputs)");
    }
    if (b.buffer.space != MemorySpace::kArena) {
      return Invalid(path, "on a resident buffer (ranges are for the "
                           "caller's inputs)");
    }
    if (b.valid_range->low >= b.valid_range->high) {
      return Invalid(path, "[", b.valid_range->low, ", ",
                     b.valid_range->high, ") is empty");
    }
    return absl::OkStatus();
  }

  // The cluster shape and the cooperative flag of a launch whose grid is
  // already known to be valid.
  absl::Status CheckCluster(const std::string& path, const Launch& launch) {
    if (!launch.clustered()) return absl::OkStatus();
    const Dim3& c = launch.cluster;
    const Dim3& g = launch.grid;
    const std::string shape = absl::StrCat("(", c.x, ", ", c.y, ", ", c.z, ")");
    if (c.x < 1 || c.y < 1 || c.z < 1) {
      return Invalid(path + ".cluster", shape, " has a dimension below 1");
    }
    // Each dimension first: their product may overflow.
    if (c.x > kMaxClusterBlocks || c.y > kMaxClusterBlocks ||
        c.z > kMaxClusterBlocks) {
      return Invalid(path + ".cluster", shape, " has more than ",
                     kMaxClusterBlocks, " blocks");
    }
    if (launch.cluster_blocks() > kMaxClusterBlocks) {
      return Invalid(path + ".cluster", shape, " has ", launch.cluster_blocks(),
                     " blocks, more than ", kMaxClusterBlocks);
    }
    if (g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0) {
      return Invalid(path + ".cluster", "grid (", g.x, ", ", g.y, ", ", g.z,
                     ") is not a multiple of cluster ", shape);
    }
    if (launch.cooperative) {
      return Invalid(path + ".cooperative", "set together with cluster ", shape,
                     " (a launch is either cooperative or clustered)");
    }
    for (const std::string& t : a_.target_archs) {
      if (ArchNumber(t) < 90) {
        return Invalid(path + ".cluster", shape, " for target architecture ", t,
                       ", which has no thread-block clusters (sm_90 and "
                       "newer)");
      }
    }
    return absl::OkStatus();
  }

  // A persistent launch may have its grid shrunk along x: it must have no
  // other dimension to keep and no grid-wide synchronisation to break.
  absl::Status CheckPersistent(const std::string& path, const Launch& launch) {
    if (launch.persistent_blocks_per_sm == 0) return absl::OkStatus();
    const Dim3& g = launch.grid;
    if (g.y != 1 || g.z != 1) {
      return Invalid(path + ".persistent_blocks_per_sm", "set with grid (",
                     g.x, ", ", g.y, ", ", g.z,
                     "): a persistent grid is one-dimensional");
    }
    if (launch.cooperative) {
      return Invalid(path + ".persistent_blocks_per_sm",
                     "set together with cooperative (a cooperative grid "
                     "cannot shrink)");
    }
    return absl::OkStatus();
  }

  absl::Status CheckLaunch(const std::string& path, const Launch& launch,
                           const Entry& entry) {
    if (launch.kernel >= a_.kernels.size()) {
      return Invalid(path + ".kernel", "index ", launch.kernel,
                     " out of range (", a_.kernels.size(), " kernels)");
    }
    const Kernel& kernel = a_.kernels[launch.kernel];
    const Dim3& g = launch.grid;
    if (g.x < 1 || g.x > kMaxGridX || g.y < 1 || g.y > kMaxGridYZ || g.z < 1 ||
        g.z > kMaxGridYZ) {
      return Invalid(path + ".grid", "(", g.x, ", ", g.y, ", ", g.z,
                     ") is outside CUDA's limits ([1, ", kMaxGridX, "], [1, ",
                     kMaxGridYZ, "], [1, ", kMaxGridYZ, "])");
    }
    const Dim3& b = launch.block;
    if (b.x < 1 || b.x > kMaxBlockXY || b.y < 1 || b.y > kMaxBlockXY ||
        b.z < 1 || b.z > kMaxBlockZ) {
      return Invalid(path + ".block", "(", b.x, ", ", b.y, ", ", b.z,
                     ") is outside CUDA's limits ([1, ", kMaxBlockXY, "], [1, ",
                     kMaxBlockXY, "], [1, ", kMaxBlockZ, "])");
    }
    const uint64_t threads = uint64_t{b.x} * b.y * b.z;
    if (threads > kernel.max_threads) {
      return Invalid(path + ".block", threads,
                     " threads exceed the kernel's max_threads ",
                     kernel.max_threads);
    }
    KILN_RETURN_IF_ERROR(CheckCluster(path, launch));
    KILN_RETURN_IF_ERROR(CheckPersistent(path, launch));
    const uint64_t shared =
        uint64_t{launch.dynamic_shared_bytes} + kernel.static_shared_bytes;
    if (shared > kMaxSharedBytes) {
      return Invalid(path + ".dynamic_shared_bytes",
                     launch.dynamic_shared_bytes, " + static ",
                     kernel.static_shared_bytes, " bytes exceed ",
                     kMaxSharedBytes);
    }
    if (launch.args.size() != kernel.params.size()) {
      return Invalid(path + ".args", launch.args.size(),
                     " arguments, but kernel ", launch.kernel, " '",
                     kernel.name, "' declares ", kernel.params.size());
    }
    for (size_t i = 0; i < launch.args.size(); ++i) {
      const Arg& arg = launch.args[i];
      const std::string apath = absl::StrCat(path, ".args[", i, "]");
      const uint8_t kind = static_cast<uint8_t>(arg.kind);
      if (kind < 1 || kind > 6) {
        return Invalid(apath + ".kind", "unknown argument kind ",
                       static_cast<int>(kind));
      }
      if (arg.kind != kernel.params[i]) {
        return Invalid(apath + ".kind", "argument kind ", kind,
                       " does not match the kernel's parameter kind ",
                       static_cast<int>(kernel.params[i]));
      }
      if (arg.kind != ArgKind::kTensorMap && arg.tensor_map != TensorMap{}) {
        return Invalid(apath + ".tensor_map",
                       "must be absent for an argument of kind ", kind);
      }
      if (arg.kind == ArgKind::kBuffer) {
        if (arg.scalar != 0) {
          return Invalid(apath + ".scalar", "must be 0 for a buffer argument");
        }
        KILN_RETURN_IF_ERROR(CheckRef(apath, arg.buffer, entry));
      } else if (arg.kind == ArgKind::kTensorMap) {
        if (arg.scalar != 0) {
          return Invalid(apath + ".scalar",
                         "must be 0 for a tensor-map argument");
        }
        KILN_RETURN_IF_ERROR(CheckRef(apath, arg.buffer, entry));
        KILN_RETURN_IF_ERROR(
            CheckTensorMap(apath + ".tensor_map", arg.tensor_map, arg.buffer));
      } else {
        if (arg.buffer != BufferRef{static_cast<MemorySpace>(0), 0, 0, 0}) {
          return Invalid(apath + ".buffer",
                         "must be absent for a scalar argument");
        }
        if ((arg.kind == ArgKind::kI32 || arg.kind == ArgKind::kF32) &&
            (arg.scalar >> 32) != 0) {
          return Invalid(apath + ".scalar",
                         "a 32-bit scalar has non-zero high bytes");
        }
      }
    }
    return absl::OkStatus();
  }

  // Two byte ranges of the same buffer that overlap.
  static bool Overlaps(const BufferRef& a, const BufferRef& b) {
    return a.space == b.space && a.index == b.index && a.size > 0 &&
           b.size > 0 && a.offset < b.offset + b.size &&
           b.offset < a.offset + a.size;
  }

  // A collective runs beside the launches issued between its issue and its
  // wait: none of them may touch its tensors (a race on every rank).
  absl::Status CheckCollectives(const std::string& path, const Entry& entry) {
    uint32_t previous = 0;
    for (size_t c = 0; c < entry.collectives.size(); ++c) {
      const Collective& coll = entry.collectives[c];
      const std::string cpath = absl::StrCat(path, ".collectives[", c, "]");
      if (coll.kind != CollectiveKind::kAllReduceAverage) {
        return Invalid(cpath + ".kind", "unknown collective kind ",
                       static_cast<int>(coll.kind));
      }
      if (coll.after_launches < previous) {
        return Invalid(cpath + ".after_launches", coll.after_launches,
                       " is before the previous collective's ", previous,
                       " (collectives are in issue order)");
      }
      previous = coll.after_launches;
      if (coll.wait_before < coll.after_launches ||
          coll.wait_before > entry.launches.size()) {
        return Invalid(cpath + ".wait_before", coll.wait_before,
                       " is outside [after_launches ", coll.after_launches,
                       ", ", entry.launches.size(), " launches]");
      }
      if (coll.tensors.empty()) {
        return Invalid(cpath + ".tensors", "a collective of no tensors");
      }
      for (size_t t = 0; t < coll.tensors.size(); ++t) {
        const CollectiveTensor& tensor = coll.tensors[t];
        const std::string tpath = absl::StrCat(cpath, ".tensors[", t, "]");
        KILN_RETURN_IF_ERROR(CheckName(tpath + ".name", tensor.name));
        if (!IsValidDType(tensor.dtype)) {
          return Invalid(tpath + ".dtype", DTypeLabel(tensor.dtype));
        }
        KILN_RETURN_IF_ERROR(CheckRef(tpath + ".buffer", tensor.buffer, entry));
        if (tensor.buffer.size % DTypeSize(tensor.dtype) != 0) {
          return Invalid(tpath + ".buffer", "size ", tensor.buffer.size,
                         " is not a whole number of ", DTypeLabel(tensor.dtype),
                         " elements");
        }
        for (uint32_t l = coll.after_launches; l < coll.wait_before; ++l) {
          for (const Arg& arg : entry.launches[l].args) {
            if ((arg.kind == ArgKind::kBuffer ||
                 arg.kind == ArgKind::kTensorMap) &&
                Overlaps(arg.buffer, tensor.buffer)) {
              return Invalid(tpath, "launch ", l, " touches '", tensor.name,
                             "' while its collective runs (launches ",
                             coll.after_launches, " to ", coll.wait_before,
                             ")");
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckEntry(size_t e) {
    const Entry& entry = a_.entries[e];
    const std::string path = absl::StrCat("entries[", e, "]");
    KILN_RETURN_IF_ERROR(CheckName(path + ".name", entry.name));
    const uint64_t align = entry.arena_alignment;
    if (align == 0 || (align & (align - 1)) != 0 ||
        align > kMaxArenaAlignment) {
      return Invalid(path + ".arena.alignment", align,
                     " is not a power of two in [1, ", kMaxArenaAlignment, "]");
    }
    if (entry.arena_size > kMaxArenaSize) {
      return Invalid(path + ".arena.size", entry.arena_size, " exceeds ",
                     kMaxArenaSize);
    }
    KILN_RETURN_IF_ERROR(
        CheckBindings(path + ".inputs", entry.inputs, entry, /*inputs=*/true));
    KILN_RETURN_IF_ERROR(CheckBindings(path + ".outputs", entry.outputs, entry,
                                       /*inputs=*/false));
    for (size_t l = 0; l < entry.launches.size(); ++l) {
      KILN_RETURN_IF_ERROR(CheckLaunch(absl::StrCat(path, ".launches[", l, "]"),
                                       entry.launches[l], entry));
    }
    return CheckCollectives(path, entry);
  }

  absl::Status CheckParameters() {
    std::set<std::string> names;
    std::set<uint32_t> buffers;
    for (size_t i = 0; i < a_.parameters.size(); ++i) {
      const Parameter& p = a_.parameters[i];
      const std::string path = absl::StrCat("parameters[", i, "]");
      KILN_RETURN_IF_ERROR(CheckName(path + ".name", p.name));
      if (!names.insert(p.name).second) {
        return Invalid(path + ".name", "duplicate '", p.name, "'");
      }
      uint64_t bytes = 0;
      KILN_RETURN_IF_ERROR(CheckTensor(path, p.dtype, p.shape, &bytes));
      if (p.buffer >= a_.resident_buffers.size()) {
        return Invalid(path + ".buffer", "resident buffer index ", p.buffer,
                       " out of range (", a_.resident_buffers.size(),
                       " resident buffers)");
      }
      const ResidentBuffer& b = a_.resident_buffers[p.buffer];
      if (b.role != BufferRole::kParameter && b.role != BufferRole::kState) {
        return Invalid(path + ".buffer", "resident buffer ", p.buffer, " '",
                       b.name, "' has role ", static_cast<int>(b.role),
                       ", not parameter or state");
      }
      if (!buffers.insert(p.buffer).second) {
        return Invalid(path + ".buffer", "resident buffer ", p.buffer,
                       " belongs to another parameter too");
      }
      if (p.dtype != b.dtype || p.shape != b.shape) {
        return Invalid(path, DTypeLabel(p.dtype), ShapeString(p.shape),
                       " does not match its buffer '", b.name, "' ",
                       DTypeLabel(b.dtype), ShapeString(b.shape));
      }
      if (!IsValidInitKind(p.init)) {
        return Invalid(path + ".init", "unknown initialiser ",
                       static_cast<int>(p.init));
      }
      if (!std::isfinite(p.init_a)) {
        return Invalid(path + ".init_a", "must be finite");
      }
      if (!std::isfinite(p.init_b)) {
        return Invalid(path + ".init_b", "must be finite");
      }
      if (p.init == InitKind::kUniform && p.init_a > p.init_b) {
        return Invalid(path + ".init_a", "uniform low ", p.init_a,
                       " exceeds high ", p.init_b);
      }
      if (p.init == InitKind::kNormal && p.init_b < 0) {
        return Invalid(path + ".init_b", "negative standard deviation ",
                       p.init_b);
      }
    }
    return absl::OkStatus();
  }

  // Initial values: of their buffer's size, for the roles that start from
  // one, never beside the same buffer's initialiser; every constant has one.
  absl::Status CheckInitialValues() {
    std::set<uint32_t> initialised;
    for (const Parameter& p : a_.parameters) initialised.insert(p.buffer);
    for (size_t i = 0; i < a_.resident_buffers.size(); ++i) {
      const ResidentBuffer& b = a_.resident_buffers[i];
      const std::string path = absl::StrCat("resident_buffers[", i, "]");
      if (!b.initial_value) {
        if (b.role == BufferRole::kConstant) {
          return Invalid(path, "constant buffer '", b.name,
                         "' has no initial value");
        }
        continue;
      }
      const std::string value = path + ".initial_value";
      if (b.role != BufferRole::kParameter && b.role != BufferRole::kState &&
          b.role != BufferRole::kMasterWeight &&
          b.role != BufferRole::kConstant) {
        return Invalid(value, "buffer '", b.name, "' has role ",
                       static_cast<int>(b.role),
                       ", which starts from zeros (only parameters, state, "
                       "master weights and constants have initial values)");
      }
      if (b.initial_value->bytes.size() != b.byte_size) {
        return Invalid(value, b.initial_value->bytes.size(),
                       " bytes, but buffer '", b.name, "' has ", b.byte_size);
      }
      if (initialised.count(static_cast<uint32_t>(i)) != 0) {
        return Invalid(value, "buffer '", b.name,
                       "' has an initialiser in parameters too");
      }
      if (a_.format_version < 3 && b.role != BufferRole::kConstant) {
        return Invalid(value, "format ", a_.format_version,
                       " carries initial values of constants only");
      }
    }
    return absl::OkStatus();
  }

  const Artifact& a_;
  std::set<std::string> resident_names_;
  std::set<std::string> kernel_names_;
};

}  // namespace

absl::Status ValidateArtifact(const Artifact& artifact) {
  return Validator(artifact).Run();
}

}  // namespace artifact
}  // namespace kiln
