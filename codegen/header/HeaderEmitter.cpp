//===- HeaderEmitter.cpp - the typed C++ header of an artifact ------------===//

#include "codegen/header/HeaderEmitter.h"

#include "codegen/header/CppNames.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"

namespace mlir::kiln::codegen {

namespace art = ::kiln::artifact;

namespace {

std::string dtypeEnumerator(::kiln::DType dtype) {
  switch (dtype) {
  case ::kiln::DType::kF32:
    return "::kiln::DType::kF32";
  case ::kiln::DType::kBF16:
    return "::kiln::DType::kBF16";
  case ::kiln::DType::kF16:
    return "::kiln::DType::kF16";
  case ::kiln::DType::kI32:
    return "::kiln::DType::kI32";
  case ::kiln::DType::kI1:
    return "::kiln::DType::kI1";
  case ::kiln::DType::kI64:
    return "::kiln::DType::kI64";
  }
  return "::kiln::DType::kF32";
}

/// "::kiln::TypedInput<::kiln::DType::kF32, 64, 8>"
std::string typedName(llvm::StringRef kind, const HeaderTensor &tensor) {
  std::string out =
      ("::kiln::" + kind + "<").str() + dtypeEnumerator(tensor.dtype);
  for (int64_t dim : tensor.shape)
    out += ", " + std::to_string(dim);
  return out + ">";
}

/// "f32[64, 8]", as the runtime prints shapes.
std::string typeText(const HeaderTensor &tensor) {
  static const char *const names[] = {"f32", "bf16", "f16", "i32", "i1"};
  std::string out = names[static_cast<int>(tensor.dtype) % 5];
  out += "[";
  for (auto [index, dim] : llvm::enumerate(tensor.shape))
    out += (index ? ", " : "") + std::to_string(dim);
  return out + "]";
}

llvm::StringRef roleComment(art::BufferRole role) {
  switch (role) {
  case art::BufferRole::kParameter:
    return "parameter";
  case art::BufferRole::kOptimizerState:
    return "optimizer state";
  case art::BufferRole::kGradient:
    return "gradient";
  case art::BufferRole::kMasterWeight:
    return "f32 master weight";
  case art::BufferRole::kConstant:
    return "constant";
  case art::BufferRole::kState:
    return "model state";
  }
  return "buffer";
}

std::string hex(uint64_t value) {
  std::string digits = llvm::utohexstr(value, /*LowerCase=*/true);
  return "0x" + std::string(16 - digits.size(), '0') + digits + "ULL";
}

std::string guardOf(const HeaderPlan &plan) {
  std::string guard = "KILN_TYPED_";
  for (const std::string &ns : plan.namespaces)
    guard += llvm::StringRef(ns).upper() + "_";
  return guard + llvm::StringRef(plan.className).upper() + "_H_";
}

std::string listOf(const std::vector<HeaderTensor> &tensors) {
  std::string out;
  for (auto [index, tensor] : llvm::enumerate(tensors))
    out += (index ? ", " : "") + tensor.name;
  return out;
}

class Printer {
public:
  Printer(const HeaderPlan &plan, llvm::raw_ostream &os) : plan(plan), os(os) {}
  void print();

private:
  void printIdentity();
  void printStructs(const HeaderEntry &entry);
  void printFactories();
  void printEntry(const HeaderEntry &entry);
  void printBuffers();

  /// The runtime object the class holds: "trainer_" or "session_".
  const char *holder() const { return plan.trains ? "trainer_" : "session_"; }
  const char *holderType() const {
    return plan.trains ? "::kiln::Trainer" : "::kiln::Session";
  }
  const char *optionsType() const {
    return plan.trains ? "::kiln::TrainerOptions" : "::kiln::SessionOptions";
  }

