#ifndef KILN_RUNTIME_ARTIFACT_ARTIFACT_H_
#define KILN_RUNTIME_ARTIFACT_ARTIFACT_H_

// The artifact as plain C++ values: what LoadArtifact returns after it has
// verified a file, and what ArtifactWriter (artifact_writer.h) serialises. The
// schema of the file is runtime/artifact/kiln_artifact.fbs; the enums here
// carry the same numeric values as the schema's.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kiln/dtype.h"
#include "runtime/random/initializers.h"

namespace kiln {
namespace artifact {

// The format version this runtime writes. Version 2 numbers initialisers as
// runtime/random's InitKind (zeros 0 ... kaiming 6); version 3 adds the data
// section of initial values (kiln_artifact.fbs). It reads both.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr uint32_t kOldestFormatVersion = 2;
// Initial values start at multiples of this many bytes of the data section,
// which starts at a multiple of it in the file.
inline constexpr uint64_t kDataAlignment = 64;
// Shared memory per block that sm_90 allows (227 KiB), static plus dynamic.
inline constexpr uint64_t kMaxSharedBytes = 227 * 1024;
// The most dimensions a shape may have.
inline constexpr size_t kMaxRank = 16;

// Element types are the runtime's kiln::DType (kiln/dtype.h); the schema's
// own enum is that value plus one (0 is the schema's INVALID), converted in
// the writer and the loader.
using ::kiln::DType;
// Initialisers are runtime/random's (initializers.h), with the same numbers
// in the schema: zeros 0, ones 1, constant 2 (a = value), normal 3 (a = mean,
// b = stddev), uniform 4 (a = low, b = high), xavier 5 (a = gain), kaiming 6
// (a = gain). The values are drawn from Philox stream `seed_stream`, the
// parameter's argument position in the loss function.
using ::kiln::InitKind;
enum class MemorySpace : uint8_t { kArena = 1, kResident = 2 };
enum class BufferRole : uint8_t {
  kParameter = 1,
  kOptimizerState = 2,
  kGradient = 3,
  kMasterWeight = 4,
  kConstant = 5,
  // Non-trainable model state (batch norm running statistics): initialised
  // like a parameter, updated in place by the training entries, saved in
  // checkpoints; no gradient and no optimizer state.
  kState = 6,
};
enum class ArgKind : uint8_t {
  kBuffer = 1,
  kI32 = 2,
  kI64 = 3,
  kF32 = 4,
  kF64 = 5,
  // A TMA tensor map (CUtensorMap, 128 bytes) over a buffer, encoded by the
  // runtime once the buffer's address is known.
  kTensorMap = 6
};

// True for the enumerators of DType (a value read from a file may be
// anything).
bool IsValidDType(DType dtype);
// True for the enumerators of InitKind.
bool IsValidInitKind(InitKind init);
// "f32", "bf16", "f16", "i32", "i1"; "invalid(<n>)" otherwise.
std::string DTypeLabel(DType dtype);
// The known target architectures ("sm_70" ... "sm_121a").
bool IsKnownArch(absl::string_view arch);
// "sm_90a" -> 90; 0 if not of the form sm_<digits>.
int ArchNumber(absl::string_view arch);
// True for arch-specific targets ("sm_90a"): their code runs only on that
// exact architecture, and their PTX cannot be compiled for newer ones.
bool IsArchSpecific(absl::string_view arch);
// Whether an image built for `image_arch` serves the target architecture
// `target`: the same one, or its arch-specific variant ("sm_90a" for
// "sm_90"; kernels that use wgmma are built so).
bool ImageServesTarget(absl::string_view image_arch, absl::string_view target);

// A byte range inside the entry's arena (index 0) or a resident buffer.
struct BufferRef {
  MemorySpace space = MemorySpace::kArena;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t size = 0;

