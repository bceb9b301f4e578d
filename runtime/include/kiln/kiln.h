/* The stable C API of the kiln runtime: load an artifact, run its entries,
 * train it, read and write its parameters and gradients, save and restore
 * checkpoints. A thin layer over the C++ API (kiln/runtime.h), for C and for
 * any language with a C foreign function interface.
 *
 *   kiln_runtime* rt; kiln_module* m; kiln_trainer* t; float loss;
 *   if (kiln_runtime_open(0, &rt) != KILN_OK) puts(kiln_last_error());
 *   kiln_module_load(rt, "mlp.kiln", &m);
 *   kiln_trainer_new(m, 42, &t);
 *   kiln_input in[2] = {{"x", KILN_F32, 2, x_shape, x, sizeof x},
 *                       {"y", KILN_F32, 2, y_shape, y, sizeof y}};
 *   kiln_trainer_step(t, in, 2, 0.01f, &loss);
 *   kiln_trainer_close(t); kiln_module_close(m); kiln_runtime_close(rt);
 *
 * Contract:
 * - Every function returns a kiln_status; on anything but KILN_OK,
 *   kiln_last_error() (per thread) says why, and out-parameters are left
 *   unchanged. No C++ exception crosses this boundary.
 * - Handles are opaque. A null, closed or foreign handle, or a handle of
 *   another kind, is KILN_INVALID_ARGUMENT, never a crash. Closing null is a
 *   no-op. Modules, sessions and trainers keep what they need alive: closing
 *   the runtime or module first is allowed.
 * - Handles may be used from several threads: calls on one session or
 *   trainer are serialized (they run one at a time), calls on different ones
 *   run concurrently.
 * - Tensors cross as host memory (kiln_input) or as device tensors
 *   (kiln_tensor, passed as kiln_device_input to the *_device calls): dense,
 *   row-major, little endian, with exactly the dtype, shape and byte size
 *   the artifact declares.
 *
 * Device tensors keep a trainer's data on the GPU:
 *
 *   kiln_tensor* xd;
 *   kiln_tensor_new(rt, KILN_F32, 2, x_shape, &xd);
 *   kiln_tensor_write(xd, x, sizeof x);
 *   kiln_device_input dev[1] = {{"x", xd}};
 *   kiln_trainer_step_device(t, &in[1], 1, dev, 1, 0.01f, &loss);
 *   kiln_tensor_close(xd);
 */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 2
#define KILN_VERSION_PATCH 0

/* Status codes: the numbers of absl::StatusCode (and gRPC). */
typedef enum kiln_status {
  KILN_OK = 0,
  KILN_CANCELLED = 1,
  KILN_UNKNOWN = 2,
  KILN_INVALID_ARGUMENT = 3,
  KILN_DEADLINE_EXCEEDED = 4,
  KILN_NOT_FOUND = 5,
  KILN_ALREADY_EXISTS = 6,
  KILN_PERMISSION_DENIED = 7,
  KILN_RESOURCE_EXHAUSTED = 8,
  KILN_FAILED_PRECONDITION = 9,
  KILN_ABORTED = 10,
  KILN_OUT_OF_RANGE = 11,
  KILN_UNIMPLEMENTED = 12,
  KILN_INTERNAL = 13,
  KILN_UNAVAILABLE = 14,
  KILN_DATA_LOSS = 15,
  KILN_UNAUTHENTICATED = 16
} kiln_status;

/* Element types (kiln::DType). KILN_I1 is one byte per element. */
typedef enum kiln_dtype {
  KILN_F32 = 0,
  KILN_BF16 = 1,
  KILN_F16 = 2,
  KILN_I32 = 3,
  KILN_I1 = 4,
  KILN_I64 = 5
} kiln_dtype;

/* What a tensor is: an entry's own input or output (KILN_ROLE_IO: the
 * caller's, or "lr" and "step", which the trainer supplies), or a resident
 * buffer of the role the compiler gave it. */
typedef enum kiln_role {
  KILN_ROLE_IO = 0,
  KILN_ROLE_PARAMETER = 1,
  KILN_ROLE_OPTIMIZER_STATE = 2,
  KILN_ROLE_GRADIENT = 3,
  KILN_ROLE_MASTER_WEIGHT = 4,
  KILN_ROLE_CONSTANT = 5,
  KILN_ROLE_STATE = 6
} kiln_role;

#define KILN_MAX_RANK 16

/* A tensor's description. `name` lives as long as the handle it came from. */
typedef struct kiln_tensor_info {
  const char* name;
  kiln_dtype dtype;
  kiln_role role;
  int32_t rank;
  int64_t shape[KILN_MAX_RANK];
  size_t size_bytes;
} kiln_tensor_info;

