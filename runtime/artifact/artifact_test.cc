#include "runtime/artifact/artifact.h"

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/checksum.h"
#include "runtime/artifact/kiln_artifact_generated.h"
#include "runtime/artifact/test_artifacts.h"

namespace kiln {
namespace artifact {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ArtifactTest, ValidArtifactsRoundTrip) {
  for (const Artifact& a : testing::ValidArtifacts()) {
    absl::StatusOr<std::string> bytes = WriteArtifact(a);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<Artifact> loaded = LoadArtifact(*bytes);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    Artifact expected = a;
    expected.checksum = loaded->checksum;
    EXPECT_TRUE(*loaded == expected);
    EXPECT_NE(loaded->checksum, 0u);
    // Serialising what was loaded gives the same bytes.
    EXPECT_EQ(SerializeArtifact(*loaded), *bytes);
  }
}

// MinimalArtifact() as written before value ranges and producers were
// recorded: such files still load, and the writer still writes them so.
constexpr char kMinimalArtifactBeforeRanges[] =
    "140000004b494c4e00000a00180004000c0008000a0000000200000010000000b9e1b1f2"
    "7f80363400000000100300001400000010001c00040008000c0010001400180010000000"
    "e4020000f4000000ec000000140000000c00000004000000000000000000000001000000"
    "14000000100020000400180008000c001000140010000000ac0000002000000000000000"
    "000100000c000000d111000000000000030000000101020001000000100000000c001000"
    "08000c00000007000c000000000000016000000004000000500000002e76657273696f6e"
    "20382e300a2e74617267657420736d5f39300a2e616464726573735f73697a652036340a"
    "2e76697369626c65202e656e7472792072656c755f3028290a7b0a20207265743b0a7d0a"
    "0000000005000000736d5f39300000000600000072656c755f3000000000000001000000"
    "1400000000000e001800040008000c00100014000e000000c4010000640100000c010000"
    "f80000000400000001000000180000001400300008000c00180024002800000007002c00"
    "140000000000000000000000010000000100000001000000200000000100000001000000"
    "0000000008000000000000000300000070000000340000001000000000000a0016000700"
    "000008000a0000000000000220000000000000000000000000000a002e00070008002000"
    "0a0000000000000101000000000000000001000000000000800000000000000000000000"
    "000000000000000000000a0028000700080020000a000000000000010100000000000000"
    "000000000000000080000000000000000000000000000000080010000800040008000000"
    "0001000000020000000000000100000004000000acffffff000000013c00000020000000"
    "010000000000000000010000000000008000000000000000000000000200000004000000"
    "00000000080000000000000000000000010000007900000001000000100000000c002c00"
    "080007000c0010000c000000000000013800000020000000010000000000000000000000"
    "000000008000000000000000000000000200000004000000000000000800000000000000"
    "010000007800000007000000666f727761726400010000000400000005000000736d5f39"
    "30000000";

TEST(ArtifactTest, FilesWithoutRangesOrProducerLoadAsBefore) {
  const std::string bytes =
      absl::HexStringToBytes(kMinimalArtifactBeforeRanges);
  absl::StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Artifact expected = testing::MinimalArtifact();
  expected.format_version = 2;
  expected.checksum = loaded->checksum;
  EXPECT_TRUE(*loaded == expected);
  EXPECT_FALSE(loaded->entries[0].inputs[0].valid_range.has_value());
  EXPECT_EQ(loaded->producer, "");
  expected.checksum = 0;
  EXPECT_EQ(SerializeArtifact(expected), bytes);
}

TEST(ArtifactTest, RangesAndProducerRoundTrip) {
  absl::StatusOr<Artifact> loaded =
      LoadArtifact(SerializeArtifact(testing::ClassifierArtifact()));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->producer, "kilnc 0.1.0 (kiln, commit 1234567)");
  const Entry& forward = *loaded->FindEntry("forward");
  ASSERT_TRUE(forward.inputs[1].valid_range.has_value());
  const ValueRange& labels = *forward.inputs[1].valid_range;
  EXPECT_EQ(labels.ToString(), "[0, 3) or -100");
  EXPECT_EQ(
      labels.use,
      "labels of kiln.cross_entropy over 3 classes with ignore_index -100");
  EXPECT_TRUE(labels.Contains(0));
  EXPECT_TRUE(labels.Contains(2));
  EXPECT_TRUE(labels.Contains(-100));
  EXPECT_FALSE(labels.Contains(3));
  EXPECT_FALSE(labels.Contains(-1));
  EXPECT_EQ(forward.inputs[0].valid_range->ToString(), "[0, 16)");
  EXPECT_FALSE(forward.inputs[0].valid_range->ignore_index.has_value());
  EXPECT_FALSE(forward.inputs[2].valid_range.has_value());
}

TEST(ArtifactTest, FileLayout) {
  const std::string bytes = *WriteArtifact(testing::MinimalArtifact());
  EXPECT_EQ(bytes.substr(4, 4), "KILN");
  EXPECT_EQ(bytes, SerializeArtifact(testing::MinimalArtifact()));
}

