// The importer follows each op's definition at the model's opset up to the
// newest it knows (27), and the file format up to IR version 13; what is
// newer is refused as a whole, an op older than its first definition by name.
// RUN: python3 %S/Inputs/make_onnx_model.py newer_opset %t.opset.onnx
// RUN: not kiln-opt %t.opset.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
// OPSET: error: the model imports opset 28 of the default ONNX domain; the importer knows the ONNX ops up to opset 27
// RUN: python3 %S/Inputs/make_onnx_model.py newer_ir %t.ir.onnx
// RUN: not kilnc %t.ir.onnx --inference 2>&1 | FileCheck %s --check-prefix=IR
// IR: error: the model has ONNX IR version 14; the importer reads IR versions up to 13
// RUN: python3 %S/Inputs/make_onnx_model.py gelu_opset17 %t.gelu.onnx
// RUN: not kiln-opt %t.gelu.onnx 2>&1 | FileCheck %s --check-prefix=GELU
// GELU: node 'gelu0' (Gelu): error: ONNX op 'Gelu' is defined from opset 20 on, and the node's default-domain opset is 17

// Resize: nearest and linear onto kiln.resize, with the version's defaults
// (half_pixel, round_prefer_floor); cubic, tf_crop_and_resize and
// antialiased linear downsampling are refused by name.
// RUN: python3 %S/Inputs/make_onnx_model.py resize_linear %t.linear.onnx
// RUN: kiln-opt %t.linear.onnx | FileCheck %s --check-prefix=LINEAR
// LINEAR: kiln.resize %{{.*}} mode = linear coordinates = half_pixel scales = [1.0, 1.0, 2.0, 2.0] : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
// RUN: python3 %S/Inputs/make_onnx_model.py resize_round_up %t.round.onnx
// RUN: kiln-opt %t.round.onnx | FileCheck %s --check-prefix=ROUND
// ROUND: kiln.resize %{{.*}} mode = nearest coordinates = asymmetric rounding = round_prefer_ceil scales = [1.0, 1.0, 2.0, 2.0]
// RUN: python3 %S/Inputs/make_onnx_model.py resize_cubic %t.cubic.onnx
// RUN: not kiln-opt %t.cubic.onnx 2>&1 | FileCheck %s --check-prefix=CUBIC
// CUBIC: node 'up0' (Resize): error: ONNX Resize-18 (opset 18): kiln does not support mode = 'cubic' (kiln resizes by nearest neighbour or linear interpolation)
// RUN: python3 %S/Inputs/make_onnx_model.py resize_crop %t.crop.onnx
// RUN: not kiln-opt %t.crop.onnx 2>&1 | FileCheck %s --check-prefix=CROP
// CROP: error: ONNX Resize-18 (opset 18): kiln does not support coordinate_transformation_mode = 'tf_crop_and_resize'
// RUN: python3 %S/Inputs/make_onnx_model.py resize_antialias %t.antialias.onnx
// RUN: not kiln-opt %t.antialias.onnx 2>&1 | FileCheck %s --check-prefix=ANTIALIAS
// ANTIALIAS: node 'up0' (Resize): error: ONNX Resize-18 (opset 18): kiln does not support antialias = 1 when downsampling in linear mode

// Local functions are inlined; one that calls itself is an error at the
// call, naming the calls it came through.
// RUN: python3 %S/Inputs/make_onnx_model.py recursive_function %t.rec.onnx
// RUN: not kiln-opt %t.rec.onnx 2>&1 | FileCheck %s --check-prefix=REC
// REC: node 'call_f' (f) of function 'g' called by node 'call_g' (g) of function 'f' called by node 'f0' (f): error: the function 'f' calls itself, which cannot be inlined
