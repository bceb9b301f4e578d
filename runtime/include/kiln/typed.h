// Typed host code: what the headers that `kilnc -H model.h` writes build on.
//
// A generated header declares one class per artifact whose methods are the
// artifact's entries, with one struct per entry whose fields are the
// caller's inputs. Each field is a TypedInput<DType, dims...>: the dtype and
// the static shape are part of its type, so a misspelt input is an unknown
// member and a value of the wrong shape or element type does not convert —
// both compile errors. Values read back (outputs, parameters, gradients,
// optimizer state) are TypedTensor<DType, dims...>, checked once at run time
// when they are wrapped.
//
// The header also carries the identity of its artifact: the artifact's
// checksum (when kilnc wrote both in one run) and its interface (entries,
// caller inputs, outputs and resident buffers with their names, dtypes and
// shapes, as text and as a fingerprint). Loading through the header checks
// them before the artifact reaches the GPU (CheckArtifact), so a header used
// with another artifact fails with FailedPrecondition naming the first
// difference instead of binding the wrong buffers.
#ifndef KILN_TYPED_H_
#define KILN_TYPED_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kiln/dtype.h"
#include "kiln/runtime.h"
#include "kiln/tensor.h"

namespace kiln {

// The host element type of each dtype: float, the bits of a bf16 or f16
// (uint16_t; see F32ToBf16, F32ToF16), int32_t, and one byte (0 or 1) for i1.
template <DType D>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::kF32> {
  using Element = float;
};
template <>
struct DTypeTraits<DType::kBF16> {
  using Element = uint16_t;
};
template <>
struct DTypeTraits<DType::kF16> {
  using Element = uint16_t;
};
template <>
struct DTypeTraits<DType::kI32> {
  using Element = int32_t;
};
template <>
struct DTypeTraits<DType::kI1> {
  using Element = uint8_t;
};

namespace typed_internal {
absl::Status CheckType(absl::string_view what, DType dtype, const Shape& shape,
                       DType want_dtype, const Shape& want_shape);
}  // namespace typed_internal

// The static type of a tensor: dtype D and shape [Dims...] (rank 0 without
// dims).
template <DType D, int64_t... Dims>
struct TensorType {
  static constexpr DType kDType = D;
  static constexpr size_t kRank = sizeof...(Dims);
  static constexpr std::array<int64_t, sizeof...(Dims)> kShape = {Dims...};
  static constexpr int64_t kNumElements = (int64_t{1} * ... * Dims);
  using Element = typename DTypeTraits<D>::Element;
  static Shape shape() { return Shape{Dims...}; }
};

// A device tensor of dtype D and shape [Dims...]: a kiln::Tensor whose dtype
// and shape were checked when it was wrapped.
template <DType D, int64_t... Dims>
class TypedTensor : public TensorType<D, Dims...> {
 public:
  using Type = TensorType<D, Dims...>;
  TypedTensor() = default;

  // InvalidArgument unless `tensor` has dtype D and shape [Dims...].
  static absl::StatusOr<TypedTensor> Wrap(Tensor tensor,
                                          absl::string_view what = "tensor") {
    absl::Status status = typed_internal::CheckType(
        what, tensor.dtype(), tensor.shape(), D, Type::shape());
    if (!status.ok()) return status;
    return TypedTensor(std::move(tensor));
  }
  static absl::StatusOr<TypedTensor> Wrap(absl::StatusOr<Tensor> tensor,
                                          absl::string_view what = "tensor") {
    if (!tensor.ok()) return tensor.status();
    return Wrap(*std::move(tensor), what);
  }

  const Tensor& tensor() const { return tensor_; }
  operator const Tensor&() const { return tensor_; }  // NOLINT

 private:
  explicit TypedTensor(Tensor tensor) : tensor_(std::move(tensor)) {}
  Tensor tensor_;
};

// A caller's input of dtype D and shape [Dims...]. Default-constructed it is
// unset (an entry called with an unset input fails with InvalidArgument);
// the constructors that take a statically sized value check its size and
// element type at compile time, the From* functions at run time.
template <DType D, int64_t... Dims>
class TypedInput : public TensorType<D, Dims...> {
 public:
  using Type = TensorType<D, Dims...>;
  using Element = typename Type::Element;
  static constexpr int64_t kNumElements = Type::kNumElements;

  TypedInput() = default;
  // Host values in row-major order, copied.
  TypedInput(const std::array<Element, kNumElements>& values)  // NOLINT
      : input_(Input(ToHost(values.data()))) {}
  // A device tensor of the same static type (shared, not copied).
  TypedInput(const TypedTensor<D, Dims...>& device)  // NOLINT
      : input_(Input(device.tensor())) {}
  // Host values that the caller keeps alive and unchanged until the call
  // returns (not copied).
  static TypedInput View(const std::array<Element, kNumElements>& values) {
    return TypedInput(Input::HostView(D, Type::shape(), values.data()));
  }

