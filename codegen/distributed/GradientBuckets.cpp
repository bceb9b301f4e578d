//===- GradientBuckets.cpp - gradient all-reduces of data parallelism -----===//

#include "codegen/distributed/GradientBuckets.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>

namespace mlir::kiln::codegen {

std::vector<std::vector<size_t>>
assignBuckets(ArrayRef<uint64_t> bytes, const BucketOptions &options,
              llvm::function_ref<bool(size_t)> mayJoin) {
  std::vector<std::vector<size_t>> buckets;
  std::vector<size_t> open;
  uint64_t held = 0;
  auto close = [&] {
    if (open.empty())
      return;
    buckets.push_back(std::move(open));
    open.clear();
    held = 0;
  };
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!open.empty() && mayJoin && !mayJoin(i))
      close();
    open.push_back(i);
    held += bytes[i];
    uint64_t limit =
        buckets.empty() ? options.firstBucketBytes : options.bucketBytes;
    if (held >= limit)
      close();
  }
  close();
  return buckets;
}

namespace {

bool overlaps(const SlotRef &a, const SlotRef &b) {
  return a.resident == b.resident && a.name == b.name && a.size > 0 &&
         b.size > 0 && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}

bool writes(const CompiledArg &arg) {
  return arg.kind == LaunchArg::Kind::Result ||
         (arg.kind == LaunchArg::Kind::TensorMap && arg.mapsResult);
}

bool touches(const CompiledArg &arg) {
  return arg.kind == LaunchArg::Kind::Operand ||
         arg.kind == LaunchArg::Kind::Result ||
         arg.kind == LaunchArg::Kind::TensorMap;
}

/// One gradient of an entry: where it is finished and first read after.
struct Gradient {
  TensorRef tensor;
  uint64_t bytes = 0;
  /// The launch that writes it last.
  size_t finishedBy = 0;
  /// The first launch after that one that touches it (launches.size() if
  /// none does).
  size_t firstReader = 0;
};

/// Inside the kernel that computes gradient result `index` of `function`,
/// an op other than the kernel's yield that reads it; null if none does.
Operation *readInsideItsKernel(func::FuncOp function, unsigned index) {
  Operation *terminator = function.getBody().front().getTerminator();
  auto result = dyn_cast<OpResult>(terminator->getOperand(index));
  if (!result)
    return nullptr;
  auto fusion = dyn_cast<FusionOp>(result.getOwner());
  if (!fusion)
    return nullptr;
  Operation *yield = fusion.getBody().front().getTerminator();
  Value inner = yield->getOperand(result.getResultNumber());
  for (Operation *user : inner.getUsers())
    if (user != yield)
      return user;
  return nullptr;
}

/// A gradient the entry leaves in memory: the tensor, and its result
/// position in the entry's function when the function returns it.
struct Communicated {
  TensorRef tensor;
  std::optional<unsigned> result;
};

LogicalResult planEntry(CompiledEntry &entry,
                        ArrayRef<Communicated> communicated,
                        func::FuncOp function, const BucketOptions &options) {
  std::vector<Gradient> gradients;
  for (const Communicated &c : communicated) {
    const TensorRef &output = c.tensor;
    if (Operation *reader =
            c.result ? readInsideItsKernel(function, *c.result) : nullptr) {
      InFlightDiagnostic diag =
          mlir::emitError(reader->getLoc())
          << "data parallel: gradient '" << output.name << "' of entry '"
          << entry.name
          << "' is read inside the kernel that computes it, so its "
             "all-reduce cannot come in between";
      diag.attachNote(function.getLoc()) << "in entry '" << entry.name << "'";
      return failure();
    }
    Gradient g;
    g.tensor = output;
    g.bytes = output.slot.size;
    bool written = false;
    for (auto [l, launch] : llvm::enumerate(entry.launches))
      for (const CompiledArg &arg : launch.args)
        if (writes(arg) && overlaps(arg.slot, output.slot)) {
          g.finishedBy = l;
          written = true;
        }
    if (!written)
      return function.emitOpError("data parallel: no launch of entry '")
             << entry.name << "' writes gradient '" << output.name << "'";
    g.firstReader = entry.launches.size();
    for (size_t l = g.finishedBy + 1; l < entry.launches.size(); ++l) {
      if (llvm::any_of(entry.launches[l].args, [&](const CompiledArg &arg) {
            return touches(arg) && overlaps(arg.slot, output.slot);
          })) {
        g.firstReader = l;
        break;
      }
    }
    gradients.push_back(std::move(g));
  }
  if (gradients.empty())
    return success();
  // In the order the backward finishes them.
  std::stable_sort(gradients.begin(), gradients.end(),
                   [](const Gradient &a, const Gradient &b) {
                     return a.finishedBy < b.finishedBy;
                   });
  std::vector<uint64_t> bytes;
  for (const Gradient &g : gradients)
    bytes.push_back(g.bytes);
  // A gradient joins the open bucket only if no gradient already in it is
  // read before this one is finished (its all-reduce would start too late).
  size_t openFrom = 0;
  auto mayJoin = [&](size_t i) {
    for (size_t k = openFrom; k < i; ++k)
      if (gradients[k].firstReader <= gradients[i].finishedBy)
        return openFrom = i, false;
    return true;
  };
  std::vector<std::vector<size_t>> buckets =
      assignBuckets(bytes, options, [&](size_t i) { return mayJoin(i); });
  for (const std::vector<size_t> &bucket : buckets) {
    CompiledCollective collective;
    size_t after = 0, wait = entry.launches.size();
    for (size_t i : bucket) {
      collective.tensors.push_back(gradients[i].tensor);
      collective.bytes += gradients[i].bytes;
      after = std::max(after, gradients[i].finishedBy + 1);
      wait = std::min(wait, gradients[i].firstReader);
    }
    collective.afterLaunches = static_cast<uint32_t>(after);
    collective.waitBefore = static_cast<uint32_t>(wait);
    entry.collectives.push_back(std::move(collective));
    openFrom = bucket.back() + 1;
  }
  return success();
}

} // namespace

