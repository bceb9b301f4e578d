// Mutation tests of the artifact loader: thousands of damaged files, each of
// which must be rejected with InvalidArgument naming a field, or load to
// exactly the artifact it came from. None may crash (run it under --config=asan
// too).
//
// The seed is a test parameter; KILN_ROBUSTNESS_ITERATIONS scales the counts.

#include <cstdlib>
#include <functional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/kiln_artifact_generated.h"
#include "runtime/artifact/test_artifacts.h"

namespace kiln {
namespace artifact {
namespace {

int Iterations(int base) {
  const char* scale = std::getenv("KILN_ROBUSTNESS_SCALE");
  return scale == nullptr ? base : base * std::max(1, std::atoi(scale));
}

// "<path>: <message>", the path being a top-level name (file, checksum, ...)
// or a field path such as entries[1].launches[3].args[2].
bool NamesAField(const std::string& m) {
  // (std::regex would do, but its recursive matcher overflows the stack on
  // long messages under ASan.)
  const size_t colon = m.find(": ");
  if (colon == std::string::npos || colon + 2 >= m.size()) return false;
  size_t i = 0;
  while (true) {
    const size_t name = i;
    while (i < colon && ((m[i] >= 'a' && m[i] <= 'z') || m[i] == '_')) ++i;
    if (i == name) return false;
    if (i < colon && m[i] == '[') {
      const size_t digits = ++i;
      while (i < colon && m[i] >= '0' && m[i] <= '9') ++i;
      if (i == digits || i >= colon || m[i] != ']') return false;
      ++i;
    }
    if (i == colon) return true;
    if (m[i] != '.') return false;
    ++i;
  }
}

TEST(NamesAFieldTest, Grammar) {
  EXPECT_TRUE(NamesAField("checksum: stored 0x1"));
  EXPECT_TRUE(NamesAField("entries[1].launches[3].args[2]: offset"));
  EXPECT_FALSE(NamesAField("entries[1]."));
  EXPECT_FALSE(NamesAField("something went wrong"));
  EXPECT_FALSE(NamesAField("entries[x]: y"));
  EXPECT_FALSE(NamesAField("Entries: y"));
}

// The first part in which two artifacts differ, for failure messages.
std::string FirstDifference(const Artifact& a, const Artifact& b) {
  if (a.format_version != b.format_version) return "format_version";
  if (a.target_archs != b.target_archs) return "target_archs";
  for (size_t i = 0; i < std::min(a.entries.size(), b.entries.size()); ++i) {
    if (a.entries[i] != b.entries[i]) return absl::StrCat("entries[", i, "]");
  }
  if (a.entries.size() != b.entries.size()) return "entries";
  if (a.resident_buffers != b.resident_buffers) return "resident_buffers";
  for (size_t i = 0; i < std::min(a.kernels.size(), b.kernels.size()); ++i) {
    if (a.kernels[i] != b.kernels[i]) return absl::StrCat("kernels[", i, "]");
  }
  if (a.kernels.size() != b.kernels.size()) return "kernels";
  for (size_t i = 0; i < std::min(a.parameters.size(), b.parameters.size());
       ++i) {
    if (a.parameters[i] != b.parameters[i]) {
      return absl::StrCat("parameters[", i, "] init_a ", a.parameters[i].init_a,
                          " vs ", b.parameters[i].init_a, " init_b ",
                          a.parameters[i].init_b, " vs ",
                          b.parameters[i].init_b);
    }
  }
  if (a.parameters.size() != b.parameters.size()) return "parameters";
  if (a.checksum != b.checksum) return "checksum";
  return "nothing";
}

// Checks the outcome of loading a mutant: an InvalidArgument that names a
// field, or an artifact equal to `expected` (if given) or else a
// self-consistent one.
void CheckOutcome(const absl::StatusOr<Artifact>& r, const Artifact* expected,
                  const std::string& what) {
  if (!r.ok()) {
    ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << what << ": " << r.status();
    ASSERT_TRUE(NamesAField(std::string(r.status().message())))
        << what << ": " << r.status();
    return;
  }
  if (expected != nullptr) {
    ASSERT_TRUE(*r == *expected) << what << ": loaded a different artifact ("
                                 << FirstDifference(*r, *expected) << ")";
    return;
  }
  // A changed but valid payload: it must validate and survive a round trip.
  ASSERT_TRUE(ValidateArtifact(*r).ok()) << what;
  absl::StatusOr<Artifact> again = LoadArtifact(SerializeArtifact(*r));
  ASSERT_TRUE(again.ok()) << what << ": " << again.status();
  Artifact expect = *r;
  expect.checksum = again->checksum;
  ASSERT_TRUE(*again == expect) << what << ": round trip differs ("
                                << FirstDifference(*again, expect) << ")";
}

// The payload bytes of a well-formed file.
std::string PayloadOf(const std::string& file) {
  const fb::Envelope* env = fb::GetEnvelope(file.data());
  return std::string(reinterpret_cast<const char*>(env->payload()->data()),
                     env->payload()->size());
}

class ArtifactRobustnessTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    for (const Artifact& a : testing::ValidArtifacts()) {
      const std::string bytes = *WriteArtifact(a);
      Artifact loaded = *LoadArtifact(bytes);
      files_.push_back(bytes);
      loaded_.push_back(loaded);
    }
  }