TEST(ArtifactTest, LoadsFromUnalignedMemory) {
  const std::string bytes = *WriteArtifact(testing::TrainingArtifact());
  std::string shifted = "x" + bytes;
  absl::StatusOr<Artifact> loaded =
      LoadArtifact(absl::string_view(shifted).substr(1));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(*loaded == *LoadArtifact(bytes));
}

TEST(ArtifactTest, FindEntry) {
  const Artifact a = testing::TrainingArtifact();
  ASSERT_NE(a.FindEntry("train_step"), nullptr);
  EXPECT_EQ(a.FindEntry("train_step")->launches.size(), 5u);
  EXPECT_EQ(a.FindEntry("nope"), nullptr);
}

TEST(ArtifactTest, WriterBuildsParametersAndConstants) {
  const Artifact a = testing::TrainingArtifact();
  ASSERT_EQ(a.parameters.size(), 2u);
  const ResidentBuffer& w = a.resident_buffers[a.parameters[0].buffer];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.role, BufferRole::kParameter);
  EXPECT_EQ(w.byte_size, 16u * 8 * 4);
  EXPECT_TRUE(w.in_place);
  const ResidentBuffer& scale = a.resident_buffers[6];
  EXPECT_EQ(scale.role, BufferRole::kConstant);
  ASSERT_TRUE(scale.initial_value.has_value());
  EXPECT_EQ(scale.initial_value->bytes.size(), scale.byte_size);
}

TEST(ArtifactTest, ModelStateIsInitialisedLikeAParameter) {
  ArtifactWriter w({"sm_90"});
  const uint32_t p = w.AddParameter("gamma", DType::kF32, {4}, InitKind::kOnes,
                                    0.0f, 0.0f, 0);
  const uint32_t s = w.AddState("running_var", DType::kF32, {4},
                                InitKind::kOnes, 0.0f, 0.0f, 1);
  const Artifact& a = w.artifact();
  ASSERT_EQ(a.parameters.size(), 2u);
  EXPECT_EQ(a.parameters[1].buffer, s);
  EXPECT_EQ(a.resident_buffers[p].role, BufferRole::kParameter);
  EXPECT_EQ(a.resident_buffers[s].role, BufferRole::kState);
  EXPECT_TRUE(a.resident_buffers[s].in_place);
  absl::StatusOr<std::string> bytes = w.Finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Artifact> loaded = LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->resident_buffers[s].role, BufferRole::kState);
  EXPECT_EQ(loaded->parameters[1].name, "running_var");
}

TEST(ArtifactTest, FileRoundTrip) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/model.kiln";
  ASSERT_TRUE(WriteArtifactFile(testing::TrainingArtifact(), path).ok());
  absl::StatusOr<Artifact> loaded = LoadArtifactFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->entries.size(), 4u);
  EXPECT_EQ(LoadArtifactFile(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
}

void ExpectInvalid(const absl::StatusOr<Artifact>& r, const std::string& msg) {
  ASSERT_FALSE(r.ok()) << "expected: " << msg;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status().message()), msg);
}

TEST(ArtifactTest, EnvelopeErrors) {
  const std::string bytes = *WriteArtifact(testing::MinimalArtifact());
  ExpectInvalid(LoadArtifact(""), "file: 0 bytes is too small for an artifact");
  ExpectInvalid(LoadArtifact(bytes.substr(0, 7)),
                "file: 7 bytes is too small for an artifact");
  std::string bad_id = bytes;
  bad_id[5] = 'X';
  ExpectInvalid(LoadArtifact(bad_id),
                "file_identifier: expected \"KILN\", got \"KXLN\"");
  ExpectInvalid(LoadArtifact(bytes.substr(0, bytes.size() / 2)),
                "file: the envelope is not a valid FlatBuffer");

  Artifact v1 = testing::MinimalArtifact();
  v1.format_version = 1;
  ExpectInvalid(LoadArtifact(SerializeArtifact(v1)),
                "format_version: unsupported version 1 (this runtime reads 2 "
                "to 3)");

  // A byte of PTX changed: the checksum no longer matches.
  std::string damaged = bytes;
  const size_t ptx = damaged.find(".visible");
  ASSERT_NE(ptx, std::string::npos);
  damaged[ptx + 1] = 'V';
  absl::StatusOr<Artifact> r = LoadArtifact(damaged);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              StartsWith("checksum: stored 0x"));

  ExpectInvalid(LoadArtifact(SealArtifactPayload("not a flatbuffer at all")),
                "payload: not a valid FlatBuffer of table Artifact");
  ExpectInvalid(LoadArtifact(SealArtifactPayload("")), "payload: missing");
}

struct SemanticCase {
  const char* name;
  std::function<Artifact()> make;
  const char* message;
};

