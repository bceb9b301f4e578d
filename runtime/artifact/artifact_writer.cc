#include "runtime/artifact/artifact_writer.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "runtime/artifact/checksum.h"
#include "runtime/artifact/fb_convert.h"
#include "runtime/artifact/kiln_artifact_generated.h"
#include "runtime/io/atomic_file.h"

namespace kiln {
namespace artifact {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Vector;

fb::BufferRef ToFb(const BufferRef& r) {
  return fb::BufferRef(static_cast<fb::MemorySpace>(r.space), r.index, r.offset,
                       r.size);
}

Offset<Vector<int64_t>> Shape(FlatBufferBuilder& b,
                              const std::vector<int64_t>& shape) {
  return b.CreateVector(shape);
}

Offset<fb::ValueRange> RangeFb(FlatBufferBuilder& b, const ValueRange& r) {
  auto use = b.CreateString(r.use);
  fb::ValueRangeBuilder range(b);
  range.add_low(r.low);
  range.add_high(r.high);
  if (r.ignore_index) range.add_ignore_index(*r.ignore_index);
  range.add_use(use);
  return range.Finish();
}

Offset<fb::TensorBinding> Binding(FlatBufferBuilder& b,
                                  const TensorBinding& t) {
  auto name = b.CreateString(t.name);
  auto shape = Shape(b, t.shape);
  // Left out when absent, so files without ranges stay as they were.
  const Offset<fb::ValueRange> range =
      t.valid_range ? RangeFb(b, *t.valid_range) : Offset<fb::ValueRange>();
  const fb::BufferRef ref = ToFb(t.buffer);
  return fb::CreateTensorBinding(b, name, DTypeToFb(t.dtype), shape, &ref,
                                 range);
}

Offset<Vector<Offset<fb::TensorBinding>>> Bindings(
    FlatBufferBuilder& b, const std::vector<TensorBinding>& ts) {
  std::vector<Offset<fb::TensorBinding>> out;
  for (const TensorBinding& t : ts) out.push_back(Binding(b, t));
  return b.CreateVector(out);
}

Offset<fb::TensorMap> TensorMapFb(FlatBufferBuilder& b, const TensorMap& m) {
  auto dims = b.CreateVector(m.dims);
  auto strides = b.CreateVector(m.strides);
  auto box = b.CreateVector(m.box);
  auto element_strides = b.CreateVector(m.element_strides);
  auto lower = b.CreateVector(m.lower_corner);
  auto upper = b.CreateVector(m.upper_corner);
  return fb::CreateTensorMap(
      b, static_cast<fb::TensorMapMode>(m.mode), DTypeToFb(m.dtype), dims,
      strides, box, element_strides, lower, upper, m.channels_per_pixel,
      m.pixels_per_column, m.swizzle_bytes);
}

Offset<fb::Launch> LaunchFb(FlatBufferBuilder& b, const Launch& l) {
  std::vector<Offset<fb::Arg>> args;
  for (const Arg& a : l.args) {
    // A scalar's buffer reference is left out; a buffer's is always written,
    // and a tensor map only for its kind (files without maps stay as they
    // were).
    const fb::BufferRef ref = ToFb(a.buffer);
    const bool has_ref =
        a.kind == ArgKind::kBuffer || a.kind == ArgKind::kTensorMap ||
        a.buffer != BufferRef{static_cast<MemorySpace>(0), 0, 0, 0};
    const bool has_map =
        a.kind == ArgKind::kTensorMap || a.tensor_map != TensorMap{};
    const Offset<fb::TensorMap> map =
        has_map ? TensorMapFb(b, a.tensor_map) : Offset<fb::TensorMap>();
    args.push_back(fb::CreateArg(b, static_cast<fb::ArgKind>(a.kind),
                                 has_ref ? &ref : nullptr, a.scalar, map));
  }
  auto args_vec = b.CreateVector(args);
  const fb::Dim3 grid = Dim3ToFb(l.grid);
  const fb::Dim3 block = Dim3ToFb(l.block);
  // No cluster is left out, so files without clusters stay as they were.
  const fb::Dim3 cluster = Dim3ToFb(l.cluster);
  return fb::CreateLaunch(b, l.kernel, &grid, &block, l.dynamic_shared_bytes,
                          args_vec, l.clustered() ? &cluster : nullptr,
                          l.cooperative, l.persistent_blocks_per_sm);
}

Offset<fb::Entry> EntryFb(FlatBufferBuilder& b, const Entry& e) {
  auto name = b.CreateString(e.name);
  auto inputs = Bindings(b, e.inputs);
  auto outputs = Bindings(b, e.outputs);
  auto arena = fb::CreateArena(b, e.arena_size, e.arena_alignment);
  std::vector<Offset<fb::Launch>> launches;
  for (const Launch& l : e.launches) launches.push_back(LaunchFb(b, l));
  auto launches_vec = b.CreateVector(launches);
  flatbuffers::Offset<flatbuffers::Vector<Offset<fb::Collective>>>
      collectives_vec = 0;
  if (!e.collectives.empty()) {
    std::vector<Offset<fb::Collective>> collectives;
    for (const Collective& c : e.collectives) {
      std::vector<Offset<fb::CollectiveTensor>> tensors;
      for (const CollectiveTensor& t : c.tensors) {
        const fb::BufferRef ref = ToFb(t.buffer);
        tensors.push_back(fb::CreateCollectiveTensor(b, b.CreateString(t.name),
                                                     DTypeToFb(t.dtype), &ref));
      }
      collectives.push_back(fb::CreateCollective(
          b, static_cast<fb::CollectiveKind>(c.kind), c.after_launches,
          c.wait_before, b.CreateVector(tensors)));
    }
    collectives_vec = b.CreateVector(collectives);
  }
  return fb::CreateEntry(b, name, inputs, outputs, arena, launches_vec,
                         collectives_vec);
}

Offset<fb::Kernel> KernelFb(FlatBufferBuilder& b, const Kernel& k) {
  auto name = b.CreateString(k.name);
  std::vector<Offset<fb::KernelImage>> images;
  for (const KernelImage& image : k.images) {
    auto arch = b.CreateString(image.arch);
    auto ptx = b.CreateString(image.ptx);
    Offset<Vector<uint8_t>> cubin = 0;
    if (!image.cubin.empty()) {
      b.ForceVectorAlignment(image.cubin.size(), 1, 16);
      cubin = b.CreateVector(image.cubin);
    }
    images.push_back(fb::CreateKernelImage(b, arch, ptx, cubin,
                                           image.waits_for_predecessor));
  }
  auto images_vec = b.CreateVector(images);
  std::vector<fb::ArgKind> params;
  for (ArgKind p : k.params) params.push_back(static_cast<fb::ArgKind>(p));
  auto params_vec = b.CreateVector(params);
  return fb::CreateKernel(b, name, k.content_hash, images_vec,
                          k.static_shared_bytes, k.max_threads, params_vec);
}

// The data section of a format 3 file: each initial value at the next
// multiple of kDataAlignment, zeros between.
struct DataSection {
  std::vector<std::optional<fb::DataRange>> ranges;  // by resident buffer
  std::vector<absl::string_view> pieces;
  std::vector<std::shared_ptr<const void>> owners;
  uint64_t size = 0;
};

DataSection LayOutData(const Artifact& a) {
  static const char kZeros[kDataAlignment] = {};
  DataSection data;
  data.ranges.resize(a.resident_buffers.size());
  if (a.format_version < 3) return data;  // format 2 has no data section
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const std::optional<InitialValue>& value =
        a.resident_buffers[i].initial_value;
    if (!value) continue;
    const uint64_t pad =
        (kDataAlignment - data.size % kDataAlignment) % kDataAlignment;
    if (pad != 0) data.pieces.push_back(absl::string_view(kZeros, pad));
    data.size += pad;
    data.ranges[i] =
        fb::DataRange(data.size, value->bytes.size(), Fnv1a64(value->bytes));
    if (!value->bytes.empty()) data.pieces.push_back(value->bytes);
    if (value->owner) data.owners.push_back(value->owner);
    data.size += value->bytes.size();
  }
  return data;
}

std::string SerializePayload(const Artifact& a, const DataSection& data) {
  FlatBufferBuilder b(4096);
  // Write scalars even when they equal the schema default: otherwise -0.0f
  // (== 0.0f) would be dropped and read back as +0.0f.
  b.ForceDefaults(true);
  std::vector<Offset<flatbuffers::String>> archs;
  for (const std::string& arch : a.target_archs) {
    archs.push_back(b.CreateString(arch));
  }
  auto archs_vec = b.CreateVector(archs);

  std::vector<Offset<fb::Entry>> entries;
  for (const Entry& e : a.entries) entries.push_back(EntryFb(b, e));
  auto entries_vec = b.CreateVector(entries);

  std::vector<Offset<fb::ResidentBuffer>> residents;
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const ResidentBuffer& r = a.resident_buffers[i];
    auto name = b.CreateString(r.name);
    auto shape = Shape(b, r.shape);
    const fb::DataRange* range = data.ranges[i] ? &*data.ranges[i] : nullptr;
    residents.push_back(fb::CreateResidentBuffer(
        b, name, r.byte_size, static_cast<fb::BufferRole>(r.role),
        DTypeToFb(r.dtype), shape, r.donated, r.in_place, range));
  }
  auto residents_vec = b.CreateVector(residents);