  // Run-time checked conversions, for values whose size is not static.
  static absl::StatusOr<TypedInput> FromValues(
      const std::vector<Element>& values) {
    if (static_cast<int64_t>(values.size()) != kNumElements) {
      return absl::InvalidArgumentError(
          "expected " + std::to_string(kNumElements) + " elements for " +
          std::string(DTypeName(D)) + ShapeString(Type::shape()) + ", got " +
          std::to_string(values.size()));
    }
    return TypedInput(Input(ToHost(values.data())));
  }
  static absl::StatusOr<TypedInput> FromHost(HostTensor host) {
    absl::Status status = typed_internal::CheckType(
        "host tensor", host.dtype, host.shape, D, Type::shape());
    if (!status.ok()) return status;
    if (host.data.size() != static_cast<size_t>(kNumElements) * sizeof(Element))
      return absl::InvalidArgumentError("host tensor has " +
                                        std::to_string(host.data.size()) +
                                        " bytes of data for its shape");
    return TypedInput(Input(std::move(host)));
  }
  static absl::StatusOr<TypedInput> FromDevice(const Tensor& tensor) {
    auto typed = TypedTensor<D, Dims...>::Wrap(tensor, "device tensor");
    if (!typed.ok()) return typed.status();
    return TypedInput(*typed);
  }

  bool has_value() const { return input_.has_value(); }
  // The runtime's input; has_value() must be true.
  const Input& input() const { return *input_; }

 private:
  explicit TypedInput(Input input) : input_(std::move(input)) {}
  static HostTensor ToHost(const Element* data) {
    HostTensor host;
    host.dtype = D;
    host.shape = Type::shape();
    host.data.resize(static_cast<size_t>(kNumElements) * sizeof(Element));
    if (kNumElements > 0) std::memcpy(host.data.data(), data, host.data.size());
    return host;
  }
  std::optional<Input> input_;
};

namespace typed {

// What a generated header knows of its artifact.
struct ArtifactIdentity {
  // The header's file name, for messages.
  const char* header = "";
  // FNV-1a 64 of the artifact's payload (artifact::Artifact::checksum); 0
  // when the header was written without an artifact (kilnc --emit=header).
  uint64_t checksum = 0;
  // artifact::InterfaceFingerprint and InterfaceSignature (interface.h).
  uint64_t interface_fingerprint = 0;
  const char* interface_signature = "";
};

enum class Match {
  // The artifact kilnc wrote beside the header (its checksum), when the
  // header names one; and in any case the same interface.
  kArtifact,
  // Any artifact with the same interface (e.g. the same model compiled for
  // another --arch).
  kInterface,
};

// OK when `artifact` is the one `identity` describes under `match`;
// otherwise FailedPrecondition naming the header and the first difference.
absl::Status CheckArtifact(const artifact::Artifact& artifact,
                           const ArtifactIdentity& identity,
                           Match match = Match::kArtifact);
// Verifies the artifact file image `bytes` (LoadArtifact), checks it
// against `identity`, then loads it onto the runtime's device.
absl::StatusOr<std::unique_ptr<Module>> LoadModule(
    Runtime& runtime, absl::string_view bytes, const ArtifactIdentity& identity,
    Match match = Match::kArtifact);
// The same for a file.
absl::StatusOr<std::unique_ptr<Module>> LoadModuleFile(
    Runtime& runtime, const std::string& path, const ArtifactIdentity& identity,
    Match match = Match::kArtifact);

// Collects the caller's inputs of one entry call; an unset input is an
// error naming the entry and the input.
class InputsBuilder {
 public:
  explicit InputsBuilder(absl::string_view entry) : entry_(entry) {}
  template <DType D, int64_t... Dims>
  void Add(const char* name, const TypedInput<D, Dims...>& input) {
    if (input.has_value())
      inputs_.emplace(name, input.input());
    else if (missing_.empty())
      missing_ = name;
  }
  absl::StatusOr<Inputs> Finish() &&;

 private:
  std::string entry_;
  std::string missing_;
  Inputs inputs_;
};

// Moves the output `name` of `outputs` into `out` (a TypedTensor), checked;
// errors name the entry.
template <typename T>
absl::Status TakeOutput(Outputs& outputs, absl::string_view entry,
                        const std::string& name, T& out) {
  auto it = outputs.find(name);
  if (it == outputs.end())
    return absl::InternalError("entry " + std::string(entry) +
                               " returned no output '" + name + "'");
  absl::StatusOr<T> typed = T::Wrap(
      std::move(it->second), "output '" + name + "' of " + std::string(entry));
  if (!typed.ok()) return typed.status();
  out = *std::move(typed);
  return absl::OkStatus();
}

}  // namespace typed
}  // namespace kiln

#endif  // KILN_TYPED_H_
