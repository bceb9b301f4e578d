#include "tools/kiln-run/preflight.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/dtype.h"
#include "kiln/status.h"
#include "runtime/artifact/interface.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/dtype.h"
#include "runtime/io/finite.h"
#include "runtime/session/checkpoint_rules.h"
#include "tools/kiln-run/describe.h"
#include "tools/kiln-run/input_values.h"

namespace kiln {
namespace {

using artifact::Artifact;
using artifact::BufferRole;
using artifact::Entry;
using artifact::TensorBinding;

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), io::ShapeString(shape));
}

std::vector<const TensorBinding*> CallerInputs(const Entry& entry) {
  std::vector<const TensorBinding*> out;
  for (const TensorBinding& b : entry.inputs) {
    if (artifact::SourceOf(b) == artifact::InputSource::kCaller) {
      out.push_back(&b);
    }
  }
  return out;
}

// "x f32[16,5], y f32[16,3]" (or "nothing").
std::string BindingsText(const std::vector<const TensorBinding*>& bindings) {
  std::vector<std::string> parts;
  for (const TensorBinding* b : bindings) {
    parts.push_back(absl::StrCat(b->name, " ", TypeText(b->dtype, b->shape)));
  }
  return parts.empty() ? "nothing" : absl::StrJoin(parts, ", ");
}

const TensorBinding* FindBinding(const std::vector<const TensorBinding*>& all,
                                 const std::string& name) {
  for (const TensorBinding* b : all) {
    if (b->name == name) return b;
  }
  return nullptr;
}

