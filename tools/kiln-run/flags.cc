#include "tools/kiln-run/flags.h"

#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

ABSL_FLAG(bool, describe, false,
          "print what the artifact holds (entries with their inputs and "
          "outputs, parameters and state, kernels, memory, target) and exit; "
          "needs no GPU");
ABSL_FLAG(bool, dry_run, false,
          "check the artifact and every file and flag against it, print what "
          "would run and exit without opening the GPU: status 0 if the run "
          "would start, 1 otherwise (dataset records are all read and "
          "checked)");
ABSL_FLAG(int, device, 0, "the GPU to run on");
ABSL_FLAG(std::optional<kiln::cli::ByteSize>, memory_limit, std::nullopt,
          "cap of the device memory the run's pool holds (resident buffers, "
          "arenas, inputs, outputs; e.g. 1GiB); past it an allocation fails "
          "with the entry or buffer and the bytes it asked for");
ABSL_FLAG(std::string, inputs, "",
          "safetensors with the entry's inputs by name (in training: one "
          "fixed batch); tensors named as parameters or model state set "
          "those, so kiln-ref --save-inputs files work; i64 tensors are "
          "narrowed to the entry's i32; a NaN or infinity is an error naming "
          "the tensor, the element and its file offset");
ABSL_FLAG(std::string, dataset, "",
          "KILNDATA file: training batches, or (without --steps) evaluate the "
          "entry on every whole batch in file order and print the mean of "
          "each scalar output; i64 fields are narrowed to the entry's i32");
ABSL_FLAG(std::vector<std::string>, batch_fields, {},
          "the dataset's fields that are the entry's inputs of the same names");
ABSL_FLAG(bool, allow_nonfinite_inputs, false,
          "pass NaN and infinite inputs (and dataset records) on to the entry");
ABSL_FLAG(int64_t, seed, 0,
          "seed of the parameters' initialisers and of the data order");
ABSL_FLAG(std::string, check, "",
          "compare outputs and resident buffers the entry writes (gradients), "
          "or after training the parameters, with FILE's tensors by name: "
          "|out - expected| <= atol + rtol * |expected|; a mismatch or NaN "
          "exits with status 1");
ABSL_FLAG(double, rtol, 1e-5, "relative tolerance of --check");
ABSL_FLAG(double, atol, 1e-6, "absolute tolerance of --check");
ABSL_FLAG(
    bool, scaled_atol, false,
    "atol is relative to each tensor's largest |expected| (for storage "
    "types whose rounding scales with the tensor, bf16 over long chains)");
ABSL_FLAG(bool, shared_gradient_scale, false,
          "with --scaled-atol, the gradients (grad.*) share one scale, the "
          "largest |expected| of them all: a gradient whose terms cancel "
          "keeps the rounding of its terms, which its own small value does "
          "not measure");
ABSL_FLAG(std::optional<int64_t>, warmup, std::nullopt,
          "--bench: calls before timing (none: 10); training: linear warm-up "
          "steps of the learning rate (none: 0)");
ABSL_FLAG(bool, serial_launches, false,
          "launch each kernel only when the previous one has ended (by "
          "default, on sm_90 and newer, kernels that wait for their "
          "predecessor themselves are scheduled while it still runs)");
ABSL_FLAG(std::string, entry, "",
          "entry to run (inference and evaluation; none: forward)");
ABSL_FLAG(std::string, params, "",
          "load parameters and model state from a checkpoint (safetensors)");
ABSL_FLAG(std::string, output, "",
          "write the entry's outputs, those in resident buffers (gradients) "
          "included (safetensors)");
ABSL_FLAG(bool, bench, false,
          "time the entry: --warmup calls, then the median of --iters "
          "event-timed graph replays, and the peak device memory the run held");
ABSL_FLAG(int64_t, iters, 100, "timed replays of --bench");
ABSL_FLAG(std::optional<int64_t>, steps, std::nullopt,
          "train until step N (counting resumed steps)");
ABSL_FLAG(double, lr, 1e-3, "peak learning rate");
ABSL_FLAG(std::string, schedule, "constant", "constant | cosine");
ABSL_FLAG(std::optional<int64_t>, schedule_steps, std::nullopt,
          "length of the cosine schedule (none: --steps; give the full run's "
          "when training in parts)");
ABSL_FLAG(bool, no_shuffle, false, "dataset records in file order");
ABSL_FLAG(std::string, checkpoint, "",
          "save parameters, model and optimizer state at the end");
ABSL_FLAG(std::optional<int64_t>, checkpoint_every, std::nullopt,
          "also save every N steps (atomically: a crash or a device fault "
          "leaves the last one intact for --resume)");
ABSL_FLAG(std::string, resume, "",
          "start from a checkpoint (its step is kept)");
