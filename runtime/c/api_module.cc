// The C API's errors, versions, runtime, module, session and outputs.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact.h"
#include "runtime/c/convert.h"
#include "runtime/c/handles.h"
#include "runtime/c/objects.h"

using kiln::c_api::Call;
using kiln::c_api::Lookup;
using kiln::c_api::NotNull;
using kiln::c_api::Register;
using kiln::c_api::Text;

namespace {

#define KILN_C_STR_(x) #x
#define KILN_C_STR(x) KILN_C_STR_(x)

absl::StatusOr<const kiln::artifact::Entry*> FindEntry(
    const kiln_module& module, const char* name) {
  KILN_ASSIGN_OR_RETURN(std::string entry, Text(name, "entry"));
  const kiln::artifact::Artifact& artifact = module.module->artifact();
  std::vector<std::string> names;
  for (const auto& candidate : artifact.entries) {
    if (candidate.name == entry) return &candidate;
    names.push_back(candidate.name);
  }
  return absl::NotFoundError(absl::StrCat("no entry ", entry,
                                          "; the artifact has ",
                                          absl::StrJoin(names, ", ")));
}

absl::Status IndexInRange(size_t index, size_t size, const char* what) {
  if (index >= size) {
    return absl::OutOfRangeError(
        absl::StrCat(what, " index ", index, " is not below ", size));
  }
  return absl::OkStatus();
}

// The count and the index-th binding of an entry's inputs or outputs.
using Bindings = std::vector<kiln::artifact::TensorBinding>;
kiln_status BindingCount(kiln_module* handle, const char* entry,
                         Bindings kiln::artifact::Entry::*list,
                         size_t* count) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(count, "count"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    KILN_ASSIGN_OR_RETURN(auto* found, FindEntry(*module, entry));
    *count = (found->*list).size();
    return absl::OkStatus();
  });
}

kiln_status BindingInfo(kiln_module* handle, const char* entry, size_t index,
                        Bindings kiln::artifact::Entry::*list,
                        kiln_tensor_info* info) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(info, "info"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    KILN_ASSIGN_OR_RETURN(auto* found, FindEntry(*module, entry));
    KILN_RETURN_IF_ERROR(IndexInRange(index, (found->*list).size(), "binding"));
    *info = kiln::c_api::Describe(module->module->artifact(),
                                  (found->*list)[index]);
    return absl::OkStatus();
  });
}

// Loads with `load` (under the runtime's lock) and registers the module.
absl::StatusOr<kiln_module*> LoadModule(
    std::shared_ptr<kiln::c_api::SharedRuntime> shared,
    const std::function<absl::StatusOr<std::unique_ptr<kiln::Module>>(
        kiln::Runtime&)>& load) {
  std::unique_ptr<kiln::Module> loaded;
  {
    absl::MutexLock lock(&shared->mutex);
    KILN_ASSIGN_OR_RETURN(loaded, load(*shared->runtime));
  }
  auto module = std::make_shared<kiln_module>();
  module->shared = std::move(shared);
  module->module = std::move(loaded);
  return Register(std::move(module));
}

}  // namespace

extern "C" {

const char* kiln_last_error(void) { return kiln::c_api::LastError(); }

const char* kiln_version(void) {
  return KILN_C_STR(KILN_VERSION_MAJOR) "." KILN_C_STR(
      KILN_VERSION_MINOR) "." KILN_C_STR(KILN_VERSION_PATCH);
}

uint32_t kiln_artifact_format_version(void) {
  return kiln::artifact::kFormatVersion;
}

uint32_t kiln_artifact_oldest_format_version(void) {
  return kiln::artifact::kOldestFormatVersion;
}

kiln_status kiln_runtime_open(int device, kiln_runtime** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(device));
    auto handle = std::make_shared<kiln_runtime>();
    handle->shared = std::make_shared<kiln::c_api::SharedRuntime>();
    handle->shared->runtime = std::move(runtime);
    *out = Register(std::move(handle));
    return absl::OkStatus();
  });
}