int FindResident(const Artifact& a, const std::string& name) {
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    if (a.resident_buffers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The entry a run of `f` calls.
absl::StatusOr<std::string> EntryOf(const Flags& f, const Artifact& a) {
  if (f.mode == RunMode::kTraining) {
    if (a.FindEntry("train_step") != nullptr) return std::string("train_step");
    if (a.FindEntry("forward_backward") != nullptr &&
        a.FindEntry("apply_update") != nullptr) {
      return std::string("forward_backward");
    }
    return Invalid(absl::StrCat(
        f.model,
        " has no training entries (train_step, or forward_backward and "
        "apply_update): it was compiled for inference; run its entries "
        "without --steps"));
  }
  if (a.FindEntry(f.entry) != nullptr) return f.entry;
  std::vector<std::string> names;
  for (const Entry& e : a.entries) names.push_back(e.name);
  return absl::NotFoundError(
      absl::StrCat(f.model, ": the artifact has no entry '", f.entry,
                   "' (entries: ", absl::StrJoin(names, ", "), ")"));
}

// One tensor of --inputs that is a caller input of the entry.
absl::Status PlanInput(const Flags& f, const Entry& entry,
                       const TensorBinding& binding, io::HostTensor t,
                       RunPlan& plan) {
  const std::string what =
      absl::StrCat(f.inputs, ": input '", binding.name, "'");
  if (t.shape != binding.shape) {
    return Invalid(absl::StrCat(what, " is ", TypeText(t.dtype, t.shape),
                                " but entry '", entry.name, "' takes ",
                                TypeText(binding.dtype, binding.shape)));
  }
  if (!f.allow_nonfinite_inputs) KILN_RETURN_IF_ERROR(io::CheckFinite(t, what));
  const DType stored = t.dtype;
  KILN_ASSIGN_OR_RETURN(io::HostTensor converted,
                        ConvertTo(binding.dtype, std::move(t), what));
  if (stored != binding.dtype) {
    plan.conversions.push_back(absl::StrCat(binding.name, ": ",
                                            DTypeName(stored), " to ",
                                            DTypeName(binding.dtype)));
  }
  if (binding.valid_range) {
    KILN_RETURN_IF_ERROR(CheckRange(converted, *binding.valid_range, what));
  }
  plan.inputs[binding.name] = std::move(converted);
  return absl::OkStatus();
}

// One tensor of --inputs that names a parameter or model state: it sets the
// buffer (and, for a parameter stored narrower than f32, its master weight).
absl::Status PlanResident(const Flags& f, const artifact::ResidentBuffer& rb,
                          io::HostTensor t, RunPlan& plan) {
  const std::string what =
      absl::StrCat(f.inputs, ": ", RoleText(rb.role), " '", rb.name, "'");
  if (t.shape != rb.shape) {
    return Invalid(absl::StrCat(what, " is ", TypeText(t.dtype, t.shape),
                                " but the model's is ",
                                TypeText(rb.dtype, rb.shape)));
  }
  if (!f.allow_nonfinite_inputs) KILN_RETURN_IF_ERROR(io::CheckFinite(t, what));
  const int master = FindResident(plan.artifact, "master." + rb.name);
  if (master >= 0 && t.dtype == DType::kF32 &&
      plan.artifact.resident_buffers[master].role ==
          BufferRole::kMasterWeight) {
    plan.resident["master." + rb.name] = t;
  }
  const DType stored = t.dtype;
  KILN_ASSIGN_OR_RETURN(plan.resident[rb.name],
                        ConvertTo(rb.dtype, std::move(t), what));
  if (stored != rb.dtype) {
    plan.conversions.push_back(absl::StrCat(rb.name, ": ", DTypeName(stored),
                                            " to ", DTypeName(rb.dtype)));
  }
  return absl::OkStatus();
}

// What a tensor of --inputs that is neither an input nor settable is.
absl::Status NotAnInput(const Flags& f, const Entry& entry,
                        const std::string& name) {
  const std::string head = absl::StrCat(f.inputs, ": tensor '", name, "' ");
  for (const TensorBinding& b : entry.inputs) {
    if (b.name != name) continue;
    switch (artifact::SourceOf(b)) {
      case artifact::InputSource::kLr:
        return Invalid(head +
                       "is the learning rate, which kiln-run gives "
                       "the entry itself (--lr)");
      case artifact::InputSource::kStep:
        return Invalid(head +
                       "is the update number, which kiln-run gives "
                       "the entry itself");
      default:
        break;
    }
  }
  return Invalid(absl::StrCat(head, "is neither an input of entry '",
                              entry.name, "' (it takes ",
                              BindingsText(CallerInputs(entry)),
                              ") nor a parameter or model state of the model"));
}

absl::Status PlanInputs(const Flags& f, const Entry& entry, RunPlan& plan) {
  const std::vector<const TensorBinding*> wanted = CallerInputs(entry);
  if (f.inputs.empty()) {
    if (f.mode != RunMode::kInference || wanted.empty()) {
      return absl::OkStatus();
    }
    return Invalid(absl::StrCat(
        "entry '", entry.name, "' is missing input '", wanted[0]->name, "' (",
        TypeText(wanted[0]->dtype, wanted[0]->shape), "): give --inputs"));
  }
  KILN_ASSIGN_OR_RETURN(io::Safetensors file,
                        io::ReadSafetensorsFile(f.inputs));
  for (auto& [name, t] : file.tensors) {
    if (const TensorBinding* b = FindBinding(wanted, name)) {
      KILN_RETURN_IF_ERROR(PlanInput(f, entry, *b, std::move(t), plan));
      continue;
    }
    const int i = FindResident(plan.artifact, name);
    if (i < 0) return NotAnInput(f, entry, name);
    const artifact::ResidentBuffer& rb = plan.artifact.resident_buffers[i];
    if (rb.role != BufferRole::kParameter && rb.role != BufferRole::kState) {
      return Invalid(
          absl::StrCat(f.inputs, ": tensor '", name, "' is the model's ",
                       RoleText(rb.role), " '", name,
                       "', which --inputs cannot set (--resume restores a "
                       "training checkpoint)"));
    }
    KILN_RETURN_IF_ERROR(PlanResident(f, rb, std::move(t), plan));
  }
  for (const TensorBinding* b : wanted) {
    if (plan.inputs.count(b->name) == 0) {
      return Invalid(absl::StrCat("entry '", entry.name, "' is missing input '",
                                  b->name, "' (", TypeText(b->dtype, b->shape),
                                  ") in ", f.inputs));
    }
  }
  return absl::OkStatus();
}

// --params (inference) or --resume (training), as the runtime will load it;
// a buffer --inputs sets too is an error.
absl::Status PlanCheckpoint(const Flags& f, RunPlan& plan) {
  const std::string& path = f.mode == RunMode::kTraining ? f.resume : f.params;
  if (path.empty()) return absl::OkStatus();
  std::vector<std::string> loaded;
  if (f.mode == RunMode::kTraining) {
    KILN_ASSIGN_OR_RETURN(
        io::Checkpoint checkpoint,
        io::ReadCheckpoint(path, CheckpointSpecs(plan.artifact)));
    plan.start_step = checkpoint.step;
    for (const auto& [name, t] : checkpoint.tensors) loaded.push_back(name);
    if (*f.steps < checkpoint.step) {
      return Invalid(absl::StrCat("--steps ", *f.steps,
                                  " is below the checkpoint's step ",
                                  checkpoint.step, " (", path, ")"));
    }
  } else {
    KILN_ASSIGN_OR_RETURN(io::Safetensors file, io::ReadSafetensorsFile(path));
    KILN_ASSIGN_OR_RETURN(std::vector<BufferLoad> loads,
                          ParameterLoads(plan.artifact, file, path));
    for (const BufferLoad& load : loads) {
      loaded.push_back(plan.artifact.resident_buffers[load.buffer].name);
    }
  }
  for (const std::string& name : loaded) {
    if (plan.resident.count(name)) {
      return Invalid(absl::StrCat("'", name, "' is set by both ", f.inputs,
                                  " and ", path, ": give it in one of them"));
    }
  }
  return absl::OkStatus();
}

// --check: every tensor names something the run writes, of its shape.
absl::Status PlanCheck(const Flags& f, const Entry& entry, RunPlan& plan) {
  if (f.check.empty()) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(io::Safetensors expected,
                        io::ReadSafetensorsFile(f.check));
  std::vector<const TensorBinding*> written;
  std::vector<TensorBinding> parameters;
  if (f.mode == RunMode::kTraining) {
    for (const artifact::ResidentBuffer& rb : plan.artifact.resident_buffers) {
      if (rb.role != BufferRole::kParameter) continue;
      TensorBinding b;
      b.name = rb.name;
      b.dtype = rb.dtype;
      b.shape = rb.shape;
      parameters.push_back(b);
    }
    for (const TensorBinding& b : parameters) written.push_back(&b);
  } else {
    for (const TensorBinding& b : entry.outputs) written.push_back(&b);
  }
  for (const auto& [name, t] : expected.tensors) {
    const TensorBinding* b = FindBinding(written, name);
    if (b == nullptr) {
      return Invalid(absl::StrCat(
          f.check, ": tensor '", name, "' names nothing ",
          f.mode == RunMode::kTraining
              ? "training writes (the parameters are "
              : absl::StrCat("entry '", entry.name, "' writes (it writes "),
          BindingsText(written), ")"));
    }
    if (t.shape != b->shape) {
      return Invalid(absl::StrCat(f.check, ": tensor '", name, "' is ",
                                  TypeText(t.dtype, t.shape),
                                  " but the run "
                                  "writes ",
                                  TypeText(b->dtype, b->shape)));
    }
  }
  return absl::OkStatus();
}

// The dataset field of batch field `name` against the entry's input.
absl::Status PlanField(const Flags& f, const Entry& entry,
                       const io::DatasetField& field,
                       const TensorBinding* binding, RunPlan& plan) {
  const std::string what =
      absl::StrCat(f.dataset, ": field '", field.name, "'");
  if (binding == nullptr) {
    return Invalid(absl::StrCat(what, " is no input of entry '", entry.name,
                                "' (it takes ",
                                BindingsText(CallerInputs(entry)), ")"));
  }
  std::vector<int64_t> record(
      binding->shape.begin() + std::min<size_t>(1, binding->shape.size()),
      binding->shape.end());
  if (binding->shape.empty() || field.shape != record) {
    return Invalid(absl::StrCat(
        what, " holds ", TypeText(field.dtype, field.shape),
        " per record, but entry '", entry.name, "' takes ", binding->name, " ",
        TypeText(binding->dtype, binding->shape),
        binding->shape.empty()
            ? " (no batch dimension)"
            : absl::StrCat(" (batches of ", binding->shape[0], " records of ",
                           TypeText(binding->dtype, record), ")")));
  }
  const bool narrowed =
      field.dtype == DType::kI64 && binding->dtype == DType::kI32;
  if (field.dtype != binding->dtype && !narrowed) {
    return Invalid(absl::StrCat(
        what, " is ", DTypeName(field.dtype), " but entry '", entry.name,
        "' takes ", binding->name, " as ", DTypeName(binding->dtype)));
  }
  if (narrowed) {
    plan.conversions.push_back(
        absl::StrCat(field.name, ": i64 to i32, each record as it is read"));
  }
  return absl::OkStatus();
}

absl::Status PlanDataset(const Flags& f, const Entry& entry, int world_size,
                         RunPlan& plan) {
  if (f.dataset.empty()) return absl::OkStatus();
  io::DatasetOptions options;
  options.check_finite = !f.allow_nonfinite_inputs;
  KILN_ASSIGN_OR_RETURN(plan.dataset,
                        io::MappedDataset::Open(f.dataset, options));
  const std::vector<const TensorBinding*> wanted = CallerInputs(entry);
  int64_t batch = -1;
  for (const std::string& name : f.batch_fields) {
    const io::DatasetField* field = plan.dataset->FindField(name);
    if (field == nullptr) {
      std::vector<std::string> names;
      for (const io::DatasetField& g : plan.dataset->fields()) {
        names.push_back(g.name);
      }
      return Invalid(absl::StrCat(f.dataset, " has no field '", name,
                                  "' (fields: ", absl::StrJoin(names, ", "),
                                  ")"));
    }
    const TensorBinding* binding = FindBinding(wanted, name);
    KILN_RETURN_IF_ERROR(PlanField(f, entry, *field, binding, plan));
    if (batch >= 0 && binding->shape[0] != batch) {
      return Invalid(absl::StrCat("entry '", entry.name, "' takes batches of ",
                                  batch, " records but ", name, " of ",
                                  binding->shape[0]));
    }
    batch = binding->shape[0];
  }
  for (const TensorBinding* b : wanted) {
    if (std::find(f.batch_fields.begin(), f.batch_fields.end(), b->name) ==
        f.batch_fields.end()) {
      return Invalid(absl::StrCat("entry '", entry.name, "' is missing input '",
                                  b->name, "' (", TypeText(b->dtype, b->shape),
                                  "): add a field of ", f.dataset,
                                  " to --batch-fields"));
    }
  }
  const uint64_t global = static_cast<uint64_t>(batch) * world_size;
  if (batch <= 0 || plan.dataset->record_count() < global) {
    return Invalid(absl::StrCat(
        f.dataset, " has ", plan.dataset->record_count(),
        " records, fewer than one batch of ", global,
        world_size > 1 ? absl::StrCat(" (", world_size, " ranks)") : ""));
  }
  plan.loader.fields = f.batch_fields;
  plan.loader.narrow_i64 = true;
  plan.loader.batch.batch_size = static_cast<uint64_t>(batch);
  plan.loader.batch.shuffle = f.mode == RunMode::kTraining && f.shuffle;
  plan.loader.batch.seed = f.seed;
  plan.loader.batch.drop_last = true;
  KILN_ASSIGN_OR_RETURN(plan.fields, LoaderFields(*plan.dataset, plan.loader));
  std::vector<FieldRange> ranges;
  for (const io::DatasetField& field : plan.fields) {
    const TensorBinding* b = FindBinding(wanted, field.name);
    if (b->valid_range) ranges.push_back({field, *b->valid_range});
  }
  if (!ranges.empty()) {
    plan.loader.check =
        [path = f.dataset, record_bytes = plan.dataset->record_bytes(), ranges](
            uint8_t* records, absl::Span<const uint64_t> indices) {
          return CheckRecords(path, record_bytes, ranges, records, indices);
        };
  }
  return absl::OkStatus();
}

// A file kiln-run will write: its folder exists and is writable, and the
// file, if there, is a writable file.
absl::Status CheckWritableFile(const std::string& path, const char* flag) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return Invalid(absl::StrCat(flag, " ", path, " is a directory"));
    }
    if (::access(path.c_str(), W_OK) != 0) {
      return Invalid(absl::StrCat(flag, " ", path, " is not writable"));
    }
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Invalid(absl::StrCat(flag, " ", path, ": there is no folder ", dir));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Invalid(absl::StrCat(flag, " ", path, ": the folder ", dir,
                                " is not writable"));
  }
  return absl::OkStatus();
}

