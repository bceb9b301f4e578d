#ifndef KILN_RUNTIME_ARTIFACT_TEST_ARTIFACTS_H_
#define KILN_RUNTIME_ARTIFACT_TEST_ARTIFACTS_H_

// Small valid artifacts built with ArtifactWriter, for tests and the fuzzer.

#include <vector>

#include "runtime/artifact/artifact.h"

namespace kiln {
namespace artifact {
namespace testing {

// One kernel, one entry "forward" (x -> y in the arena), no parameters.
Artifact MinimalArtifact();
// A linear model trained with momentum SGD: parameters w and b, their gradients
// and momenta, a constant, and the entries forward, forward_backward,
// apply_update and train_step; kernels for sm_80 and sm_90, some with cubin;
// scalar arguments of every kind.
Artifact TrainingArtifact();
// bf16 parameters with f32 master weights and Adam state, donated inputs;
// clustered (8 and 16 blocks) and cooperative launches.
Artifact MixedPrecisionArtifact();

// A convolution whose kernel takes TMA tensor maps: an im2col map of the
// input [2, 10, 9, 64] (bf16, resident) and a tiled map of the filter
// [128, 576] in the arena.
Artifact TensorMapArtifact();

// A classifier as kilnc writes one, with its producer: tokens i32[4, 2]
// (embedding indices in [0, 16)) and labels i32[4] (cross entropy labels in
// [0, 3) or -100) -> loss, accuracy; parameters emb [16, 4] and w [4, 3],
// model state "running" [3], Adam moments and gradients; entries forward and
// train_step (lr, step); three kernel families.
Artifact ClassifierArtifact();

// An imported model's inference and training entries, as kilnc writes them
// (format 3): the bf16 parameter "fc.weight" and its f32 master weight, the
// model state "bn.running_var" and the constant "table" [40] start from
// initial values in the data section (of sizes that need padding); the
// parameter "fc.bias" from its initialiser.
Artifact WeightsArtifact();

// All of the above.
std::vector<Artifact> ValidArtifacts();

}  // namespace testing
}  // namespace artifact
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_TEST_ARTIFACTS_H_