void kiln_runtime_close(kiln_runtime* runtime) {
  kiln::c_api::CloseHandle(runtime);
}

kiln_status kiln_module_load(kiln_runtime* handle, const char* path,
                             kiln_module** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto runtime, Lookup(handle, "runtime"));
    KILN_ASSIGN_OR_RETURN(std::string file, Text(path, "path"));
    KILN_ASSIGN_OR_RETURN(
        *out, LoadModule(runtime->shared, [&](kiln::Runtime& rt) {
          return rt.Load(file);
        }));
    return absl::OkStatus();
  });
}

kiln_status kiln_module_load_from_memory(kiln_runtime* handle,
                                         const void* data, size_t size,
                                         kiln_module** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto runtime, Lookup(handle, "runtime"));
    if (size > 0) KILN_RETURN_IF_ERROR(NotNull(data, "data"));
    absl::string_view bytes(static_cast<const char*>(data), size);
    KILN_ASSIGN_OR_RETURN(
        *out, LoadModule(runtime->shared, [&](kiln::Runtime& rt) {
          return rt.LoadFromMemory(bytes);
        }));
    return absl::OkStatus();
  });
}

void kiln_module_close(kiln_module* module) { kiln::c_api::CloseHandle(module); }

kiln_status kiln_module_entry_count(kiln_module* handle, size_t* count) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(count, "count"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    *count = module->module->artifact().entries.size();
    return absl::OkStatus();
  });
}

kiln_status kiln_module_entry_name(kiln_module* handle, size_t index,
                                   const char** name) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(name, "name"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    const auto& entries = module->module->artifact().entries;
    KILN_RETURN_IF_ERROR(IndexInRange(index, entries.size(), "entry"));
    *name = entries[index].name.c_str();
    return absl::OkStatus();
  });
}

kiln_status kiln_module_input_count(kiln_module* module, const char* entry,
                                    size_t* count) {
  return BindingCount(module, entry, &kiln::artifact::Entry::inputs, count);
}

kiln_status kiln_module_input(kiln_module* module, const char* entry,
                              size_t index, kiln_tensor_info* info) {
  return BindingInfo(module, entry, index, &kiln::artifact::Entry::inputs,
                     info);
}

kiln_status kiln_module_output_count(kiln_module* module, const char* entry,
                                     size_t* count) {
  return BindingCount(module, entry, &kiln::artifact::Entry::outputs, count);
}

kiln_status kiln_module_output(kiln_module* module, const char* entry,
                               size_t index, kiln_tensor_info* info) {
  return BindingInfo(module, entry, index, &kiln::artifact::Entry::outputs,
                     info);
}

kiln_status kiln_module_buffer_count(kiln_module* handle, size_t* count) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(count, "count"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    *count = module->module->artifact().resident_buffers.size();
    return absl::OkStatus();
  });
}

kiln_status kiln_module_buffer(kiln_module* handle, size_t index,
                               kiln_tensor_info* info) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(info, "info"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    const auto& buffers = module->module->artifact().resident_buffers;
    KILN_RETURN_IF_ERROR(IndexInRange(index, buffers.size(), "buffer"));
    const auto& buffer = buffers[index];
    *info = kiln::c_api::Describe(buffer.name, buffer.dtype, buffer.shape,
                                  static_cast<kiln_role>(buffer.role));
    return absl::OkStatus();
  });
}

kiln_status kiln_session_new(kiln_module* handle, uint64_t seed,
                             kiln_session** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto module, Lookup(handle, "module"));
    kiln::SessionOptions options;
    options.seed = seed;
    std::unique_ptr<kiln::Session> session;
    {
      absl::MutexLock lock(&module->shared->mutex);
      KILN_ASSIGN_OR_RETURN(session, module->module->NewSession(options));
    }
    auto made = std::make_shared<kiln_session>();
    made->module = std::move(module);
    made->session = std::move(session);
    *out = Register(std::move(made));
    return absl::OkStatus();
  });
}

void kiln_session_close(kiln_session* session) {
  kiln::c_api::CloseHandle(session);
}