// A folder kiln-run will create (as mkdir -p) and write into.
absl::Status CheckWritableFolder(const std::string& path, const char* flag) {
  std::string existing = path;
  struct stat st;
  while (::stat(existing.c_str(), &st) != 0) {
    const size_t slash = existing.rfind('/');
    existing = slash == std::string::npos ? "."
               : slash == 0               ? "/"
                                          : existing.substr(0, slash);
  }
  if (!S_ISDIR(st.st_mode)) {
    return Invalid(
        absl::StrCat(flag, " ", path, ": ", existing, " is not a folder"));
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return Invalid(
        absl::StrCat(flag, " ", path, ": ", existing, " is not writable"));
  }
  return absl::OkStatus();
}

absl::Status CheckOutputs(const Flags& f) {
  if (!f.output.empty()) {
    KILN_RETURN_IF_ERROR(CheckWritableFile(f.output, "--output"));
  }
  if (!f.checkpoint.empty()) {
    KILN_RETURN_IF_ERROR(CheckWritableFile(f.checkpoint, "--checkpoint"));
  }
  if (!f.log_dir.empty()) {
    KILN_RETURN_IF_ERROR(CheckWritableFolder(f.log_dir, "--log-dir"));
  }
  return absl::OkStatus();
}

// What the entry holds on the device at least, against --memory-limit.
absl::Status CheckMemory(const Flags& f, const Entry& entry, RunPlan& plan) {
  uint64_t bytes = entry.arena_size;
  for (const artifact::ResidentBuffer& rb : plan.artifact.resident_buffers) {
    bytes += rb.byte_size;
  }
  if (f.mode == RunMode::kTraining && entry.name == "forward_backward") {
    bytes += plan.artifact.FindEntry("apply_update")->arena_size;
  }
  plan.device_bytes = bytes;
  if (f.memory_limit == 0 || f.memory_limit >= bytes) return absl::OkStatus();
  return Invalid(absl::StrCat("--memory-limit ", f.memory_limit,
                              " bytes is below what entry '", entry.name,
                              "' holds on the device: ", BytesText(bytes),
                              " (its arena and the resident buffers)"));
}

}  // namespace