// The data section: after the envelope at a multiple of 64 bytes, each value
// at a multiple of 64 into it, the file's last bytes; the values load as
// written.
TEST(ArtifactTest, InitialValuesLieInTheDataSection) {
  const Artifact a = testing::WeightsArtifact();
  const std::string bytes = *WriteArtifact(a);
  const fb::Envelope* envelope = fb::GetEnvelope(bytes.data());
  EXPECT_EQ(envelope->format_version(), 3u);
  EXPECT_EQ(envelope->data_offset() % kDataAlignment, 0u);
  EXPECT_EQ(envelope->data_offset() + envelope->data_size(), bytes.size());
  const absl::string_view data =
      absl::string_view(bytes).substr(envelope->data_offset());
  const fb::Artifact* payload =
      flatbuffers::GetRoot<fb::Artifact>(envelope->payload()->data());
  size_t values = 0;
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const fb::DataRange* range =
        payload->resident_buffers()->Get(i)->initial_value();
    ASSERT_EQ(range != nullptr, a.resident_buffers[i].initial_value.has_value())
        << i;
    if (range == nullptr) continue;
    ++values;
    EXPECT_EQ(range->offset() % kDataAlignment, 0u);
    EXPECT_EQ(data.substr(range->offset(), range->size()),
              a.resident_buffers[i].initial_value->bytes);
    EXPECT_EQ(range->checksum(),
              Fnv1a64(a.resident_buffers[i].initial_value->bytes));
  }
  EXPECT_EQ(values, 4u);
  absl::StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    EXPECT_TRUE(loaded->resident_buffers[i].initial_value ==
                a.resident_buffers[i].initial_value)
        << i;
  }
  // The pieces a compiler streams are the file.
  const ArtifactFile file = LayOutArtifact(a);
  EXPECT_EQ(file.Join(), bytes);
  EXPECT_EQ(file.size(), bytes.size());
  EXPECT_EQ(file.checksum, loaded->checksum);
  // The file keeps the values it points to alive beyond the artifact.
  const ArtifactFile kept = LayOutArtifact(testing::WeightsArtifact());
  EXPECT_EQ(kept.owners.size(), 4u);
  EXPECT_EQ(kept.Join(), bytes);
}

TEST(ArtifactTest, DamagedDataSection) {
  const std::string bytes = *WriteArtifact(testing::WeightsArtifact());
  const fb::Envelope* envelope = fb::GetEnvelope(bytes.data());
  const uint64_t data_offset = envelope->data_offset();
  // A byte of the constant "table" (buffer 4, the last value) changed.
  std::string damaged = bytes;
  damaged[bytes.size() - 3] ^= 0x40;
  absl::StatusOr<Artifact> r = LoadArtifact(damaged);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              StartsWith("resident_buffers[4].initial_value: stored checksum "
                         "0x"));
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("over 160 bytes at file offset"));
  // Cut short, or with a byte more: the section no longer ends the file.
  for (const std::string& resized :
       {bytes.substr(0, bytes.size() - 1), bytes + std::string(1, '\0')}) {
    ExpectInvalid(
        LoadArtifact(resized),
        absl::StrCat("data_offset: the data section [", data_offset, ", +",
                     envelope->data_size(),
                     ") must start at a multiple of 64 and end the file of ",
                     resized.size(), " bytes"));
  }
}

// Format 2 files keep constant data in the payload; they load as before,
// the data as the constant's initial value.
TEST(ArtifactTest, FormatTwoConstantsLoadAsInitialValues) {
  Artifact v2 = testing::TrainingArtifact();
  v2.format_version = 2;
  const std::string bytes = *WriteArtifact(v2);
  const fb::Envelope* envelope = fb::GetEnvelope(bytes.data());
  EXPECT_EQ(envelope->data_size(), 0u);
  const fb::Artifact* payload =
      flatbuffers::GetRoot<fb::Artifact>(envelope->payload()->data());
  ASSERT_NE(payload->constants(), nullptr);
  ASSERT_EQ(payload->constants()->size(), 1u);
  EXPECT_EQ(payload->constants()->Get(0)->buffer(), 6u);
  absl::StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->format_version, 2u);
  ASSERT_TRUE(loaded->resident_buffers[6].initial_value.has_value());
  EXPECT_TRUE(loaded->resident_buffers[6].initial_value ==
              v2.resident_buffers[6].initial_value);
  EXPECT_EQ(SerializeArtifact(*loaded), bytes);
  // Other initial values need the data section of format 3.
  Artifact weights = testing::WeightsArtifact();
  weights.format_version = 2;
  EXPECT_EQ(std::string(ValidateArtifact(weights).message()),
            "resident_buffers[0].initial_value: format 2 carries initial "
            "values of constants only");
}

Artifact Mutated(Artifact a, const std::function<void(Artifact&)>& f) {
  f(a);
  return a;
}