kiln_status kiln_session_run(kiln_session* session, const char* entry,
                             const kiln_input* inputs, size_t num_inputs,
                             kiln_outputs** out) {
  return kiln_session_run_device(session, entry, inputs, num_inputs, nullptr,
                                 0, out);
}

kiln_status kiln_session_run_device(kiln_session* handle, const char* entry,
                                    const kiln_input* inputs,
                                    size_t num_inputs,
                                    const kiln_device_input* device_inputs,
                                    size_t num_device_inputs,
                                    kiln_outputs** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto session, Lookup(handle, "session"));
    KILN_ASSIGN_OR_RETURN(std::string name, Text(entry, "entry"));
    KILN_ASSIGN_OR_RETURN(
        kiln::Inputs bound,
        kiln::c_api::ToInputs(inputs, num_inputs, device_inputs,
                              num_device_inputs, *session->module->shared));
    absl::MutexLock lock(&session->mutex);
    KILN_ASSIGN_OR_RETURN(kiln::Outputs outputs,
                          session->session->Run(name, bound));
    KILN_ASSIGN_OR_RETURN(
        auto copies,
        kiln::c_api::CopyOutputs(*session->module->shared, outputs));
    *out = Register(std::shared_ptr<kiln_outputs>(std::move(copies)));
    return absl::OkStatus();
  });
}

kiln_status kiln_session_load_parameters(kiln_session* handle,
                                         const char* path) {
  return Call([&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(auto session, Lookup(handle, "session"));
    KILN_ASSIGN_OR_RETURN(std::string file, Text(path, "path"));
    absl::MutexLock lock(&session->mutex);
    return session->session->LoadParameters(file);
  });
}

kiln_status kiln_session_read(kiln_session* handle, const char* name,
                              void* dst, size_t size_bytes) {
  return Call([&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(auto session, Lookup(handle, "session"));
    KILN_ASSIGN_OR_RETURN(std::string buffer, Text(name, "name"));
    absl::MutexLock lock(&session->mutex);
    KILN_ASSIGN_OR_RETURN(kiln::Tensor tensor, session->session->Buffer(buffer));
    return kiln::c_api::ReadTensor(*session->module->shared, buffer, tensor,
                                   dst, size_bytes);
  });
}

kiln_status kiln_outputs_count(kiln_outputs* handle, size_t* count) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(count, "count"));
    KILN_ASSIGN_OR_RETURN(auto outputs, Lookup(handle, "outputs"));
    *count = outputs->names.size();
    return absl::OkStatus();
  });
}

kiln_status kiln_outputs_info(kiln_outputs* handle, size_t index,
                              kiln_tensor_info* info) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(info, "info"));
    KILN_ASSIGN_OR_RETURN(auto outputs, Lookup(handle, "outputs"));
    KILN_RETURN_IF_ERROR(IndexInRange(index, outputs->names.size(), "output"));
    const kiln::HostTensor& tensor = outputs->tensors[index];
    *info = kiln::c_api::Describe(outputs->names[index], tensor.dtype,
                                  tensor.shape, KILN_ROLE_IO);
    return absl::OkStatus();
  });
}

kiln_status kiln_outputs_read(kiln_outputs* handle, const char* name,
                              void* dst, size_t size_bytes) {
  return Call([&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(auto outputs, Lookup(handle, "outputs"));
    KILN_ASSIGN_OR_RETURN(std::string wanted, Text(name, "name"));
    for (size_t i = 0; i < outputs->names.size(); ++i) {
      if (outputs->names[i] != wanted) continue;
      const auto& data = outputs->tensors[i].data;
      KILN_RETURN_IF_ERROR(
          kiln::c_api::CheckSize(wanted, data.size(), size_bytes, dst));
      if (!data.empty()) std::memcpy(dst, data.data(), data.size());
      return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat(
        "no output ", wanted, "; there are ",
        absl::StrJoin(outputs->names, ", ")));
  });
}

void kiln_outputs_free(kiln_outputs* outputs) {
  kiln::c_api::CloseHandle(outputs);
}

}  // extern "C"
