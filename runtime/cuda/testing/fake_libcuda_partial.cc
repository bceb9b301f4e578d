// A stand-in for libcuda.so.1 that exports only a few entry points: loading
// it must fail cleanly, naming the first entry point it lacks.
#include <cuda.h>

extern "C" {
CUresult cuGetErrorName(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult, const char** text) {
  *text = "fake driver";
  return CUDA_SUCCESS;
}
CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
}