  std::vector<Offset<fb::Kernel>> kernels;
  for (const Kernel& k : a.kernels) kernels.push_back(KernelFb(b, k));
  auto kernels_vec = b.CreateVector(kernels);

  std::vector<Offset<fb::Parameter>> params;
  for (const Parameter& p : a.parameters) {
    auto name = b.CreateString(p.name);
    auto shape = Shape(b, p.shape);
    params.push_back(fb::CreateParameter(b, name, shape, DTypeToFb(p.dtype),
                                         InitKindToFb(p.init), p.init_a,
                                         p.init_b, p.seed_stream, p.buffer));
  }
  auto params_vec = b.CreateVector(params);

  // Format 2 keeps the constants' data in the payload.
  Offset<Vector<Offset<fb::ConstantData>>> constants_vec = 0;
  if (a.format_version < 3) {
    std::vector<Offset<fb::ConstantData>> constants;
    for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
      const ResidentBuffer& r = a.resident_buffers[i];
      if (r.role != BufferRole::kConstant || !r.initial_value) continue;
      const absl::string_view bytes = r.initial_value->bytes;
      b.ForceVectorAlignment(bytes.size(), 1, 16);
      auto values = b.CreateVector(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      constants.push_back(
          fb::CreateConstantData(b, static_cast<uint32_t>(i), values));
    }
    constants_vec = b.CreateVector(constants);
  }