std::vector<SemanticCase> SemanticCases() {
  using testing::ClassifierArtifact;
  using testing::MinimalArtifact;
  using testing::MixedPrecisionArtifact;
  using testing::TensorMapArtifact;
  using testing::TrainingArtifact;
  return {
      {"arg beyond arena",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[1].launches[2].args[1].buffer =
               BufferRef::Arena(4096, 512);
           a.entries[1].arena_size = 4100;
           a.entries[1].outputs.clear();
         });
       },
       "entries[1].launches[2].args[1]: offset 4096 + 512 bytes exceeds arena "
       "size 4100"},
      {"arg beyond resident",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[3].launches[3].args[2].buffer.offset = 8;
         });
       },
       "entries[3].launches[3].args[2]: offset 8 + 512 bytes exceeds size of "
       "resident buffer 4 'momentum/w' 512"},
      {"offset overflow",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[0].buffer.offset = ~0ULL - 8;
         });
       },
       "entries[0].launches[0].args[0]: offset 18446744073709551607 + 128 "
       "bytes exceeds arena size 512"},
      {"resident index",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[1].buffer.index = 99;
         });
       },
       "entries[0].launches[0].args[1]: resident buffer index 99 out of range "
       "(8 resident buffers)"},
      {"memory space",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].inputs[0].buffer.space = static_cast<MemorySpace>(7);
         });
       },
       "entries[0].inputs[0].buffer: unknown memory space 7"},
      {"arena index",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].inputs[0].buffer.index = 1;
         });
       },
       "entries[0].inputs[0].buffer: an arena reference must have index 0, "
       "got 1"},
      {"binding size",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].outputs[0].buffer.size = 64;
         });
       },
       "entries[0].outputs[0].buffer: size 64 bytes does not match shape "
       "[4,8] x f32 = 128 bytes"},
      {"kernel index",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].kernel = 1;
         });
       },
       "entries[0].launches[0].kernel: index 1 out of range (1 kernels)"},
      {"arg count",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args.pop_back();
         });
       },
       "entries[0].launches[0].args: 2 arguments, but kernel 0 'relu_0' "
       "declares 3"},
      {"arg kind mismatch",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2] = Arg::F32(1.0f);
         });
       },
       "entries[0].launches[0].args[2].kind: argument kind 4 does not match "
       "the kernel's parameter kind 2"},
      {"unknown arg kind",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].kind = static_cast<ArgKind>(9);
         });
       },
       "entries[0].launches[0].args[2].kind: unknown argument kind 9"},
      {"i32 high bytes",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].scalar = 1ULL << 40;
         });
       },
       "entries[0].launches[0].args[2].scalar: a 32-bit scalar has non-zero "
       "high bytes"},
      {"zero grid",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].grid.y = 0;
         });
       },
       "entries[0].launches[0].grid: (1, 0, 1) is outside CUDA's limits ([1, "
       "2147483647], [1, 65535], [1, 65535])"},
      {"block too large",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].block = {1, 1, 65};
         });
       },
       "entries[0].launches[0].block: (1, 1, 65) is outside CUDA's limits ([1, "
       "1024], [1, 1024], [1, 64])"},
      {"block over max_threads",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].block = {32, 16, 1};
         });
       },
       "entries[0].launches[0].block: 512 threads exceed the kernel's "
       "max_threads 256"},
      {"shared memory",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].dynamic_shared_bytes = 227 * 1024 - 16000;
         });
       },
       "entries[0].launches[0].dynamic_shared_bytes: 216448 + static 16384 "
       "bytes exceed 232448"},
      {"static shared memory",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.kernels[0].static_shared_bytes = 300000;
         });
       },
       "kernels[0].static_shared_bytes: 300000 exceeds 232448"},
      {"grid dependency wait before sm_90",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.kernels[0].images[0].waits_for_predecessor = true;
         });
       },
       "kernels[0].images[0].waits_for_predecessor: set for sm_80, which has "
       "no grid dependency control (sm_90 and newer)"},
      {"unknown arch",
       [] {
         return Mutated(MinimalArtifact(),
                        [](Artifact& a) { a.target_archs[0] = "sm_91"; });
       },
       "target_archs[0]: unknown architecture 'sm_91'"},
      {"no archs",
       [] {
         return Mutated(MinimalArtifact(),
                        [](Artifact& a) { a.target_archs.clear(); });
       },
       "target_archs: must not be empty"},
      {"image not a target",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.kernels[0].images[0].arch = "sm_80";
         });
       },
       "kernels[0].images[0].arch: 'sm_80' is not a target architecture or "
       "its arch-specific variant (sm_90)"},
      {"arch-specific image of another target",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.kernels[0].images[0].arch = "sm_100a";
         });
       },
       "kernels[0].images[0].arch: 'sm_100a' is not a target architecture or "
       "its arch-specific variant (sm_90)"},
      {"missing image",
       [] {
         return Mutated(TrainingArtifact(),
                        [](Artifact& a) { a.kernels[2].images.pop_back(); });
       },
       "kernels[2].images: no image for target architecture sm_90"},
      {"empty ptx",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.kernels[0].images[0].ptx.clear();
         });
       },
       "kernels[0].images[0].ptx: is empty"},
      {"ptx with NUL",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.kernels[0].images[0].ptx[3] = '\0';
         });
       },
       "kernels[0].images[0].ptx: contains a NUL byte at 3"},
      {"duplicate entry",
       [] {
         return Mutated(TrainingArtifact(),
                        [](Artifact& a) { a.entries[2].name = "forward"; });
       },
       "entries[2].name: duplicate 'forward'"},
      {"empty entry name",
       [] {
         return Mutated(MinimalArtifact(),
                        [](Artifact& a) { a.entries[0].name.clear(); });
       },
       "entries[0].name: must not be empty"},
      {"arena alignment",
       [] {
         return Mutated(MinimalArtifact(),
                        [](Artifact& a) { a.entries[0].arena_alignment = 48; });
       },
       "entries[0].arena.alignment: 48 is not a power of two in [1, 65536]"},
      {"unknown dtype",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].inputs[0].dtype = static_cast<DType>(9);
         });
       },
       "entries[0].inputs[0].dtype: unknown dtype 9"},
      {"negative extent",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[1].shape = {-8};
         });
       },
       "resident_buffers[1].shape[0]: negative extent -8"},
      {"byte size",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[0].byte_size = 500;
         });
       },
       "resident_buffers[0].byte_size: 500 does not match shape [16,8] x f32 = "
       "512 bytes"},
      {"shape overflow",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].inputs[0].shape = {1LL << 40, 1LL << 30};
         });
       },
       "entries[0].inputs[0].shape: byte size of [1099511627776,1073741824] "
       "overflows 64 bits"},
      {"unknown role",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[2].role = static_cast<BufferRole>(7);
         });
       },
       "resident_buffers[2].role: unknown role 7"},
      {"parameter role",
       [] {
         return Mutated(TrainingArtifact(),
                        [](Artifact& a) { a.parameters[1].buffer = 2; });
       },
       "parameters[1].buffer: resident buffer 2 'grad/w' has role 3, not "
       "parameter or state"},
      {"parameter shape",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.parameters[1].shape = {4, 2};
         });
       },
       "parameters[1]: f32[4,2] does not match its buffer 'b' f32[8]"},
      {"parameter init",
       [] {
         return Mutated(TrainingArtifact(),
                        [](Artifact& a) { a.parameters[0].init_b = -1.0f; });
       },
       "parameters[0].init_b: negative standard deviation -1"},
      {"constant size",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[6].initial_value =
               InitialValue::Copy(std::string(31, '\1'));
         });
       },
       "resident_buffers[6].initial_value: 31 bytes, but buffer 'scale' has "
       "32"},
      {"constant without data",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[6].initial_value.reset();
         });
       },
       "resident_buffers[6]: constant buffer 'scale' has no initial value"},
      {"initial value of a gradient",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[2].initial_value =
               InitialValue::Copy(std::string(512, '\0'));
         });
       },
       "resident_buffers[2].initial_value: buffer 'grad/w' has role 3, which "
       "starts from zeros (only parameters, state, master weights and "
       "constants have initial values)"},
      {"initial value beside an initialiser",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.resident_buffers[0].initial_value =
               InitialValue::Copy(std::string(512, '\0'));
         });
       },
       "resident_buffers[0].initial_value: buffer 'w' has an initialiser in "
       "parameters too"},

      {"duplicate resident name",
       [] {
         return Mutated(TrainingArtifact(),
                        [](Artifact& a) { a.resident_buffers[3].name = "w"; });
       },
       "resident_buffers[3].name: duplicate 'w'"},
      {"max threads",
       [] {
         return Mutated(MinimalArtifact(),
                        [](Artifact& a) { a.kernels[0].max_threads = 0; });
       },
       "kernels[0].max_threads: 0 is outside [1, 1024]"},
      {"cluster dimension zero",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].cluster = {0, 2, 1};
         });
       },
       "entries[0].launches[1].cluster: (0, 2, 1) has a dimension below 1"},
      {"cluster too large",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].cluster = {4, 4, 2};
         });
       },
       "entries[0].launches[1].cluster: (4, 4, 2) has 32 blocks, more than "
       "16"},
      {"cluster dimension huge",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].cluster = {1u << 31, 1u << 31, 4};
         });
       },
       "entries[0].launches[1].cluster: (2147483648, 2147483648, 4) has more "
       "than 16 blocks"},
      {"grid not a multiple of the cluster",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].cluster = {8, 1, 1};
         });
       },
       "entries[0].launches[1].cluster: grid (132, 2, 1) is not a multiple "
       "of cluster (8, 1, 1)"},
      {"cooperative cluster",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].cooperative = true;
         });
       },
       "entries[0].launches[1].cooperative: set together with cluster (4, 2, "
       "1) (a launch is either cooperative or clustered)"},
      {"persistent two-dimensional grid",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[1].persistent_blocks_per_sm = 1;
         });
       },
       "entries[0].launches[1].persistent_blocks_per_sm: set with grid (132, "
       "2, 1): a persistent grid is one-dimensional"},
      {"persistent cooperative",
       [] {
         return Mutated(MixedPrecisionArtifact(), [](Artifact& a) {
           a.entries[0].launches[3].persistent_blocks_per_sm = 2;
         });
       },
       "entries[0].launches[3].persistent_blocks_per_sm: set together with "
       "cooperative (a cooperative grid cannot shrink)"},
      {"cluster before sm_90",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].cluster = {1, 2, 1};
         });
       },
       "entries[0].launches[0].cluster: (1, 2, 1) for target architecture "
       "sm_80, which has no thread-block clusters (sm_90 and newer)"},
      {"tensor map past its buffer",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[1].tensor_map.dims[3] = 3;
         });
       },
       "entries[0].launches[0].args[1].tensor_map: the tensor reaches 34560 "
       "bytes into a buffer of 23040"},
      {"tensor map offset",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           Arg& arg = a.entries[0].launches[0].args[2];
           arg.buffer.offset = 8;
           arg.buffer.size -= 8;
           arg.tensor_map.dims[1] = 127;
         });
       },
       "entries[0].launches[0].args[2].tensor_map: the buffer's offset 8 is "
       "not a multiple of 16 bytes"},
      {"tensor map stride",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].tensor_map.strides[0] = 1000;
         });
       },
       "entries[0].launches[0].args[2].tensor_map.strides[0]: 1000 bytes is "
       "not a multiple of 16 below 2^40"},
      {"tensor map swizzle span",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].tensor_map.swizzle_bytes = 64;
         });
       },
       "entries[0].launches[0].args[2].tensor_map: one copy's innermost 128 "
       "bytes exceed the swizzle span of 64"},
      {"tensor map box",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].tensor_map.box[1] = 512;
         });
       },
       "entries[0].launches[0].args[2].tensor_map.box[1]: 512 is not in [1, "
       "256]"},
      {"im2col corner",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[1].tensor_map.upper_corner[1] = 200;
         });
       },
       "entries[0].launches[0].args[1].tensor_map.corner[1]: 200 is not in "
       "[-128, 128)"},
      {"im2col rank",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           TensorMap& m = a.entries[0].launches[0].args[1].tensor_map;
           m.dims = {64, 180};
           m.strides = {128};
           m.element_strides = {1, 1};
         });
       },
       "entries[0].launches[0].args[1].tensor_map.dims: rank 2 is not in [3, "
       "5]"},
      {"tensor map dtype",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[2].tensor_map.dtype = DType::kI32;
         });
       },
       "entries[0].launches[0].args[2].tensor_map.dtype: a tensor map holds "
       "f32, bf16 or f16, not i32"},
      {"tensor map on a pointer",
       [] {
         return Mutated(TensorMapArtifact(), [](Artifact& a) {
           a.entries[0].launches[0].args[0].tensor_map =
               a.entries[0].launches[0].args[2].tensor_map;
         });
       },
       "entries[0].launches[0].args[0].tensor_map: must be absent for an "
       "argument of kind 1"},
      {"collective beside a launch that touches its tensor",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[3].collectives[0].wait_before = 5;
         });
       },
       "entries[3].collectives[0].tensors[0]: launch 3 touches 'grad/w' "
       "while its collective runs (launches 3 to 5)"},
      {"collective waited for past the end",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[3].collectives[0].wait_before = 6;
         });
       },
       "entries[3].collectives[0].wait_before: 6 is outside [after_launches "
       "3, 5 launches]"},
      {"collectives out of order",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           Collective early = a.entries[3].collectives[0];
           early.after_launches = 2;
           early.wait_before = 2;
           a.entries[3].collectives.push_back(early);
         });
       },
       "entries[3].collectives[1].after_launches: 2 is before the previous "
       "collective's 3 (collectives are in issue order)"},
      {"collective of no tensors",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[3].collectives[0].tensors.clear();
         });
       },
       "entries[3].collectives[0].tensors: a collective of no tensors"},
      {"range on a float input",
       [] {
         return Mutated(MinimalArtifact(), [](Artifact& a) {
           a.entries[0].inputs[0].valid_range = ValueRange{0, 4, {}, "x"};
         });
       },
       "entries[0].inputs[0].valid_range: on a binding of f32 (ranges are "
       "for i32 inputs)"},
      {"range on an output",
       [] {
         return Mutated(ClassifierArtifact(), [](Artifact& a) {
           a.entries[0].outputs[0].valid_range = ValueRange{0, 4, {}, "x"};
         });
       },
       "entries[0].outputs[0].valid_range: on an output"},
      {"range on a resident input",
       [] {
         return Mutated(ClassifierArtifact(), [](Artifact& a) {
           TensorBinding& b = a.entries[0].inputs[1];
           b.buffer = BufferRef::Resident(0, 0, 16);
         });
       },
       "entries[0].inputs[1].valid_range: on a resident buffer (ranges are "
       "for the caller's inputs)"},
      {"empty range",
       [] {
         return Mutated(ClassifierArtifact(), [](Artifact& a) {
           a.entries[0].inputs[1].valid_range->high = 0;
         });
       },
       "entries[0].inputs[1].valid_range: [0, 0) is empty"},
      {"collective of unknown kind",
       [] {
         return Mutated(TrainingArtifact(), [](Artifact& a) {
           a.entries[3].collectives[0].kind = static_cast<CollectiveKind>(9);
         });
       },
       "entries[3].collectives[0].kind: unknown collective kind 9"},
  };
}

