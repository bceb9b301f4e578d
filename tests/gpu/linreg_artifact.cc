#include "tests/gpu/linreg_artifact.h"

#include <cstddef>
#include <utility>

#include "runtime/artifact/artifact_writer.h"
#include "runtime/random/philox.h"

namespace kiln {

namespace embedded {
extern const unsigned char kLinRegPtx[];
extern const size_t kLinRegPtx_size;
extern const unsigned char kLinRegCubin[];
extern const size_t kLinRegCubin_size;
}  // namespace embedded

namespace testing {
namespace {

using artifact::Arg;
using artifact::ArgKind;
using artifact::BufferRef;
using artifact::BufferRole;
using artifact::Entry;
using artifact::Launch;
using artifact::TensorBinding;

constexpr uint64_t Align(uint64_t v) { return (v + 255) / 256 * 256; }

artifact::Kernel MakeKernel(const std::string& name,
                            std::vector<ArgKind> params,
                            const LinRegOptions& options) {
  artifact::Kernel k;
  k.name = name;
  k.params = std::move(params);
  artifact::KernelImage image;
  image.arch = "sm_90";
  image.ptx.assign(reinterpret_cast<const char*>(embedded::kLinRegPtx),
                   embedded::kLinRegPtx_size);
  image.waits_for_predecessor = options.waits_for_predecessor;
  if (options.cubin) {
    image.cubin.assign(embedded::kLinRegCubin,
                       embedded::kLinRegCubin + embedded::kLinRegCubin_size);
  }
  k.images.push_back(std::move(image));
  uint64_t hash = 1469598103934665603ull;
  for (char c : name)
    hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  k.content_hash = hash;
  return k;
}

Launch MakeLaunch(uint32_t kernel, uint32_t threads, uint32_t block,
                  std::vector<Arg> args) {
  Launch l;
  l.kernel = kernel;
  l.block = {block, 1, 1};
  l.grid = {(threads + block - 1) / block, 1, 1};
  if (l.grid.x == 0) l.grid.x = 1;
  l.args = std::move(args);
  return l;
}

TensorBinding Bind(const std::string& name, DType dtype,
                   std::vector<int64_t> shape, BufferRef ref) {
  TensorBinding b;
  b.name = name;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.buffer = ref;
  return b;
}

}  // namespace

artifact::Artifact LinRegArtifact(const LinRegOptions& o) {
  artifact::ArtifactWriter w({"sm_90"});
  const int32_t n = o.batch, in = o.in, out = o.out;
  const uint64_t fx = uint64_t(n) * in * 4, fy = uint64_t(n) * out * 4;
  const uint64_t fw = uint64_t(in) * out * 4, fb = uint64_t(out) * 4;

  const uint32_t pw = w.AddParameter("w", DType::kF32, {in, out},
                                     InitKind::kXavier, 1.0f, 0.0f, 0);
  const uint32_t pb = w.AddParameter("b", DType::kF32, {out},
                                     InitKind::kUniform, -0.1f, 0.1f, 1);
  const BufferRef rw = BufferRef::Resident(pw, 0, fw);
  const BufferRef rb = BufferRef::Resident(pb, 0, fb);

  using A = ArgKind;
  const uint32_t k_fwd =
      w.AddKernel(MakeKernel("linreg_forward",
                             {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer,
                              A::kI32, A::kI32, A::kI32},
                             o));

  // Arena: x, y, pred, dpred, loss, lr, step, inject_fault.
  const uint64_t ox = 0, oy = Align(ox + fx), op = Align(oy + fy),
                 od = Align(op + fy), ol = Align(od + fy), olr = Align(ol + 4),
                 ostep = Align(olr + 4), ofault = Align(ostep + 4),
                 arena = ofault + 4;
  const BufferRef ax = BufferRef::Arena(ox, fx), ay = BufferRef::Arena(oy, fy),
                  ap = BufferRef::Arena(op, fy), ad = BufferRef::Arena(od, fy),
                  al = BufferRef::Arena(ol, 4), alr = BufferRef::Arena(olr, 4),
                  astep = BufferRef::Arena(ostep, 4);
  const Launch fwd =
      MakeLaunch(k_fwd, n * out, 128,
                 {Arg::Buffer(ax), Arg::Buffer(rw), Arg::Buffer(rb),
                  Arg::Buffer(ap), Arg::I32(n), Arg::I32(in), Arg::I32(out)});

  if (o.inference_only) {
    Entry predict;
    predict.name = "predict";
    predict.arena_size = arena;
    predict.inputs = {Bind("x", DType::kF32, {n, in}, ax),
                      Bind("w", DType::kF32, {in, out}, rw),
                      Bind("b", DType::kF32, {out}, rb)};
    predict.outputs = {Bind("pred", DType::kF32, {n, out}, ap)};
    predict.launches = {fwd};
    w.AddEntry(std::move(predict));
    return w.artifact();
  }

  const uint32_t gw =
      w.AddBuffer("grad.w", BufferRole::kGradient, DType::kF32, {in, out});
  const uint32_t gb =
      w.AddBuffer("grad.b", BufferRole::kGradient, DType::kF32, {out});
  const BufferRef rgw = BufferRef::Resident(gw, 0, fw);
  const BufferRef rgb = BufferRef::Resident(gb, 0, fb);

  const uint32_t k_loss = w.AddKernel(
      MakeKernel("mse_loss", {A::kBuffer, A::kBuffer, A::kBuffer, A::kI32}, o));
  const uint32_t k_mse_grad = w.AddKernel(
      MakeKernel("mse_grad", {A::kBuffer, A::kBuffer, A::kBuffer, A::kI32}, o));
  const uint32_t k_gw = w.AddKernel(MakeKernel(
      "linreg_grad_w",
      {A::kBuffer, A::kBuffer, A::kBuffer, A::kI32, A::kI32, A::kI32}, o));
  const uint32_t k_gb = w.AddKernel(MakeKernel(
      "linreg_grad_b", {A::kBuffer, A::kBuffer, A::kI32, A::kI32}, o));

  const Launch loss = MakeLaunch(
      k_loss, 256, 256,
      {Arg::Buffer(ap), Arg::Buffer(ay), Arg::Buffer(al), Arg::I32(n * out)});
  const Launch mse_grad = MakeLaunch(
      k_mse_grad, n * out, 128,
      {Arg::Buffer(ap), Arg::Buffer(ay), Arg::Buffer(ad), Arg::I32(n * out)});
  const Launch grad_w =
      MakeLaunch(k_gw, in * out, 128,
                 {Arg::Buffer(ax), Arg::Buffer(ad), Arg::Buffer(rgw),
                  Arg::I32(n), Arg::I32(in), Arg::I32(out)});
  const Launch grad_b = MakeLaunch(
      k_gb, out, 128,
      {Arg::Buffer(ad), Arg::Buffer(rgb), Arg::I32(n), Arg::I32(out)});

  std::vector<TensorBinding> state_in;
  std::vector<Launch> updates;
  if (o.optimizer == LinRegOptimizer::kSgd) {
    const uint32_t k_sgd = w.AddKernel(MakeKernel(
        "sgd_update", {A::kBuffer, A::kBuffer, A::kBuffer, A::kI32}, o));
    updates.push_back(MakeLaunch(k_sgd, in * out, 128,
                                 {Arg::Buffer(rw), Arg::Buffer(rgw),
                                  Arg::Buffer(alr), Arg::I32(in * out)}));
    updates.push_back(MakeLaunch(
        k_sgd, out, 128,
        {Arg::Buffer(rb), Arg::Buffer(rgb), Arg::Buffer(alr), Arg::I32(out)}));
  } else {
    const uint32_t k_adam = w.AddKernel(
        MakeKernel("adam_update",
                   {A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer, A::kBuffer,
                    A::kBuffer, A::kF32, A::kF32, A::kF32, A::kI32},
                   o));
    struct P {
      std::string name;
      std::vector<int64_t> shape;
      uint64_t bytes;
      BufferRef param, grad;
    };
    for (const P& p :
         {P{"w", {in, out}, fw, rw, rgw}, P{"b", {out}, fb, rb, rgb}}) {
      const uint32_t m =
          w.AddBuffer("adam_m." + p.name, BufferRole::kOptimizerState,
                      DType::kF32, p.shape);
      const uint32_t v =
          w.AddBuffer("adam_v." + p.name, BufferRole::kOptimizerState,
                      DType::kF32, p.shape);
      const BufferRef rm = BufferRef::Resident(m, 0, p.bytes);
      const BufferRef rv = BufferRef::Resident(v, 0, p.bytes);
      state_in.push_back(Bind("adam_m." + p.name, DType::kF32, p.shape, rm));
      state_in.push_back(Bind("adam_v." + p.name, DType::kF32, p.shape, rv));
      const int32_t count = static_cast<int32_t>(p.bytes / 4);
      updates.push_back(
          MakeLaunch(k_adam, count, 128,
                     {Arg::Buffer(p.param), Arg::Buffer(rm), Arg::Buffer(rv),
                      Arg::Buffer(p.grad), Arg::Buffer(alr), Arg::Buffer(astep),
                      Arg::F32(o.beta1), Arg::F32(o.beta2), Arg::F32(o.epsilon),
                      Arg::I32(count)}));
    }
  }

  // Model state: forward reads it, the training entries update it in place.
  std::vector<TensorBinding> model_state;
  std::vector<Launch> state_updates;
  if (o.running_mean) {
    const uint32_t s = w.AddState("running_mean.pred", DType::kF32, {out},
                                  InitKind::kOnes, 0.0f, 0.0f, 2);
    const BufferRef rs = BufferRef::Resident(s, 0, fb);
    model_state.push_back(Bind("running_mean.pred", DType::kF32, {out}, rs));
    const uint32_t k_running = w.AddKernel(MakeKernel(
        "running_mean_update",
        {A::kBuffer, A::kBuffer, A::kF32, A::kI32, A::kI32}, o));
    state_updates.push_back(
        MakeLaunch(k_running, out, 128,
                   {Arg::Buffer(ap), Arg::Buffer(rs), Arg::F32(o.momentum),
                    Arg::I32(n), Arg::I32(out)}));
  }

  const TensorBinding bx = Bind("x", DType::kF32, {n, in}, ax);
  const TensorBinding by = Bind("y", DType::kF32, {n, out}, ay);
  const TensorBinding bw = Bind("w", DType::kF32, {in, out}, rw);
  const TensorBinding bb = Bind("b", DType::kF32, {out}, rb);
  const TensorBinding bloss = Bind("loss", DType::kF32, {}, al);
  const TensorBinding bgw = Bind("grad.w", DType::kF32, {in, out}, rgw);
  const TensorBinding bgb = Bind("grad.b", DType::kF32, {out}, rgb);
  const TensorBinding blr = Bind("lr", DType::kF32, {}, alr);
  const TensorBinding bstep = Bind("step", DType::kI32, {}, astep);

  Entry forward;
  forward.name = "forward";
  forward.arena_size = arena;
  forward.inputs = {bw, bb, bx, by};
  forward.inputs.insert(forward.inputs.end(), model_state.begin(),
                        model_state.end());
  forward.outputs = {bloss, Bind("pred", DType::kF32, {n, out}, ap)};
  forward.launches = {fwd, loss};
  w.AddEntry(std::move(forward));

  Entry fb_entry;
  fb_entry.name = "forward_backward";
  fb_entry.arena_size = arena;
  fb_entry.inputs = {bw, bb, bx, by};
  fb_entry.inputs.insert(fb_entry.inputs.end(), model_state.begin(),
                         model_state.end());
  fb_entry.outputs = {bloss, bgw, bgb};
  fb_entry.outputs.insert(fb_entry.outputs.end(), model_state.begin(),
                          model_state.end());
  fb_entry.launches = {fwd, loss, mse_grad, grad_w, grad_b};
  fb_entry.launches.insert(fb_entry.launches.end(), state_updates.begin(),
                           state_updates.end());
  // Launches 3 and 4 compute grad.w and grad.b.
  auto buckets = [&](uint32_t wait_before) {
    artifact::Collective bucket_w, bucket_b;
    bucket_w.after_launches = 4;
    bucket_w.wait_before = wait_before;
    bucket_w.tensors = {{"grad.w", DType::kF32, rgw}};
    bucket_b.after_launches = 5;
    bucket_b.wait_before = wait_before;
    bucket_b.tensors = {{"grad.b", DType::kF32, rgb}};
    return std::vector<artifact::Collective>{bucket_w, bucket_b};
  };
  if (o.data_parallel) {
    fb_entry.collectives =
        buckets(static_cast<uint32_t>(fb_entry.launches.size()));
  }
  w.AddEntry(std::move(fb_entry));

  std::vector<TensorBinding> params_and_state = {bw, bb};
  params_and_state.insert(params_and_state.end(), state_in.begin(),
                          state_in.end());

  Entry update;
  update.name = "apply_update";
  update.arena_size = arena;
  update.inputs = params_and_state;
  update.inputs.push_back(bgw);
  update.inputs.push_back(bgb);
  update.inputs.push_back(blr);
  update.inputs.push_back(bstep);
  update.outputs = params_and_state;
  update.launches = updates;
  w.AddEntry(std::move(update));

  Entry step;
  step.name = "train_step";
  step.arena_size = arena;
  step.inputs = params_and_state;
  step.inputs.insert(step.inputs.end(), model_state.begin(),
                     model_state.end());
  step.inputs.push_back(bx);
  step.inputs.push_back(by);
  step.inputs.push_back(blr);
  step.inputs.push_back(bstep);
  step.outputs = {bloss};
  step.outputs.insert(step.outputs.end(), params_and_state.begin(),
                      params_and_state.end());
  step.outputs.insert(step.outputs.end(), model_state.begin(),
                      model_state.end());
  step.launches = {fwd, loss, mse_grad, grad_w, grad_b};
  step.launches.insert(step.launches.end(), state_updates.begin(),
                       state_updates.end());
  if (o.data_parallel) {
    step.collectives = buckets(static_cast<uint32_t>(step.launches.size()));
  }
  step.launches.insert(step.launches.end(), updates.begin(), updates.end());
  if (o.fault_input) {
    const BufferRef afault = BufferRef::Arena(ofault, 4);
    step.inputs.push_back(Bind("inject_fault", DType::kI32, {}, afault));
    const uint32_t k_fault =
        w.AddKernel(MakeKernel("fault_when", {A::kBuffer, A::kBuffer}, o));
    // After the update of w, before that of b: a half-applied step.
    step.launches.insert(
        step.launches.end() - 1,
        MakeLaunch(k_fault, 1, 32, {Arg::Buffer(afault), Arg::Buffer(rw)}));
  }
  w.AddEntry(std::move(step));
  return w.artifact();
}

absl::StatusOr<std::string> LinRegArtifactBytes(const LinRegOptions& options) {
  return artifact::WriteArtifact(LinRegArtifact(options));
}

LinRegData MakeLinRegData(int64_t rows, int32_t in, int32_t out,
                          uint64_t seed) {
  RandomStream r{seed, 0, 0};
  LinRegData d;
  d.x.resize(rows * in);
  d.y.resize(rows * out);
  for (size_t i = 0; i < d.x.size(); ++i) {
    d.x[i] = static_cast<float>(2 * r.Uniform(i) - 1);
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int32_t o = 0; o < out; ++o) {
      double acc = 0.25 * o - 0.5;  // b*
      for (int32_t k = 0; k < in; ++k) {
        acc += d.x[i * in + k] * (0.5 * ((k + 2 * o) % 5) - 1.0);  // W*
      }
      d.y[i * out + o] = static_cast<float>(acc);
    }
  }
  return d;
}

}  // namespace testing
}  // namespace kiln
