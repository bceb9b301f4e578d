"""Runs a kiln artifact from Python through the C API (ctypes, libkiln.so):
its entry forward on a fixed batch of f32 inputs x and y, then one training
step from host memory and the same step from device tensors.
  python3 train.py LIBKILN_SO ARTIFACT
"""
import ctypes
import sys


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("role", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 16), ("size_bytes", ctypes.c_size_t)]


class Input(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("data", ctypes.c_void_p), ("size_bytes", ctypes.c_size_t)]


class DeviceInput(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("tensor", ctypes.c_void_p)]


def main(library, artifact):
    kiln = ctypes.CDLL(library)
    kiln.kiln_last_error.restype = ctypes.c_char_p
    kiln.kiln_version.restype = ctypes.c_char_p
    kiln.kiln_trainer_step.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(Input), ctypes.c_size_t,
        ctypes.c_float, ctypes.POINTER(ctypes.c_float)]

    def check(status, what):
        if status != 0:
            sys.exit("%s: %s" % (what, kiln.kiln_last_error().decode()))

    print("kiln", kiln.kiln_version().decode())
    rt, module = ctypes.c_void_p(), ctypes.c_void_p()
    check(kiln.kiln_runtime_open(0, ctypes.byref(rt)), "open")
    check(kiln.kiln_module_load(rt, artifact.encode(), ctypes.byref(module)),
          "load")

    # The forward entry's inputs x and y, filled with a fixed pattern.
    keep, inputs = [], []
    count = ctypes.c_size_t()
    check(kiln.kiln_module_input_count(module, b"forward", ctypes.byref(count)),
          "inputs")
    for i in range(count.value):
        info = TensorInfo()
        check(kiln.kiln_module_input(module, b"forward", ctypes.c_size_t(i),
                                     ctypes.byref(info)), "input")
        if info.name not in (b"x", b"y"):
            continue
        n = info.size_bytes // 4
        data = (ctypes.c_float * n)(*[((e * 37) % 17) / 17 - 0.5
                                      for e in range(n)])
        shape = (ctypes.c_int64 * 16)(*info.shape)
        keep += [data, shape]
        inputs.append(Input(info.name, 0, info.rank, shape,
                            ctypes.cast(data, ctypes.c_void_p), n * 4))
    array = (Input * len(inputs))(*inputs)

    session, outputs = ctypes.c_void_p(), ctypes.c_void_p()
    check(kiln.kiln_session_new(module, ctypes.c_uint64(0),
                                ctypes.byref(session)), "session")
    check(kiln.kiln_session_run(session, b"forward", array,
                                ctypes.c_size_t(len(inputs)),
                                ctypes.byref(outputs)), "forward")
    loss = ctypes.c_float()
    check(kiln.kiln_outputs_read(outputs, b"loss", ctypes.byref(loss),
                                 ctypes.c_size_t(4)), "read loss")
    print("forward loss %.6f" % loss.value)

    trainer, stepped = ctypes.c_void_p(), ctypes.c_float()
    check(kiln.kiln_trainer_new(module, ctypes.c_uint64(0),
                                ctypes.byref(trainer)), "trainer")
    check(kiln.kiln_trainer_step(trainer, array, len(inputs), 0.01,
                                 ctypes.byref(stepped)), "step")
    print("step 1 loss %.6f" % stepped.value)
    if abs(stepped.value - loss.value) > 1e-5 * max(1.0, abs(loss.value)):
        sys.exit("the first step's loss differs from forward's")
    bad = kiln.kiln_trainer_step(trainer, array, 1, 0.01, None)
    if bad == 0:
        sys.exit("a step without y succeeded")
    print("missing input: status %d: %s" % (bad, kiln.kiln_last_error().decode()))

    # The same first step from device tensors: the same loss, bit for bit.
    tensors = []
    for host in inputs:
        tensor = ctypes.c_void_p()
        check(kiln.kiln_tensor_new(rt, host.dtype, host.rank, host.shape,
                                   ctypes.byref(tensor)), "tensor")
        check(kiln.kiln_tensor_write(tensor, ctypes.c_void_p(host.data),
                                     ctypes.c_size_t(host.size_bytes)),
              "write tensor")
        tensors.append(tensor)
    device = (DeviceInput * len(tensors))(
        *[DeviceInput(host.name, t) for host, t in zip(inputs, tensors)])
    device_fed, device_loss = ctypes.c_void_p(), ctypes.c_float()
    check(kiln.kiln_trainer_new(module, ctypes.c_uint64(0),
                                ctypes.byref(device_fed)), "trainer")
    check(kiln.kiln_trainer_step_device(
        device_fed, None, ctypes.c_size_t(0), device,
        ctypes.c_size_t(len(tensors)), ctypes.c_float(0.01),
        ctypes.byref(device_loss)), "step from device tensors")
    print("device step 1 loss %.6f" % device_loss.value)
    if device_loss.value != stepped.value:
        sys.exit("device tensors gave another loss than host memory")
    for tensor in tensors:
        kiln.kiln_tensor_close(tensor)
    kiln.kiln_trainer_close(device_fed)
    for close, handle in ((kiln.kiln_outputs_free, outputs),
                          (kiln.kiln_trainer_close, trainer),
                          (kiln.kiln_session_close, session),
                          (kiln.kiln_module_close, module),
                          (kiln.kiln_runtime_close, rt)):
        close(handle)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: train.py LIBKILN_SO ARTIFACT")
    main(sys.argv[1], sys.argv[2])
