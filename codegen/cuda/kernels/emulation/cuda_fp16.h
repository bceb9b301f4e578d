// Stand-in for CUDA's <cuda_fp16.h> in host emulation tests (host_cuda.h).
#pragma once
#include "host_cuda.h"
