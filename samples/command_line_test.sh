#!/bin/bash
# The samples' command lines: --help lists every option with its default
# (status 0); unknown flags, bad numbers and missing or incompatible flags
# exit with status 2 and say what is wrong, before any work.
#   command_line_test.sh MAKE_DATASET TRAIN_GPU TRAIN_TRANSFORMER TRAIN_DIGITS
set -uo pipefail
make_dataset="$1" train_gpu="$2" train_transformer="$3" train_digits="$4"
train_mlp_typed="$5"
work="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
# expect <status> <text> <command...>: the exit status is <status> and the
# output (stdout and stderr) contains <text>.
expect() {
  local want="$1" text="$2"
  shift 2
  "$@" >"${work}/out.txt" 2>&1
  local got=$?
  if [[ ${got} -ne ${want} ]] || ! grep -qF -- "${text}" "${work}/out.txt"; then
    echo "FAIL $*: exit ${got} (expected ${want}), output lacks '${text}'?"
    sed 's/^/    /' "${work}/out.txt"
    failures=$((failures + 1))
  else
    echo "ok   $*"
  fi
}
# help_lists <command> <flag>...: --help shows each flag with a default.
help_lists() {
  local command="$1"
  shift
  "${command}" --help >"${work}/help.txt" 2>&1 || {
    echo "FAIL ${command} --help: exit $?"
    failures=$((failures + 1))
  }
  for flag in "$@"; do
    if ! grep -qE -- "^  --${flag}( |\$)" "${work}/help.txt"; then
      echo "FAIL ${command} --help lacks --${flag}"
      failures=$((failures + 1))
    fi
  done
  local options defaults
  options=$(grep -cE '^  --' "${work}/help.txt")
  defaults=$(grep -c '(default: ' "${work}/help.txt")
  if [[ ${options} -ne $# || ${defaults} -ne $# ]]; then
    echo "FAIL ${command} --help: ${options} options and ${defaults} defaults, expected $#"
    failures=$((failures + 1))
  fi
}

help_lists "${make_dataset}" task out records seed features sine-length text csv \
  heldout-out length stride heldout-fraction from shuffle classes-out
expect 2 "unknown flag --nope" "${make_dataset}" --nope --out x
expect 2 "--out is required" "${make_dataset}" --task sine
expect 2 "--records: 'many' is not an integer" "${make_dataset}" --records many --out x
expect 2 "--task text needs --heldout-out" "${make_dataset}" --task text --text t --out x
expect 2 "--heldout-fraction must be in (0, 1)" "${make_dataset}" --task digits --csv c \
  --out x --heldout-out y --heldout-fraction 1.5
expect 2 "'circle' is not sine, regression" "${make_dataset}" --task circle --out x
expect 2 "--seed needs a value" "${make_dataset}" --out x --seed
expect 0 "wrote 10 regression records" "${make_dataset}" --task regression --records 10 --seed=2 \
  --out "${work}/r.kilndata"

help_lists "${train_gpu}" model task steps seed lr warmup final-lr-fraction \
  expect-mse-below
expect 2 "--model is required" "${train_gpu}" --task sine
expect 2 "--task: 'cubic' is not sine or regression" "${train_gpu}" --model m --task cubic
expect 2 "--lr: 'fast' is not a number" "${train_gpu}" --model m --lr fast
expect 2 "--lr must be >= 0 (0: the task's)" "${train_gpu}" --model m --lr -1
expect 2 "--warmup must be >= 0" "${train_gpu}" --model m --warmup -5
expect 2 "--steps must be >= 1" "${train_gpu}" --model m --steps 0
expect 2 "--final-lr-fraction must be in [0, 1]" "${train_gpu}" --model m \
  --final-lr-fraction 2
expect 2 "--seed must be >= 0" "${train_gpu}" --model m --seed -1

help_lists "${train_transformer}" model eval-model train heldout steps lr warmup seed \
  log-every expect-accuracy-above expect-bits-below
expect 2 "--eval-model is required" "${train_transformer}" --model m --train t --heldout h
expect 2 "--steps must be >= 1" "${train_transformer}" --model m --eval-model e \
  --train t --heldout h --steps 0
expect 2 "unexpected argument 'extra'" "${train_transformer}" extra
expect 2 "--lr must be > 0" "${train_transformer}" --model m --eval-model e \
  --train t --heldout h --lr 0

help_lists "${train_digits}" model eval-model train heldout epochs lr warmup seed \
  no-shuffle checkpoint expect-accuracy-above
expect 2 "--warmup must be >= 0" "${train_digits}" --model m --eval-model e --train t \
  --heldout h --warmup -1
expect 2 "--no-shuffle takes no value" "${train_digits}" --no-shuffle=perhaps
expect 2 "unknown flag --shuffle" "${train_digits}" --shuffle
expect 2 "--expect-accuracy-above must be below 1" "${train_digits}" --model m \
  --eval-model e --train t --heldout h --expect-accuracy-above 1.5

help_lists "${train_mlp_typed}" model any-build steps seed lr warmup expect-mse-below
expect 2 "--steps must be >= 1" "${train_mlp_typed}" --steps 0
expect 2 "--seed: 'one' is not an integer" "${train_mlp_typed}" --seed one
expect 2 "unexpected argument 'extra'" "${train_mlp_typed}" extra
expect 2 "--warmup must be >= 0" "${train_mlp_typed}" --warmup -1

# Every program: -h and --help print the help, --version the version line,
# a single-dash flag is refused.
for program in "${make_dataset}" "${train_gpu}" "${train_transformer}" \
    "${train_digits}" "${train_mlp_typed}"; do
  name="$(basename "${program}")"
  expect 0 "usage: " "${program}" -h
  expect 0 "${name} 0." "${program}" --version
  expect 2 "unknown option -steps (flags take two dashes: --steps)" "${program}" -steps 3
done

echo "sample command-line checks failed: ${failures}"
[[ ${failures} -eq 0 ]]
