//===- HeaderPlan.cpp - what a typed header declares ----------------------===//

#include "codegen/header/HeaderPlan.h"

#include "codegen/header/CppNames.h"
#include "runtime/artifact/interface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

namespace mlir::kiln::codegen {

namespace art = ::kiln::artifact;

namespace {

/// The runtime supplies resident inputs, "lr" and "step" (runtime.h).
bool isCallerInput(const art::TensorBinding &binding) {
  if (binding.buffer.space == art::MemorySpace::kResident)
    return false;
  if (!binding.shape.empty())
    return true;
  if (binding.name == "lr" && binding.dtype == ::kiln::DType::kF32)
    return false;
  return !(binding.name == "step" && binding.dtype == ::kiln::DType::kI32);
}

llvm::StringRef roleName(art::BufferRole role) {
  switch (role) {
  case art::BufferRole::kParameter:
    return "parameter";
  case art::BufferRole::kOptimizerState:
    return "optimizer state";
  case art::BufferRole::kGradient:
    return "gradient";
  case art::BufferRole::kMasterWeight:
    return "master weight";
  case art::BufferRole::kConstant:
    return "constant";
  case art::BufferRole::kState:
    return "model state";
  }
  return "buffer";
}

/// Members every class has (HeaderEmitter.cpp writes them).
const char *const classMembers[] = {"Identity",
                                    "Check",
                                    "Load",
                                    "LoadFromMemory",
                                    "FromModule",
                                    "GetModule",
                                    "GetTrainer",
                                    "GetSession",
                                    "BufferTypes",
                                    "kArtifactChecksum",
                                    "kInterfaceFingerprint",
                                    "kInterface",
                                    "kTrains",
                                    "kHeader"};

bool splitClassName(llvm::StringRef qualified, HeaderPlan &plan,
                    std::string &error) {
  llvm::SmallVector<llvm::StringRef> parts;
  qualified.split(parts, "::");
  for (llvm::StringRef part : parts)
    if (part.empty() || cppIdentifier(part) != part) {
      error = ("the class name '" + llvm::Twine(qualified) +
               "' is not a C++ name (identifiers separated by '::')")
                  .str();
      return false;
    }
  plan.className = parts.back().str();
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_back())
    plan.namespaces.push_back(part.str());
  return true;
}

bool planTensors(llvm::ArrayRef<art::TensorBinding> bindings, bool inputs,
                 llvm::StringRef entry, llvm::StringRef structName,
                 llvm::StringRef member, std::vector<HeaderTensor> &out,
                 std::string &error) {
  CppScope scope(("struct " + structName).str());
  scope.reserve(member, ("its member " + llvm::Twine(member)).str());
  for (const art::TensorBinding &binding : bindings) {
    if (inputs ? !isCallerInput(binding)
               : binding.buffer.space == art::MemorySpace::kResident)
      continue;
    HeaderTensor tensor{binding.name, cppIdentifier(binding.name),
                        binding.dtype, binding.shape};
    std::string what = (inputs ? "input '" : "output '") + binding.name +
                       "' of " + entry.str();
    if (!scope.add(tensor.identifier, what, error))
      return false;
    out.push_back(std::move(tensor));
  }
  return true;
}

} // namespace

bool planHeader(const art::Artifact &artifact, const HeaderOptions &options,
                HeaderPlan &plan, std::string &error) {
  plan = HeaderPlan();
  if (!splitClassName(options.className, plan, error))
    return false;
  plan.headerName = options.headerName;
  plan.source = options.source;
  plan.interfaceSignature = art::InterfaceSignature(artifact);
  plan.interfaceFingerprint = art::InterfaceFingerprint(artifact);
  plan.checksum = options.pinChecksum ? artifact.checksum : 0;
  bool hasTrainStep = artifact.FindEntry("train_step");
  plan.trains = hasTrainStep || (artifact.FindEntry("forward_backward") &&
                                 artifact.FindEntry("apply_update"));

  CppScope members("class " + plan.className);
  // A member may not have the name of its class.
  members.reserve(plan.className, "the class itself");
  for (const char *member : classMembers)
    members.reserve(member, ("its member " + llvm::Twine(member)).str());

  for (const art::Entry &entry : artifact.entries) {
    HeaderEntry planned;
    planned.name = entry.name;
    planned.method = cppCamelCase(entry.name);
    if (plan.trains) {
      if (entry.name == "train_step")
        planned.kind = HeaderEntryKind::TrainStep;
      else if (entry.name == "forward")
        planned.kind = HeaderEntryKind::Forward;
      else if (entry.name == "forward_backward")
        planned.kind = HeaderEntryKind::ForwardBackward;
      else if (entry.name == "apply_update")
        planned.kind = HeaderEntryKind::ApplyUpdate;
      else {
        error = "entry '" + entry.name +
                "': a Trainer runs only forward, forward_backward, "
                "apply_update and train_step";
        return false;
      }
    }
    std::string what = "entry '" + entry.name + "'";
    if (!members.add(planned.method, what, error))
      return false;
    std::string inputsStruct = planned.method + "Inputs";
    if (!planTensors(entry.inputs, /*inputs=*/true, entry.name, inputsStruct,
                     "ToInputs", planned.inputs, error))
      return false;
    if (!planned.inputs.empty()) {
      planned.inputsStruct = inputsStruct;
      if (!members.add(inputsStruct, "the inputs of " + what, error))
        return false;
    }
    if (planned.kind == HeaderEntryKind::ApplyUpdate &&
        !planned.inputs.empty()) {
      error = "entry 'apply_update' takes the input '" +
              planned.inputs.front().name +
              "', which Trainer::ApplyUpdate cannot pass";
      return false;
    }
    // The Trainer returns the loss of these; the others return outputs.
    bool returnsOutputs = planned.kind == HeaderEntryKind::Session ||
                          planned.kind == HeaderEntryKind::Forward;
    if (returnsOutputs) {
      std::string outputsStruct = planned.method + "Outputs";
      if (!planTensors(entry.outputs, /*inputs=*/false, entry.name,
                       outputsStruct, "From", planned.outputs, error))
        return false;
      planned.outputsStruct = outputsStruct;
      if (!members.add(outputsStruct, "the outputs of " + what, error))
        return false;
    }
    plan.entries.push_back(std::move(planned));
  }

  for (const art::ResidentBuffer &buffer : artifact.resident_buffers) {
    HeaderBuffer planned{
        {buffer.name, cppIdentifier(buffer.name), buffer.dtype, buffer.shape},
        buffer.role};
    if (!members.add(
            planned.tensor.identifier,
            (roleName(buffer.role) + " '" + llvm::Twine(buffer.name) + "'")
                .str(),
            error))
      return false;
    plan.buffers.push_back(std::move(planned));
  }
  return true;
}

} // namespace mlir::kiln::codegen
