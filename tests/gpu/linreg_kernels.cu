// Hand-written kernels of a linear regression model, pred = x W + b with a
// mean-squared-error loss, used by the GPU tests to build small training
// artifacts with ArtifactWriter (tests/gpu/linreg_artifact.h). Compiled at
// build time to PTX (compute_90) and a cubin (sm_90). The CPU stand-in driver
// (runtime/cuda/testing/fake_libcuda.cc) has host versions of each.
//
// Shapes: x [n, in], w [in, out], b [out], pred/y/dpred [n, out], loss [].
// Every reduction runs in a fixed order, so results are deterministic.
//
// Every kernel first waits for the previous grid on the stream (a no-op
// unless it was launched with programmatic stream serialization), so the
// artifacts may mark their images as waiting for their predecessor.
__device__ __forceinline__ void wait_for_predecessor() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// pred[i, o] = sum_k x[i, k] w[k, o] + b[o]
extern "C" __global__ void linreg_forward(const float* x, const float* w,
                                          const float* b, float* pred, int n,
                                          int in, int out) {
  wait_for_predecessor();
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * out) return;
  const int i = t / out, o = t % out;
  float acc = b[o];
  for (int k = 0; k < in; ++k) acc += x[i * in + k] * w[k * out + o];
  pred[t] = acc;
}

// loss = mean((pred - y)^2). One block of 256 threads.
extern "C" __global__ void mse_loss(const float* pred, const float* y,
                                    float* loss, int count) {
  wait_for_predecessor();
  __shared__ float partial[256];
  float sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const float d = pred[i] - y[i];
    sum += d * d;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = partial[0] / count;
}

// dpred = 2 (pred - y) / count
extern "C" __global__ void mse_grad(const float* pred, const float* y,
                                    float* dpred, int count) {
  wait_for_predecessor();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dpred[i] = 2.0f * (pred[i] - y[i]) / count;
}

// gw[k, o] = sum_i x[i, k] dpred[i, o]
extern "C" __global__ void linreg_grad_w(const float* x, const float* dpred,
                                         float* gw, int n, int in, int out) {
  wait_for_predecessor();
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= in * out) return;
  const int k = t / out, o = t % out;
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += x[i * in + k] * dpred[i * out + o];
  gw[t] = acc;
}

// gb[o] = sum_i dpred[i, o]
extern "C" __global__ void linreg_grad_b(const float* dpred, float* gb, int n,
                                         int out) {
  wait_for_predecessor();
  const int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= out) return;
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += dpred[i * out + o];
  gb[o] = acc;
}

// running[o] = (1 - momentum) running[o] + momentum * mean_i pred[i, o]: model
// state updated in place, like batch norm's running statistics.
extern "C" __global__ void running_mean_update(const float* pred,
                                               float* running, float momentum,
                                               int n, int out) {
  wait_for_predecessor();
  const int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= out) return;
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += pred[i * out + o];
  running[o] = (1.0f - momentum) * running[o] + momentum * (acc / n);
}

// A fault on request, for tests of the runtime's fault handling: when
// flag[0] is nonzero, stores far outside any allocation (an illegal address:
// the context is lost).
extern "C" __global__ void fault_when(const int* flag, float* anywhere) {
  wait_for_predecessor();
  if (flag[0] != 0) {
    volatile float* wild = reinterpret_cast<volatile float*>(
        reinterpret_cast<unsigned long long>(anywhere) + (1ull << 46));
    *wild = 1.0f;
  }
}

// p -= lr * g
extern "C" __global__ void sgd_update(float* p, const float* g, const float* lr,
                                      int count) {
  wait_for_predecessor();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) p[i] = p[i] - lr[0] * g[i];
}

// Adam with bias correction; step counts from 1.
extern "C" __global__ void adam_update(float* p, float* m, float* v,
                                       const float* g, const float* lr,
                                       const int* step, float beta1,
                                       float beta2, float eps, int count) {
  wait_for_predecessor();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float t = (float)step[0];
  const float mi = beta1 * m[i] + (1.0f - beta1) * g[i];
  const float vi = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
  m[i] = mi;
  v[i] = vi;
  const float mhat = mi / (1.0f - powf(beta1, t));
  const float vhat = vi / (1.0f - powf(beta2, t));
  p[i] = p[i] - lr[0] * mhat / (sqrtf(vhat) + eps);
}