  // Applies one random byte-level damage of the given kind to `s`.
  std::string Mutate(std::string s, int kind, std::mt19937_64& rng) {
    switch (kind) {
      case 0: {  // flip 1..4 random bits
        const int flips = 1 + rng() % 4;
        for (int i = 0; i < flips && !s.empty(); ++i) {
          s[rng() % s.size()] ^= static_cast<char>(1 << (rng() % 8));
        }
        break;
      }
      case 1: {  // overwrite a run with random bytes, zeros or 0xff
        if (s.empty()) break;
        const size_t at = rng() % s.size();
        const size_t len = std::min<size_t>(1 + rng() % 64, s.size() - at);
        const int fill = rng() % 3;
        for (size_t i = 0; i < len; ++i) {
          s[at + i] = fill == 0   ? static_cast<char>(rng())
                      : fill == 1 ? '\0'
                                  : '\xff';
        }
        break;
      }
      case 2: {  // append random bytes
        const size_t len = 1 + rng() % 256;
        for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>(rng()));
        break;
      }
      case 3: {  // set a random aligned 32-bit word to an interesting value
        if (s.size() < 4) break;
        static const uint32_t kValues[] = {0,          1,          4,
                                           0x7fffffff, 0x80000000, 0xffffffff,
                                           0xfffffffc, 0x10000,    8};
        const size_t at = (rng() % (s.size() / 4)) * 4;
        const uint32_t v = kValues[rng() % (sizeof(kValues) / 4)];
        std::memcpy(&s[at], &v, 4);
        break;
      }
      default: {  // truncate at a random length
        s.resize(rng() % s.size());
        break;
      }
    }
    return s;
  }

  std::vector<std::string> files_;
  std::vector<Artifact> loaded_;
};

TEST_P(ArtifactRobustnessTest, TruncationAtEveryLength) {
  for (size_t f = 0; f < files_.size(); ++f) {
    const std::string& file = files_[f];
    for (size_t len = 0; len < file.size(); ++len) {
      const std::string what = absl::StrCat("file ", f, " truncated to ", len);
      const absl::StatusOr<Artifact> r = LoadArtifact(file.substr(0, len));
      ASSERT_FALSE(r.ok()) << what;
      ASSERT_NO_FATAL_FAILURE(CheckOutcome(r, nullptr, what));
    }
  }
}

