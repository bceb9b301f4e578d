// A model larger than the GPU: kilnc warns when the artifact needs more
// device memory than the target has, and kiln-run refuses it before it
// allocates or initialises anything, naming the buffer and its bytes (exit
// 1; it built host copies of every buffer first and died of std::bad_alloc).
// The run is on the CPU stand-in driver (1 GiB of device memory), in a
// shell whose memory is capped so that a regression fails instead of
// exhausting the machine.
// RUN: kilnc %s --inference --function big -o %t.big.kiln 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: warning
// RUN: kilnc %s --inference --function big --device-memory=16GiB -o %t.big16.kiln 2>&1 | FileCheck %s --check-prefix=WARN16
// WARN16: kilnc: warning: the artifact needs 40000000512 bytes of device memory, more than the 17179869184 bytes of --device-memory: resident buffers 40000000000 (the largest 'w', 40000000000), the largest entry's arena 512; kiln-run will refuse it there
// RUN: kilnc %S/Inputs/huge_parameter.mlir --inference --function huge -o %t.huge.kiln 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: kilnc: warning: the artifact needs {{[0-9]+}} bytes of device memory, more than the 151397597184 bytes of the largest sm_90 GPU (H200): resident buffers 160000000000 (the largest 'w', 160000000000)
// RUN: not kilnc %s --inference --function big --device-memory=lots -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: --device-memory

// RUN: python3 -c "import json, struct, sys; h = json.dumps({'x': {'dtype': 'F32', 'shape': [4], 'data_offsets': [0, 16]}}).encode(); open(sys.argv[1], 'wb').write(struct.pack('<Q', len(h)) + h + struct.pack('<4f', 1, 2, 3, 4))" %t.x.safetensors
// RUN: env KILN_LIBCUDA_PATH=%fake_libcuda sh -c 'ulimit -v 8000000; kiln-run "$0" --inputs "$1"; echo "exit status $?"' %t.big.kiln %t.x.safetensors 2>&1 | FileCheck %s --check-prefix=REFUSED
// REFUSED-NOT: bad_alloc
// REFUSED: kiln-run: RESOURCE_EXHAUSTED: resident buffer 'w' (40000000000 bytes) is larger than the whole memory of {{.*}} (device 0) (1073741824 bytes)
// REFUSED: exit status 1

func.func @big(%w: tensor<100000x100000xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w"},
               %x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<1x4xf32> {kiln.name = "y"}) {
  %s = kiln.slice %w start = [0, 0] limit = [1, 4] step = [1, 1] : tensor<100000x100000xf32>
  %y = kiln.add %s, %x : tensor<1x4xf32>, tensor<4xf32>
  return %y : tensor<1x4xf32>
}
