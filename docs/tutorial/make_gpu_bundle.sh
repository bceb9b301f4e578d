#!/bin/bash
# The GPU check of the README's tutorial: runs its blocks here (the GPU
# commands stop for want of a GPU), leaving their files in DIR/work (default
# DIR: .gpu-bundle/tutorial, git-ignored), and adds kiln-run, classify and
# train_classifier (static; the driver is loaded at run time), README.md,
# run_tutorial.py, run.sh and COMMIT. Then, on the GPU machine, from the
# repository root:
#   DIR/run.sh LOGDIR
# runs the tutorial's GPU commands in DIR/work (each must succeed), then
# docs/runtime-api.md's example (train_classifier, and classify with its
# checkpoint), and writes LOGDIR/tutorial.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.gpu-bundle/tutorial}"
targets=(//tools/kilnc //tools/kiln-run //samples:make_dataset
  //samples:train_reference //docs/tutorial:classify
  //docs/tutorial:train_classifier)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
bin="$(bazel info bazel-bin 2>/dev/null)"
rm -rf "${out}"
mkdir -p "${out}/bin" "${out}/work" "${out}/tools"
for tool in tools/kilnc/kilnc tools/kiln-run/kiln-run samples/make_dataset \
    samples/train_reference docs/tutorial/classify; do
  ln -s "${bin}/${tool}" "${out}/tools/"
done
python3 docs/tutorial/run_tutorial.py README.md --root . --bin "${out}/tools" \
  --work "${out}/work"
rm -rf "${out}/tools"
cp "${bin}/tools/kiln-run/kiln-run" "${bin}/docs/tutorial/classify" \
  "${bin}/docs/tutorial/train_classifier" "${out}/bin/"
cp README.md docs/tutorial/run_tutorial.py "${out}/"
{
  git rev-parse HEAD
  git diff --quiet HEAD -- || echo "(with uncommitted changes)"
} >"${out}/COMMIT"
cat >"${out}/run.sh" <<'RUN'
#!/bin/bash
# The tutorial's GPU commands on this machine's GPU: DIR/run.sh LOGDIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
log="${1:?usage: run.sh LOGDIR}"
mkdir -p "${log}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader \
  >"${log}/tutorial.log" 2>&1 || true
echo "kiln $(cat "${here}/COMMIT")" >>"${log}/tutorial.log"
log="$(cd "${log}" && pwd)"
cd "${here}"
python3 run_tutorial.py README.md --root . --bin bin --work work --only-gpu \
  --require-gpu 2>&1 | tee -a "${log}/tutorial.log"
cd work
{
  echo "== docs/runtime-api.md's example"
  ../bin/train_classifier classifier.kiln train.kilndata api.safetensors
  ../bin/classify classifier.kiln api.safetensors new_bars.safetensors
} 2>&1 | tee -a "${log}/tutorial.log"
echo "PASS: the tutorial's GPU commands and the runtime API's example" |
  tee -a "${log}/tutorial.log"
RUN
chmod +x "${out}/run.sh"
echo "wrote ${out} ($(du -sh "${out}" | cut -f1)); there: ${out}/run.sh LOGDIR"