TEST_P(ArtifactRobustnessTest, RandomDamageToTheFile) {
  std::mt19937_64 rng(GetParam());
  int rejected = 0, identical = 0;
  const int n = Iterations(800);
  for (size_t f = 0; f < files_.size(); ++f) {
    for (int kind = 0; kind < 5; ++kind) {
      for (int i = 0; i < n; ++i) {
        const std::string mutant = Mutate(files_[f], kind, rng);
        const std::string what = absl::StrCat("seed ", GetParam(), " file ", f,
                                              " kind ", kind, " iteration ", i);
        const absl::StatusOr<Artifact> r = LoadArtifact(mutant);
        ASSERT_NO_FATAL_FAILURE(CheckOutcome(r, &loaded_[f], what));
        (r.ok() ? identical : rejected)++;
      }
    }
  }
  // Most damage is caught; appended bytes and padding changes load unchanged.
  EXPECT_GT(rejected, 0);
  EXPECT_GT(identical, 0);
}

// Damage inside the payload with a matching checksum: this exercises the
// FlatBuffers verifier and the semantic checks rather than the checksum.
TEST_P(ArtifactRobustnessTest, RandomDamageToResealedPayload) {
  std::mt19937_64 rng(GetParam() * 7919 + 1);
  int rejected = 0, accepted = 0;
  const int n = Iterations(800);
  for (size_t f = 0; f < files_.size(); ++f) {
    const std::string payload = PayloadOf(files_[f]);
    for (int kind = 0; kind < 5; ++kind) {
      for (int i = 0; i < n; ++i) {
        const std::string mutant =
            SealArtifactPayload(Mutate(payload, kind, rng));
        const std::string what = absl::StrCat("seed ", GetParam(), " file ", f,
                                              " kind ", kind, " iteration ", i);
        const absl::StatusOr<Artifact> r = LoadArtifact(mutant);
        ASSERT_NO_FATAL_FAILURE(CheckOutcome(r, nullptr, what));
        (r.ok() ? accepted : rejected)++;
      }
    }
  }
  EXPECT_GT(rejected, n);
}

// Field-aware damage: change one offset, size, index, extent, dimension or enum
// of the plain artifact, write it without validation, load it. The loader must
// reject it naming a field, or load exactly what was written.
TEST_P(ArtifactRobustnessTest, FieldCorruptionsViaReserialisation) {
  std::mt19937_64 rng(GetParam() * 104729 + 3);
  static const uint64_t kValues[] = {0,
                                     1,
                                     3,
                                     4,
                                     255,
                                     256,
                                     4095,
                                     4096,
                                     4097,
                                     65535,
                                     65536,
                                     232448,
                                     232449,
                                     0x7fffffff,
                                     0x80000000,
                                     0xffffffff,
                                     0x100000000ULL,
                                     (1ULL << 48) + 1,
                                     0x7fffffffffffffffULL,
                                     0x8000000000000000ULL,
                                     0xffffffffffffffffULL};
  auto value = [&]() -> uint64_t {
    if (rng() % 2) return kValues[rng() % (sizeof(kValues) / 8)];
    return rng() % 10000;
  };
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };

  int rejected = 0, accepted = 0;
  const int n = Iterations(1200);
  for (size_t f = 0; f < loaded_.size(); ++f) {
    for (int i = 0; i < n; ++i) {
      Artifact a = loaded_[f];
      std::string field;
      // Choose a random field to damage.
      const int which = rng() % 16;
      Entry& e = a.entries[pick(a.entries.size())];
      Launch* l =
          e.launches.empty() ? nullptr : &e.launches[pick(e.launches.size())];
      Arg* arg = (l == nullptr || l->args.empty())
                     ? nullptr
                     : &l->args[pick(l->args.size())];
      TensorBinding* b = nullptr;
      if (!e.inputs.empty() && rng() % 2) b = &e.inputs[pick(e.inputs.size())];
      if (b == nullptr && !e.outputs.empty())
        b = &e.outputs[pick(e.outputs.size())];
      ResidentBuffer* rb =
          a.resident_buffers.empty()
              ? nullptr
              : &a.resident_buffers[pick(a.resident_buffers.size())];
      Kernel& k = a.kernels[pick(a.kernels.size())];
      const uint64_t v = value();
      switch (which) {
        case 0:
          if (arg) arg->buffer.offset = v;
          break;
        case 1:
          if (arg) arg->buffer.size = v;
          break;
        case 2:
          if (arg) arg->buffer.index = static_cast<uint32_t>(v);
          break;
        case 3:
          if (arg) arg->buffer.space = static_cast<MemorySpace>(v % 4);
          break;
        case 4:
          if (b) b->buffer.offset = v;
          break;
        case 5:
          if (b) b->buffer.size = v;
          break;
        case 6:
          e.arena_size = v;
          break;
        case 7:
          e.arena_alignment = static_cast<uint32_t>(v);
          break;
        case 8:
          if (l) l->kernel = static_cast<uint32_t>(v);
          break;
        case 9:
          if (l) {
            uint32_t* dims[] = {&l->grid.x,  &l->grid.y,  &l->grid.z,
                                &l->block.x, &l->block.y, &l->block.z};
            *dims[pick(6)] = static_cast<uint32_t>(v);
          }
          break;
        case 10:
          if (l) l->dynamic_shared_bytes = static_cast<uint32_t>(v);
          break;
        case 11:
          if (rb) rb->byte_size = v;
          break;
        case 12:
          if (rb && !rb->shape.empty()) {
            rb->shape[pick(rb->shape.size())] = static_cast<int64_t>(v);
          }
          break;
        case 13:
          if (rb) rb->dtype = static_cast<DType>(v % 8);
          break;
        case 14:
          k.static_shared_bytes = static_cast<uint32_t>(v);
          break;
        default:
          if (!k.params.empty()) {
            if (rng() % 2)
              k.params.pop_back();
            else
              k.params[pick(k.params.size())] = static_cast<ArgKind>(v % 7);
          }
          break;
      }
      const std::string what =
          absl::StrCat("seed ", GetParam(), " artifact ", f, " iteration ", i,
                       " field ", which, " value ", v);
      const absl::StatusOr<Artifact> r = LoadArtifact(SerializeArtifact(a));
      Artifact expected = a;
      if (r.ok()) expected.checksum = r->checksum;
      ASSERT_NO_FATAL_FAILURE(CheckOutcome(r, &expected, what));
      // The writer agrees with the loader.
      ASSERT_EQ(WriteArtifact(a).ok(), r.ok()) << what;
      (r.ok() ? accepted : rejected)++;
    }
  }
  EXPECT_GT(rejected, n);
  EXPECT_GT(accepted, 0);
}

