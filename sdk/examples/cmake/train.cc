// Trains a kiln artifact whose train_step takes f32 inputs x and y on a fixed
// batch through the C API, and prints the loss of every step.
//   train ARTIFACT STEPS LR
#include <kiln/kiln.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void Check(kiln_status status, const char* what) {
  if (status != KILN_OK) {
    throw std::runtime_error(std::string(what) + ": " + kiln_last_error());
  }
}

// An input of train_step, filled with a fixed pattern.
struct Batch {
  std::vector<float> data;
  std::vector<int64_t> shape;
};

Batch MakeInput(kiln_module* module, const std::string& name, int mul,
                int mod, float shift) {
  size_t count = 0;
  Check(kiln_module_input_count(module, "train_step", &count), "inputs");
  for (size_t i = 0; i < count; ++i) {
    kiln_tensor_info info;
    Check(kiln_module_input(module, "train_step", i, &info), "input");
    if (name != info.name) continue;
    Batch batch{std::vector<float>(info.size_bytes / 4),
                std::vector<int64_t>(info.shape, info.shape + info.rank)};
    for (size_t e = 0; e < batch.data.size(); ++e) {
      batch.data[e] = static_cast<float>((e * mul) % mod) / mod - shift;
    }
    return batch;
  }
  throw std::runtime_error("train_step has no input " + name);
}

kiln_input AsInput(const char* name, const Batch& batch) {
  return {name, KILN_F32, static_cast<int32_t>(batch.shape.size()),
          batch.shape.data(), batch.data.data(), batch.data.size() * 4};
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ARTIFACT STEPS LR\n", argv[0]);
    return 2;
  }
  kiln_runtime* runtime;
  kiln_module* module;
  kiln_trainer* trainer;
  Check(kiln_runtime_open(0, &runtime), "open");
  Check(kiln_module_load(runtime, argv[1], &module), "load");
  Batch x = MakeInput(module, "x", 37, 17, 0.5f);
  Batch y = MakeInput(module, "y", 11, 7, 0.0f);
  kiln_input inputs[] = {AsInput("x", x), AsInput("y", y)};
  Check(kiln_trainer_new(module, 0, &trainer), "trainer");
  for (int step = 1; step <= std::atoi(argv[2]); ++step) {
    float loss;
    Check(kiln_trainer_step(trainer, inputs, 2, std::atof(argv[3]), &loss),
          "step");
    std::printf("step %d loss %.6f\n", step, loss);
  }
  kiln_trainer_close(trainer);
  kiln_module_close(module);
  kiln_runtime_close(runtime);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
