//===- HeaderPlan.h - what a typed header declares --------------*- C++ -*-===//
//
// The plan of the typed C++ header of an artifact (kilnc -H): the class, its
// entries with their caller inputs and returned outputs, its resident
// buffers, each with the C++ identifier it gets (CppNames.h), and the
// artifact's identity. Planning refuses what a header cannot declare: two
// names with one identifier in a scope, a training entry the Trainer cannot
// call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HEADER_HEADERPLAN_H
#define KILN_CODEGEN_HEADER_HEADERPLAN_H

#include "runtime/artifact/artifact.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {

struct HeaderOptions {
  /// The class, optionally in namespaces ("models::Mlp").
  std::string className;
  /// The header's file name, for its comments and the runtime's messages.
  std::string headerName;
  /// The model it was compiled from, for its comments.
  std::string source;
  /// Pin the header to this artifact's checksum (the artifact kilnc writes
  /// beside it); otherwise any artifact with the same interface fits.
  bool pinChecksum = true;
};

struct HeaderTensor {
  std::string name;       // the artifact's name
  std::string identifier; // its C++ name
  ::kiln::DType dtype = ::kiln::DType::kF32;
  std::vector<int64_t> shape;
};

/// How the generated method runs an entry.
enum class HeaderEntryKind {
  Session,         // Session::Run(name, inputs) -> outputs
  TrainStep,       // Trainer::Step(inputs, lr) -> loss
  Forward,         // Trainer::Forward(inputs) -> outputs
  ForwardBackward, // Trainer::ForwardBackward(inputs) -> loss
  ApplyUpdate,     // Trainer::ApplyUpdate(lr)
};

struct HeaderEntry {
  std::string name;
  HeaderEntryKind kind = HeaderEntryKind::Session;
  std::string method;        // "TrainStep"
  std::string inputsStruct;  // "TrainStepInputs" (empty without inputs)
  std::string outputsStruct; // "ForwardOutputs" (empty unless returned)
  std::vector<HeaderTensor> inputs;
  std::vector<HeaderTensor> outputs;
};

struct HeaderBuffer {
  HeaderTensor tensor;
  ::kiln::artifact::BufferRole role = ::kiln::artifact::BufferRole::kParameter;
};

struct HeaderPlan {
  std::vector<std::string> namespaces;
  std::string className;
  std::string headerName;
  std::string source;
  /// A Trainer wraps the artifact (it has train_step, or forward_backward
  /// and apply_update); a Session otherwise.
  bool trains = false;
  std::vector<HeaderEntry> entries;
  std::vector<HeaderBuffer> buffers;
  std::string interfaceSignature;
  uint64_t interfaceFingerprint = 0;
  uint64_t checksum = 0; // 0: not pinned
};

/// Plans the header of `artifact` (as LoadArtifact returns it, with its
/// checksum); on failure returns false with the reason in `error`.
bool planHeader(const ::kiln::artifact::Artifact &artifact,
                const HeaderOptions &options, HeaderPlan &plan,
                std::string &error);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_HEADER_HEADERPLAN_H
