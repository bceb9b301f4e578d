// The C API's trainer: steps, resident buffers, gradient tools, checkpoints.
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/c/convert.h"
#include "runtime/c/handles.h"
#include "runtime/c/objects.h"

using kiln::c_api::Call;
using kiln::c_api::Lookup;
using kiln::c_api::NotNull;
using kiln::c_api::Text;

namespace {

// Runs `body` on the trainer behind `handle`, one call at a time.
kiln_status WithTrainer(
    kiln_trainer* handle,
    const std::function<absl::Status(kiln_trainer&)>& body) {
  return Call([&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(auto trainer, Lookup(handle, "trainer"));
    absl::MutexLock lock(&trainer->mutex);
    return body(*trainer);
  });
}

// Runs `body` on the trainer behind `handle` with the call's inputs checked
// and bound.
kiln_status WithInputs(
    kiln_trainer* handle, const kiln_input* inputs, size_t num_inputs,
    const kiln_device_input* device_inputs, size_t num_device_inputs,
    const std::function<absl::Status(kiln_trainer&, const kiln::Inputs&)>&
        body) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(
        kiln::Inputs bound,
        kiln::c_api::ToInputs(inputs, num_inputs, device_inputs,
                              num_device_inputs, *trainer.module->shared));
    return body(trainer, bound);
  });
}

// A resident buffer of the trainer, by the C++ accessor `get`.
using Getter = absl::StatusOr<kiln::Tensor> (kiln::Trainer::*)(
    const std::string&) const;

kiln_status ReadBuffer(kiln_trainer* handle, Getter get, const char* name,
                       void* dst, size_t size_bytes) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(std::string buffer, Text(name, "name"));
    KILN_ASSIGN_OR_RETURN(kiln::Tensor tensor,
                          ((*trainer.trainer).*get)(buffer));
    return kiln::c_api::ReadTensor(*trainer.module->shared, buffer, tensor,
                                   dst, size_bytes);
  });
}

kiln_status WriteBuffer(kiln_trainer* handle, Getter get, const char* name,
                        const void* src, size_t size_bytes) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(std::string buffer, Text(name, "name"));
    KILN_ASSIGN_OR_RETURN(kiln::Tensor tensor,
                          ((*trainer.trainer).*get)(buffer));
    return kiln::c_api::WriteTensor(*trainer.module->shared, buffer, tensor,
                                    src, size_bytes);
  });
}

}  // namespace

extern "C" {

kiln_status kiln_trainer_new(kiln_module* handle, uint64_t seed,
                             kiln_trainer** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    kiln::TrainerOptions options;
    options.seed = seed;
    std::unique_ptr<kiln::Trainer> trainer;
    {
      absl::MutexLock lock(&module->shared->mutex);
      KILN_ASSIGN_OR_RETURN(trainer, module->module->NewTrainer(options));
    }
    auto made = std::make_shared<kiln_trainer>();
    made->module = std::move(module);
    made->trainer = std::move(trainer);
    *out = kiln::c_api::Register(std::move(made));
    return absl::OkStatus();
  });
}

void kiln_trainer_close(kiln_trainer* trainer) {
  kiln::c_api::CloseHandle(trainer);
}

kiln_status kiln_trainer_step(kiln_trainer* trainer, const kiln_input* inputs,
                              size_t num_inputs, float lr, float* loss) {
  return kiln_trainer_step_device(trainer, inputs, num_inputs, nullptr, 0, lr,
                                  loss);
}

kiln_status kiln_trainer_step_device(kiln_trainer* handle,
                                     const kiln_input* inputs,
                                     size_t num_inputs,
                                     const kiln_device_input* device_inputs,
                                     size_t num_device_inputs, float lr,
                                     float* loss) {
  return WithInputs(
      handle, inputs, num_inputs, device_inputs, num_device_inputs,
      [&](kiln_trainer& trainer, const kiln::Inputs& bound) -> absl::Status {
        KILN_ASSIGN_OR_RETURN(float value, trainer.trainer->Step(bound, lr));
        if (loss != nullptr) *loss = value;
        return absl::OkStatus();
      });
}

kiln_status kiln_trainer_forward_backward(kiln_trainer* trainer,
                                         const kiln_input* inputs,
                                         size_t num_inputs, float* loss) {
  return kiln_trainer_forward_backward_device(trainer, inputs, num_inputs,
                                              nullptr, 0, loss);
}