TEST(ArtifactTest, SemanticErrorsNameTheField) {
  for (const SemanticCase& c : SemanticCases()) {
    SCOPED_TRACE(c.name);
    const Artifact a = c.make();
    ExpectInvalid(LoadArtifact(SerializeArtifact(a)), c.message);
    // The writer refuses the same artifact with the same message.
    absl::StatusOr<std::string> written = WriteArtifact(a);
    ASSERT_FALSE(written.ok());
    EXPECT_EQ(std::string(written.status().message()), std::string(c.message));
  }
}

TEST(ArtifactTest, ArchNames) {
  EXPECT_EQ(ArchNumber("sm_90"), 90);
  EXPECT_EQ(ArchNumber("sm_90a"), 90);
  EXPECT_EQ(ArchNumber("sm_121a"), 121);
  EXPECT_EQ(ArchNumber("compute_90"), 0);
  EXPECT_EQ(ArchNumber("sm_"), 0);
  EXPECT_TRUE(IsArchSpecific("sm_90a"));
  EXPECT_FALSE(IsArchSpecific("sm_90"));
  EXPECT_TRUE(ImageServesTarget("sm_90", "sm_90"));
  EXPECT_TRUE(ImageServesTarget("sm_90a", "sm_90"));
  EXPECT_TRUE(ImageServesTarget("sm_90a", "sm_90a"));
  EXPECT_FALSE(ImageServesTarget("sm_90", "sm_90a"));
  EXPECT_FALSE(ImageServesTarget("sm_100a", "sm_90"));
  EXPECT_FALSE(ImageServesTarget("sm_80", "sm_90"));
}