ABSL_FLAG(
    std::string, log_dir, "",
    "write a TensorBoard event file DIR/events.out.tfevents.<time>.<host> "
    "(loss, learning rate, steps/s, device pool bytes and, where the "
    "artifact computes them, gradient statistics, every --log-every "
    "steps) and the loss curve DIR/loss.svg at the end");
ABSL_FLAG(int, nproc, 0,
          "data-parallel training on N GPUs of this machine: starts N ranks "
          "of this command line (rank r on GPU r), each training on its "
          "slice of every global batch (N times the artifact's batch); the "
          "artifact is compiled with kilnc --data-parallel");
ABSL_FLAG(std::string, distributed, "auto",
          "auto: data parallel when the environment names more than one "
          "rank (RANK, WORLD_SIZE, LOCAL_RANK and MASTER_ADDR/MASTER_PORT "
          "as torchrun sets them, or KILN_RENDEZVOUS_FILE); nccl: through "
          "NCCL even as one rank; off: one process, whatever the "
          "environment says");
ABSL_FLAG(int64_t, log_every, 0,
          "progress lines every N steps when not on a terminal (0: steps / "
          "20)");

namespace kiln {
namespace {

std::string Dashed(const std::string& name) {
  return absl::StrCat("--", absl::StrReplaceAll(name, {{"_", "-"}}));
}

// The given ones of `names`, as "--a, --b"; empty if none was given.
std::string GivenOf(const Flags& f, std::initializer_list<const char*> names) {
  std::vector<std::string> given;
  for (const char* name : names) {
    if (f.given.count(name)) given.push_back(Dashed(name));
  }
  return absl::StrJoin(given, ", ");
}

Flags ReadFlags(std::vector<std::string> positional,
                std::set<std::string> given) {
  Flags f;
  if (positional.size() == 1) f.model = positional[0];
  f.given = std::move(given);
  f.dry_run = absl::GetFlag(FLAGS_dry_run);
  f.device = absl::GetFlag(FLAGS_device);
  if (auto limit = absl::GetFlag(FLAGS_memory_limit)) {
    f.memory_limit = limit->bytes;
  }
  f.entry = absl::GetFlag(FLAGS_entry);
  f.inputs = absl::GetFlag(FLAGS_inputs);
  f.params = absl::GetFlag(FLAGS_params);
  f.output = absl::GetFlag(FLAGS_output);
  f.check = absl::GetFlag(FLAGS_check);
  f.rtol = absl::GetFlag(FLAGS_rtol);
  f.atol = absl::GetFlag(FLAGS_atol);
  f.scaled_atol = absl::GetFlag(FLAGS_scaled_atol);
  f.shared_gradient_scale = absl::GetFlag(FLAGS_shared_gradient_scale);
  f.bench = absl::GetFlag(FLAGS_bench);
  f.serial_launches = absl::GetFlag(FLAGS_serial_launches);
  f.allow_nonfinite_inputs = absl::GetFlag(FLAGS_allow_nonfinite_inputs);
  f.warmup = absl::GetFlag(FLAGS_warmup);
  f.iters = absl::GetFlag(FLAGS_iters);
  f.steps = absl::GetFlag(FLAGS_steps);
  f.dataset = absl::GetFlag(FLAGS_dataset);
  f.batch_fields = absl::GetFlag(FLAGS_batch_fields);
  f.batch_fields.erase(
      std::remove(f.batch_fields.begin(), f.batch_fields.end(), ""),
      f.batch_fields.end());
  f.lr = absl::GetFlag(FLAGS_lr);
  f.schedule = absl::GetFlag(FLAGS_schedule);
  f.schedule_steps = absl::GetFlag(FLAGS_schedule_steps);
  f.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  f.shuffle = !absl::GetFlag(FLAGS_no_shuffle);
  f.checkpoint = absl::GetFlag(FLAGS_checkpoint);
  f.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every).value_or(0);
  f.resume = absl::GetFlag(FLAGS_resume);
  f.log_every = absl::GetFlag(FLAGS_log_every);
  f.log_dir = absl::GetFlag(FLAGS_log_dir);
  f.nproc = absl::GetFlag(FLAGS_nproc);
  f.distributed = absl::GetFlag(FLAGS_distributed);
  if (absl::GetFlag(FLAGS_describe)) {
    f.mode = RunMode::kDescribe;
  } else if (f.steps) {
    f.mode = RunMode::kTraining;
  } else if (!f.dataset.empty()) {
    f.mode = RunMode::kEvaluation;
  }
  if (f.entry.empty()) f.entry = "forward";
  return f;
}

// Values out of their range, whatever the mode.
absl::Status CheckRanges(const Flags& f) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (f.device < 0) return bad("--device must be >= 0");
  if (f.given.count("memory_limit") && f.memory_limit == 0) {
    return bad("--memory-limit must be at least 1 byte");
  }
  if (absl::GetFlag(FLAGS_seed) < 0) return bad("--seed must be >= 0");
  if (f.rtol < 0 || f.atol < 0) return bad("--rtol and --atol must be >= 0");
  if (f.warmup && *f.warmup < 0) return bad("--warmup must be >= 0");
  if (f.iters < 1) return bad("--iters must be >= 1");
  if (f.steps && *f.steps < 0) return bad("--steps must be >= 0");
  if (f.lr < 0) return bad("--lr must be >= 0");
  if (f.schedule != "constant" && f.schedule != "cosine") {
    return bad(absl::StrCat("--schedule: '", f.schedule,
                            "' is not constant or cosine"));
  }
  if (f.schedule_steps && *f.schedule_steps < 1) {
    return bad("--schedule-steps must be >= 1");
  }
  if (f.given.count("checkpoint_every") && f.checkpoint_every < 1) {
    return bad("--checkpoint-every must be >= 1");
  }
  if (f.log_every < 0) return bad("--log-every must be >= 0");
  if (f.nproc < 0) return bad("--nproc must be >= 0");
  if (f.distributed != "auto" && f.distributed != "nccl" &&
      f.distributed != "off") {
    return bad(absl::StrCat("--distributed: '", f.distributed,
                            "' is not auto, nccl or off"));
  }
  std::set<std::string> fields;
  for (const std::string& field : f.batch_fields) {
    if (!fields.insert(field).second) {
      return bad(absl::StrCat("--batch-fields names '", field, "' twice"));
    }
  }
  return absl::OkStatus();
}

