// Gradient tools of the runtime (Trainer::ClipGradNorm, ClipGradValue,
// ScaleGrads, AddGradNoise, GradStats): small f32 kernels compiled at build
// time to PTX (compute_90) and embedded in the runtime, so the driver JITs
// them for whatever GPU it finds. extern "C" keeps the names unmangled.
//
// The CPU stand-in driver (runtime/cuda/testing/fake_libcuda.cc) implements
// the same kernels on the host; keep the two in step.

// Threads per block of kiln_grad_partials_f32 (its shared arrays).
#define KILN_PARTIAL_THREADS 256

// Per-block partial statistics of g[0, n): block b writes sumsq[b] (sum of
// squares in f64, NaN/Inf propagate), maxabs[b] (largest |g| ignoring NaN)
// and nonfinite[b] (count of NaN and Inf). The grid size fixes the order of
// the additions, so the result is deterministic for a given launch geometry.
// blockDim.x must be KILN_PARTIAL_THREADS.
extern "C" __global__ void kiln_grad_partials_f32(const float* g, long long n,
                                                  double* sumsq, float* maxabs,
                                                  unsigned int* nonfinite) {
  __shared__ double s_sum[KILN_PARTIAL_THREADS];
  __shared__ float s_max[KILN_PARTIAL_THREADS];
  __shared__ unsigned int s_bad[KILN_PARTIAL_THREADS];
  double sum = 0.0;
  float mx = 0.0f;
  unsigned int bad = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float x = g[i];
    sum += (double)x * (double)x;
    mx = fmaxf(mx, fabsf(x));
    if (!isfinite(x)) ++bad;
  }
  s_sum[threadIdx.x] = sum;
  s_max[threadIdx.x] = mx;
  s_bad[threadIdx.x] = bad;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + s];
      s_max[threadIdx.x] = fmaxf(s_max[threadIdx.x], s_max[threadIdx.x + s]);
      s_bad[threadIdx.x] += s_bad[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sumsq[blockIdx.x] = s_sum[0];
    maxabs[blockIdx.x] = s_max[0];
    nonfinite[blockIdx.x] = s_bad[0];
  }
}

// g *= s
extern "C" __global__ void kiln_grad_scale_f32(float* g, long long n, float s) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    g[i] = g[i] * s;
  }
}

// g = clamp(g, -v, v); NaN stays NaN.
extern "C" __global__ void kiln_grad_clip_value_f32(float* g, long long n,
                                                    float v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float x = g[i];
    if (x > v) {
      g[i] = v;
    } else if (x < -v) {
      g[i] = -v;
    }
  }
}

// Philox4x32-10 as runtime/random/philox.h.
__device__ void kiln_philox(unsigned int c[4], unsigned int k0,
                            unsigned int k1) {
  for (int round = 0; round < 10; ++round) {
    const unsigned int lo0 = 0xD2511F53u * c[0];
    const unsigned int hi0 = __umulhi(0xD2511F53u, c[0]);
    const unsigned int lo1 = 0xCD9E8D57u * c[2];
    const unsigned int hi1 = __umulhi(0xCD9E8D57u, c[2]);
    const unsigned int n0 = hi1 ^ c[1] ^ k0;
    const unsigned int n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// g[i] += (float)(stddev * N_i), N_i the standard normal of element i of
// RandomStream{seed, stream, offset} (runtime/random/philox.h), in f64.
extern "C" __global__ void kiln_grad_noise_f32(float* g, long long n,
                                               float stddev,
                                               unsigned long long seed,
                                               unsigned int stream,
                                               unsigned int offset) {
  const double kInv24 = 1.0 / 16777216.0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const unsigned long long block = (unsigned long long)i / 4;
    unsigned int c[4] = {(unsigned int)block, stream, offset,
                         (unsigned int)(block >> 32)};
    kiln_philox(c, (unsigned int)seed, (unsigned int)(seed >> 32));
    const int pair = (int)((i % 4) / 2);
    const double u1 = (double)((c[2 * pair] >> 8) + 1) * kInv24;
    const double u2 = (double)(c[2 * pair + 1] >> 8) * kInv24;
    const double radius = sqrt(-2.0 * log(u1));
    const double angle = 2.0 * 3.14159265358979323846 * u2;
    const double normal =
        (i % 2 == 0) ? radius * cos(angle) : radius * sin(angle);
    g[i] = g[i] + (float)((double)stddev * normal);
  }
}