// Offsets and sizes pushed just past their container are always rejected, and
// the message names the exact argument.
TEST_P(ArtifactRobustnessTest, OffsetsPastTheEndNameTheArgument) {
  std::mt19937_64 rng(GetParam() + 17);
  for (size_t f = 0; f < loaded_.size(); ++f) {
    const Artifact& base = loaded_[f];
    for (size_t ei = 0; ei < base.entries.size(); ++ei) {
      for (size_t li = 0; li < base.entries[ei].launches.size(); ++li) {
        for (size_t ai = 0; ai < base.entries[ei].launches[li].args.size();
             ++ai) {
          Artifact a = base;
          Arg& arg = a.entries[ei].launches[li].args[ai];
          if (arg.kind != ArgKind::kBuffer) continue;
          const uint64_t cap =
              arg.buffer.space == MemorySpace::kArena
                  ? a.entries[ei].arena_size
                  : a.resident_buffers[arg.buffer.index].byte_size;
          if (rng() % 2) {
            arg.buffer.offset = cap - arg.buffer.size + 1 + rng() % 64;
          } else {
            arg.buffer.size = cap - arg.buffer.offset + 1 + rng() % 64;
          }
          const absl::StatusOr<Artifact> r = LoadArtifact(SerializeArtifact(a));
          ASSERT_FALSE(r.ok());
          const std::string path = absl::StrCat(
              "entries[", ei, "].launches[", li, "].args[", ai, "]: offset ");
          EXPECT_EQ(std::string(r.status().message()).rfind(path, 0), 0u)
              << r.status();
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ArtifactRobustnessTest,
                         ::testing::Values(1, 42, 20261130, 0x5eed));

}  // namespace
}  // namespace artifact
}  // namespace kiln