// A kernel built for sm_90a (wgmma) in an artifact that targets sm_90: valid,
// and it survives the file.
TEST(ArtifactTest, ArchSpecificImageServesItsTarget) {
  Artifact a = testing::TrainingArtifact();
  for (KernelImage& image : a.kernels[1].images) {
    if (image.arch == "sm_90") image.arch = "sm_90a";
  }
  absl::StatusOr<std::string> bytes = WriteArtifact(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Artifact> loaded = LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kernels[1].images.back().arch, "sm_90a");
}

TEST(ArtifactTest, LoadableImagesForADevice) {
  auto image = [](const std::string& arch, bool cubin) {
    KernelImage i;
    i.arch = arch;
    i.ptx = "ptx for " + arch;
    if (cubin) i.cubin = {1, 2, 3};
    return i;
  };
  Kernel generic;
  generic.images = {image("sm_80", true), image("sm_90", true)};
  // The exact cubin; the newest PTX not newer than the device.
  EXPECT_EQ(FindLoadableImages(generic, 90).cubin, &generic.images[1]);
  EXPECT_EQ(FindLoadableImages(generic, 90).ptx, &generic.images[1]);
  EXPECT_EQ(FindLoadableImages(generic, 86).cubin, nullptr);
  EXPECT_EQ(FindLoadableImages(generic, 86).ptx, &generic.images[0]);
  EXPECT_EQ(FindLoadableImages(generic, 100).ptx, &generic.images[1]);
  EXPECT_EQ(FindLoadableImages(generic, 75).ptx, nullptr);

  // sm_90a: its cubin and PTX serve sm_90 devices and nothing else.
  Kernel specific;
  specific.images = {image("sm_90a", true)};
  EXPECT_EQ(FindLoadableImages(specific, 90).cubin, &specific.images[0]);
  EXPECT_EQ(FindLoadableImages(specific, 90).ptx, &specific.images[0]);
  EXPECT_EQ(FindLoadableImages(specific, 100).cubin, nullptr);
  EXPECT_EQ(FindLoadableImages(specific, 100).ptx, nullptr);
  EXPECT_EQ(FindLoadableImages(specific, 89).ptx, nullptr);
}

