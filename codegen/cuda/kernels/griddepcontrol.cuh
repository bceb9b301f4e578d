//===- griddepcontrol.cuh - programmatic dependent launch (sm_90) ---------===//
//
// The one wrapper of griddepcontrol: the wait of every kernel, which the
// renderer makes its first statement (KernelRenderer.cpp). template_rules.sh
// refuses griddepcontrol and this wait anywhere but here and the prelude,
// which includes it.
//
//===----------------------------------------------------------------------===//
#pragma once

// The first statement of every kernel. The runtime may launch a kernel with
// programmatic stream serialization (sm_90 and newer), which schedules it
// while the previous kernel on the stream still runs: wait here, before any
// memory access, until that kernel has finished and its writes are visible,
// then let the next kernel be scheduled in turn.
__device__ __forceinline__ void kiln_wait_for_predecessor() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
