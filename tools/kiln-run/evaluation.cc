#include "tools/kiln-run/evaluation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "kiln/batch_loader.h"
#include "kiln/status.h"
#include "tools/kiln-run/check.h"
#include "tools/kiln-run/run_inputs.h"

namespace kiln {

// Batches are gathered on the host, through the checks of the plan:
// evaluation is not worth an upload pipeline, and the session's calls copy
// host inputs in order anyway.
absl::StatusOr<int> RunEvaluation(const Flags& f, const RunPlan& plan,
                                  Runtime& rt, Session& session) {
  io::BatchOptions options = plan.loader.batch;
  options.num_epochs = 1;
  KILN_ASSIGN_OR_RETURN(io::RecordHook hook,
                        LoaderHook(*plan.dataset, plan.loader));
  KILN_ASSIGN_OR_RETURN(
      std::unique_ptr<io::BatchProducer> producer,
      io::BatchProducer::Start(plan.dataset.get(), options,
                               io::DefaultHostAllocator(), std::move(hook)));
  std::map<std::string, double> sums;
  uint64_t batches = 0;
  while (true) {
    absl::StatusOr<io::Batch> batch = producer->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    KILN_RETURN_IF_ERROR(batch.status());
    KILN_ASSIGN_OR_RETURN(
        Outputs outputs, session.Run(f.entry, BatchInputs(plan, batch->data,
                                                          batch->num_records)));
    for (const auto& [name, tensor] : outputs) {
      KILN_ASSIGN_OR_RETURN(HostTensor host, rt.Download(tensor));
      if (!host.shape.empty()) continue;
      sums[name] += AsDoubles(host)[0];
    }
    ++batches;
  }
  std::printf(
      "evaluated %s on %llu batches of %llu records of %s:", f.entry.c_str(),
      static_cast<unsigned long long>(batches),
      static_cast<unsigned long long>(options.batch_size), f.dataset.c_str());
  bool finite = true;
  for (const auto& [name, sum] : sums) {
    const double mean = sum / static_cast<double>(batches);
    finite = finite && std::isfinite(mean);
    std::printf(" %s %.6g", name.c_str(), mean);
  }
  std::printf("\n");
  return finite ? 0 : 1;
}

}  // namespace kiln