  static BufferRef Arena(uint64_t offset, uint64_t size) {
    return {MemorySpace::kArena, 0, offset, size};
  }
  static BufferRef Resident(uint32_t index, uint64_t offset, uint64_t size) {
    return {MemorySpace::kResident, index, offset, size};
  }
};

// The bytes a resident buffer holds when a session starts: an imported
// model's weights, a large constant. They lie outside the artifact's tables
// (the file's data section): a loaded artifact's values point into a copy
// of that section which `owner` keeps alive, a written one's may point at
// memory of the writer's caller (owner null), which must outlive the
// writing.
struct InitialValue {
  absl::string_view bytes;
  std::shared_ptr<const void> owner;

  // A value that owns a copy of `bytes`.
  static InitialValue Copy(absl::string_view bytes);
};

struct ResidentBuffer {
  std::string name;
  uint64_t byte_size = 0;
  BufferRole role = BufferRole::kParameter;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  bool donated = false;
  bool in_place = false;
  // Parameters, model state, master weights and constants only; every
  // constant has one. Without it, parameters and state start from their
  // initialiser (Artifact::parameters), other buffers from zeros.
  std::optional<InitialValue> initial_value;
};

// The values an i32 entry input may hold, derived by the compiler from how
// the graph uses it: the labels of kiln.cross_entropy over C classes lie in
// [0, C) or equal its ignore_index; the indices of kiln.embedding with V
// rows in [0, V); an input used both ways, in both.
struct ValueRange {
  int64_t low = 0;
  int64_t high = 0;  // one past the largest valid value
  std::optional<int64_t> ignore_index;
  // What the input indexes, for messages and kiln-run --describe:
  // "labels of kiln.cross_entropy over 10 classes".
  std::string use;

  bool Contains(int64_t value) const {
    return (value >= low && value < high) ||
           (ignore_index.has_value() && value == *ignore_index);
  }
  // "[0, 10)", "[0, 10) or -100".
  std::string ToString() const;
};

struct TensorBinding {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  BufferRef buffer;
  // Caller inputs of i32 only; none: any value.
  std::optional<ValueRange> valid_range;
};

// How the tensor memory accelerator (TMA) copies boxes of a tensor in global
// memory to shared memory: the arguments of cuTensorMapEncodeTiled or
// cuTensorMapEncodeIm2col. Dimensions are innermost first.
enum class TensorMapMode : uint8_t { kTiled = 1, kIm2col = 2 };
struct TensorMap {
  TensorMapMode mode = TensorMapMode::kTiled;
  DType dtype = DType::kBF16;  // f32, bf16 or f16
  std::vector<uint64_t> dims;  // elements per dimension
  // Bytes from one index to the next of dims[1], dims[2], ... (the innermost
  // dimension is dense).
  std::vector<uint64_t> strides;
  // Tiled: the elements of one box per dimension. Im2col: empty.
  std::vector<uint32_t> box;
  // The traversal stride of each dimension (a convolution's stride).
  std::vector<uint32_t> element_strides;
  // Im2col: the corners of the box of window origins in the spatial
  // dimensions (dims[1] ... dims[rank - 2]) relative to (0, ...) and to
  // (dims - 1, ...), and the channels and pixels one copy takes.
  std::vector<int32_t> lower_corner, upper_corner;
  uint32_t channels_per_pixel = 0;
  uint32_t pixels_per_column = 0;
  // The shared-memory swizzle span: 0 (none), 32, 64 or 128 bytes.
  uint32_t swizzle_bytes = 0;

  size_t rank() const { return dims.size(); }
};

// A launch argument: a buffer (device pointer), a scalar whose bytes are held
// in the low bytes of `scalar` (an f32 as its bit pattern), or a tensor map
// over a buffer.
struct Arg {
  ArgKind kind = ArgKind::kBuffer;
  // For kBuffer and kTensorMap; all zero (space 0) otherwise.
  BufferRef buffer;
  uint64_t scalar = 0;   // only for scalars; 0 otherwise
  TensorMap tensor_map;  // only for kTensorMap; default otherwise