// Flags that go with others whatever the mode.
absl::Status CheckCompanions(const Flags& f) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (std::string given =
          GivenOf(f, {"rtol", "atol", "scaled_atol", "shared_gradient_scale"});
      !given.empty() && f.check.empty()) {
    return bad(absl::StrCat(given,
                            ": tolerances of --check, which is not "
                            "given"));
  }
  if (f.shared_gradient_scale && !f.scaled_atol) {
    return bad("--shared-gradient-scale needs --scaled-atol");
  }
  if (!f.batch_fields.empty() && f.dataset.empty()) {
    return bad("--batch-fields needs --dataset");
  }
  if (f.allow_nonfinite_inputs && f.inputs.empty() && f.dataset.empty()) {
    return bad("--allow-nonfinite-inputs needs --inputs or --dataset");
  }
  if (f.given.count("iters") && !f.bench) return bad("--iters needs --bench");
  if (f.nproc > 1 && f.distributed == "off") {
    return bad(
        "--nproc starts data-parallel ranks; it does not go with "
        "--distributed=off");
  }
  return absl::OkStatus();
}

absl::Status CheckTraining(const Flags& f) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (std::string given = GivenOf(f, {"entry", "bench", "output", "params"});
      !given.empty()) {
    return bad(absl::StrCat(given,
                            ": inference flags; training (--steps) uses "
                            "train_step (start from a checkpoint with "
                            "--resume)"));
  }
  if (f.dataset.empty() == f.inputs.empty()) {
    return bad(
        "training needs either --dataset (with --batch-fields) or "
        "--inputs (one fixed batch)");
  }
  if (!f.dataset.empty() && f.batch_fields.empty()) {
    return bad("--dataset needs --batch-fields");
  }
  if (f.given.count("no_shuffle") && f.dataset.empty()) {
    return bad(
        "--no-shuffle orders the records of --dataset, which is not "
        "given");
  }
  if (f.checkpoint_every > 0 && f.checkpoint.empty()) {
    return bad("--checkpoint-every needs --checkpoint");
  }
  const int64_t schedule = f.schedule_steps.value_or(*f.steps);
  if (f.schedule_steps && f.schedule != "cosine") {
    return bad("--schedule-steps is the length of --schedule cosine");
  }
  if (schedule < *f.steps) {
    return bad(absl::StrCat("--schedule-steps ", schedule,
                            " is shorter than --steps ", *f.steps,
                            ": the learning rate would be 0 after it"));
  }
  return absl::OkStatus();
}

