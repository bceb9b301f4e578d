// classify MODEL.kiln CHECKPOINT.safetensors IMAGES.safetensors: each image's
// class by the tutorial's classifier, on the GPU.
#include <cstdio>

#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/io/safetensors.h"

absl::Status Classify(const char* model_file, const char* checkpoint,
                      const char* images) {
  KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(/*device=*/0));
  KILN_ASSIGN_OR_RETURN(auto model, runtime->Load(model_file));
  KILN_ASSIGN_OR_RETURN(auto session, model->NewSession());
  KILN_RETURN_IF_ERROR(session->LoadParameters(checkpoint));
  KILN_ASSIGN_OR_RETURN(auto batch, kiln::io::ReadSafetensorsFile(images));
  KILN_ASSIGN_OR_RETURN(auto outputs,
                        session->Forward(kiln::Inputs(batch.tensors.begin(),
                                                      batch.tensors.end())));
  KILN_ASSIGN_OR_RETURN(auto predicted, kiln::FindOutput(outputs, "predicted"));
  KILN_ASSIGN_OR_RETURN(auto host, runtime->Download(predicted));
  KILN_ASSIGN_OR_RETURN(auto classes, host.Values<int32_t>());
  for (size_t i = 0; i < classes.size(); ++i)
    std::printf("image %zu: class %d\n", i, classes[i]);
  return absl::OkStatus();
}

int main(int argc, char** argv) {
  absl::Status status = argc == 4
                            ? Classify(argv[1], argv[2], argv[3])
                            : absl::InvalidArgumentError(
                                  "usage: classify MODEL CHECKPOINT IMAGES");
  if (!status.ok())
    std::fprintf(stderr, "classify: %s\n", status.ToString().c_str());
  return status.ok() ? 0 : 1;
}