  const Offset<flatbuffers::String> producer =
      a.producer.empty() ? Offset<flatbuffers::String>()
                         : b.CreateString(a.producer);
  b.Finish(fb::CreateArtifact(b, archs_vec, entries_vec, residents_vec,
                              kernels_vec, params_vec, constants_vec,
                              producer));
  std::string payload(reinterpret_cast<const char*>(b.GetBufferPointer()),
                      b.GetSize());
  // A whole number of the envelope's 16-byte payload alignment, so the
  // payload ends the file with no padding after it: then cutting any byte off
  // the file cuts the payload, which the verifier rejects.
  payload.resize((payload.size() + 15) / 16 * 16, '\0');
  return payload;
}

// The envelope of `payload`, followed by zeros up to the data section of
// `data_size` bytes when there is one.
std::string Seal(absl::string_view payload, uint32_t format_version,
                 uint64_t data_size) {
  const uint64_t checksum = Fnv1a64(payload);
  auto build = [&](uint64_t data_offset) {
    FlatBufferBuilder b(payload.size() + 128);
    // The data fields are written even as zeros while the offset is being
    // measured, so that both builds have the same size.
    b.ForceDefaults(data_size != 0);
    b.ForceVectorAlignment(payload.size(), 1, 16);
    auto payload_vec = b.CreateVector(
        reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
    auto root = fb::CreateEnvelope(b, format_version, checksum, payload_vec,
                                   data_size != 0 ? data_offset : 0, data_size);
    fb::FinishEnvelopeBuffer(b, root);
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()),
                       b.GetSize());
  };
  std::string head = build(0);
  if (data_size == 0) return head;
  const uint64_t data_offset =
      (head.size() + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
  head = build(data_offset);
  head.resize(data_offset, '\0');
  return head;
}

}  // namespace

uint64_t ArtifactFile::size() const {
  uint64_t bytes = head.size();
  for (absl::string_view piece : data) bytes += piece.size();
  return bytes;
}

std::string ArtifactFile::Join() const {
  std::string out;
  out.reserve(size());
  out += head;
  for (absl::string_view piece : data) out.append(piece.data(), piece.size());
  return out;
}

std::string SealArtifactPayload(absl::string_view payload,
                                uint32_t format_version) {
  return Seal(payload, format_version, 0);
}

ArtifactFile LayOutArtifact(const Artifact& artifact) {
  DataSection data = LayOutData(artifact);
  const std::string payload = SerializePayload(artifact, data);
  ArtifactFile file;
  file.checksum = Fnv1a64(payload);
  file.head = Seal(payload, artifact.format_version, data.size);
  file.data = std::move(data.pieces);
  file.owners = std::move(data.owners);
  return file;
}

