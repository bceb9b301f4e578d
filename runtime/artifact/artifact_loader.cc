// LoadArtifact: bytes -> verified plain Artifact. The order of checks matters:
// nothing in the payload is read before the checksum has matched and the
// FlatBuffers verifier has passed; semantic checks follow on plain values.

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flatbuffers/flatbuffers.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/checksum.h"
#include "runtime/artifact/fb_convert.h"
#include "runtime/artifact/kiln_artifact_generated.h"

namespace kiln {
namespace artifact {
namespace {

template <typename... Args>
absl::Status Invalid(absl::string_view path, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", args...));
}

// FlatBuffers reads scalars in place, so the buffer must be aligned in memory
// for the largest scalar (8) and the forced vector alignment (16). Copies
// `bytes` only when it is not.
class AlignedBytes {
 public:
  explicit AlignedBytes(const void* data, size_t size) : size_(size) {
    if (reinterpret_cast<uintptr_t>(data) % 16 == 0) {
      data_ = static_cast<const uint8_t*>(data);
    } else {
      copy_.reset(new Block[(size + sizeof(Block) - 1) / sizeof(Block)]);
      std::memcpy(copy_.get(), data, size);
      data_ = reinterpret_cast<const uint8_t*>(copy_.get());
    }
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  struct alignas(16) Block {
    uint8_t bytes[16];
  };
  std::unique_ptr<Block[]> copy_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

std::string Str(const flatbuffers::String* s) {
  return s == nullptr ? std::string() : s->str();
}

static_assert(FLATBUFFERS_LITTLEENDIAN,
              "the loader copies FlatBuffers vectors as host-order bytes");

// FlatBuffers' verifier checks the alignment of a vector's length word (4
// bytes), not of its 8-byte elements, so a damaged file can hold a [long] at an
// address that is 4 mod 8. Copy the elements bytewise instead of reading them
// in place.
template <typename T>
std::vector<T> Elements(const flatbuffers::Vector<T>* v) {
  std::vector<T> out;
  if (v == nullptr || v->size() == 0) return out;
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}
std::vector<int64_t> Shape(const flatbuffers::Vector<int64_t>* v) {
  return Elements(v);
}

std::vector<uint8_t> Bytes(const flatbuffers::Vector<uint8_t>* v) {
  std::vector<uint8_t> out;
  if (v != nullptr) out.assign(v->begin(), v->end());
  return out;
}

TensorMap TensorMapFromFb(const fb::TensorMap* m) {
  TensorMap out;
  if (m == nullptr) return out;
  out.mode = static_cast<TensorMapMode>(m->mode());
  out.dtype = DTypeFromFb(m->dtype());
  out.dims = Elements(m->dims());
  out.strides = Elements(m->strides());
  out.box = Elements(m->box());
  out.element_strides = Elements(m->element_strides());
  out.lower_corner = Elements(m->lower_corner());
  out.upper_corner = Elements(m->upper_corner());
  out.channels_per_pixel = m->channels_per_pixel();
  out.pixels_per_column = m->pixels_per_column();
  out.swizzle_bytes = m->swizzle_bytes();
  return out;
}

BufferRef Ref(const fb::BufferRef* r) {
  if (r == nullptr) return BufferRef{static_cast<MemorySpace>(0), 0, 0, 0};
  return BufferRef{static_cast<MemorySpace>(r->space()), r->index(),
                   r->offset(), r->size()};
}

std::vector<TensorBinding> Bindings(
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorBinding>>* v) {
  std::vector<TensorBinding> out;
  if (v == nullptr) return out;
  for (const fb::TensorBinding* t : *v) {
    TensorBinding b;
    b.name = Str(t->name());
    b.dtype = DTypeFromFb(t->dtype());
    b.shape = Shape(t->shape());
    b.buffer = Ref(t->buffer());
    if (const fb::ValueRange* r = t->valid_range()) {
      ValueRange range;
      range.low = r->low();
      range.high = r->high();
      if (r->ignore_index().has_value()) {
        range.ignore_index = r->ignore_index().value();
      }
      range.use = Str(r->use());
      b.valid_range = std::move(range);
    }
    out.push_back(std::move(b));
  }
  return out;
}

// The initial value of resident buffer `index` from its range in `data`
// (the file's data section, which `owner` holds): within the section, at a
// multiple of kDataAlignment, with its checksum.
absl::StatusOr<InitialValue> ValueInData(
    size_t index, const fb::DataRange& range, absl::string_view data,
    uint64_t data_offset, const std::shared_ptr<const std::string>& owner) {
  const std::string path =
      absl::StrCat("resident_buffers[", index, "].initial_value");
  if (range.offset() % kDataAlignment != 0) {
    return Invalid(path, "offset ", range.offset(), " is not a multiple of ",
                   kDataAlignment);
  }
  if (range.offset() > data.size() ||
      range.size() > data.size() - range.offset()) {
    return Invalid(path, "bytes [", range.offset(), ", +", range.size(),
                   ") lie beyond the data section's ", data.size());
  }
  const absl::string_view bytes = data.substr(range.offset(), range.size());
  const uint64_t checksum = Fnv1a64(bytes);
  if (checksum != range.checksum()) {
    return Invalid(path,
                   absl::StrFormat("stored checksum 0x%016x, computed 0x%016x "
                                   "over %d bytes at file offset %d",
                                   range.checksum(), checksum, bytes.size(),
                                   data_offset + range.offset()));
  }
  return InitialValue{bytes, owner};
}

// The initial values of a format 3 file's resident buffers, pointing into
// one copy of its data section `data` (at file offset `data_offset`).
absl::Status ReadInitialValues(const fb::Artifact& a, absl::string_view data,
                               uint64_t data_offset, Artifact& out) {
  if (a.constants() != nullptr) {
    return Invalid("constants",
                   "format 3 keeps constant data in the data section");
  }
  if (a.resident_buffers() == nullptr) return absl::OkStatus();
  const auto owner = std::make_shared<const std::string>(data);
  for (size_t i = 0; i < a.resident_buffers()->size(); ++i) {
    const fb::DataRange* range = a.resident_buffers()->Get(i)->initial_value();
    if (range == nullptr) continue;
    absl::StatusOr<InitialValue> value =
        ValueInData(i, *range, *owner, data_offset, owner);
    if (!value.ok()) return value.status();
    out.resident_buffers[i].initial_value = *std::move(value);
  }
  return absl::OkStatus();
}

// A format 2 file's constant data (in the payload) as initial values.
absl::Status ReadConstants(const fb::Artifact& a, Artifact& out) {
  if (a.resident_buffers() != nullptr) {
    for (size_t i = 0; i < a.resident_buffers()->size(); ++i) {
      if (a.resident_buffers()->Get(i)->initial_value() != nullptr) {
        return Invalid(absl::StrCat("resident_buffers[", i, "].initial_value"),
                       "format 2 has no data section");
      }
    }
  }
  if (a.constants() == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < a.constants()->size(); ++i) {
    const fb::ConstantData* c = a.constants()->Get(i);
    const std::string path = absl::StrCat("constants[", i, "].buffer");
    if (c->buffer() >= out.resident_buffers.size()) {
      return Invalid(path, "resident buffer index ", c->buffer(),
                     " out of range (", out.resident_buffers.size(),
                     " resident buffers)");
    }
    ResidentBuffer& b = out.resident_buffers[c->buffer()];
    if (b.role != BufferRole::kConstant) {
      return Invalid(path, "resident buffer ", c->buffer(), " '", b.name,
                     "' is not a constant");
    }
    if (b.initial_value) {
      return Invalid(path, "resident buffer ", c->buffer(), " has data twice");
    }
    const std::vector<uint8_t> data = Bytes(c->data());
    b.initial_value = InitialValue::Copy(absl::string_view(
        reinterpret_cast<const char*>(data.data()), data.size()));
  }
  return absl::OkStatus();
}

// Plain values from a verified payload. Absent fields become empty values or
// zeros that ValidateArtifact rejects where they matter.
Artifact Convert(const fb::Artifact& a) {
  Artifact out;
  out.producer = Str(a.producer());
  if (a.target_archs() != nullptr) {
    for (const flatbuffers::String* s : *a.target_archs()) {
      out.target_archs.push_back(Str(s));
    }
  }
  if (a.entries() != nullptr) {
    for (const fb::Entry* e : *a.entries()) {
      Entry entry;
      entry.name = Str(e->name());
      entry.inputs = Bindings(e->inputs());
      entry.outputs = Bindings(e->outputs());
      entry.arena_size = e->arena() ? e->arena()->size() : 0;
      entry.arena_alignment = e->arena() ? e->arena()->alignment() : 0;
      if (e->launches() != nullptr) {
        for (const fb::Launch* l : *e->launches()) {
          Launch launch;
          launch.kernel = l->kernel();
          launch.grid = Dim3FromFb(l->grid(), Dim3{0, 0, 0});
          launch.block = Dim3FromFb(l->block(), Dim3{0, 0, 0});
          launch.dynamic_shared_bytes = l->dynamic_shared_bytes();
          launch.cluster = Dim3FromFb(l->cluster(), Dim3{1, 1, 1});
          launch.cooperative = l->cooperative();
          launch.persistent_blocks_per_sm = l->persistent_blocks_per_sm();
          if (l->args() != nullptr) {
            for (const fb::Arg* arg : *l->args()) {
              Arg x;
              x.kind = static_cast<ArgKind>(arg->kind());
              x.buffer = Ref(arg->buffer());
              x.scalar = arg->scalar();
              x.tensor_map = TensorMapFromFb(arg->tensor_map());
              launch.args.push_back(x);
            }
          }
          entry.launches.push_back(std::move(launch));
        }
      }
      if (e->collectives() != nullptr) {
        for (const fb::Collective* c : *e->collectives()) {
          Collective collective;
          collective.kind = static_cast<CollectiveKind>(c->kind());
          collective.after_launches = c->after_launches();
          collective.wait_before = c->wait_before();
          if (c->tensors() != nullptr) {
            for (const fb::CollectiveTensor* t : *c->tensors()) {
              collective.tensors.push_back(
                  {Str(t->name()), DTypeFromFb(t->dtype()), Ref(t->buffer())});
            }
          }
          entry.collectives.push_back(std::move(collective));
        }
      }
      out.entries.push_back(std::move(entry));
    }
  }
  if (a.resident_buffers() != nullptr) {
    for (const fb::ResidentBuffer* r : *a.resident_buffers()) {
      ResidentBuffer b;
      b.name = Str(r->name());
      b.byte_size = r->byte_size();
      b.role = static_cast<BufferRole>(r->role());
      b.dtype = DTypeFromFb(r->dtype());
      b.shape = Shape(r->shape());
      b.donated = r->donated();
      b.in_place = r->in_place();
      out.resident_buffers.push_back(std::move(b));
    }
  }
  if (a.kernels() != nullptr) {
    for (const fb::Kernel* k : *a.kernels()) {
      Kernel kernel;
      kernel.name = Str(k->name());
      kernel.content_hash = k->content_hash();
      if (k->images() != nullptr) {
        for (const fb::KernelImage* i : *k->images()) {
          KernelImage image;
          image.arch = Str(i->arch());
          image.ptx = Str(i->ptx());
          image.cubin = Bytes(i->cubin());
          image.waits_for_predecessor = i->waits_for_predecessor();
          kernel.images.push_back(std::move(image));
        }
      }
      kernel.static_shared_bytes = k->static_shared_bytes();
      kernel.max_threads = k->max_threads();
      if (k->params() != nullptr) {
        for (fb::ArgKind p : *k->params()) {
          kernel.params.push_back(static_cast<ArgKind>(p));
        }
      }
      out.kernels.push_back(std::move(kernel));
    }
  }
  if (a.parameters() != nullptr) {
    for (const fb::Parameter* p : *a.parameters()) {
      Parameter param;
      param.name = Str(p->name());
      param.shape = Shape(p->shape());
      param.dtype = DTypeFromFb(p->dtype());
      param.init = InitKindFromFb(p->init());
      param.init_a = p->init_a();
      param.init_b = p->init_b();
      param.seed_stream = p->seed_stream();
      param.buffer = p->buffer();
      out.parameters.push_back(std::move(param));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Artifact> LoadArtifact(absl::string_view bytes) {
  // Identifier at bytes 4..7, after the root offset.
  constexpr size_t kMinSize = 8;
  if (bytes.size() < kMinSize) {
    return Invalid("file", bytes.size(), " bytes is too small for an artifact");
  }
  if (bytes.substr(4, 4) != fb::EnvelopeIdentifier()) {
    return Invalid("file_identifier", "expected \"KILN\", got \"",
                   absl::CEscape(bytes.substr(4, 4)), "\"");
  }
  // The FlatBuffers part (the envelope) comes first and is bounded by the
  // format's limit; the data section after it is not.
  constexpr size_t kMaxFlatBuffer = FLATBUFFERS_MAX_BUFFER_SIZE - 1;
  AlignedBytes file(bytes.data(), std::min(bytes.size(), kMaxFlatBuffer));
  {
    flatbuffers::Verifier verifier(file.data(), file.size());
    if (!fb::VerifyEnvelopeBuffer(verifier)) {
      return Invalid("file", "the envelope is not a valid FlatBuffer");
    }
  }
  const fb::Envelope* envelope = fb::GetEnvelope(file.data());
  const uint32_t version = envelope->format_version();
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return Invalid("format_version", "unsupported version ", version,
                   " (this runtime reads ", kOldestFormatVersion, " to ",
                   kFormatVersion, ")");
  }
  // The data section ends the file; the envelope must lie before it.
  const uint64_t data_offset = envelope->data_offset();
  const uint64_t data_size = envelope->data_size();
  if (version < 3 && (data_offset != 0 || data_size != 0)) {
    return Invalid("data_offset", "format 2 has no data section");
  }
  if (data_size == 0 && data_offset == 0) {
    if (bytes.size() > kMaxFlatBuffer) {
      return Invalid("file", bytes.size(),
                     " bytes without a data section exceeds the format's "
                     "limit ",
                     kMaxFlatBuffer);
    }
  } else {
    if (data_offset % kDataAlignment != 0 || data_offset > bytes.size() ||
        data_size != bytes.size() - data_offset) {
      return Invalid(
          "data_offset",
          absl::StrCat("the data section [", data_offset, ", +", data_size,
                       ") must start at a multiple of ", kDataAlignment,
                       " and end the file of ", bytes.size(), " bytes"));
    }
    flatbuffers::Verifier verifier(
        file.data(), std::min<uint64_t>(data_offset, file.size()));
    if (data_offset > kMaxFlatBuffer || !fb::VerifyEnvelopeBuffer(verifier)) {
      return Invalid("file",
                     "the envelope does not end before the data section");
    }
  }
  const flatbuffers::Vector<uint8_t>* payload = envelope->payload();
  if (payload == nullptr || payload->size() == 0) {
    return Invalid("payload", "missing");
  }
  const uint64_t checksum = Fnv1a64(payload->data(), payload->size());
  if (checksum != envelope->checksum()) {
    return Invalid(
        "checksum",
        absl::StrFormat("stored 0x%016x, computed 0x%016x over %d "
                        "payload bytes",
                        envelope->checksum(), checksum, payload->size()));
  }
  AlignedBytes body(payload->data(), payload->size());
  {
    flatbuffers::Verifier verifier(body.data(), body.size());
    if (!verifier.VerifyBuffer<fb::Artifact>(nullptr)) {
      return Invalid("payload", "not a valid FlatBuffer of table Artifact");
    }
  }
  const fb::Artifact& root = *flatbuffers::GetRoot<fb::Artifact>(body.data());
  Artifact artifact = Convert(root);
  artifact.format_version = version;
  artifact.checksum = checksum;
  absl::Status values =
      version < 3
          ? ReadConstants(root, artifact)
          : ReadInitialValues(root,
                              data_size == 0 ? absl::string_view()
                                             : bytes.substr(data_offset),
                              data_offset, artifact);
  if (!values.ok()) return values;
  absl::Status status = ValidateArtifact(artifact);
  if (!status.ok()) return status;
  return artifact;
}

absl::StatusOr<Artifact> LoadArtifactFile(const std::string& path) {
  // Read whole into one string: the data section may be most of the file.
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  const std::streamoff size = in.tellg();
  std::string contents(size < 0 ? 0 : static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (size < 0 || !in.read(contents.data(), size)) {
    return absl::DataLossError(absl::StrCat("cannot read ", path));
  }
  return LoadArtifact(contents);
}

}  // namespace artifact
}  // namespace kiln