  static Arg Buffer(BufferRef ref);
  static Arg TensorMapOf(BufferRef ref, TensorMap map);
  static Arg I32(int32_t v);
  static Arg I64(int64_t v);
  static Arg F32(float v);
  static Arg F64(double v);
};

struct Dim3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

// The most blocks a thread-block cluster may have: 8 portably, 16 where the
// kernel opts in to a non-portable size (sm_90).
inline constexpr uint32_t kMaxPortableClusterBlocks = 8;
inline constexpr uint32_t kMaxClusterBlocks = 16;

struct Launch {
  uint32_t kernel = 0;
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
  std::vector<Arg> args;
  // Blocks per thread-block cluster; 1 x 1 x 1 is no cluster. Each grid
  // dimension is a multiple of the cluster's.
  Dim3 cluster;
  // All blocks resident at once (the kernel synchronises the grid).
  bool cooperative = false;
  // Nonzero: a persistent kernel whose blocks stride over the work by the
  // grid; a device with fewer SMs than the grid was sized for runs at most
  // this many blocks per SM (the executor shrinks grid.x).
  uint32_t persistent_blocks_per_sm = 0;

  bool clustered() const {
    return cluster.x != 1 || cluster.y != 1 || cluster.z != 1;
  }
  uint64_t cluster_blocks() const {
    return uint64_t{cluster.x} * cluster.y * cluster.z;
  }
};

// Data-parallel communication of an entry (kilnc --data-parallel), as the
// schema's Collective describes it: issued on a communication stream once
// the first `after_launches` launches are issued, waited for by launch
// `wait_before` (launches.size(): the end of the entry); no launch in
// between touches its tensors.
enum class CollectiveKind : uint8_t { kAllReduceAverage = 1 };

struct CollectiveTensor {
  std::string name;
  DType dtype = DType::kF32;
  BufferRef buffer;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduceAverage;
  uint32_t after_launches = 0;
  uint32_t wait_before = 0;
  std::vector<CollectiveTensor> tensors;
};

struct Entry {
  std::string name;
  std::vector<TensorBinding> inputs;
  std::vector<TensorBinding> outputs;
  uint64_t arena_size = 0;
  uint32_t arena_alignment = 256;
  std::vector<Launch> launches;
  // In issue order; empty for single-rank artifacts.
  std::vector<Collective> collectives;
};

struct KernelImage {
  std::string arch;
  std::string ptx;
  std::vector<uint8_t> cubin;  // empty if none
  // The code waits for its predecessor grids (griddepcontrol.wait) before it
  // touches memory: it may be launched with programmatic stream
  // serialization.
  bool waits_for_predecessor = false;
};

struct Kernel {
  std::string name;
  uint64_t content_hash = 0;
  std::vector<KernelImage> images;
  uint32_t static_shared_bytes = 0;
  uint32_t max_threads = 1024;
  std::vector<ArgKind> params;
};

struct Parameter {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  InitKind init = InitKind::kZeros;
  float init_a = 0.0f;
  float init_b = 0.0f;
  uint64_t seed_stream = 0;
  uint32_t buffer = 0;  // index into Artifact::resident_buffers
};

struct Artifact {
  uint32_t format_version = kFormatVersion;
  std::vector<std::string> target_archs;
  std::vector<Entry> entries;
  std::vector<ResidentBuffer> resident_buffers;
  std::vector<Kernel> kernels;
  std::vector<Parameter> parameters;
  // What compiled it ("kilnc 0.1.0 (kiln, commit 3911962)"); empty when not
  // recorded.
  std::string producer;
  // Filled in by LoadArtifact (FNV-1a 64 of the payload); ignored by the
  // writer.
  uint64_t checksum = 0;

