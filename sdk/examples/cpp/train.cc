// Trains a kiln artifact whose train_step takes f32 inputs on a fixed batch
// through the C++ API (kiln::Runtime, Module, Trainer), and prints the loss
// of every step.
//   train ARTIFACT STEPS LR
#include <kiln/runtime.h>
#include <kiln/status.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// A fixed pattern for each input: x gets one, every other input another.
kiln::Input MakeInput(const kiln::TensorSpec& spec) {
  const bool is_x = spec.name == "x";
  const int mul = is_x ? 37 : 11, mod = is_x ? 17 : 7;
  const float shift = is_x ? 0.5f : 0.0f;
  std::vector<float> values(kiln::NumElements(spec.shape));
  for (size_t e = 0; e < values.size(); ++e) {
    values[e] = static_cast<float>((e * mul) % mod) / mod - shift;
  }
  return kiln::Input::F32(spec.shape, values);
}

absl::Status Train(const std::string& path, int steps, float lr) {
  KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(0));
  KILN_ASSIGN_OR_RETURN(auto module, runtime->Load(path));
  kiln::TrainerOptions options;
  options.seed = 0;
  KILN_ASSIGN_OR_RETURN(auto trainer, module->NewTrainer(options));
  KILN_ASSIGN_OR_RETURN(auto specs, trainer->InputsOf("train_step"));
  kiln::Inputs inputs;
  for (const kiln::TensorSpec& spec : specs) {
    if (spec.dtype != kiln::DType::kF32) {
      return absl::InvalidArgumentError("input " + spec.name + " is not f32");
    }
    inputs.emplace(spec.name, MakeInput(spec));
  }
  for (int step = 1; step <= steps; ++step) {
    KILN_ASSIGN_OR_RETURN(float loss, trainer->Step(inputs, lr));
    std::printf("step %d loss %.6f\n", step, loss);
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ARTIFACT STEPS LR\n", argv[0]);
    return 2;
  }
  const absl::Status status =
      Train(argv[1], std::atoi(argv[2]), std::strtof(argv[3], nullptr));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