absl::Status CheckNotTraining(const Flags& f) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (std::string given = GivenOf(
          f, {"lr", "schedule", "schedule_steps", "no_shuffle", "checkpoint",
              "checkpoint_every", "resume", "log_every", "log_dir"});
      !given.empty()) {
    return bad(absl::StrCat(given, ": training flags; they need --steps"));
  }
  if (f.nproc > 1) return bad("--nproc trains: it needs --steps");
  if (f.distributed == "nccl") {
    return bad("--distributed=nccl trains: it needs --steps");
  }
  if (f.warmup && !f.bench) {
    return bad(
        "--warmup is the warm-up of --bench (or, with --steps, of the "
        "learning rate)");
  }
  if (f.mode == RunMode::kEvaluation) {
    if (f.batch_fields.empty()) {
      return bad("--dataset and --batch-fields go together");
    }
    if (std::string given = GivenOf(f, {"inputs", "bench", "output", "check"});
        !given.empty()) {
      return bad(absl::StrCat(
          "--dataset evaluates the entry batch by batch; it does not go with ",
          given));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFlags(const Flags& f, size_t positional) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (positional != 1) {
    return bad(positional == 0 ? "no model given"
                               : absl::StrCat("one model expected, got ",
                                              positional, " arguments"));
  }
  if (f.mode == RunMode::kDescribe) {
    std::set<std::string> others = f.given;
    others.erase("describe");
    if (!others.empty()) {
      return bad(absl::StrCat("--describe takes no other flags (got ",
                              Dashed(*others.begin()), ")"));
    }
    return absl::OkStatus();
  }
  if (absl::Status s = CheckRanges(f); !s.ok()) return s;
  if (absl::Status s = CheckCompanions(f); !s.ok()) return s;
  return f.mode == RunMode::kTraining ? CheckTraining(f) : CheckNotTraining(f);
}

}  // namespace

cli::Usage KilnRunUsage() {
  cli::Usage usage;
  usage.program = "kiln-run";
  usage.header = R"(usage: kiln-run MODEL.kiln [options]

Runs a kiln artifact on the GPU:
  kiln-run model.kiln --describe                      what it holds
  kiln-run model.kiln --entry NAME --inputs FILE [--output FILE]
      [--check FILE] [--bench]                        inference
  kiln-run model.kiln [--params FILE] --dataset FILE --batch-fields A,B
                                                      evaluation
  kiln-run model.kiln --steps N (--dataset FILE --batch-fields A,B |
      --inputs FILE) [--lr LR --schedule cosine ...]  training
Every file and flag is checked against the artifact before the GPU is
opened; --dry-run stops there.

Exit status: 0 on success, 1 when a check or running failed or --check found
a mismatch (or NaN), 2 for bad command lines.)";
  usage.sections = {
      {"Artifact:", {"describe", "dry_run"}},
      {"Device:", {"device", "memory_limit"}},
      {"Inputs and checks (inference and training):",
       {"inputs", "dataset", "batch_fields", "allow_nonfinite_inputs", "seed",
        "check", "rtol", "atol", "scaled_atol", "shared_gradient_scale",
        "warmup", "serial_launches"}},
      {"Inference (without --steps):",
       {"entry", "params", "output", "bench", "iters"}},
      {"Training (given --steps):",
       {"steps", "lr", "schedule", "schedule_steps", "no_shuffle", "checkpoint",
        "checkpoint_every", "resume", "log_every", "log_dir"}},
      {"Data parallel (training):", {"nproc", "distributed"}},
  };
  usage.metavars = {
      {"inputs", "FILE"},
      {"dataset", "FILE"},
      {"batch_fields", "A,B"},
      {"seed", "S"},
      {"check", "FILE"},
      {"rtol", "R"},
      {"atol", "A"},
      {"entry", "NAME"},
      {"params", "FILE"},
      {"output", "FILE"},
      {"lr", "LR"},
      {"schedule", "NAME"},
      {"checkpoint", "FILE"},
      {"resume", "FILE"},
      {"log_dir", "DIR"},
      {"nproc", "N"},
      {"distributed", "MODE"},
  };
  usage.footer =
      "Flags of another mode are refused (--lr without --steps, --iters "
      "without --bench, ...).\n";
  return usage;
}

absl::StatusOr<Flags> FlagsFromArgs(const std::vector<std::string>& args) {
  std::set<std::string> given;
  absl::StatusOr<std::vector<std::string>> positional =
      cli::ParseArgs(args, KilnRunUsage(), &given);
  if (!positional.ok()) return positional.status();
  const size_t count = positional->size();
  Flags f = ReadFlags(*std::move(positional), std::move(given));
  if (absl::Status s = CheckFlags(f, count); !s.ok()) return s;
  return f;
}

Flags ParseFlagsOrExit(int argc, char** argv) {
  const cli::Usage usage = KilnRunUsage();
  std::set<std::string> given;
  std::vector<std::string> positional =
      cli::ParseCommandLine(argc, argv, usage, &given);
  const size_t count = positional.size();
  Flags f = ReadFlags(std::move(positional), std::move(given));
  if (absl::Status s = CheckFlags(f, count); !s.ok()) {
    cli::UsageError(usage, std::string(s.message()));
  }
  return f;
}

}  // namespace kiln
