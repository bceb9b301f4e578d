// Tensor data in files beside the model (ONNX's external data, as
// torch.onnx.export writes weights): read at `location`, from `offset` for
// `length` bytes, inside the model's folder only.
// RUN: rm -rf %t && mkdir -p %t/model %t/inline
// RUN: python3 %S/Inputs/make_onnx_model.py mlp_mse %t/inline/mlp.onnx
// RUN: kiln-ref %t/inline/mlp.onnx --function loss --random-seed 7 --print > %t/inline.txt

// The same weights read from w1.bin, and from data/w.bin after 8 bytes:
// the same answers as the model that holds them.
// RUN: python3 %S/Inputs/make_onnx_model.py external %t/model/ext.onnx
// RUN: kiln-ref %t/model/ext.onnx --function loss --random-seed 7 --print > %t/ext.txt
// RUN: diff %t/inline.txt %t/ext.txt
// RUN: python3 %S/Inputs/make_onnx_model.py external_offset %t/model/offset.onnx
// RUN: kiln-ref %t/model/offset.onnx --function loss --random-seed 7 --print > %t/offset.txt
// RUN: diff %t/inline.txt %t/offset.txt
// RUN: kilnc %t/model/ext.onnx --trainable=all --train=sgd --emit=mlir --onnx-weights=%t/w.safetensors -o %t/ext.mlir
// RUN: kilnc %t/inline/mlp.onnx --trainable=all --train=sgd --emit=mlir --onnx-weights=%t/w_inline.safetensors -o %t/inline.mlir
// RUN: cmp %t/w.safetensors %t/w_inline.safetensors

// Files outside the model's folder, missing or too short, and unknown keys
// are errors at the tensor.
// RUN: python3 %S/Inputs/make_onnx_model.py external_escape %t/model/escape.onnx
// RUN: not kiln-opt %t/model/escape.onnx 2>&1 | FileCheck %s --check-prefix=ESCAPE
// ESCAPE: escape.onnx: initializer 'w1': error: its external data file '../w1.bin' leads out of the model's folder
// RUN: python3 %S/Inputs/make_onnx_model.py external_absolute %t/model/absolute.onnx
// RUN: not kiln-opt %t/model/absolute.onnx 2>&1 | FileCheck %s --check-prefix=ABSOLUTE
// ABSOLUTE: initializer 'w1': error: its external data file '/etc/hostname' is an absolute path; it must be named relative to the model's folder
// RUN: python3 %S/Inputs/make_onnx_model.py external_link %t/model/link.onnx
// RUN: echo outside > %t/outside.bin && ln -sf %t/outside.bin %t/model/link.bin
// RUN: not kilnc %t/model/link.onnx --inference 2>&1 | FileCheck %s --check-prefix=LINK
// LINK: initializer 'w1': error: its external data file 'link.bin' resolves to '{{.*}}outside.bin', outside the model's folder
// A sibling folder whose name begins with the model folder's is outside too.
// RUN: mkdir -p %t/model2 && echo sibling > %t/model2/w.bin && ln -sf %t/model2/w.bin %t/model/link.bin
// RUN: not kilnc %t/model/link.onnx --inference 2>&1 | FileCheck %s --check-prefix=SIBLING
// SIBLING: initializer 'w1': error: its external data file 'link.bin' resolves to '{{.*}}model2/w.bin', outside the model's folder
// RUN: python3 %S/Inputs/make_onnx_model.py external_missing %t/model/missing.onnx
// RUN: not kiln-opt %t/model/missing.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: initializer 'w1': error: cannot open its external data file '{{.*}}nowhere.bin': No such file or directory
// RUN: python3 %S/Inputs/make_onnx_model.py external_short %t/model/short.onnx
// RUN: not kiln-opt %t/model/short.onnx 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: initializer 'w1': error: its external data (offset 4, length 60) lies beyond the end of 'w1.bin', which holds 60 bytes
// RUN: python3 %S/Inputs/make_onnx_model.py external_key %t/model/key.onnx
// RUN: not kiln-opt %t/model/key.onnx 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: initializer 'w1': error: its external data has the key 'compression', which the importer does not know (location, offset, length, checksum)
// RUN: python3 %S/Inputs/make_onnx_model.py external_no_location %t/model/nolocation.onnx
// RUN: not kiln-opt %t/model/nolocation.onnx 2>&1 | FileCheck %s --check-prefix=NOLOC
// NOLOC: initializer 'w1': error: keeps its data in an external file but names none (no 'location')
// RUN: python3 %S/Inputs/make_onnx_model.py external_length %t/model/length.onnx
// RUN: not kiln-opt %t/model/length.onnx 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: initializer 'w1': error: initializer 'w1' holds 8 bytes in its external data but its dims [3, 5] of FLOAT need 60 bytes
