#ifndef KILN_RUNTIME_ARTIFACT_FB_CONVERT_H_
#define KILN_RUNTIME_ARTIFACT_FB_CONVERT_H_

// Conversions between the schema's enums and structs (kiln::fb) and the
// runtime's, shared by the writer and the loader. The schema keeps 0 as INVALID
// for dtypes, so fb::DType = kiln::DType + 1; initialisers carry the same
// numbers on both sides. The conversions are bijections on all 256 byte values,
// so a value outside an enum survives a round trip and is rejected by
// ValidateArtifact.

#include <cstdint>

#include "kiln/dtype.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/kiln_artifact_generated.h"
#include "runtime/random/initializers.h"

namespace kiln {
namespace artifact {

static_assert(static_cast<int>(fb::DType::F32) ==
                  static_cast<int>(DType::kF32) + 1,
              "fb::DType must be kiln::DType + 1");
static_assert(static_cast<int>(fb::DType::BF16) ==
                  static_cast<int>(DType::kBF16) + 1,
              "fb::DType must be kiln::DType + 1");
static_assert(static_cast<int>(fb::DType::F16) ==
                  static_cast<int>(DType::kF16) + 1,
              "fb::DType must be kiln::DType + 1");
static_assert(static_cast<int>(fb::DType::I32) ==
                  static_cast<int>(DType::kI32) + 1,
              "fb::DType must be kiln::DType + 1");
static_assert(static_cast<int>(fb::DType::BOOL) ==
                  static_cast<int>(DType::kI1) + 1,
              "fb::DType must be kiln::DType + 1");

static_assert(static_cast<int>(fb::InitKind::ZEROS) ==
                  static_cast<int>(InitKind::kZeros),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::ONES) ==
                  static_cast<int>(InitKind::kOnes),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::CONSTANT) ==
                  static_cast<int>(InitKind::kConstant),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::NORMAL) ==
                  static_cast<int>(InitKind::kNormal),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::UNIFORM) ==
                  static_cast<int>(InitKind::kUniform),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::XAVIER) ==
                  static_cast<int>(InitKind::kXavier),
              "fb::InitKind must equal kiln::InitKind");
static_assert(static_cast<int>(fb::InitKind::KAIMING) ==
                  static_cast<int>(InitKind::kKaiming),
              "fb::InitKind must equal kiln::InitKind");

inline fb::DType DTypeToFb(DType dtype) {
  return static_cast<fb::DType>(
      static_cast<uint8_t>(static_cast<uint8_t>(dtype) + 1));
}
inline DType DTypeFromFb(fb::DType dtype) {
  return static_cast<DType>(
      static_cast<uint8_t>(static_cast<uint8_t>(dtype) - 1));
}
inline fb::InitKind InitKindToFb(InitKind init) {
  return static_cast<fb::InitKind>(static_cast<uint8_t>(init));
}
inline InitKind InitKindFromFb(fb::InitKind init) {
  return static_cast<InitKind>(static_cast<uint8_t>(init));
}

inline fb::Dim3 Dim3ToFb(const Dim3& d) { return fb::Dim3(d.x, d.y, d.z); }
// `absent` stands for a field the file leaves out: 0 x 0 x 0 for a grid or a
// block (which ValidateArtifact rejects), 1 x 1 x 1 for a cluster (files from
// before clusters have none).
inline Dim3 Dim3FromFb(const fb::Dim3* d, Dim3 absent) {
  if (d == nullptr) return absent;
  return Dim3{d->x(), d->y(), d->z()};
}

}  // namespace artifact
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_FB_CONVERT_H_