  const HeaderPlan &plan;
  llvm::raw_ostream &os;
};

void Printer::print() {
  const std::string guard = guardOf(plan);
  os << "// " << plan.headerName
     << ": the typed host API of the kiln artifact compiled from "
     << plan.source << ".\n"
     << "// Written by kilnc; do not edit.\n"
     << "//\n"
     << "// class " << plan.className
     << " wraps a kiln::" << (plan.trains ? "Trainer" : "Session")
     << ": one method per entry, one struct of\n"
        "// inputs per entry (kiln::TypedInput<DType, dims...> fields: a "
        "misspelt\n"
        "// input, a wrong shape or dtype does not compile), one accessor per "
        "resident\n"
        "// buffer. Load checks the artifact against the identity below "
        "before it\n"
        "// reaches the GPU. Names map to C++ names by the rule of\n"
        "// codegen/header/CppNames.h (\"grad.w1\" -> grad_w1, train_step -> "
        "TrainStep).\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <cstdint>\n#include <memory>\n#include <string>\n"
        "#include <utility>\n\n"
        "#include \"absl/status/status.h\"\n"
        "#include \"absl/status/statusor.h\"\n"
        "#include \"absl/strings/string_view.h\"\n"
        "#include \"kiln/runtime.h\"\n"
        "#include \"kiln/typed.h\"\n\n";
  for (const std::string &ns : plan.namespaces)
    os << "namespace " << ns << " {\n";
  if (!plan.namespaces.empty())
    os << "\n";
  os << "class " << plan.className << " {\n public:\n";
  printIdentity();
  for (const HeaderEntry &entry : plan.entries)
    printStructs(entry);
  printFactories();
  for (const HeaderEntry &entry : plan.entries)
    printEntry(entry);
  printBuffers();
  os << "  " << holderType() << "& Get" << (plan.trains ? "Trainer" : "Session")
     << "() { return *" << holder() << "; }\n"
     << "  const ::kiln::Module& GetModule() const { return *module_; }\n\n"
     << " private:\n"
     << "  " << plan.className << "(::std::unique_ptr<::kiln::Module> module,\n"
     << "      ::std::unique_ptr<" << holderType() << "> held)\n"
     << "      : module_(::std::move(module)), " << holder()
     << "(::std::move(held)) {}\n"
     << "  ::std::unique_ptr<::kiln::Module> module_;\n"
     << "  ::std::unique_ptr<" << holderType() << "> " << holder() << ";\n"
     << "};\n";
  if (!plan.namespaces.empty())
    os << "\n";
  for (const std::string &ns : llvm::reverse(plan.namespaces))
    os << "}  // namespace " << ns << "\n";
  os << "\n#endif  // " << guard << "\n";
}

void Printer::printIdentity() {
  os << "  static constexpr bool kTrains = " << (plan.trains ? "true" : "false")
     << ";\n"
     << "  static constexpr const char* kHeader = "
     << cppStringLiteral(plan.headerName) << ";\n"
     << "  // FNV-1a 64 of the payload of the artifact kilnc wrote with this "
        "header (0:\n"
        "  // none; any artifact with this interface fits).\n"
     << "  static constexpr ::std::uint64_t kArtifactChecksum = "
     << hex(plan.checksum) << ";\n"
     << "  // kiln::artifact::InterfaceSignature and InterfaceFingerprint.\n"
     << "  static constexpr ::std::uint64_t kInterfaceFingerprint =\n"
     << "      " << hex(plan.interfaceFingerprint) << ";\n"
     << "  static constexpr const char* kInterface =";
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(plan.interfaceSignature)
      .split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    os << "\n      " << cppStringLiteral((line + "\n").str());
  os << ";\n\n"
     << "  static ::kiln::typed::ArtifactIdentity Identity() {\n"
     << "    ::kiln::typed::ArtifactIdentity identity_;\n"
     << "    identity_.header = kHeader;\n"
     << "    identity_.checksum = kArtifactChecksum;\n"
     << "    identity_.interface_fingerprint = kInterfaceFingerprint;\n"
     << "    identity_.interface_signature = kInterface;\n"
     << "    return identity_;\n  }\n"
     << "  // OK when `artifact` fits this header (kiln::typed::CheckArtifact)."
        "\n"
     << "  static ::absl::Status Check(\n"
     << "      const ::kiln::artifact::Artifact& artifact,\n"
     << "      ::kiln::typed::Match match = "
        "::kiln::typed::Match::kArtifact) {\n"
     << "    return ::kiln::typed::CheckArtifact(artifact, Identity(), "
        "match);\n"
     << "  }\n\n";
}

void Printer::printStructs(const HeaderEntry &entry) {
  if (!entry.inputsStruct.empty()) {
    os << "  // The inputs of " << entry.name << ".\n"
       << "  struct " << entry.inputsStruct << " {\n";
    for (const HeaderTensor &input : entry.inputs) {
      os << "    " << typedName("TypedInput", input) << " " << input.identifier
         << ";";
      if (input.identifier != input.name)
        os << "  // " << cppStringLiteral(input.name);
      os << "\n";
    }
    os << "\n    ::absl::StatusOr<::kiln::Inputs> ToInputs() const {\n"
       << "      ::kiln::typed::InputsBuilder builder_("
       << cppStringLiteral(entry.name) << ");\n";
    for (const HeaderTensor &input : entry.inputs)
      os << "      builder_.Add(" << cppStringLiteral(input.name) << ", "
         << input.identifier << ");\n";
    os << "      return ::std::move(builder_).Finish();\n    }\n  };\n\n";
  }
  if (!entry.outputsStruct.empty()) {
    os << "  // The outputs " << entry.name << " returns.\n"
       << "  struct " << entry.outputsStruct << " {\n";
    for (const HeaderTensor &output : entry.outputs) {
      os << "    " << typedName("TypedTensor", output) << " "
         << output.identifier << ";";
      if (output.identifier != output.name)
        os << "  // " << cppStringLiteral(output.name);
      os << "\n";
    }
    if (!entry.outputs.empty())
      os << "\n";
    os << "    static ::absl::StatusOr<" << entry.outputsStruct
       << "> From(::kiln::Outputs outputs_) {\n"
       << "      " << entry.outputsStruct << " result_;\n";
    for (const HeaderTensor &output : entry.outputs)
      os << "      if (::absl::Status status_ = ::kiln::typed::TakeOutput(\n"
         << "              outputs_, " << cppStringLiteral(entry.name) << ", "
         << cppStringLiteral(output.name) << ", result_." << output.identifier
         << ");\n"
         << "          !status_.ok())\n"
         << "        return status_;\n";
    os << "      return result_;\n    }\n  };\n\n";
  }
}

void Printer::printFactories() {
  const std::string ptr = "::std::unique_ptr<" + plan.className + ">";
  os << "  // Loads the artifact at `path` onto `runtime`'s device after "
        "checking it\n"
        "  // against this header, then makes a "
     << (plan.trains ? "Trainer" : "Session") << " with `options`.\n"
     << "  static ::absl::StatusOr<" << ptr << "> Load(\n"
     << "      ::kiln::Runtime& runtime, const ::std::string& path,\n"
     << "      const " << optionsType() << "& options = {},\n"
     << "      ::kiln::typed::Match match = ::kiln::typed::Match::kArtifact) "
        "{\n"
     << "    auto loaded_ =\n"
     << "        ::kiln::typed::LoadModuleFile(runtime, path, Identity(), "
        "match);\n"
     << "    if (!loaded_.ok()) return loaded_.status();\n"
     << "    return FromModule(*::std::move(loaded_), options, match);\n"
     << "  }\n"
     << "  // The same for an artifact file image in memory.\n"
     << "  static ::absl::StatusOr<" << ptr << "> LoadFromMemory(\n"
     << "      ::kiln::Runtime& runtime, ::absl::string_view bytes,\n"
     << "      const " << optionsType() << "& options = {},\n"
     << "      ::kiln::typed::Match match = ::kiln::typed::Match::kArtifact) "
        "{\n"
     << "    auto loaded_ =\n"
     << "        ::kiln::typed::LoadModule(runtime, bytes, Identity(), "
        "match);\n"
     << "    if (!loaded_.ok()) return loaded_.status();\n"
     << "    return FromModule(*::std::move(loaded_), options, match);\n"
     << "  }\n"
     << "  // Wraps a loaded module (checked against this header).\n"
     << "  static ::absl::StatusOr<" << ptr << "> FromModule(\n"
     << "      ::std::unique_ptr<::kiln::Module> module,\n"
     << "      const " << optionsType() << "& options = {},\n"
     << "      ::kiln::typed::Match match = ::kiln::typed::Match::kArtifact) "
        "{\n"
     << "    if (module == nullptr)\n"
     << "      return ::absl::InvalidArgumentError(\"no module\");\n"
     << "    if (::absl::Status status_ = Check(module->artifact(), match);\n"
     << "        !status_.ok())\n"
     << "      return status_;\n"
     << "    auto held_ = module->"
     << (plan.trains ? "NewTrainer" : "NewSession") << "(options);\n"
     << "    if (!held_.ok()) return held_.status();\n"
     << "    return " << ptr << "(\n"
     << "        new " << plan.className
     << "(::std::move(module), *::std::move(held_)));\n"
     << "  }\n\n";
}

void Printer::printEntry(const HeaderEntry &entry) {
  std::string inputsParam = entry.inputsStruct.empty()
                                ? ""
                                : "const " + entry.inputsStruct + "& inputs";
  auto convertInputs = [&] {
    if (entry.inputsStruct.empty()) {
      os << "    ::kiln::Inputs runtime_inputs_;\n";
      return;
    }
    os << "    auto runtime_inputs_ = inputs.ToInputs();\n"
       << "    if (!runtime_inputs_.ok()) return runtime_inputs_.status();\n";
  };
  const char *deref = entry.inputsStruct.empty() ? "" : "*";
  std::string inputsComment =
      entry.inputs.empty() ? "" : " (inputs " + listOf(entry.inputs) + ")";
  switch (entry.kind) {
  case HeaderEntryKind::TrainStep:
    os << "  // " << entry.name << inputsComment
       << ": one update with learning\n"
       << "  // rate `lr`; returns the loss.\n"
       << "  ::absl::StatusOr<float> " << entry.method << "("
       << (inputsParam.empty() ? "" : inputsParam + ", ") << "float lr) {\n";
    convertInputs();
    os << "    return trainer_->Step(" << deref << "runtime_inputs_, lr);\n"
       << "  }\n";
    break;
  case HeaderEntryKind::ForwardBackward:
    os << "  // " << entry.name << inputsComment
       << ": the loss; the gradients\n"
       << "  // stay in their buffers (grad_*()) for ApplyUpdate.\n"
       << "  ::absl::StatusOr<float> " << entry.method << "(" << inputsParam
       << ") {\n";
    convertInputs();
    os << "    return trainer_->ForwardBackward(" << deref
       << "runtime_inputs_);\n"
       << "  }\n";
    break;
  case HeaderEntryKind::ApplyUpdate:
    os << "  // " << entry.name
       << ": the optimizer update from the current gradients.\n"
       << "  ::absl::Status " << entry.method << "(float lr) {\n"
       << "    return trainer_->ApplyUpdate(lr);\n  }\n";
    break;
  case HeaderEntryKind::Forward:
  case HeaderEntryKind::Session:
    os << "  // " << entry.name << inputsComment << ".\n"
       << "  ::absl::StatusOr<" << entry.outputsStruct << "> " << entry.method
       << "(" << inputsParam << ") {\n";
    convertInputs();
    if (entry.kind == HeaderEntryKind::Forward)
      os << "    auto outputs_ = trainer_->Forward(" << deref
         << "runtime_inputs_);\n";
    else
      os << "    auto outputs_ = session_->Run(" << cppStringLiteral(entry.name)
         << ", " << deref << "runtime_inputs_);\n";
    os << "    if (!outputs_.ok()) return outputs_.status();\n"
       << "    return " << entry.outputsStruct
       << "::From(*::std::move(outputs_));\n  }\n";
    break;
  }
}

void Printer::printBuffers() {
  os << "\n  // The static types of the resident buffers.\n"
     << "  struct BufferTypes {\n";
  for (const HeaderBuffer &buffer : plan.buffers)
    os << "    using " << buffer.tensor.identifier << " = "
       << typedName("TypedTensor", buffer.tensor) << ";\n";
  os << "  };\n"
     << "  // Views of the resident buffers: writing them changes the "
     << (plan.trains ? "trainer" : "session") << "'s state.\n";
  for (const HeaderBuffer &buffer : plan.buffers) {
    std::string what =
        (roleComment(buffer.role) + " '" + buffer.tensor.name + "'").str();
    os << "  // " << what << ", " << typeText(buffer.tensor) << "\n"
       << "  ::absl::StatusOr<BufferTypes::" << buffer.tensor.identifier << "> "
       << buffer.tensor.identifier << "() const {\n"
       << "    return BufferTypes::" << buffer.tensor.identifier << "::Wrap(\n"
       << "        " << holder() << "->Buffer("
       << cppStringLiteral(buffer.tensor.name) << "), "
       << cppStringLiteral(what) << ");\n  }\n";
  }
  os << "\n";
}

} // namespace

void printHeader(const HeaderPlan &plan, llvm::raw_ostream &os) {
  Printer(plan, os).print();
}

bool emitHeader(const art::Artifact &artifact, const HeaderOptions &options,
                std::string &text, std::string &error) {
  HeaderPlan plan;
  if (!planHeader(artifact, options, plan, error))
    return false;
  text.clear();
  llvm::raw_string_ostream os(text);
  printHeader(plan, os);
  os.flush();
  return true;
}

} // namespace mlir::kiln::codegen