LogicalResult planGradientBuckets(CompiledModule &compiled, ModuleOp module,
                                  const BucketOptions &options) {
  if (options.bucketBytes == 0 || options.firstBucketBytes == 0)
    return module.emitError("data parallel: bucket sizes must be positive");
  // The gradients forward_backward returns; train_step (split at them,
  // SplitTrainStep.h) computes the same ones into the same buffers.
  std::vector<Communicated> returned;
  for (const CompiledEntry &entry : compiled.entries)
    if (entry.name == "forward_backward")
      for (auto [index, output] : llvm::enumerate(entry.outputs))
        if (output.role == "gradient")
          returned.push_back({output, static_cast<unsigned>(index)});
  for (CompiledEntry &entry : compiled.entries) {
    auto function = module.lookupSymbol<func::FuncOp>(entry.name);
    if (!function)
      continue;
    std::vector<Communicated> communicated;
    if (entry.name == "forward_backward")
      communicated = returned;
    else if (entry.name == "train_step")
      for (const Communicated &c : returned)
        communicated.push_back({c.tensor, std::nullopt});
    if (failed(planEntry(entry, communicated, function, options)))
      return failure();
  }
  return success();
}

void printBucketPlan(const CompiledModule &compiled, llvm::raw_ostream &os) {
  auto launchName = [&](const CompiledEntry &entry, size_t l) {
    if (l >= entry.launches.size())
      return std::string("the end of the entry");
    return "launch " + std::to_string(l) + " (" +
           compiled.kernels[entry.launches[l].kernel].name + ")";
  };
  for (const CompiledEntry &entry : compiled.entries) {
    if (entry.collectives.empty())
      continue;
    uint64_t total = 0;
    size_t tensors = 0;
    for (const CompiledCollective &c : entry.collectives) {
      total += c.bytes;
      tensors += c.tensors.size();
    }
    os << "data parallel: entry " << entry.name << ": "
       << entry.collectives.size() << " gradient buckets, " << tensors
       << " tensors, " << total << " bytes averaged over the ranks\n";
    for (auto [b, c] : llvm::enumerate(entry.collectives)) {
      os << "  bucket " << b << ": " << c.bytes << " bytes, "
         << c.tensors.size()
         << (c.tensors.size() == 1 ? " tensor (" : " tensors (");
      for (auto [t, tensor] : llvm::enumerate(c.tensors))
        os << (t ? ", " : "") << tensor.name;
      os << "), all-reduce after " << launchName(entry, c.afterLaunches - 1)
         << ", waited for by " << launchName(entry, c.waitBefore) << "\n";
    }
  }
}

} // namespace mlir::kiln::codegen
