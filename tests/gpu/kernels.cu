// Hand-written kernels for the GPU tests of the runtime. Compiled at build
// time to PTX (compute_90) and a cubin (sm_90); extern "C" keeps the names
// unmangled for cuModuleGetFunction.

extern "C" __global__ void fill_f32(float* out, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    out[i] = value;
  }
}

// y = a * x + y
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

// *out += sum(x). Dynamic shared memory: blockDim.x floats (a power of two).
extern "C" __global__ void reduce_sum_f32(const float* x, float* out, int n) {
  extern __shared__ float partial[];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    sum += x[i];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

// A strided view of up to 4 dims, passed by value (mirrored on the host).
struct StridedView {
  long long shape[4];
  long long strides[4];
  long long offset;
  int rank;
};

// out[i] = base[offset of the i-th element of `view` in row-major order].
extern "C" __global__ void gather_f32(const float* base, float* out,
                                      StridedView view, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    long long rest = i;
    long long offset = view.offset;
    for (int d = view.rank - 1; d >= 0; --d) {
      offset += (rest % view.shape[d]) * view.strides[d];
      rest /= view.shape[d];
    }
    out[i] = base[offset];
  }
}