TEST(ArtifactTest, ExampleMessageFromTheDesign) {
  // entries[1] with four launches, the last with an argument past the arena.
  Artifact a = testing::TrainingArtifact();
  Entry& e = a.entries[1];
  e.arena_size = 4096;
  e.outputs.clear();
  e.inputs.clear();
  e.launches.push_back(e.launches[2]);
  e.launches[3].args[2].buffer = BufferRef::Arena(4096, 256);
  e.launches[1].args[2].buffer = BufferRef::Arena(4092, 4);
  ExpectInvalid(LoadArtifact(SerializeArtifact(a)),
                "entries[1].launches[3].args[2]: offset 4096 + 256 bytes "
                "exceeds arena size 4096");
}

// Cluster shapes and the cooperative and persistent flags survive the file;
// a launch without them writes none of those fields, so files without
// clusters keep their bytes and files from before clusters (no field) read
// as 1 x 1 x 1.
TEST(ArtifactTest, ClusterAndCooperativeRoundTrip) {
  const std::string bytes = *WriteArtifact(testing::MixedPrecisionArtifact());
  const fb::Envelope* env = fb::GetEnvelope(bytes.data());
  const fb::Artifact* payload =
      flatbuffers::GetRoot<fb::Artifact>(env->payload()->data());
  const auto* launches = payload->entries()->Get(0)->launches();
  ASSERT_EQ(launches->size(), 4u);
  EXPECT_EQ(launches->Get(0)->cluster(), nullptr);
  EXPECT_FALSE(launches->Get(0)->cooperative());
  ASSERT_NE(launches->Get(1)->cluster(), nullptr);
  EXPECT_EQ(launches->Get(1)->cluster()->x(), 4u);
  EXPECT_EQ(launches->Get(3)->cluster(), nullptr);
  EXPECT_TRUE(launches->Get(3)->cooperative());
  EXPECT_EQ(launches->Get(1)->persistent_blocks_per_sm(), 0u);
  EXPECT_EQ(launches->Get(2)->persistent_blocks_per_sm(), 1u);

  absl::StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::vector<Launch>& l = loaded->entries[0].launches;
  EXPECT_EQ(l[0].cluster, (Dim3{1, 1, 1}));
  EXPECT_FALSE(l[0].clustered());
  EXPECT_EQ(l[1].cluster, (Dim3{4, 2, 1}));
  EXPECT_EQ(l[1].cluster_blocks(), 8u);
  EXPECT_EQ(l[2].cluster, (Dim3{16, 1, 1}));
  EXPECT_FALSE(l[1].cooperative);
  EXPECT_TRUE(l[3].cooperative);
  EXPECT_FALSE(l[3].clustered());
  EXPECT_EQ(l[0].persistent_blocks_per_sm, 0u);
  EXPECT_EQ(l[2].persistent_blocks_per_sm, 1u);

  // 1 x 1 x 1 is no cluster: not written.
  Artifact minimal = testing::MinimalArtifact();
  minimal.entries[0].launches[0].cluster = {1, 1, 1};
  EXPECT_EQ(SerializeArtifact(minimal),
            SerializeArtifact(testing::MinimalArtifact()));
}