absl::StatusOr<RunPlan> PlanRun(const Flags& f, int world_size) {
  RunPlan plan;
  KILN_ASSIGN_OR_RETURN(plan.artifact_bytes, io::ReadFile(f.model));
  absl::StatusOr<Artifact> loaded = artifact::LoadArtifact(plan.artifact_bytes);
  if (!loaded.ok()) return Annotate(loaded.status(), f.model);
  plan.artifact = *std::move(loaded);
  KILN_ASSIGN_OR_RETURN(plan.entry, EntryOf(f, plan.artifact));
  const Entry& entry = *plan.artifact.FindEntry(plan.entry);
  KILN_RETURN_IF_ERROR(PlanInputs(f, entry, plan));
  KILN_RETURN_IF_ERROR(PlanCheckpoint(f, plan));
  KILN_RETURN_IF_ERROR(PlanDataset(f, entry, world_size, plan));
  KILN_RETURN_IF_ERROR(PlanCheck(f, entry, plan));
  KILN_RETURN_IF_ERROR(CheckOutputs(f));
  KILN_RETURN_IF_ERROR(CheckMemory(f, entry, plan));
  return plan;
}

namespace {

// --dry-run's lines on the entry, the steps and the learning rate.
std::vector<std::string> WhatRuns(const RunPlan& plan, const Flags& f) {
  if (f.mode == RunMode::kEvaluation) {
    return {absl::StrCat("evaluation: ", plan.entry,
                         " on every whole batch, the mean of each scalar "
                         "output")};
  }
  if (f.mode != RunMode::kTraining) {
    return {absl::StrCat(
        "inference: ", plan.entry,
        f.bench ? absl::StrCat(", timed over ", f.iters, " replays") : "")};
  }
  return {absl::StrCat("training: ", plan.entry, ", steps ",
                       plan.start_step + 1, " to ", *f.steps,
                       f.resume.empty()
                           ? ""
                           : absl::StrCat(" (resumed from ", f.resume, ")")),
          absl::StrCat(
              "learning rate: ", f.lr, ", ", f.schedule,
              f.schedule == "cosine"
                  ? absl::StrCat(" over ", f.schedule_steps.value_or(*f.steps),
                                 " steps")
                  : "",
              ", warm-up ", f.warmup.value_or(0), " steps")};
}

// --dry-run's lines on where the entry's inputs and parameters come from.
std::vector<std::string> WhatItReads(const RunPlan& plan, const Flags& f,
                                     int world_size) {
  std::vector<std::string> lines;
  if (plan.dataset != nullptr) {
    std::vector<std::string> fields;
    for (const io::DatasetField& field : plan.fields) {
      fields.push_back(
          absl::StrCat(field.name, " ", TypeText(field.dtype, field.shape)));
    }
    const uint64_t batch = plan.loader.batch.batch_size;
    lines.push_back(absl::StrCat(
        "data: ", f.dataset, ", ", plan.dataset->record_count(),
        " records, batches of ", batch, " (", absl::StrJoin(fields, ", "),
        " per record), ",
        plan.loader.batch.shuffle ? absl::StrCat("shuffled with seed ", f.seed)
                                  : std::string("in file order"),
        ", ", plan.dataset->record_count() / (batch * world_size),
        " batches per epoch"));
  }
  for (const auto& [name, t] : plan.inputs) {
    lines.push_back(absl::StrCat(
        "input: ", name, " ", TypeText(t.dtype, t.shape), " from ", f.inputs));
  }
  for (const auto& [name, t] : plan.resident) {
    lines.push_back(absl::StrCat(
        "sets: ", name, " ", TypeText(t.dtype, t.shape), " from ", f.inputs));
  }
  for (const std::string& c : plan.conversions) {
    lines.push_back("converts: " + c);
  }
  if (!f.params.empty()) lines.push_back("parameters: " + f.params);
  return lines;
}

// --dry-run's lines on what the run writes and checks.
std::vector<std::string> WhatItWrites(const Flags& f) {
  std::vector<std::string> lines;
  if (!f.check.empty()) {
    lines.push_back(absl::StrCat("checks against: ", f.check, " (rtol ", f.rtol,
                                 ", atol ", f.atol, ")"));
  }
  if (!f.output.empty()) lines.push_back("writes: " + f.output);
  if (!f.checkpoint.empty()) {
    lines.push_back(absl::StrCat(
        "checkpoint: ", f.checkpoint, " at the end",
        f.checkpoint_every > 0
            ? absl::StrCat(" and every ", f.checkpoint_every, " steps")
            : ""));
  }
  if (!f.log_dir.empty()) lines.push_back("logs: " + f.log_dir);
  return lines;
}

}  // namespace