/* One input of a call: host data, read during the call only. */
typedef struct kiln_input {
  const char* name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t* shape; /* `rank` dims; may be null for rank 0 */
  const void* data;
  size_t size_bytes; /* must equal the elements times the dtype's size */
} kiln_input;

/* One input of a *_device call given as a device tensor: its dtype and
 * shape are the tensor's. The tensor must come from the runtime of the
 * trainer or session, and work of other libraries that writes it must be
 * complete before the call. */
typedef struct kiln_device_input {
  const char* name;
  struct kiln_tensor* tensor;
} kiln_device_input;

typedef struct kiln_grad_stats {
  double global_norm;
  float max_abs;
  int64_t nonfinite_count;
} kiln_grad_stats;

typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_module kiln_module;
typedef struct kiln_session kiln_session;
typedef struct kiln_trainer kiln_trainer;
typedef struct kiln_outputs kiln_outputs;
typedef struct kiln_tensor kiln_tensor;

/* --- Errors and versions ------------------------------------------------ */

/* The message of this thread's last failed call ("" if none). Valid until
 * this thread's next call. */
const char* kiln_last_error(void);
/* "major.minor.patch" of this library. */
const char* kiln_version(void);
/* The artifact format versions this library reads: oldest .. newest. */
uint32_t kiln_artifact_format_version(void);
uint32_t kiln_artifact_oldest_format_version(void);

/* --- Runtime ------------------------------------------------------------ */

/* Opens GPU `device`: KILN_UNAVAILABLE without a driver. */
kiln_status kiln_runtime_open(int device, kiln_runtime** out);
void kiln_runtime_close(kiln_runtime* runtime);

/* --- Device tensors ------------------------------------------------------ */

/* A new dense tensor of `dtype` and `shape` (`rank` dims; null for rank 0)
 * in the device memory of `runtime`, filled with zeros. It keeps what it
 * needs of the runtime alive: closing the runtime first is allowed. */
kiln_status kiln_tensor_new(kiln_runtime* runtime, kiln_dtype dtype,
                            int32_t rank, const int64_t* shape,
                            kiln_tensor** out);
void kiln_tensor_close(kiln_tensor* tensor);
/* Its dtype, shape and byte size (`name` is "", `role` KILN_ROLE_IO). */
kiln_status kiln_tensor_describe(kiln_tensor* tensor, kiln_tensor_info* info);
/* Host -> device and device -> host copies of all of its `size_bytes`
 * bytes; they return when the copy is done. */
kiln_status kiln_tensor_write(kiln_tensor* tensor, const void* src,
                              size_t size_bytes);
kiln_status kiln_tensor_read(kiln_tensor* tensor, void* dst,
                             size_t size_bytes);
/* Its device address (a CUdeviceptr) and byte size, for other CUDA
 * libraries: valid until the tensor is closed. */
kiln_status kiln_tensor_device_pointer(kiln_tensor* tensor, uint64_t* pointer,
                                       size_t* size_bytes);

/* --- Module: a loaded artifact ------------------------------------------ */

kiln_status kiln_module_load(kiln_runtime* runtime, const char* path,
                             kiln_module** out);
kiln_status kiln_module_load_from_memory(kiln_runtime* runtime,
                                         const void* data, size_t size,
                                         kiln_module** out);
void kiln_module_close(kiln_module* module);

kiln_status kiln_module_entry_count(kiln_module* module, size_t* count);
kiln_status kiln_module_entry_name(kiln_module* module, size_t index,
                                   const char** name);
/* All inputs (or outputs) of `entry`, resident ones with their roles. */
kiln_status kiln_module_input_count(kiln_module* module, const char* entry,
                                    size_t* count);
kiln_status kiln_module_input(kiln_module* module, const char* entry,
                              size_t index, kiln_tensor_info* info);
kiln_status kiln_module_output_count(kiln_module* module, const char* entry,
                                     size_t* count);
kiln_status kiln_module_output(kiln_module* module, const char* entry,
                               size_t index, kiln_tensor_info* info);
/* Resident buffers: parameters, gradients, optimizer state, ... */
kiln_status kiln_module_buffer_count(kiln_module* module, size_t* count);
kiln_status kiln_module_buffer(kiln_module* module, size_t index,
                               kiln_tensor_info* info);

/* --- Session: inference ------------------------------------------------- */

/* Parameters start from the artifact's initial values or initialisers
 * drawn with `seed`. */
kiln_status kiln_session_new(kiln_module* module, uint64_t seed,
                             kiln_session** out);
void kiln_session_close(kiln_session* session);
kiln_status kiln_session_run(kiln_session* session, const char* entry,
                             const kiln_input* inputs, size_t num_inputs,
                             kiln_outputs** out);
/* kiln_session_run with inputs given as host data and as device tensors;
 * a name may appear once in all. */