// Every initialiser and dtype survives the file with the numbers of
// kiln::InitKind and kiln::DType; a value outside either enum is rejected.
TEST(ArtifactTest, InitKindsAndDTypesRoundTrip) {
  const InitKind kinds[] = {InitKind::kZeros,    InitKind::kOnes,
                            InitKind::kConstant, InitKind::kNormal,
                            InitKind::kUniform,  InitKind::kXavier,
                            InitKind::kKaiming};
  const DType dtypes[] = {DType::kF32, DType::kBF16, DType::kF16, DType::kI32,
                          DType::kI1};
  ArtifactWriter w({"sm_90"});
  for (int i = 0; i < 7; ++i) {
    w.AddParameter("p" + std::to_string(i), dtypes[i % 5], {3, 2}, kinds[i],
                   0.5f, 1.5f, static_cast<uint64_t>(i));
  }
  absl::StatusOr<std::string> bytes = w.Finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Artifact> loaded = LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->parameters.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(loaded->parameters[i].init, kinds[i]);
    EXPECT_EQ(static_cast<int>(loaded->parameters[i].init), i);
    EXPECT_EQ(loaded->parameters[i].dtype, dtypes[i % 5]);
    EXPECT_EQ(loaded->parameters[i].seed_stream, static_cast<uint64_t>(i));
  }
  Artifact bad = w.artifact();
  bad.parameters[0].init = static_cast<InitKind>(7);
  ExpectInvalid(LoadArtifact(SerializeArtifact(bad)),
                "parameters[0].init: unknown initialiser 7");
  bad = w.artifact();
  bad.resident_buffers[0].dtype = static_cast<DType>(5);
  EXPECT_EQ(LoadArtifact(SerializeArtifact(bad)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace artifact
}  // namespace kiln

namespace kiln {
namespace artifact {
namespace {

TEST(ArtifactTest, CollectivesRoundTrip) {
  const Artifact a = testing::TrainingArtifact();
  absl::StatusOr<Artifact> loaded = LoadArtifact(*WriteArtifact(a));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Entry* train = loaded->FindEntry("train_step");
  ASSERT_NE(train, nullptr);
  ASSERT_EQ(train->collectives.size(), 1u);
  const Collective& c = train->collectives[0];
  EXPECT_EQ(c.kind, CollectiveKind::kAllReduceAverage);
  EXPECT_EQ(c.after_launches, 3u);
  EXPECT_EQ(c.wait_before, 3u);
  ASSERT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(c.tensors[1].name, "grad/b");
  EXPECT_EQ(c.tensors[1].buffer.size, 32u);
  // Entries without collectives stay without them.
  EXPECT_TRUE(loaded->FindEntry("forward")->collectives.empty());
}

}  // namespace
}  // namespace artifact
}  // namespace kiln
