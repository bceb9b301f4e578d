#include "runtime/artifact/test_artifacts.h"

#include <string>
#include <utility>

#include "runtime/artifact/artifact_writer.h"

namespace kiln {
namespace artifact {
namespace testing {
namespace {

std::string FakePtx(const std::string& name, const std::string& arch) {
  return ".version 8.0\n.target " + arch +
         "\n.address_size 64\n.visible .entry " + name + "()\n{\n  ret;\n}\n";
}

Kernel MakeKernel(const std::string& name, std::vector<ArgKind> params,
                  const std::vector<std::string>& archs, bool with_cubin,
                  uint32_t static_shared = 0) {
  Kernel k;
  k.name = name;
  k.content_hash = 0x1000 + name.size() * 77 + params.size();
  for (const std::string& arch : archs) {
    KernelImage image;
    image.arch = arch;
    image.ptx = FakePtx(name, arch);
    // As kilnc marks its images: sm_90 and newer wait for their predecessor.
    image.waits_for_predecessor = ArchNumber(arch) >= 90;
    if (with_cubin) {
      for (int i = 0; i < 40; ++i) {
        image.cubin.push_back(static_cast<uint8_t>(0x7f ^ (i * 13)));
      }
    }
    k.images.push_back(std::move(image));
  }
  k.static_shared_bytes = static_shared;
  k.max_threads = 256;
  k.params = std::move(params);
  return k;
}

TensorBinding Bind(const std::string& name, DType dtype,
                   std::vector<int64_t> shape, BufferRef ref) {
  TensorBinding t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.buffer = ref;
  return t;
}

Launch MakeLaunch(uint32_t kernel, Dim3 grid, Dim3 block, uint32_t dyn_shared,
                  std::vector<Arg> args) {
  Launch l;
  l.kernel = kernel;
  l.grid = grid;
  l.block = block;
  l.dynamic_shared_bytes = dyn_shared;
  l.args = std::move(args);
  return l;
}

using A = ArgKind;

}  // namespace

Artifact MinimalArtifact() {
  ArtifactWriter w({"sm_90"});
  const uint32_t k = w.AddKernel(MakeKernel(
      "relu_0", {A::kBuffer, A::kBuffer, A::kI32}, {"sm_90"}, false));
  Entry e;
  e.name = "forward";
  e.arena_size = 512;
  e.arena_alignment = 256;
  e.inputs.push_back(Bind("x", DType::kF32, {4, 8}, BufferRef::Arena(0, 128)));
  e.outputs.push_back(
      Bind("y", DType::kF32, {4, 8}, BufferRef::Arena(256, 128)));
  e.launches.push_back(
      MakeLaunch(k, {1, 1, 1}, {32, 1, 1}, 0,
                 {Arg::Buffer(BufferRef::Arena(0, 128)),
                  Arg::Buffer(BufferRef::Arena(256, 128)), Arg::I32(32)}));
  w.AddEntry(std::move(e));
  return w.artifact();
}

Artifact TrainingArtifact() {
  const std::vector<std::string> archs = {"sm_80", "sm_90"};
  ArtifactWriter w(archs);
  const uint32_t wb = w.AddParameter("w", DType::kF32, {16, 8},
                                     InitKind::kNormal, 0.0f, 0.02f, 1);
  const uint32_t bb =
      w.AddParameter("b", DType::kF32, {8}, InitKind::kZeros, 0, 0, 2);
  const uint32_t gw =
      w.AddBuffer("grad/w", BufferRole::kGradient, DType::kF32, {16, 8});
  const uint32_t gb =
      w.AddBuffer("grad/b", BufferRole::kGradient, DType::kF32, {8});
  const uint32_t mw = w.AddBuffer("momentum/w", BufferRole::kOptimizerState,
                                  DType::kF32, {16, 8});
  const uint32_t mb =
      w.AddBuffer("momentum/b", BufferRole::kOptimizerState, DType::kF32, {8});
  std::vector<uint8_t> scale(8 * 4);
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = static_cast<uint8_t>(i);
  const uint32_t cb = w.AddConstant("scale", DType::kF32, {8}, scale);
  const uint32_t step =
      w.AddBuffer("step", BufferRole::kOptimizerState, DType::kI32, {});

  const uint32_t gemm =
      w.AddKernel(MakeKernel("gemm_bias_relu_0",
                             {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer,
                              A::kBuffer, A::kI32, A::kI32, A::kI32},
                             archs, true, 16384));
  const uint32_t loss = w.AddKernel(MakeKernel(
      "mse_loss_1", {A::kBuffer, A::kBuffer, A::kBuffer, A::kF32, A::kI64},
      archs, false));
  const uint32_t bwd = w.AddKernel(MakeKernel(
      "gemm_bwd_2",
      {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer, A::kF64},
      archs, true, 0));
  const uint32_t sgd = w.AddKernel(MakeKernel(
      "sgd_momentum_3",
      {A::kBuffer, A::kBuffer, A::kBuffer, A::kF32, A::kF32, A::kBuffer}, archs,
      false));

  // Arena layout for a batch of 32: x [32,16] at 0 (2048 B), y [32,8] at 2048
  // (1024 B), pred [32,8] at 3072, loss [] at 4096, lr [] at 4352.
  auto x = Bind("x", DType::kF32, {32, 16}, BufferRef::Arena(0, 2048));
  auto y = Bind("y", DType::kF32, {32, 8}, BufferRef::Arena(2048, 1024));
  auto pred = Bind("pred", DType::kF32, {32, 8}, BufferRef::Arena(3072, 1024));
  auto loss_out = Bind("loss", DType::kF32, {}, BufferRef::Arena(4096, 4));
  auto lr = Bind("lr", DType::kF32, {}, BufferRef::Arena(4352, 4));

  const Launch fwd = MakeLaunch(gemm, {1, 4, 1}, {128, 1, 1}, 1024,
                                {Arg::Buffer(BufferRef::Arena(0, 2048)),
                                 Arg::Buffer(BufferRef::Resident(wb, 0, 512)),
                                 Arg::Buffer(BufferRef::Resident(bb, 0, 32)),
                                 Arg::Buffer(BufferRef::Resident(cb, 0, 32)),
                                 Arg::Buffer(BufferRef::Arena(3072, 1024)),
                                 Arg::I32(32), Arg::I32(16), Arg::I32(8)});
  const Launch loss_launch =
      MakeLaunch(loss, {1, 1, 1}, {256, 1, 1}, 0,
                 {Arg::Buffer(BufferRef::Arena(3072, 1024)),
                  Arg::Buffer(BufferRef::Arena(2048, 1024)),
                  Arg::Buffer(BufferRef::Arena(4096, 4)), Arg::F32(1.0f / 256),
                  Arg::I64(256)});
  const Launch bwd_launch =
      MakeLaunch(bwd, {2, 2, 1}, {16, 16, 1}, 8192,
                 {Arg::Buffer(BufferRef::Arena(0, 2048)),
                  Arg::Buffer(BufferRef::Arena(3072, 1024)),
                  Arg::Buffer(BufferRef::Resident(wb, 0, 512)),
                  Arg::Buffer(BufferRef::Resident(gw, 0, 512)),
                  Arg::Buffer(BufferRef::Resident(gb, 0, 32)), Arg::F64(0.5)});
  const Launch update_w =
      MakeLaunch(sgd, {1, 1, 1}, {128, 1, 1}, 0,
                 {Arg::Buffer(BufferRef::Resident(wb, 0, 512)),
                  Arg::Buffer(BufferRef::Resident(gw, 0, 512)),
                  Arg::Buffer(BufferRef::Resident(mw, 0, 512)), Arg::F32(0.9f),
                  Arg::F32(-0.0f), Arg::Buffer(BufferRef::Arena(4352, 4))});
  const Launch update_b = MakeLaunch(
      sgd, {1, 1, 1}, {8, 1, 1}, 0,
      {Arg::Buffer(BufferRef::Resident(bb, 0, 32)),
       Arg::Buffer(BufferRef::Resident(gb, 0, 32)),
       Arg::Buffer(BufferRef::Resident(mb, 0, 32)), Arg::F32(0.9f),
       Arg::F32(1e-4f), Arg::Buffer(BufferRef::Resident(step, 0, 4))});

  Entry forward;
  forward.name = "forward";
  forward.arena_size = 4096;
  forward.inputs = {x};
  forward.outputs = {pred};
  forward.launches = {fwd};
  w.AddEntry(forward);

  Entry fb;
  fb.name = "forward_backward";
  fb.arena_size = 4352;
  fb.arena_alignment = 512;
  fb.inputs = {x, y};
  fb.outputs = {loss_out, Bind("grad/w", DType::kF32, {16, 8},
                               BufferRef::Resident(gw, 0, 512))};
  fb.launches = {fwd, loss_launch, bwd_launch};
  w.AddEntry(fb);

  Entry update;
  update.name = "apply_update";
  update.arena_size = 4608;
  update.inputs = {lr};
  update.launches = {update_w, update_b};
  w.AddEntry(update);

  Entry train;
  train.name = "train_step";
  train.arena_size = 4608;
  train.inputs = {x, y, lr};
  train.outputs = {loss_out};
  train.launches = {fwd, loss_launch, bwd_launch, update_w, update_b};
  // Data parallel: the gradients are averaged over the ranks after the
  // backward, before the updates read them.
  Collective grads;
  grads.after_launches = 3;
  grads.wait_before = 3;
  grads.tensors = {{"grad/w", DType::kF32, BufferRef::Resident(gw, 0, 512)},
                   {"grad/b", DType::kF32, BufferRef::Resident(gb, 0, 32)}};
  train.collectives = {grads};
  w.AddEntry(train);
  return w.artifact();
}

Artifact MixedPrecisionArtifact() {
  ArtifactWriter w({"sm_90a"});
  const uint32_t p = w.AddParameter("embed", DType::kBF16, {100, 12},
                                    InitKind::kUniform, -0.1f, 0.1f, 7);
  const uint32_t q =
      w.AddParameter("scale", DType::kF16, {12}, InitKind::kOnes, 0, 0, 8);
  const uint32_t master = w.AddBuffer("master/embed", BufferRole::kMasterWeight,
                                      DType::kF32, {100, 12});
  const uint32_t m = w.AddBuffer("adam_m/embed", BufferRole::kOptimizerState,
                                 DType::kF32, {100, 12});
  const uint32_t mask =
      w.AddConstant("mask", DType::kI1, {3, 5}, std::vector<uint8_t>(15, 1));
  ResidentBuffer tokens;
  tokens.name = "tokens";
  tokens.role = BufferRole::kGradient;
  tokens.dtype = DType::kI32;
  tokens.shape = {4, 0, 3};
  tokens.byte_size = 0;
  tokens.donated = true;
  const uint32_t tok = w.AddResidentBuffer(tokens);
  const uint32_t k = w.AddKernel(MakeKernel(
      "adam_bf16_0",
      {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer, A::kF32, A::kI64},
      {"sm_90a"}, true, 227 * 1024 - 4096));
  Entry e;
  e.name = "apply_update";
  e.arena_size = 0;
  e.arena_alignment = 1;
  e.inputs = {
      Bind("tokens", DType::kI32, {4, 0, 3}, BufferRef::Resident(tok, 0, 0))};
  e.outputs = {
      Bind("scale", DType::kF16, {12}, BufferRef::Resident(q, 0, 24)),
      Bind("mask", DType::kI1, {3, 5}, BufferRef::Resident(mask, 0, 15))};
  e.launches.push_back(
      MakeLaunch(k, {2147483647u, 65535, 65535}, {1024, 1, 1}, 4096,
                 {Arg::Buffer(BufferRef::Resident(p, 0, 2400)),
                  Arg::Buffer(BufferRef::Resident(master, 0, 4800)),
                  Arg::Buffer(BufferRef::Resident(m, 4800, 0)),
                  Arg::Buffer(BufferRef::Resident(q, 22, 2)), Arg::F32(3e-4f),
                  Arg::I64(-1)}));
  // The same kernel in a portable and a non-portable cluster (persistent)
  // and cooperatively.
  Launch clustered = e.launches.back();
  clustered.grid = {132, 2, 1};
  clustered.cluster = {4, 2, 1};
  e.launches.push_back(clustered);
  clustered.grid = {128, 1, 1};
  clustered.cluster = {16, 1, 1};
  clustered.persistent_blocks_per_sm = 1;
  e.launches.push_back(clustered);
  Launch cooperative = e.launches.front();
  cooperative.grid = {132, 1, 1};
  cooperative.cooperative = true;
  e.launches.push_back(cooperative);
  w.mutable_artifact().kernels[k].max_threads = 1024;
  w.AddEntry(std::move(e));
  return w.artifact();
}

Artifact TensorMapArtifact() {
  ArtifactWriter w({"sm_90a"});
  const uint32_t x = w.AddParameter("x", DType::kBF16, {2, 10, 9, 64},
                                    InitKind::kNormal, 0.0f, 1.0f, 0);
  const uint32_t k = w.AddKernel(
      MakeKernel("conv_tma_0", {A::kBuffer, A::kTensorMap, A::kTensorMap},
                 {"sm_90a"}, true));
  TensorMap input;
  input.mode = TensorMapMode::kIm2col;
  input.dtype = DType::kBF16;
  input.dims = {64, 9, 10, 2};
  input.strides = {128, 9 * 128, 10 * 9 * 128};
  input.element_strides = {1, 1, 2, 1};
  input.lower_corner = {-1, -1};
  input.upper_corner = {-1, -2};
  input.channels_per_pixel = 64;
  input.pixels_per_column = 128;
  input.swizzle_bytes = 128;
  TensorMap filter;
  filter.dtype = DType::kBF16;
  filter.dims = {576, 128};
  filter.strides = {576 * 2};
  filter.box = {64, 128};
  filter.element_strides = {1, 1};
  filter.swizzle_bytes = 128;
  const uint64_t filter_bytes = 128 * 576 * 2;
  Entry e;
  e.name = "forward";
  e.arena_size = filter_bytes + 2 * 5 * 9 * 128 * 2;
  e.inputs = {
      Bind("w", DType::kBF16, {128, 576}, BufferRef::Arena(0, filter_bytes))};
  e.outputs = {Bind("y", DType::kBF16, {2, 5, 9, 128},
                    BufferRef::Arena(filter_bytes, 2 * 5 * 9 * 128 * 2))};
  e.launches.push_back(MakeLaunch(
      k, {90, 1, 1}, {256, 1, 1}, 0,
      {Arg::Buffer(BufferRef::Arena(filter_bytes, 2 * 5 * 9 * 128 * 2)),
       Arg::TensorMapOf(BufferRef::Resident(x, 0, 2 * 10 * 9 * 64 * 2), input),
       Arg::TensorMapOf(BufferRef::Arena(0, filter_bytes), filter)}));
  w.AddEntry(std::move(e));
  return w.artifact();
}

Artifact ClassifierArtifact() {
  ArtifactWriter w({"sm_90"});
  w.mutable_artifact().producer = "kilnc 0.1.0 (kiln, commit 1234567)";
  const uint32_t emb = w.AddParameter("emb", DType::kF32, {16, 4},
                                      InitKind::kNormal, 0.0f, 0.02f, 0);
  const uint32_t wb =
      w.AddParameter("w", DType::kF32, {4, 3}, InitKind::kXavier, 1, 0, 1);
  const uint32_t running =
      w.AddState("running", DType::kF32, {3}, InitKind::kZeros, 0, 0, 2);
  std::vector<uint32_t> updated;
  for (const char* name : {"emb", "w"}) {
    const std::vector<int64_t> shape =
        std::string(name) == "emb" ? std::vector<int64_t>{16, 4}
                                   : std::vector<int64_t>{4, 3};
    updated.push_back(w.AddBuffer(std::string("grad.") + name,
                                  BufferRole::kGradient, DType::kF32, shape));
    for (const char* moment : {"adam_m.", "adam_v."}) {
      updated.push_back(w.AddBuffer(moment + std::string(name),
                                    BufferRole::kOptimizerState, DType::kF32,
                                    shape));
    }
  }
  const uint32_t gather = w.AddKernel(MakeKernel(
      "kiln_embedding_0a1b2c3d4e5f", {A::kBuffer, A::kBuffer, A::kBuffer},
      {"sm_90"}, true));
  const uint32_t loss = w.AddKernel(MakeKernel(
      "kiln_cross_entropy_rows_112233445566",
      {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer}, {"sm_90"}, true));
  const uint32_t adam = w.AddKernel(
      MakeKernel("kiln_optimizer_aabbccddeeff",
                 {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer},
                 {"sm_90"}, true));

  TensorBinding tokens =
      Bind("tokens", DType::kI32, {4, 2}, BufferRef::Arena(0, 32));
  tokens.valid_range =
      ValueRange{0, 16, std::nullopt, "indices of kiln.embedding of 16 rows"};
  TensorBinding labels =
      Bind("labels", DType::kI32, {4}, BufferRef::Arena(256, 16));
  labels.valid_range = ValueRange{
      0, 3, -100,
      "labels of kiln.cross_entropy over 3 classes with ignore_index -100"};
  const std::vector<TensorBinding> resident = {
      Bind("emb", DType::kF32, {16, 4}, BufferRef::Resident(emb, 0, 256)),
      Bind("w", DType::kF32, {4, 3}, BufferRef::Resident(wb, 0, 48)),
      Bind("running", DType::kF32, {3}, BufferRef::Resident(running, 0, 12))};
  const TensorBinding loss_out =
      Bind("loss", DType::kF32, {}, BufferRef::Arena(512, 4));
  const Launch gather_launch = MakeLaunch(
      gather, {1, 1, 1}, {32, 1, 1}, 0,
      {Arg::Buffer(BufferRef::Resident(emb, 0, 256)),
       Arg::Buffer(BufferRef::Arena(0, 32)), Arg::Buffer(BufferRef::Arena(
                                                 1536, 128))});
  const Launch loss_launch = MakeLaunch(
      loss, {1, 1, 1}, {32, 1, 1}, 0,
      {Arg::Buffer(BufferRef::Arena(1536, 128)),
       Arg::Buffer(BufferRef::Resident(wb, 0, 48)),
       Arg::Buffer(BufferRef::Arena(256, 16)),
       Arg::Buffer(BufferRef::Arena(512, 4))});

  Entry forward;
  forward.name = "forward";
  forward.arena_size = 2048;
  forward.inputs = {tokens, labels};
  forward.inputs.insert(forward.inputs.end(), resident.begin(), resident.end());
  forward.outputs = {
      loss_out, Bind("accuracy", DType::kF32, {}, BufferRef::Arena(768, 4))};
  forward.launches = {gather_launch, loss_launch};
  w.AddEntry(forward);

  Entry train = forward;
  train.name = "train_step";
  train.arena_size = 4096;
  train.inputs.push_back(
      Bind("lr", DType::kF32, {}, BufferRef::Arena(1024, 4)));
  train.inputs.push_back(
      Bind("step", DType::kI32, {}, BufferRef::Arena(1280, 4)));
  train.outputs = {loss_out, resident[0], resident[1], resident[2]};
  train.launches.push_back(MakeLaunch(
      adam, {1, 1, 1}, {64, 1, 1}, 0,
      {Arg::Buffer(BufferRef::Resident(emb, 0, 256)),
       Arg::Buffer(BufferRef::Resident(updated[0], 0, 256)),
       Arg::Buffer(BufferRef::Resident(updated[1], 0, 256)),
       Arg::Buffer(BufferRef::Resident(updated[2], 0, 256)),
       Arg::Buffer(BufferRef::Arena(1024, 4))}));
  w.AddEntry(train);
  return w.artifact();
}

// `count` elements of `dtype`, byte i being a function of i and `seed`.
InitialValue Values(DType dtype, size_t count, int seed) {
  std::string bytes(count * DTypeSize(dtype), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((i * 37 + seed * 11) & 0x7f);
  }
  return InitialValue::Copy(bytes);
}

Artifact WeightsArtifact() {
  ArtifactWriter w({"sm_90"});
  const uint32_t weight =
      w.AddBuffer("fc.weight", BufferRole::kParameter, DType::kBF16, {4, 3});
  w.SetInitialValue(weight, Values(DType::kBF16, 12, 1));
  const uint32_t bias =
      w.AddParameter("fc.bias", DType::kBF16, {3}, InitKind::kZeros, 0, 0, 1);
  const uint32_t master = w.AddBuffer(
      "master.fc.weight", BufferRole::kMasterWeight, DType::kF32, {4, 3});
  w.SetInitialValue(master, Values(DType::kF32, 12, 2));
  const uint32_t running =
      w.AddBuffer("bn.running_var", BufferRole::kState, DType::kF32, {3});
  w.SetInitialValue(running, Values(DType::kF32, 3, 3));
  const uint32_t table =
      w.AddBuffer("table", BufferRole::kConstant, DType::kF32, {40});
  w.SetInitialValue(table, Values(DType::kF32, 40, 4));
  const uint32_t grad = w.AddBuffer("grad.fc.weight", BufferRole::kGradient,
                                    DType::kBF16, {4, 3});
  const uint32_t k =
      w.AddKernel(MakeKernel("linear_0",
                             {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer,
                              A::kBuffer, A::kBuffer, A::kBuffer},
                             {"sm_90"}, true));
  Entry forward;
  forward.name = "forward";
  forward.arena_size = 256;
  forward.inputs = {
      Bind("x", DType::kF32, {2, 4}, BufferRef::Arena(0, 32)),
      Bind("fc.weight", DType::kBF16, {4, 3},
           BufferRef::Resident(weight, 0, 24)),
      Bind("fc.bias", DType::kBF16, {3}, BufferRef::Resident(bias, 0, 6)),
      Bind("bn.running_var", DType::kF32, {3},
           BufferRef::Resident(running, 0, 12)),
      Bind("table", DType::kF32, {40}, BufferRef::Resident(table, 0, 160))};
  forward.outputs = {Bind("y", DType::kF32, {2, 3}, BufferRef::Arena(128, 24))};
  forward.launches.push_back(
      MakeLaunch(k, {1, 1, 1}, {32, 1, 1}, 0,
                 {Arg::Buffer(BufferRef::Arena(0, 32)),
                  Arg::Buffer(BufferRef::Resident(weight, 0, 24)),
                  Arg::Buffer(BufferRef::Resident(bias, 0, 6)),
                  Arg::Buffer(BufferRef::Resident(running, 0, 12)),
                  Arg::Buffer(BufferRef::Resident(table, 0, 160)),
                  Arg::Buffer(BufferRef::Resident(master, 0, 48)),
                  Arg::Buffer(BufferRef::Resident(grad, 0, 24))}));
  w.AddEntry(std::move(forward));
  return w.artifact();
}

std::vector<Artifact> ValidArtifacts() {
  return {MinimalArtifact(),   TrainingArtifact(),   MixedPrecisionArtifact(),
          TensorMapArtifact(), ClassifierArtifact(), WeightsArtifact()};
}

}  // namespace testing
}  // namespace artifact
}  // namespace kiln