kiln_status kiln_session_run_device(kiln_session* session, const char* entry,
                                    const kiln_input* inputs,
                                    size_t num_inputs,
                                    const kiln_device_input* device_inputs,
                                    size_t num_device_inputs,
                                    kiln_outputs** out);
/* Parameters and state from a safetensors file (e.g. a checkpoint). */
kiln_status kiln_session_load_parameters(kiln_session* session,
                                         const char* path);
/* Copies the resident buffer `name` (e.g. a parameter) into `dst`. */
kiln_status kiln_session_read(kiln_session* session, const char* name,
                              void* dst, size_t size_bytes);

/* --- Outputs of a call (host copies) ------------------------------------ */

kiln_status kiln_outputs_count(kiln_outputs* outputs, size_t* count);
kiln_status kiln_outputs_info(kiln_outputs* outputs, size_t index,
                              kiln_tensor_info* info);
kiln_status kiln_outputs_read(kiln_outputs* outputs, const char* name,
                              void* dst, size_t size_bytes);
void kiln_outputs_free(kiln_outputs* outputs);

/* --- Trainer ------------------------------------------------------------ */

kiln_status kiln_trainer_new(kiln_module* module, uint64_t seed,
                             kiln_trainer** out);
void kiln_trainer_close(kiln_trainer* trainer);
/* One update with learning rate `lr`; `loss` may be null. */
kiln_status kiln_trainer_step(kiln_trainer* trainer, const kiln_input* inputs,
                              size_t num_inputs, float lr, float* loss);
/* Loss and gradients only; then the gradient tools, then apply_update. */
kiln_status kiln_trainer_forward_backward(kiln_trainer* trainer,
                                         const kiln_input* inputs,
                                         size_t num_inputs, float* loss);
kiln_status kiln_trainer_apply_update(kiln_trainer* trainer, float lr);
/* The loss function's outputs; nothing is updated. */
kiln_status kiln_trainer_forward(kiln_trainer* trainer,
                                 const kiln_input* inputs, size_t num_inputs,
                                 kiln_outputs** out);
/* The calls above with inputs given as host data and as device tensors
 * (kiln_device_input); a name may appear once in all. */
kiln_status kiln_trainer_step_device(kiln_trainer* trainer,
                                     const kiln_input* inputs,
                                     size_t num_inputs,
                                     const kiln_device_input* device_inputs,
                                     size_t num_device_inputs, float lr,
                                     float* loss);
kiln_status kiln_trainer_forward_backward_device(
    kiln_trainer* trainer, const kiln_input* inputs, size_t num_inputs,
    const kiln_device_input* device_inputs, size_t num_device_inputs,
    float* loss);
kiln_status kiln_trainer_forward_device(kiln_trainer* trainer,
                                        const kiln_input* inputs,
                                        size_t num_inputs,
                                        const kiln_device_input* device_inputs,
                                        size_t num_device_inputs,
                                        kiln_outputs** out);
/* Updates done so far. */
kiln_status kiln_trainer_step_count(kiln_trainer* trainer, int64_t* step);

/* Resident buffers by name (parameters "w", optimizer state "adam_m.w",
 * gradients "grad.w", ...): host copies in and out. */
kiln_status kiln_trainer_read(kiln_trainer* trainer, const char* name,
                              void* dst, size_t size_bytes);
kiln_status kiln_trainer_write(kiln_trainer* trainer, const char* name,
                               const void* src, size_t size_bytes);
/* The gradient of parameter `name` (or a gradient buffer by its own name). */
kiln_status kiln_trainer_read_gradient(kiln_trainer* trainer, const char* name,
                                       void* dst, size_t size_bytes);
kiln_status kiln_trainer_write_gradient(kiln_trainer* trainer,
                                        const char* name, const void* src,
                                        size_t size_bytes);

/* Gradient tools on every (f32) gradient, between forward_backward and
 * apply_update. clip_grad_norm returns the norm before clipping (`norm` may
 * be null). */
kiln_status kiln_trainer_clip_grad_norm(kiln_trainer* trainer,
                                        double max_norm, double* norm);
kiln_status kiln_trainer_clip_grad_value(kiln_trainer* trainer, float value);
kiln_status kiln_trainer_scale_grads(kiln_trainer* trainer, float scale);
kiln_status kiln_trainer_add_grad_noise(kiln_trainer* trainer, float stddev,
                                        uint64_t seed);
kiln_status kiln_trainer_grad_stats(kiln_trainer* trainer,
                                    kiln_grad_stats* stats);

/* Checkpoints (safetensors, written atomically). */
kiln_status kiln_trainer_save(kiln_trainer* trainer, const char* path);
kiln_status kiln_trainer_restore(kiln_trainer* trainer, const char* path);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_KILN_H_ */