  // The entry called `name`, or nullptr.
  const Entry* FindEntry(absl::string_view name) const;
};

bool operator==(const BufferRef& a, const BufferRef& b);
bool operator==(const InitialValue& a, const InitialValue& b);
bool operator==(const ResidentBuffer& a, const ResidentBuffer& b);
bool operator==(const ValueRange& a, const ValueRange& b);
bool operator==(const TensorBinding& a, const TensorBinding& b);
bool operator==(const TensorMap& a, const TensorMap& b);
bool operator==(const Arg& a, const Arg& b);
bool operator==(const Dim3& a, const Dim3& b);
bool operator==(const Launch& a, const Launch& b);
bool operator==(const CollectiveTensor& a, const CollectiveTensor& b);
bool operator==(const Collective& a, const Collective& b);
bool operator==(const Entry& a, const Entry& b);
bool operator==(const KernelImage& a, const KernelImage& b);
bool operator==(const Kernel& a, const Kernel& b);
bool operator==(const Parameter& a, const Parameter& b);
bool operator==(const Artifact& a, const Artifact& b);
inline bool operator!=(const BufferRef& a, const BufferRef& b) {
  return !(a == b);
}
inline bool operator!=(const ResidentBuffer& a, const ResidentBuffer& b) {
  return !(a == b);
}
inline bool operator!=(const TensorBinding& a, const TensorBinding& b) {
  return !(a == b);
}
inline bool operator!=(const TensorMap& a, const TensorMap& b) {
  return !(a == b);
}
inline bool operator!=(const Arg& a, const Arg& b) { return !(a == b); }
inline bool operator!=(const Dim3& a, const Dim3& b) { return !(a == b); }
inline bool operator!=(const Launch& a, const Launch& b) { return !(a == b); }
inline bool operator!=(const Entry& a, const Entry& b) { return !(a == b); }
inline bool operator!=(const KernelImage& a, const KernelImage& b) {
  return !(a == b);
}
inline bool operator!=(const Kernel& a, const Kernel& b) { return !(a == b); }
inline bool operator!=(const Parameter& a, const Parameter& b) {
  return !(a == b);
}
inline bool operator!=(const Artifact& a, const Artifact& b) {
  return !(a == b);
}

// Checks everything about an artifact that does not need a GPU: known dtypes,
// roles, archs and arg kinds; shapes non-negative with byte sizes equal to
// elements * dtype size; every buffer range inside its arena or resident
// buffer; kernel indices in range and argument lists matching the kernel's
// parameters; launch geometry non-zero and within CUDA's limits; shared memory
// within kMaxSharedBytes; cluster shapes of at most kMaxClusterBlocks that
// divide the grid, only for sm_90+ targets and never on a cooperative
// launch; unique names; parameters tied to resident buffers of the right
// role, shape and size; initial values of the buffer's size, only for
// parameters, state, master weights and constants (every constant has one),
// never beside an initialiser of the same buffer. Errors are
// InvalidArgument and start with the field path, e.g.
//   "entries[1].launches[3].args[2]: offset 4096 + 256 bytes exceeds arena size
//   4096".
absl::Status ValidateArtifact(const Artifact& artifact);

// The images of `kernel` that a device of architecture number `sm` (90 for
// sm_90) can load, either null when there is none: a cubin built for exactly
// that number (sm_90 or sm_90a), and the newest PTX the driver can compile
// for it (a target not newer than the device; an arch-specific target only
// for exactly its own architecture).
struct LoadableImages {
  const KernelImage* cubin = nullptr;
  const KernelImage* ptx = nullptr;
};
LoadableImages FindLoadableImages(const Kernel& kernel, int sm);

// Reads an artifact file image: checks its size, file identifier "KILN", format
// version and checksum, runs the FlatBuffers verifier over envelope and
// payload, checks the data section's place and every initial value's range and
// checksum, converts to plain values (the initial values point into one copy
// of the data section) and runs ValidateArtifact. Never crashes on bad input;
// every error is InvalidArgument naming the field ("file", "file_identifier",
// "format_version", "checksum", "payload", "data_offset", or a path such as
// "kernels[2].images" or "resident_buffers[3].initial_value").
absl::StatusOr<Artifact> LoadArtifact(absl::string_view bytes);
// Reads `path` and calls LoadArtifact (NotFound etc. for I/O errors).
absl::StatusOr<Artifact> LoadArtifactFile(const std::string& path);

}  // namespace artifact
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_ARTIFACT_H_