std::string SerializeArtifact(const Artifact& artifact) {
  return LayOutArtifact(artifact).Join();
}

absl::StatusOr<ArtifactFile> LayOutValidArtifact(const Artifact& artifact) {
  absl::Status status = ValidateArtifact(artifact);
  if (!status.ok()) return status;
  return LayOutArtifact(artifact);
}

absl::StatusOr<std::string> WriteArtifact(const Artifact& artifact) {
  absl::StatusOr<ArtifactFile> file = LayOutValidArtifact(artifact);
  if (!file.ok()) return file.status();
  return file->Join();
}

absl::Status WriteArtifactFile(const Artifact& artifact,
                               const std::string& path) {
  absl::StatusOr<std::string> bytes = WriteArtifact(artifact);
  if (!bytes.ok()) return bytes.status();
  return io::WriteFileAtomically(path, *bytes);
}

ArtifactWriter::ArtifactWriter(std::vector<std::string> target_archs) {
  artifact_.target_archs = std::move(target_archs);
}

uint32_t ArtifactWriter::AddKernel(Kernel kernel) {
  artifact_.kernels.push_back(std::move(kernel));
  return static_cast<uint32_t>(artifact_.kernels.size() - 1);
}

uint32_t ArtifactWriter::AddResidentBuffer(ResidentBuffer buffer) {
  artifact_.resident_buffers.push_back(std::move(buffer));
  return static_cast<uint32_t>(artifact_.resident_buffers.size() - 1);
}

uint32_t ArtifactWriter::AddBuffer(std::string name, BufferRole role,
                                   DType dtype, std::vector<int64_t> shape) {
  ResidentBuffer b;
  b.name = std::move(name);
  b.role = role;
  b.dtype = dtype;
  uint64_t bytes = static_cast<uint64_t>(::kiln::DTypeSize(dtype));
  for (int64_t d : shape) bytes *= static_cast<uint64_t>(d < 0 ? 0 : d);
  b.byte_size = bytes;
  b.shape = std::move(shape);
  b.in_place = role == BufferRole::kParameter || role == BufferRole::kState ||
               role == BufferRole::kOptimizerState ||
               role == BufferRole::kMasterWeight;
  return AddResidentBuffer(std::move(b));
}

uint32_t ArtifactWriter::AddParameter(std::string name, DType dtype,
                                      std::vector<int64_t> shape, InitKind init,
                                      float init_a, float init_b,
                                      uint64_t seed_stream) {
  return AddInitialized(BufferRole::kParameter, std::move(name), dtype,
                        std::move(shape), init, init_a, init_b, seed_stream);
}

uint32_t ArtifactWriter::AddState(std::string name, DType dtype,
                                  std::vector<int64_t> shape, InitKind init,
                                  float init_a, float init_b,
                                  uint64_t seed_stream) {
  return AddInitialized(BufferRole::kState, std::move(name), dtype,
                        std::move(shape), init, init_a, init_b, seed_stream);
}

uint32_t ArtifactWriter::AddInitialized(BufferRole role, std::string name,
                                        DType dtype, std::vector<int64_t> shape,
                                        InitKind init, float init_a,
                                        float init_b, uint64_t seed_stream) {
  Parameter p;
  p.name = name;
  p.shape = shape;
  p.dtype = dtype;
  p.init = init;
  p.init_a = init_a;
  p.init_b = init_b;
  p.seed_stream = seed_stream;
  p.buffer = AddBuffer(std::move(name), role, dtype, std::move(shape));
  artifact_.parameters.push_back(std::move(p));
  return artifact_.parameters.back().buffer;
}

uint32_t ArtifactWriter::AddConstant(std::string name, DType dtype,
                                     std::vector<int64_t> shape,
                                     std::vector<uint8_t> data) {
  const uint32_t index = AddBuffer(std::move(name), BufferRole::kConstant,
                                   dtype, std::move(shape));
  SetInitialValue(
      index, InitialValue::Copy(absl::string_view(
                 reinterpret_cast<const char*>(data.data()), data.size())));
  return index;
}

void ArtifactWriter::SetInitialValue(uint32_t buffer, InitialValue value) {
  artifact_.resident_buffers[buffer].initial_value = std::move(value);
}

uint32_t ArtifactWriter::AddEntry(Entry entry) {
  artifact_.entries.push_back(std::move(entry));
  return static_cast<uint32_t>(artifact_.entries.size() - 1);
}

absl::StatusOr<std::string> ArtifactWriter::Finish() const {
  return WriteArtifact(artifact_);
}

}  // namespace artifact
}  // namespace kiln
