#!/bin/bash
# End-to-end checks of kiln-run on small artifacts:
#   kiln_run_test.sh <kiln-run> <make_test_files> [dump_events [work dir]]
# Runs on whatever driver libcuda resolves to (KILN_LIBCUDA_PATH names the
# CPU stand-in in CI). Without a driver it checks only the command line and
# reports that it skipped the rest.
set -uo pipefail
kiln_run="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
make_files="$2"
dump_events=""
if [[ -n "${3:-}" ]]; then
  dump_events="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
fi
# TensorBoard's own reader of the event files, where tensorboard is installed.
check_tensorboard="$(cd "$(dirname "$0")" && pwd)/check_tensorboard.py"
work="${4:-${TEST_TMPDIR:-$(mktemp -d)}/kiln_run}"
mkdir -p "${work}"
if [[ -n "${KILN_LIBCUDA_PATH:-}" && "${KILN_LIBCUDA_PATH}" != /* ]]; then
  export KILN_LIBCUDA_PATH="$(pwd)/${KILN_LIBCUDA_PATH}"
fi
"${make_files}" "${work}" || { echo "make_test_files failed"; exit 1; }
cd "${work}"

failures=0
# expect <status> <description> <command...>: the command's exit status must be
# <status>; its output is kept in <description>.log.
expect() {
  local want="$1" what="$2"
  shift 2
  "$@" >"${what}.log" 2>&1
  local got=$?
  if [[ ${got} -ne ${want} ]]; then
    echo "FAIL ${what}: exit ${got}, expected ${want}"
    sed 's/^/    /' "${what}.log"
    failures=$((failures + 1))
  else
    echo "ok   ${what}"
  fi
}
# must_print <description> <text>: the last command's output contains <text>.
must_print() {
  if ! grep -qF -- "$2" "$1.log"; then
    echo "FAIL $1: output lacks '$2'"
    sed 's/^/    /' "$1.log"
    failures=$((failures + 1))
  fi
}

# Command-line errors: status 2 with a message, before any GPU work.
expect 2 no_model "${kiln_run}"
must_print no_model "no model given"
expect 2 unknown_flag "${kiln_run}" linreg.kiln --nope
must_print unknown_flag "unknown flag --nope"
expect 2 bad_schedule "${kiln_run}" linreg.kiln --steps 5 --inputs batch.safetensors --schedule linear
must_print bad_schedule "--schedule: 'linear' is not constant or cosine"
expect 2 bad_number "${kiln_run}" linreg.kiln --steps five --inputs batch.safetensors
must_print bad_number "--steps: 'five' is not an integer"
expect 2 dataset_needs_fields "${kiln_run}" linreg.kiln --steps 5 --dataset linreg.kilndata
must_print dataset_needs_fields "--dataset needs --batch-fields"
expect 2 eval_needs_fields "${kiln_run}" linreg.kiln --dataset linreg.kilndata
must_print eval_needs_fields "--dataset and --batch-fields go together"
expect 2 eval_no_inputs "${kiln_run}" linreg.kiln --dataset linreg.kilndata --batch-fields x,y \
    --inputs batch.safetensors
must_print eval_no_inputs "does not go with --inputs"
expect 2 bad_real "${kiln_run}" linreg.kiln --steps 5 --inputs batch.safetensors --lr inf
must_print bad_real "--lr: 'inf' is not a number"
expect 2 needs_value "${kiln_run}" linreg.kiln --steps
must_print needs_value "--steps needs a value"
expect 2 inference_flag_in_training "${kiln_run}" linreg.kiln --steps=5 --inputs=batch.safetensors --bench
must_print inference_flag_in_training "training (--steps) uses train_step"
expect 2 checkpoint_needs_steps "${kiln_run}" linreg.kiln --checkpoint out.safetensors
must_print checkpoint_needs_steps "--checkpoint: training flags; they need --steps"
expect 2 log_dir_needs_steps "${kiln_run}" predict.kiln --log-dir logs
must_print log_dir_needs_steps "--log-dir: training flags; they need --steps"
expect 2 checkpoint_every_needs_steps "${kiln_run}" linreg.kiln --checkpoint-every 10
must_print checkpoint_every_needs_steps "--checkpoint-every: training flags; they need --steps"
expect 2 iters_zero "${kiln_run}" predict.kiln --bench --iters 0
must_print iters_zero "--iters must be >= 1"
expect 2 negative_tolerance "${kiln_run}" predict.kiln --check x --atol -1
must_print negative_tolerance "--rtol and --atol must be >= 0"
expect 2 single_dash "${kiln_run}" predict.kiln -steps 5
must_print single_dash "unknown option -steps (flags take two dashes: --steps)"
expect 0 help "${kiln_run}" --help
must_print help "--memory-limit BYTES"
# Every option, with its default.
for flag in describe dry-run device memory-limit entry inputs params output check rtol \
    atol scaled-atol bench serial-launches allow-nonfinite-inputs warmup iters steps dataset \
    batch-fields lr schedule schedule-steps seed no-shuffle checkpoint checkpoint-every \
    resume log-every log-dir nproc distributed; do
  must_print help "  --${flag}"
done
[[ $(grep -c '^  --' help.log) -eq $(grep -c '(default: ' help.log) ]] ||
  { echo "FAIL help: an option without its default"; failures=$((failures + 1)); }
must_print help "peak learning rate (default: 0.001)"
must_print help "constant | cosine (default: constant)"
expect 0 help_short "${kiln_run}" -h
must_print help_short "usage: kiln-run MODEL.kiln [options]"
expect 0 version "${kiln_run}" --version
must_print version "kiln-run 0."
must_print version "(kiln, commit "
expect 2 bad_memory_limit "${kiln_run}" predict.kiln --memory-limit 0
must_print bad_memory_limit "--memory-limit must be at least 1 byte"
expect 2 memory_limit_unit "${kiln_run}" predict.kiln --memory-limit 1TiB
must_print memory_limit_unit "--memory-limit: '1TiB' is not a byte count"

# --describe needs no driver.
expect 0 describe "${kiln_run}" predict.kiln --describe
must_print describe "predict.kiln: kiln artifact, format 3,"
must_print describe "entry predict: 1 launch, arena "
must_print describe "  in   x     f32[16,5]  batch input"

# Every file and flag is checked against the artifact before the driver is
# opened; --dry-run stops there and says what would run.
expect 0 dry_run "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --check predict_expected.safetensors --dry-run
must_print dry_run "dry run: predict.kiln would run (every check passed; the GPU was not opened)"
must_print dry_run "  inference: predict"
must_print dry_run "  input: x f32[16,5] from predict_in.safetensors"
expect 0 dry_run_training "${kiln_run}" linreg.kiln --steps 200 --dataset linreg.kilndata \
    --batch-fields x,y --lr 0.05 --schedule cosine --warmup 10 --seed 3 \
    --checkpoint full.safetensors --checkpoint-every 50 --dry-run
must_print dry_run_training "  training: train_step, steps 1 to 200"
must_print dry_run_training "  learning rate: 0.05, cosine over 200 steps, warm-up 10 steps"
must_print dry_run_training "batches of 16 (x f32[5], y f32[3] per record), shuffled with seed 3"
must_print dry_run_training "  checkpoint: full.safetensors at the end and every 50 steps"
must_print dry_run_training "  read and checked all 320 records of linreg.kilndata"
[[ ! -e full.safetensors ]] || { echo "FAIL dry_run_training wrote a checkpoint"; failures=$((failures + 1)); }
expect 0 dry_run_ranks "${kiln_run}" linreg_dp8.kiln --nproc 2 --steps 5 \
    --dataset linreg.kilndata --batch-fields x,y --dry-run
must_print dry_run_ranks "  data parallel: 2 ranks"
expect 1 dry_run_missing_input "${kiln_run}" predict.kiln --entry predict --dry-run
must_print dry_run_missing_input "entry 'predict' is missing input 'x' (f32[16,5]): give --inputs"
expect 1 dry_run_bad_field "${kiln_run}" linreg.kiln --steps 3 --dataset linreg.kilndata \
    --batch-fields x,z --dry-run
must_print dry_run_bad_field "linreg.kilndata has no field 'z' (fields: x, y)"
expect 1 dry_run_bad_check "${kiln_run}" predict.kiln --entry predict \
    --inputs predict_in.safetensors --check batch.safetensors --dry-run
must_print dry_run_bad_check "batch.safetensors: tensor 'x' names nothing entry 'predict' writes (it writes pred f32[16,3])"
expect 1 dry_run_output_folder "${kiln_run}" predict.kiln --entry predict \
    --inputs predict_in.safetensors --output no/such/out.safetensors --dry-run
must_print dry_run_output_folder "--output no/such/out.safetensors: there is no folder no/such"
expect 1 dry_run_memory "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --memory-limit 256 --dry-run
must_print dry_run_memory "--memory-limit 256 bytes is below what entry 'predict' holds on the device: 2124 bytes"
# INT64 labels and tokens, as PyTorch and NumPy write them, are narrowed to
# the model's i32; values outside the i32 range or outside what the model
# allows (a label within its classes) are named before anything runs.
expect 0 echo_dry_run "${kiln_run}" echo.kiln --inputs echo_in.safetensors --dry-run
must_print echo_dry_run "  converts: labels: i64 to i32"
expect 1 echo_bad_label "${kiln_run}" echo.kiln --inputs echo_bad_label.safetensors
must_print echo_bad_label "echo_bad_label.safetensors: input 'labels': element 1 [1] is 3, outside [0, 3) or -100 (labels of kiln.cross_entropy over 3 classes with ignore_index -100)"
expect 1 echo_wide "${kiln_run}" echo.kiln --inputs echo_wide.safetensors
must_print echo_wide "echo_wide.safetensors: input 'tokens': element 3 [1, 1] is 8589934592, which does not fit the i32 the model takes"
for log in echo_bad_label echo_wide; do
  if grep -q "driver" "${log}.log"; then
    echo "FAIL ${log}: the driver was opened"
    failures=$((failures + 1))
  fi
done
expect 0 echo_dataset_dry_run "${kiln_run}" echo.kiln --dataset echo.kilndata \
    --batch-fields tokens,labels --dry-run
must_print echo_dataset_dry_run "  read and checked all 12 records of echo.kilndata"
expect 1 echo_bad_dataset_dry_run "${kiln_run}" echo.kiln --dataset echo_bad.kilndata \
    --batch-fields tokens,labels --dry-run
must_print echo_bad_dataset_dry_run "echo_bad.kilndata: record 9 field 'labels' is 7, outside [0, 3) or -100"

# Without a driver: a clear error, status 1.
if ! "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors >probe.log 2>&1 &&
    grep -q "no NVIDIA driver" probe.log; then
  expect 1 no_driver "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors
  must_print no_driver "no NVIDIA driver"
  echo "no CUDA driver: the GPU part of the kiln-run test skipped"
  [[ ${failures} -eq 0 ]]
  exit
fi

# Files that are missing or not artifacts.
expect 1 missing_model "${kiln_run}" missing.kiln
must_print missing_model "missing.kiln"
printf 'garbage' >garbage.kiln
expect 1 bad_artifact "${kiln_run}" garbage.kiln
must_print bad_artifact "INVALID_ARGUMENT"
expect 1 missing_inputs "${kiln_run}" predict.kiln --entry predict --inputs nope.safetensors
expect 1 wrong_entry "${kiln_run}" predict.kiln --entry forward
must_print wrong_entry "no entry 'forward'"

# i64 inputs reach the entry as i32 (echo.kiln returns them); a dataset's
# records are checked as each batch is gathered: record 9's label stops the
# evaluation, named, after the driver was opened.
expect 0 echo_run "${kiln_run}" echo.kiln --inputs echo_in.safetensors \
    --check echo_expected.safetensors
must_print echo_run "check labels_out: ok (4 elements"
must_print echo_run "check tokens_out: ok (8 elements"
expect 0 echo_dataset "${kiln_run}" echo.kiln --dataset echo.kilndata --batch-fields tokens,labels
must_print echo_dataset "evaluated forward on 3 batches of 4 records of echo.kilndata"
expect 1 echo_bad_dataset "${kiln_run}" echo.kiln --dataset echo_bad.kilndata \
    --batch-fields tokens,labels
must_print echo_bad_dataset "echo.kiln on "
must_print echo_bad_dataset "echo_bad.kilndata: record 9 field 'labels' is 7, outside [0, 3) or -100"

# Inference, outputs, --check.
expect 0 predict "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --output out.safetensors --check predict_expected.safetensors --rtol 1e-5 --atol 1e-5
must_print predict "check pred: ok"
[[ -s out.safetensors ]] || { echo "FAIL predict: no out.safetensors"; failures=$((failures + 1)); }
# --output writes the outputs that live in resident buffers too: the
# gradients of forward_backward beside its loss.
expect 0 gradients_output "${kiln_run}" linreg.kiln --entry forward_backward \
    --inputs batch.safetensors --output fb_out.safetensors
for name in loss grad.w grad.b; do
  grep -aq "\"${name}\"" fb_out.safetensors ||
    { echo "FAIL gradients_output: no ${name} in fb_out.safetensors"; failures=$((failures + 1)); }
done
expect 1 predict_mismatch "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --check predict_wrong.safetensors
must_print predict_mismatch "check pred: MISMATCH 1 of 48 elements"
# A NaN input: refused with the element and its file offset before anything
# runs, unless allowed.
expect 1 nan_input "${kiln_run}" predict.kiln --entry predict --inputs predict_nan.safetensors
must_print nan_input "predict_nan.safetensors: input 'x': element 17 [3, 2] is NaN (file offset "
expect 0 nan_input_allowed "${kiln_run}" predict.kiln --entry predict \
    --inputs predict_nan.safetensors --allow-nonfinite-inputs
must_print help "--allow-nonfinite-inputs"
expect 1 missing_input_name "${kiln_run}" predict.kiln --entry predict
must_print missing_input_name "missing input 'x'"
expect 0 bench "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --bench --warmup 3 --iters 20
must_print bench "bench predict: median"
# The stand-in driver and the H200 (sm_90, CUDA 12.3+) launch early.
must_print bench "(3 warm-up calls; 1 of 1 launches programmatic)"
must_print bench "bench memory: peak "
# A pool limit that holds the arena and the resident buffers but not the
# inputs and outputs besides: the allocation that passes it fails with the
# limit and the bytes asked for, and the run exits 1.
expect 1 memory_limit "${kiln_run}" predict.kiln --entry predict --inputs predict_in.safetensors \
    --memory-limit 2124
must_print memory_limit "the pool's limit of 2124 bytes"
expect 0 memory_limit_units "${kiln_run}" predict.kiln --entry predict \
    --inputs predict_in.safetensors --memory-limit 1MiB
expect 0 bench_serial "${kiln_run}" predict.kiln --entry predict \
    --inputs predict_in.safetensors --bench --warmup 3 --iters 20 \
    --serial-launches
must_print bench_serial "(3 warm-up calls; 0 of 1 launches programmatic)"

# Training from the dataset, with warm-up and cosine decay.
expect 0 train "${kiln_run}" linreg.kiln --steps 200 --dataset linreg.kilndata --batch-fields x,y \
    --lr 0.05 --schedule cosine --warmup 10 --seed 3 --checkpoint full.safetensors
must_print train "step 200/200"
must_print train "steps/s"
must_print train "wrote checkpoint full.safetensors (step 200)"
first=$(grep -oE 'first loss [0-9.e+-]+' train.log | grep -oE '[0-9.e+-]+$')
final=$(grep -oE 'final loss [0-9.e+-]+' train.log | grep -oE '[0-9.e+-]+$')
if ! awk -v a="${first}" -v b="${final}" 'BEGIN { exit !(b < a / 20) }'; then
  echo "FAIL train: the loss went from ${first} to ${final}"
  failures=$((failures + 1))
fi
# The trained parameters evaluated on every batch of the dataset (forward).
expect 0 evaluate "${kiln_run}" linreg.kiln --params full.safetensors --dataset linreg.kilndata \
    --batch-fields x,y
must_print evaluate "evaluated forward on "
mean=$(grep -oE ' loss [0-9.e+-]+$' evaluate.log | grep -oE '[0-9.e+-]+$')
if ! awk -v a="${first}" -v b="${mean}" 'BEGIN { exit !(b != "" && b < a / 20) }'; then
  echo "FAIL evaluate: mean loss '${mean}' after training, first training loss ${first}"
  failures=$((failures + 1))
fi
expect 1 evaluate_bad_field "${kiln_run}" linreg.kiln --dataset linreg.kilndata --batch-fields x,z
must_print evaluate_bad_field "no field 'z'"
# Stopping at 120 and resuming gives the same checkpoint, byte for byte.
expect 0 train_part1 "${kiln_run}" linreg.kiln --steps 120 --dataset linreg.kilndata --batch-fields x,y \
    --lr 0.05 --schedule cosine --schedule-steps 200 --warmup 10 --seed 3 --checkpoint part.safetensors
expect 0 train_part2 "${kiln_run}" linreg.kiln --steps 200 --dataset linreg.kilndata --batch-fields x,y \
    --lr 0.05 --schedule cosine --warmup 10 --seed 3 --resume part.safetensors --checkpoint resumed.safetensors
must_print train_part2 "resumed from part.safetensors at step 120"
if ! cmp -s full.safetensors resumed.safetensors; then
  echo "FAIL resume: the resumed checkpoint differs from the uninterrupted one"
  failures=$((failures + 1))
fi
# --log-dir: a TensorBoard event file with the scalars of every logged step
# (CRCs and values checked by dump_events, and by TensorBoard's reader where
# it is installed) and the loss curve as SVG.
expect 0 train_logged "${kiln_run}" linreg.kiln --steps 40 --dataset linreg.kilndata \
    --batch-fields x,y --lr 0.05 --seed 3 --log-every 10 --log-dir logs/run1
must_print train_logged "logging to logs/run1/events.out.tfevents."
must_print train_logged "wrote logs/run1/events.out.tfevents."
must_print train_logged " and logs/run1/loss.svg"
events=(logs/run1/events.out.tfevents.*)
if [[ ${#events[@]} -ne 1 || ! -s "${events[0]}" ]]; then
  echo "FAIL train_logged: no single event file in logs/run1: ${events[*]}"
  failures=$((failures + 1))
elif [[ -n "${dump_events}" ]]; then
  expect 0 events "${dump_events}" "${events[0]}"
  # The file version, then 4 logged steps (10, 20, 30, 40).
  must_print events "file_version brain.Event:2 events 5"
  for step in 10 20 30 40; do
    for tag in loss learning_rate steps_per_second device/pool_bytes_in_use; do
      must_print events "${step} ${tag} "
    done
  done
  # The logged loss is the progress line's.
  final=$(grep -oE 'final loss [0-9.e+-]+' train_logged.log | grep -oE '[0-9.e+-]+$')
  logged=$(grep -E '^40 loss ' events.log | cut -d' ' -f3)
  if ! awk -v a="${final}" -v b="${logged}" \
      'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 1e-5 * (a < 0 ? -a : a) + 1e-9) }'; then
    echo "FAIL events: logged loss '${logged}' at step 40, final loss ${final}"
    failures=$((failures + 1))
  fi
  must_print events "40 learning_rate 0.0500000007"
  # One bit flipped in the second record's data: its CRC no longer matches.
  python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[60] ^= 1
open("damaged.tfevents", "wb").write(b)' "${events[0]}"
  expect 1 events_damaged "${dump_events}" damaged.tfevents
  must_print events_damaged "CRC mismatch"
  if python3 -c 'import tensorboard' 2>tensorboard_probe.log; then
    expect 0 events_tensorboard python3 "${check_tensorboard}" "${events[0]}" \
        --expect-tags loss,learning_rate,steps_per_second,device/pool_bytes_in_use \
        --min-events 4
    must_print events_tensorboard "file_version 2"
    must_print events_tensorboard "40 learning_rate 0.0500000007"
  else
    echo "tensorboard not installed: TensorBoard's reader not tried"
  fi
fi
# The loss curve: well-formed SVG with one polyline of the 40 steps' losses.
expect 0 loss_svg python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse("logs/run1/loss.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
lines = root.findall(".//" + ns + "polyline")
assert len(lines) == 1, len(lines)
points = lines[0].get("points").split()
assert len(points) == 40, len(points)
xs = [float(p.split(",")[0]) for p in points]
assert xs == sorted(xs), "steps out of order"
assert len(root.findall(".//" + ns + "line")) >= 2, "no axes"
print("loss.svg ok:", len(points), "points")
'
must_print loss_svg "loss.svg ok: 40 points"

# One fixed batch, and a check of the final parameters.
expect 0 train_fixed "${kiln_run}" linreg.kiln --steps 30 --inputs batch.safetensors --lr 0.01
expect 1 train_bad_field "${kiln_run}" linreg.kiln --steps 3 --dataset linreg.kilndata --batch-fields x,z
must_print train_bad_field "no field 'z'"
expect 1 train_resume_past "${kiln_run}" linreg.kiln --steps 50 --inputs batch.safetensors --resume full.safetensors
must_print train_resume_past "below the checkpoint's step 200"

echo "kiln-run checks failed: ${failures}"
[[ ${failures} -eq 0 ]]