std::string DescribeRun(const RunPlan& plan, const Flags& f, int world_size) {
  std::vector<std::string> lines = {
      absl::StrCat("dry run: ", f.model,
                   " would run (every check passed; the GPU was not opened)")};
  for (std::vector<std::string> part :
       {WhatRuns(plan, f),
        world_size > 1 ? std::vector<std::string>{absl::StrCat(
                             "data parallel: ", world_size, " ranks")}
                       : std::vector<std::string>{},
        WhatItReads(plan, f, world_size), WhatItWrites(f)}) {
    lines.insert(lines.end(), part.begin(), part.end());
  }
  lines.push_back(absl::StrCat(
      "device: GPU ", f.device, ", at least ", BytesText(plan.device_bytes),
      f.memory_limit > 0
          ? absl::StrCat(" of the --memory-limit ", BytesText(f.memory_limit))
          : ""));
  return absl::StrJoin(lines, "\n  ") + "\n";
}

absl::StatusOr<uint64_t> CheckEveryRecord(const RunPlan& plan) {
  if (plan.dataset == nullptr) return 0;
  io::BatchOptions options = plan.loader.batch;
  options.shuffle = false;
  options.drop_last = false;
  options.num_epochs = 1;
  options.shard_count = 1;
  options.shard_index = 0;
  KILN_ASSIGN_OR_RETURN(io::RecordHook hook,
                        LoaderHook(*plan.dataset, plan.loader));
  KILN_ASSIGN_OR_RETURN(
      std::unique_ptr<io::BatchProducer> producer,
      io::BatchProducer::Start(plan.dataset.get(), options,
                               io::DefaultHostAllocator(), std::move(hook)));
  uint64_t records = 0;
  while (true) {
    absl::StatusOr<io::Batch> batch = producer->Next();
    if (absl::IsOutOfRange(batch.status())) return records;
    KILN_RETURN_IF_ERROR(batch.status());
    records += batch->num_records;
  }
}

}  // namespace kiln
