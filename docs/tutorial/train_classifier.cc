// Trains the tutorial's classifier on the GPU with the runtime API: the
// training records uploaded a batch ahead of the step that uses them, the
// gradients clipped between the backward and the update (where host code may
// read and edit them), a cosine learning rate, a checkpoint at the end.
//   train_classifier classifier.kiln train.kilndata classifier.safetensors
#include <cmath>
#include <cstdio>

#include "kiln/batch_loader.h"
#include "kiln/dataset.h"
#include "kiln/runtime.h"
#include "kiln/status.h"

absl::Status Train(const char* model_file, const char* data_file,
                   const char* checkpoint) {
  KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(/*device=*/0));
  KILN_ASSIGN_OR_RETURN(auto model, runtime->Load(model_file));
  KILN_ASSIGN_OR_RETURN(auto trainer, model->NewTrainer({.seed = 1}));
  KILN_ASSIGN_OR_RETURN(auto data, kiln::io::MappedDataset::Open(data_file));
  const int epochs = 20;
  kiln::DeviceBatchLoaderOptions options;
  options.batch = {.batch_size = 32, .seed = 1, .num_epochs = epochs};
  options.fields = {"images", "labels"};
  KILN_ASSIGN_OR_RETURN(
      auto loader, kiln::DeviceBatchLoader::Create(*runtime, data.get(),
                                                   options, trainer->stream()));
  const int steps = epochs * static_cast<int>(data->record_count() / 32);
  for (int step = 0; step < steps; ++step) {
    KILN_ASSIGN_OR_RETURN(kiln::DeviceBatch batch, loader->Next());
    const float lr = 1e-2f * 0.5f * (1 + std::cos(M_PI * step / steps));
    KILN_ASSIGN_OR_RETURN(float loss, trainer->ForwardBackward(batch.inputs()));
    KILN_ASSIGN_OR_RETURN(double norm, trainer->ClipGradNorm(/*max_norm=*/1.0));
    KILN_RETURN_IF_ERROR(trainer->ApplyUpdate(lr));
    if ((step + 1) % 100 == 0)
      std::printf("step %d: loss %.4f, gradient norm %.3f\n", step + 1, loss,
                  norm);
  }
  return trainer->Save(checkpoint);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: train_classifier MODEL.kiln TRAIN.kilndata "
                 "CHECKPOINT.safetensors\n");
    return 2;
  }
  absl::Status status = Train(argv[1], argv[2], argv[3]);
  if (!status.ok())
    std::fprintf(stderr, "train_classifier: %s\n", status.ToString().c_str());
  return status.ok() ? 0 : 1;
}
