#include "tests/gpu/determinism/draw_inputs.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/artifact/interface.h"
#include "runtime/random/philox.h"

namespace kiln {
namespace determinism {
namespace {

// Values of i32 inputs the artifact gives no range for (kiln-ref's
// --int-range default).
constexpr int64_t kDefaultIntRange = 4;

template <typename T>
void Append(std::vector<uint8_t>& bytes, T value) {
  const size_t at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

}  // namespace

absl::StatusOr<io::Safetensors> DrawInputs(const artifact::Entry& entry,
                                           uint64_t seed) {
  io::Safetensors out;
  uint32_t stream = 0;
  for (const artifact::TensorBinding& b : entry.inputs) {
    if (artifact::SourceOf(b) != artifact::InputSource::kCaller) continue;
    const RandomStream random{seed, stream++, 0};
    uint64_t count = 1;
    for (int64_t d : b.shape) count *= static_cast<uint64_t>(d);
    io::HostTensor t;
    t.shape = b.shape;
    switch (b.dtype) {
      case DType::kF32:
      case DType::kBF16:
      case DType::kF16:
        t.dtype = DType::kF32;
        for (uint64_t i = 0; i < count; ++i) {
          Append(t.data, static_cast<float>(2 * random.Uniform(i) - 1));
        }
        break;
      case DType::kI32: {
        const int64_t low = b.valid_range ? b.valid_range->low : 0;
        const int64_t high =
            b.valid_range ? b.valid_range->high : kDefaultIntRange;
        if (high <= low) {
          return absl::InvalidArgumentError(
              absl::StrCat("entry '", entry.name, "' input '", b.name,
                           "': empty value range [", low, ", ", high, ")"));
        }
        t.dtype = DType::kI32;
        for (uint64_t i = 0; i < count; ++i) {
          const auto offset = static_cast<int64_t>(
              std::floor(random.Uniform(i) * static_cast<double>(high - low)));
          Append(t.data, static_cast<int32_t>(low + offset));
        }
        break;
      }
      case DType::kI1:
        t.dtype = DType::kI1;
        for (uint64_t i = 0; i < count; ++i) {
          Append(t.data, static_cast<uint8_t>(random.Uniform(i) < 0.5));
        }
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("entry '", entry.name, "' input '", b.name,
                         "': no values to draw for its type"));
    }
    out.tensors.emplace(b.name, std::move(t));
  }
  return out;
}

}  // namespace determinism
}  // namespace kiln
