#!/bin/bash
# template_rules.sh passes the templates and fails each kind of broken rule.
#   template_rules_test.sh TEMPLATE_RULES TEMPLATE.cuh...
set -uo pipefail
rules=$1
shift
fail() { echo "FAIL: $*" >&2; exit 1; }
"${rules}" "$@" || fail "the templates break a rule"

dir=${TEST_TMPDIR:-$(mktemp -d)}/bad
mkdir -p "${dir}"
check_refused() { # NAME LINE: a template holding LINE must be refused
  printf '#pragma once\n// %s in a comment is fine\n%s\n' "$2" "$2" >"${dir}/$1.cuh"
  if "${rules}" "${dir}/$1.cuh" 2>"${dir}/$1.log"; then
    fail "$1: template_rules.sh passed '$2'"
  fi
  grep -q "$1.cuh:3:" "${dir}/$1.log" || fail "$1: the message names no line"
}
check_refused builtin '__device__ int f() { return threadIdx.x; }'
check_refused kernel 'extern "C" __global__ void k(float *p) { p[0] = 1.f; }'
check_refused wait '__device__ void f(const float *p) { float x = p[0]; kiln_wait_for_predecessor(); }'
check_refused asm '__device__ void f() { asm volatile("griddepcontrol.wait;" ::: "memory"); }'
check_refused trigger '__device__ void f() { cudaTriggerProgrammaticLaunchCompletion(); }'
check_refused sync '__device__ void f() { cudaGridDependencySynchronize(); }'
check_refused wrapped_wait '__device__ void f() { kiln::grid_dependency::wait(); }'
check_refused inline_ptx '__device__ float f(float x) { float y; asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }'
check_refused gnu_asm '__device__ void f() { __asm__ volatile("membar.gl;" ::: "memory"); }'
printf '#pragma once\n// kiln_wait_for_predecessor() and __global__ in comments\n__device__ int g(const kiln::launch_ctx &ctx) { return ctx.thread.x; }\n' \
  >"${dir}/fine.cuh"
"${rules}" "${dir}/fine.cuh" || fail "a template that keeps the rules was refused"
mkdir -p "${dir}/wrappers"
printf '#pragma once\n__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory"); }\n' \
  >"${dir}/wrappers/wgmma.cuh"
"${rules}" "${dir}/wrappers/wgmma.cuh" || fail "a wrapper header's inline PTX was refused"
printf '#pragma once\n__device__ void f() { asm volatile("fence.proxy.async;" ::: "memory"); }\n' \
  >"${dir}/wrappers/my_wgmma.cuh"
if "${rules}" "${dir}/wrappers/my_wgmma.cuh" 2>/dev/null; then
  fail "inline PTX in a header that only ends like a wrapper's name passed"
fi
echo "template_rules_test: ok"