kiln_status kiln_trainer_forward_backward_device(
    kiln_trainer* handle, const kiln_input* inputs, size_t num_inputs,
    const kiln_device_input* device_inputs, size_t num_device_inputs,
    float* loss) {
  return WithInputs(
      handle, inputs, num_inputs, device_inputs, num_device_inputs,
      [&](kiln_trainer& trainer, const kiln::Inputs& bound) -> absl::Status {
        KILN_ASSIGN_OR_RETURN(float value,
                              trainer.trainer->ForwardBackward(bound));
        if (loss != nullptr) *loss = value;
        return absl::OkStatus();
      });
}

kiln_status kiln_trainer_apply_update(kiln_trainer* handle, float lr) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) {
    return trainer.trainer->ApplyUpdate(lr);
  });
}

kiln_status kiln_trainer_forward(kiln_trainer* trainer,
                                 const kiln_input* inputs, size_t num_inputs,
                                 kiln_outputs** out) {
  return kiln_trainer_forward_device(trainer, inputs, num_inputs, nullptr, 0,
                                     out);
}

kiln_status kiln_trainer_forward_device(kiln_trainer* handle,
                                        const kiln_input* inputs,
                                        size_t num_inputs,
                                        const kiln_device_input* device_inputs,
                                        size_t num_device_inputs,
                                        kiln_outputs** out) {
  return WithInputs(
      handle, inputs, num_inputs, device_inputs, num_device_inputs,
      [&](kiln_trainer& trainer, const kiln::Inputs& bound) -> absl::Status {
        KILN_RETURN_IF_ERROR(NotNull(out, "out"));
        KILN_ASSIGN_OR_RETURN(kiln::Outputs outputs,
                              trainer.trainer->Forward(bound));
        KILN_ASSIGN_OR_RETURN(
            auto copies,
            kiln::c_api::CopyOutputs(*trainer.module->shared, outputs));
        *out = kiln::c_api::Register(
            std::shared_ptr<kiln_outputs>(std::move(copies)));
        return absl::OkStatus();
      });
}

kiln_status kiln_trainer_step_count(kiln_trainer* handle, int64_t* step) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(step, "step"));
    *step = trainer.trainer->step();
    return absl::OkStatus();
  });
}

kiln_status kiln_trainer_read(kiln_trainer* trainer, const char* name,
                              void* dst, size_t size_bytes) {
  return ReadBuffer(trainer, &kiln::Trainer::Buffer, name, dst, size_bytes);
}

kiln_status kiln_trainer_write(kiln_trainer* trainer, const char* name,
                               const void* src, size_t size_bytes) {
  return WriteBuffer(trainer, &kiln::Trainer::Buffer, name, src, size_bytes);
}

kiln_status kiln_trainer_read_gradient(kiln_trainer* trainer, const char* name,
                                       void* dst, size_t size_bytes) {
  return ReadBuffer(trainer, &kiln::Trainer::Gradient, name, dst, size_bytes);
}

kiln_status kiln_trainer_write_gradient(kiln_trainer* trainer,
                                        const char* name, const void* src,
                                        size_t size_bytes) {
  return WriteBuffer(trainer, &kiln::Trainer::Gradient, name, src, size_bytes);
}

kiln_status kiln_trainer_clip_grad_norm(kiln_trainer* handle, double max_norm,
                                        double* norm) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(double before,
                          trainer.trainer->ClipGradNorm(max_norm));
    if (norm != nullptr) *norm = before;
    return absl::OkStatus();
  });
}

kiln_status kiln_trainer_clip_grad_value(kiln_trainer* handle, float value) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) {
    return trainer.trainer->ClipGradValue(value);
  });
}

kiln_status kiln_trainer_scale_grads(kiln_trainer* handle, float scale) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) {
    return trainer.trainer->ScaleGrads(scale);
  });
}

kiln_status kiln_trainer_add_grad_noise(kiln_trainer* handle, float stddev,
                                        uint64_t seed) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) {
    return trainer.trainer->AddGradNoise(stddev, seed);
  });
}

kiln_status kiln_trainer_grad_stats(kiln_trainer* handle,
                                    kiln_grad_stats* stats) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(stats, "stats"));
    KILN_ASSIGN_OR_RETURN(kiln::GradientStats got, trainer.trainer->GradStats());
    stats->global_norm = got.global_norm;
    stats->max_abs = got.max_abs;
    stats->nonfinite_count = got.nonfinite_count;
    return absl::OkStatus();
  });
}

kiln_status kiln_trainer_save(kiln_trainer* handle, const char* path) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(std::string file, Text(path, "path"));
    return trainer.trainer->Save(file);
  });
}

kiln_status kiln_trainer_restore(kiln_trainer* handle, const char* path) {
  return WithTrainer(handle, [&](kiln_trainer& trainer) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(std::string file, Text(path, "path"));
    return trainer.trainer->Restore(file);
  });
}

}  // extern "C"
