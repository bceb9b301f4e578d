#!/bin/bash
# Rules every kernel template keeps, checked by reading them (no compiler):
#
#   template_rules.sh TEMPLATE.cuh...
#
# 1. Templates take their position from a kiln::launch_ctx, never from
#    CUDA's built-in variables, so that they can run as parts of a merged
#    kernel; only the prelude's this_launch() reads those.
# 2. Only the prelude waits for the predecessor grid: no template defines a
#    __global__ kernel, calls kiln_wait_for_predecessor or uses
#    griddepcontrol (or CUDA's wrappers of it). The renderer makes the wait
#    the first statement of every kernel (KernelRenderer.cpp), and template
#    code runs only inside that kernel, so none of it can touch memory
#    before the wait while the runtime launches the kernel early
#    (programmatic dependent launch). griddepcontrol.cuh, the wrapper the
#    prelude calls, is the one other file that may name it.
# 3. Inline PTX lives only in the thin wrapper headers (tma.cuh, wgmma.cuh,
#    mma.cuh, cp_async.cuh, memory.cuh, cluster.cuh, fast_math.cuh,
#    griddepcontrol.cuh), one function per instruction: every other
#    template calls them, so that each instruction's operands and clobbers
#    are written once.
# Comment lines are not read. Exit status 1, naming each offending line,
# when a rule is broken.
set -uo pipefail

# The headers that wrap PTX instructions, as a regex of file names.
wrappers='(tma|wgmma|mma|cp_async|memory|cluster|fast_math|griddepcontrol)'

# FILE:LINE:TEXT lines of the arguments matching the extended regex $1,
# comment lines and files whose name matches the extended regex $2 left out.
code_matching() {
  grep -HnwE "$1" "${@:3}" | grep -vE "(^|/)$2\.cuh:" |
    grep -vE '^[^:]+:[0-9]+:[[:space:]]*//'
}

status=0
builtins=$(code_matching 'blockIdx|threadIdx|blockDim|gridDim' prelude "$@")
if [[ -n ${builtins} ]]; then
  echo "template_rules: templates must take block and thread positions from" \
    "their kiln::launch_ctx:" >&2
  echo "${builtins}" >&2
  status=1
fi
waits=$(code_matching '__global__|kiln_wait_for_predecessor|griddepcontrol(\.[a-z_]+)?|grid_dependency|cudaGridDependencySynchronize|cudaTriggerProgrammaticLaunchCompletion' '(prelude|griddepcontrol)' "$@")
if [[ -n ${waits} ]]; then
  echo "template_rules: only the prelude waits for the predecessor grid, in" \
    "the first statement of the kernel the renderer writes; templates define" \
    "no kernel and never wait or signal themselves:" >&2
  echo "${waits}" >&2
  status=1
fi
asm=$(code_matching 'asm|__asm__' "${wrappers}" "$@")
if [[ -n ${asm} ]]; then
  echo "template_rules: inline PTX belongs in the wrapper headers" \
    "${wrappers//|/, }; call their functions instead:" >&2
  echo "${asm}" >&2
  status=1
fi
exit "${status}"
