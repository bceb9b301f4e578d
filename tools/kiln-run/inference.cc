#include "tools/kiln-run/inference.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/safetensors.h"
#include "runtime/memory/pool.h"
#include "tools/kiln-run/check.h"
#include "tools/kiln-run/evaluation.h"
#include "tools/kiln-run/run_inputs.h"

namespace kiln {
namespace {

using HostTensors = std::map<std::string, HostTensor>;

// The entry's outputs that live in resident buffers (forward_backward's
// gradients): Run returns only the arena's, --output writes both.
absl::Status DownloadResidentOutputs(const artifact::Entry& entry, Runtime& rt,
                                     const Session& session,
                                     HostTensors& host) {
  for (const artifact::TensorBinding& b : entry.outputs) {
    if (b.buffer.space != artifact::MemorySpace::kResident ||
        host.count(b.name))
      continue;
    KILN_ASSIGN_OR_RETURN(Tensor resident, session.Buffer(b.name));
    KILN_ASSIGN_OR_RETURN(host[b.name], rt.Download(resident));
  }
  return absl::OkStatus();
}

void PrintOutputs(const std::string& entry, const HostTensors& host) {
  std::printf("ran %s: %zu output(s)", entry.c_str(), host.size());
  for (const auto& [name, t] : host) {
    std::printf(" %s %s%s", name.c_str(),
                std::string(DTypeName(t.dtype)).c_str(),
                ShapeString(t.shape).c_str());
  }
  std::printf("\n");
}

absl::Status WriteOutputs(const Flags& f, const HostTensors& host) {
  io::Safetensors st;
  st.tensors = host;
  st.metadata["entry"] = f.entry;
  KILN_RETURN_IF_ERROR(io::WriteSafetensorsFile(f.output, st));
  std::printf("wrote %s\n", f.output.c_str());
  return absl::OkStatus();
}

// --check on the outputs. Outputs that live in resident buffers
// (forward_backward's gradients) are not returned by Run: those are compared
// by the buffer's name.
absl::StatusOr<bool> CheckOutputs(const Flags& f, Runtime& rt,
                                  const Session& session, HostTensors& host) {
  KILN_ASSIGN_OR_RETURN(io::Safetensors expected,
                        io::ReadSafetensorsFile(f.check));
  for (const auto& [name, unused] : expected.tensors) {
    if (host.count(name)) continue;
    absl::StatusOr<Tensor> resident = session.Buffer(name);
    if (!resident.ok()) continue;
    KILN_ASSIGN_OR_RETURN(host[name], rt.Download(*resident));
  }
  return CheckTensors(host, expected.tensors,
                      {.rtol = f.rtol,
                       .atol = f.atol,
                       .scaled_atol = f.scaled_atol,
                       .shared_gradient_scale = f.shared_gradient_scale});
}

// --bench: the replays' times, the launches and the pool's high-water marks
// (resident buffers, the entry's arena and the inputs and outputs:
// everything the run held on the device).
absl::Status Bench(const Flags& f, Runtime& rt, const Module& module,
                   Session& session, const Inputs& inputs) {
  KILN_ASSIGN_OR_RETURN(
      std::vector<float> ms,
      session.Benchmark(f.entry, inputs,
                        static_cast<int>(f.warmup.value_or(10)),
                        static_cast<int>(f.iters)));
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (float t : ms) mean += t;
  mean /= ms.size();
  std::printf(
      "bench %s: median %.4f ms, min %.4f ms, mean %.4f ms over %zu "
      "replays (%lld warm-up calls; %lld of %zu launches "
      "programmatic)\n",
      f.entry.c_str(), sorted[sorted.size() / 2], sorted.front(), mean,
      ms.size(), static_cast<long long>(f.warmup.value_or(10)),
      static_cast<long long>(session.stats().programmatic_launches),
      module.artifact().FindEntry(f.entry)->launches.size());
  const PoolStats pool = rt.pool().stats();
  std::printf(
      "bench memory: peak %zu bytes in use (%.1f MiB), %zu reserved from "
      "the device\n",
      pool.peak_bytes_in_use, pool.peak_bytes_in_use / 1048576.0,
      pool.peak_bytes_reserved);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> RunInference(const Flags& f, const RunPlan& plan,
                                 Runtime& rt, Module& module) {
  KILN_ASSIGN_OR_RETURN(
      auto session,
      module.NewSession(
          {.seed = f.seed, .programmatic_launch = !f.serial_launches}));
  if (!f.params.empty())
    KILN_RETURN_IF_ERROR(session->LoadParameters(f.params));
  KILN_RETURN_IF_ERROR(SetResident(plan, rt, *session));
  if (!f.dataset.empty()) return RunEvaluation(f, plan, rt, *session);
  const Inputs inputs = InputsOf(plan);
  KILN_ASSIGN_OR_RETURN(Outputs outputs, session->Run(f.entry, inputs));
  HostTensors host;
  for (const auto& [name, t] : outputs) {
    KILN_ASSIGN_OR_RETURN(host[name], rt.Download(t));
  }
  if (!f.output.empty()) {
    KILN_RETURN_IF_ERROR(DownloadResidentOutputs(
        *module.artifact().FindEntry(f.entry), rt, *session, host));
  }
  PrintOutputs(f.entry, host);
  if (!f.output.empty()) KILN_RETURN_IF_ERROR(WriteOutputs(f, host));
  int status = 0;
  if (!f.check.empty()) {
    KILN_ASSIGN_OR_RETURN(bool ok, CheckOutputs(f, rt, *session, host));
    if (!ok) status = 1;
  }
  if (f.bench) KILN_RETURN_IF_ERROR(Bench(f, rt, module, *session, inputs));
  return status;
}

}  // namespace kiln
