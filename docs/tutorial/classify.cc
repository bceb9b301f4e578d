// classify MODEL.kiln CHECKPOINT.safetensors BATCH.safetensors: the class of
// each image of the batch, by the tutorial's classifier on the GPU.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kiln/runtime.h"
#include "kiln/status.h"

absl::Status Classify(const char* model_file, const char* checkpoint,
                      const char* batch_file) {
  KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(/*device=*/0));
  KILN_ASSIGN_OR_RETURN(auto model, runtime->Load(model_file));
  KILN_ASSIGN_OR_RETURN(auto session, model->NewSession());
  KILN_RETURN_IF_ERROR(session->LoadParameters(checkpoint));
  KILN_ASSIGN_OR_RETURN(auto batch, kiln::io::ReadSafetensorsFile(batch_file));
  kiln::Inputs inputs(batch.tensors.begin(), batch.tensors.end());
  KILN_ASSIGN_OR_RETURN(kiln::Outputs outputs, session->Forward(inputs));
  auto predicted = outputs.find("predicted");
  if (predicted == outputs.end())
    return absl::NotFoundError("the model has no output 'predicted'");
  KILN_ASSIGN_OR_RETURN(auto classes, runtime->Download(predicted->second));
  for (size_t i = 0; i * sizeof(int32_t) < classes.data.size(); ++i) {
    int32_t c;
    std::memcpy(&c, &classes.data[i * sizeof(int32_t)], sizeof(c));
    std::printf("image %zu: class %d\n", i, c);
  }
  return absl::OkStatus();
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: classify MODEL CHECKPOINT BATCH\n");
    return 2;
  }
  absl::Status status = Classify(argv[1], argv[2], argv[3]);
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return status.ok() ? 0 : 1;
}
