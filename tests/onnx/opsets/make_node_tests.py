#!/usr/bin/python3
"""Writes ONNX node tests of the opsets newer than Debian's test data (18 to
21), in the layout of ONNX's backend test data, for onnx_backend_runner:

    make_node_tests.py OUTDIR

Each test is a folder with model.onnx (written with python3-onnx's helper
API at the opset and IR version given, which its own checker need not know)
and test_data_set_0/ holding input_<i>.pb and output_<i>.pb, the expected
outputs computed here in float64 with numpy from fresh random inputs (the
seed is printed). Besides the reworked ops it writes a model whose weights
are an external data file and models that call local functions. Prints the
number of tests written.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

SEED = int.from_bytes(os.urandom(4), "little")
RNG = np.random.default_rng(SEED)

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT,
             np.dtype(np.int64): TensorProto.INT64,
             np.dtype(np.bool_): TensorProto.BOOL}


def rand(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def ints(*values):
    return np.array(values, dtype=np.int64)


class Test:
    """One model: nodes, data inputs, initializers and expected outputs."""

    def __init__(self, name, opset, nodes, inputs, outputs, initializers=None,
                 ir_version=8, functions=(), extra_opsets=()):
        self.name, self.opset, self.nodes = name, opset, nodes
        self.inputs, self.outputs = inputs, outputs
        self.initializers = initializers or {}
        self.ir_version, self.functions = ir_version, functions
        self.extra_opsets = extra_opsets
        self.external = False

    def model(self):
        info = lambda n, a: helper.make_tensor_value_info(
            n, ONNX_TYPE[a.dtype], list(a.shape))
        graph = helper.make_graph(
            self.nodes, self.name,
            [info(n, a) for n, a in self.inputs.items()],
            [info(n, a) for n, a in self.outputs.items()],
            [numpy_helper.from_array(a, n)
             for n, a in self.initializers.items()])
        opsets = [helper.make_opsetid("", self.opset)]
        opsets += [helper.make_opsetid(d, v) for d, v in self.extra_opsets]
        model = helper.make_model(graph, opset_imports=opsets,
                                  producer_name="kiln-node-tests")
        model.ir_version = self.ir_version
        for function in self.functions:
            model.functions.append(function)
        return model

    def write(self, root):
        folder = os.path.join(root, "test_" + self.name)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        path = os.path.join(folder, "model.onnx")
        if self.external:
            onnx.save_model(self.model(), path, save_as_external_data=True,
                            all_tensors_to_one_file=True,
                            location="weights.bin", size_threshold=0)
        else:
            onnx.save_model(self.model(), path)
        for prefix, arrays in (("input", self.inputs),
                               ("output", self.outputs)):
            for i, array in enumerate(arrays.values()):
                with open(os.path.join(data, f"{prefix}_{i}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(array).SerializeToString())


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, name=op.lower() + "0",
                            **attrs)


# Reductions with their axes as an input (opset 18).
REDUCTIONS = {
    "ReduceMean": np.mean,
    "ReduceMax": np.max,
    "ReduceMin": np.min,
    "ReduceProd": np.prod,
    "ReduceL1": lambda x, **k: np.sum(np.abs(x), **k),
    "ReduceL2": lambda x, **k: np.sqrt(np.sum(x * x, **k)),
    "ReduceLogSum": lambda x, **k: np.log(np.sum(x, **k)),
    "ReduceLogSumExp": lambda x, **k: np.log(np.sum(np.exp(x), **k)),
    "ReduceSumSquare": lambda x, **k: np.sum(x * x, **k),
    "ReduceSum": np.sum,
}


def reductions():
    tests = []
    for op, f in REDUCTIONS.items():
        low = 0.1 if op == "ReduceLogSum" else -2.0
        x = rand(3, 4, 5, low=low)
        x64 = x.astype(np.float64)
        for keep, axes in ((1, (1,)), (0, (-1, 0))):
            y = f32(f(x64, axis=tuple(a % 3 for a in axes), keepdims=bool(keep)))
            tests.append(Test(
                f"{op.lower()}_axes_input_keepdims{keep}", 18,
                [node(op, ["x", "axes"], ["y"], keepdims=keep)],
                {"x": x}, {"y": y}, {"axes": ints(*axes)}))
    x = rand(3, 4)
    tests.append(Test("reducemean_all_axes", 18,
                      [node("ReduceMean", ["x"], ["y"], keepdims=0)],
                      {"x": x}, {"y": f32(np.mean(x.astype(np.float64)))}))
    tests.append(Test("reducemax_noop_with_empty_axes", 18,
                      [node("ReduceMax", ["x"], ["y"],
                            noop_with_empty_axes=1)],
                      {"x": x}, {"y": x}))
    # Version 20: ReduceMax and ReduceMin of BOOL (any, all).
    b = RNG.uniform(size=(4, 5)) < 0.3
    b[0, :] = False
    for op, f in (("ReduceMax", np.any), ("ReduceMin", np.all)):
        tests.append(Test(f"{op.lower()}_bool", 20,
                          [node(op, ["b", "axes"], ["y"], keepdims=0)],
                          {"b": b}, {"y": f(b, axis=1)}, {"axes": ints(1)}))
    x = rand(2, 3, 4)
    tests.append(Test("reducemin_20_axes_input", 20,
                      [node("ReduceMin", ["x", "axes"], ["y"])],
                      {"x": x}, {"y": np.min(x, axis=2, keepdims=True)},
                      {"axes": ints(2)}))
    return tests


def shapes():
    tests = []
    x = rand(6, 4)
    tests.append(Test("split_num_outputs", 18,
                      [node("Split", ["x"], ["a", "b", "c"], axis=0,
                            num_outputs=3)],
                      {"x": x}, {"a": x[0:2], "b": x[2:4], "c": x[4:6]}))
    x = rand(4, 7)
    tests.append(Test("split_num_outputs_uneven", 18,
                      [node("Split", ["x"], ["a", "b", "c"], axis=-1,
                            num_outputs=3)],
                      {"x": x},
                      {"a": x[:, 0:3], "b": x[:, 3:6], "c": x[:, 6:7]}))
    tests.append(Test("split_sizes_input_18", 18,
                      [node("Split", ["x", "sizes"], ["a", "b"], axis=1)],
                      {"x": x}, {"a": x[:, :2], "b": x[:, 2:]},
                      {"sizes": ints(2, 5)}))
    x = rand(2, 3, 4)
    padded = np.pad(x, ((0, 0), (2, 1), (1, 0)), constant_values=0.5)
    tests.append(Test("pad_axes_input", 18,
                      [node("Pad", ["x", "pads", "value", "axes"], ["y"])],
                      {"x": x}, {"y": padded},
                      {"pads": ints(1, 2, 0, 1), "value": f32(0.5),
                       "axes": ints(-1, 1)}))
    # Pad's modes in the forms of 18 (axes) and 19 (wrap), against numpy.
    x = rand(2, 3, 4)
    for mode, numpy_mode, opset in (("reflect", "reflect", 18),
                                    ("edge", "edge", 18),
                                    ("wrap", "wrap", 19)):
        padded = np.pad(x, ((0, 0), (2, 1), (1, 3)), mode=numpy_mode)
        tests.append(Test(f"pad_{mode}_axes_{opset}", opset,
                          [node("Pad", ["x", "pads", "", "axes"], ["y"],
                                mode=mode)],
                          {"x": x}, {"y": padded},
                          {"pads": ints(2, 1, 1, 3), "axes": ints(1, -1)}))
    # The shape ops at opset 21 (their types widened), in an IR 10 model.
    x = rand(2, 3, 4)
    y = np.transpose(x, (2, 0, 1)).reshape(4, 6)[None].reshape(1, 24)
    tests.append(Test(
        "shape_ops_21", 21,
        [node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
         helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape0"),
         helper.make_node("Unsqueeze", ["r", "zero"], ["u"], name="unsq0"),
         helper.make_node("Squeeze", ["u", "zero"], ["s"], name="sq0"),
         helper.make_node("Identity", ["s"], ["i"], name="id0"),
         helper.make_node("Cast", ["i"], ["c"], name="cast0",
                          to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["c", "zero"], ["u2"], name="unsq1"),
         helper.make_node("Flatten", ["u2"], ["y"], name="flat0", axis=1)],
        {"x": x}, {"y": y}, {"shape": ints(4, 6), "zero": ints(0)},
        ir_version=10))
    return tests


def group_norm(x, scale, bias, groups, eps):
    n, c = x.shape[:2]
    g = x.astype(np.float64).reshape(n, groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    normed = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return f32(normed * scale.reshape(shape) + bias.reshape(shape))


def nn():
    tests = []
    x = rand(2, 6, 3, 3)
    scale, bias = rand(3), rand(3)
    tests.append(Test("group_normalization_18", 18,
                      [node("GroupNormalization", ["x", "scale", "bias"],
                            ["y"], num_groups=3, epsilon=1e-5)],
                      {"x": x},
                      {"y": group_norm(x, np.repeat(scale, 2),
                                       np.repeat(bias, 2), 3, 1e-5)},
                      {"scale": scale, "bias": bias}))
    x = rand(2, 6, 5)
    scale, bias = rand(6), rand(6)
    tests.append(Test("group_normalization_21", 21,
                      [node("GroupNormalization", ["x", "scale", "bias"],
                            ["y"], num_groups=2, epsilon=1e-3)],
                      {"x": x},
                      {"y": group_norm(x, scale, bias, 2, 1e-3)},
                      {"scale": scale, "bias": bias}))
    x = rand(1, 2, 4, 4)
    pooled = x.astype(np.float64).reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    tests.append(Test("averagepool_19_dilations", 19,
                      [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                            strides=[2, 2], dilations=[1, 1])],
                      {"x": x}, {"y": f32(pooled)}))
    x = rand(3, 5, low=-5, high=5)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    tests.append(Test("gelu_20", 20, [node("Gelu", ["x"], ["y"])],
                      {"x": x},
                      {"y": f32(0.5 * x64 * (1 + erf(x64 / math.sqrt(2))))}))
    inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
    tests.append(Test("gelu_tanh_20", 20,
                      [node("Gelu", ["x"], ["y"], approximate="tanh")],
                      {"x": x}, {"y": f32(0.5 * x64 * (1 + np.tanh(inner)))}))
    softplus = np.log1p(np.exp(x64))
    tests.append(Test("mish_18", 18, [node("Mish", ["x"], ["y"])],
                      {"x": x}, {"y": f32(x64 * np.tanh(softplus))}))
    return tests


def gelu_patterns():
    """GELU written out below opset 20, in the orders exporters write it
    (the importer makes each one kiln.gelu), and a near miss that stays
    element-wise."""
    x = rand(3, 5, low=-5, high=5)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    exact = f32(0.5 * x64 * (1 + erf(x64 / math.sqrt(2))))
    inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
    tanh = f32(0.5 * x64 * (1 + np.tanh(inner)))
    c = lambda v: f32(v)
    m = lambda *args, **kw: helper.make_node(*args, **kw)
    forms = {
        # torch.onnx.export (TorchScript), nn.GELU().
        "gelu_torchscript": ([
            m("Div", ["x", "sqrt2"], ["u"]), m("Erf", ["u"], ["e"]),
            m("Add", ["e", "one"], ["s"]), m("Mul", ["x", "s"], ["p"]),
            m("Mul", ["p", "half"], ["y"])], exact, 17),
        # PyTorch's ONNX op library (the dynamo exporter below opset 20).
        "gelu_torchlib": ([
            m("Div", ["x", "sqrt2"], ["u"]), m("Erf", ["u"], ["e"]),
            m("Add", ["e", "one"], ["s"]), m("Mul", ["half", "s"], ["h"]),
            m("Mul", ["x", "h"], ["y"])], exact, 18),
        # x * 0.5 * (1 + erf(x * 0.7071...)), as models write it by hand.
        "gelu_by_hand": ([
            m("Mul", ["x", "rsqrt2"], ["u"]), m("Erf", ["u"], ["e"]),
            m("Add", ["one", "e"], ["s"]), m("Mul", ["x", "half"], ["h"]),
            m("Mul", ["h", "s"], ["y"])], exact, 17),
        # torch.onnx.export (TorchScript), nn.GELU(approximate='tanh').
        "gelu_tanh_torchscript": ([
            m("Mul", ["x", "x"], ["x2"]), m("Mul", ["x", "x2"], ["x3"]),
            m("Mul", ["kappa", "x3"], ["k3"]), m("Add", ["x", "k3"], ["a"]),
            m("Mul", ["beta", "a"], ["v"]), m("Tanh", ["v"], ["t"]),
            m("Add", ["one", "t"], ["s"]), m("Mul", ["x", "s"], ["p"]),
            m("Mul", ["half", "p"], ["y"])], tanh, 17),
        # The op library's tanh form, with Pow(x, 3).
        "gelu_tanh_pow": ([
            m("Pow", ["x", "three"], ["x3"]), m("Mul", ["kappa", "x3"], ["k3"]),
            m("Add", ["k3", "x"], ["a"]), m("Mul", ["a", "beta"], ["v"]),
            m("Tanh", ["v"], ["t"]), m("Add", ["t", "one"], ["s"]),
            m("Mul", ["half", "s"], ["h"]), m("Mul", ["x", "h"], ["y"])],
            tanh, 18),
        # 0.4 instead of 0.5: not GELU, imported as written.
        "not_gelu": ([
            m("Div", ["x", "sqrt2"], ["u"]), m("Erf", ["u"], ["e"]),
            m("Add", ["e", "one"], ["s"]), m("Mul", ["x", "s"], ["p"]),
            m("Mul", ["p", "point4"], ["y"])], f32(exact * 0.8), 17),
    }
    constants = {"sqrt2": c(math.sqrt(2)), "rsqrt2": c(1 / math.sqrt(2)),
                 "one": c(1), "half": c(0.5), "point4": c(0.4),
                 "kappa": c(0.044715), "beta": c(math.sqrt(2 / math.pi)),
                 "three": c(3)}
    tests = []
    for name, (nodes, expected, opset) in forms.items():
        used = {i for n in nodes for i in n.input}
        tests.append(Test(name, opset, nodes, {"x": x}, {"y": expected},
                          {k: v for k, v in constants.items() if k in used}))
    return tests


# Einsum equations (one or two operands, no diagonal) and operand shapes.
EINSUMS = {
    "attention_scores": ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    "attention_values": ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    "batch_matmul": ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    "matmul": ("ij,jk->ik", [(4, 5), (5, 3)]),
    "lhs_transposed": ("bkq,bkd->bqd", [(2, 5, 4), (2, 5, 3)]),
    "output_permuted": ("bij,bjk->bki", [(3, 4, 5), (3, 5, 2)]),
    "summed_row_index": ("bij,bjk->bk", [(3, 4, 5), (3, 5, 2)]),
    "ellipsis": ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    "implicit": ("ij,jk", [(4, 5), (5, 3)]),
    "inner_product": ("i,i->", [(7,), (7,)]),
    "outer_product": ("i,j->ij", [(3,), (4,)]),
    "transpose": ("ij->ji", [(3, 4)]),
    "row_sums": ("ij->i", [(3, 4)]),
}


def einsums():
    tests = []
    for name, (equation, shapes) in EINSUMS.items():
        arrays = [rand(*shape) for shape in shapes]
        names = ["a", "b"][:len(arrays)]
        y = f32(np.einsum(equation, *[a.astype(np.float64) for a in arrays]))
        tests.append(Test("einsum_" + name, 12,
                          [node("Einsum", names, ["y"], equation=equation)],
                          dict(zip(names, arrays)), {"y": y}))
    return tests


def cumsums():
    tests = []
    x = rand(3, 9)
    for exclusive in (0, 1):
        for reverse in (0, 1):
            y = x.astype(np.float64)
            if reverse:
                y = y[:, ::-1]
            y = np.cumsum(y, axis=1)
            if exclusive:
                y = np.concatenate([np.zeros((3, 1)), y[:, :-1]], axis=1)
            if reverse:
                y = y[:, ::-1]
            tests.append(Test(
                f"cumsum_exclusive{exclusive}_reverse{reverse}", 14,
                [node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                      reverse=reverse)],
                {"x": x}, {"y": f32(y)}, {"axis": ints(-1)}))
    counts = RNG.integers(-1000, 1000, size=(4, 5)).astype(np.int64)
    tests.append(Test("cumsum_int64_axis0", 11,
                      [node("CumSum", ["x", "axis"], ["y"])],
                      {"x": counts}, {"y": np.cumsum(counts, axis=0)},
                      {"axis": ints(0)}))
    return tests


def resizes():
    tests = []
    x = rand(1, 2, 3, 4)
    up = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)
    # nn.Upsample(scale_factor=2, mode='nearest') as torch.onnx writes it.
    tests.append(Test("resize_nearest_axes_18", 18,
                      [node("Resize", ["x", "", "scales"], ["y"],
                            mode="nearest", axes=[2, 3],
                            coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor", antialias=1)],
                      {"x": x}, {"y": up}, {"scales": f32([2, 2])}))
    # sizes with keep_aspect_ratio_policy: [6, 12] not larger than 2x.
    tests.append(Test("resize_nearest_not_larger_18", 18,
                      [node("Resize", ["x", "", "", "sizes"], ["y"],
                            axes=[-2, -1], keep_aspect_ratio_policy="not_larger",
                            coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor")],
                      {"x": x}, {"y": up}, {"sizes": ints(6, 12)}))
    # 'nearest-exact': half_pixel coordinates, round_prefer_floor.
    up3 = np.repeat(x, 3, axis=3)
    tests.append(Test("resize_nearest_half_pixel_19", 19,
                      [node("Resize", ["x", "", "scales"], ["y"])],
                      {"x": x}, {"y": up3}, {"scales": f32([1, 1, 1, 3])}))
    # Linear over the last two axes, from sizes (axes of opset 18) and from
    # scales with half_pixel_symmetric (opset 19).
    tests.append(Test("resize_linear_sizes_axes_18", 18,
                      [node("Resize", ["x", "", "", "sizes"], ["y"],
                            mode="linear", axes=[2, 3])],
                      {"x": x},
                      {"y": f32(bilinear(x, (5, 7), (5 / 3, 7 / 4),
                                         "half_pixel"))},
                      {"sizes": ints(5, 7)}))
    tests.append(Test("resize_linear_symmetric_19", 19,
                      [node("Resize", ["x", "", "scales"], ["y"],
                            mode="linear",
                            coordinate_transformation_mode=
                            "half_pixel_symmetric")],
                      {"x": x},
                      {"y": f32(bilinear(x, (4, 6), (1.5, 1.5),
                                         "half_pixel_symmetric"))},
                      {"scales": f32([1, 1, 1.5, 1.5])}))
    return tests


def bilinear(x, sizes, scales, coordinates):
    """ONNX Resize in linear mode over the last two axes of x, in float64."""
    def taps(out, size, scale):
        o = np.arange(out, dtype=np.float64)
        if coordinates == "half_pixel_symmetric":
            offset = size / 2 * (1 - out / (size * scale))
            c = offset + (o + 0.5) / scale - 0.5
        else:
            c = (o + 0.5) / scale - 0.5
        c = np.clip(c, 0, size - 1)
        i0 = np.floor(c).astype(np.int64)
        i1 = np.minimum(i0 + 1, size - 1)
        return i0, i1, c - i0
    h0, h1, wh = taps(sizes[0], x.shape[2], scales[0])
    w0, w1, ww = taps(sizes[1], x.shape[3], scales[1])
    v = x.astype(np.float64)
    rows = (v[:, :, h0, :] * (1 - wh)[:, None] +
            v[:, :, h1, :] * wh[:, None])
    return rows[:, :, :, w0] * (1 - ww) + rows[:, :, :, w1] * ww


def external_data():
    x = rand(4, 3)
    w1, b1, w2, b2 = rand(5, 3), rand(5), rand(2, 5), rand(2)
    h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
    test = Test("external_data_mlp", 18,
                [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"],
                                  name="fc1", transB=1),
                 helper.make_node("Relu", ["h"], ["r"], name="relu1"),
                 helper.make_node("Gemm", ["r", "w2", "b2"], ["y"],
                                  name="fc2", transB=1)],
                {"x": x}, {"y": f32(h @ w2.T + b2)},
                {"w1": w1, "b1": b1, "w2": w2, "b2": b2}, ir_version=10)
    test.external = True
    return [test]


def with_default(function, attribute):
    """`function` with a default attribute value (FunctionProto's
    attribute_proto, field 11 of IR 9, which python3-onnx 1.12 lacks)."""
    body = attribute.SerializeToString()
    length, encoded = len(body), b""
    while True:
        byte = length & 0x7F
        length >>= 7
        encoded += bytes([byte | (0x80 if length else 0)])
        if not length:
            break
    data = function.SerializeToString() + b"\x5a" + encoded + body
    return onnx.FunctionProto.FromString(data)


def functions():
    """A block function calling another, with attribute references: what
    the dynamo exporter writes for modules."""
    def ref(name, refers_to):
        attribute = AttributeProto()
        attribute.name, attribute.ref_attr_name = name, refers_to
        attribute.type = AttributeProto.FLOAT
        return attribute

    act = helper.make_function(
        "kiln.test", "Act", ["a"], ["b"],
        [helper.make_node("LeakyRelu", ["a"], ["b"], name="leaky")],
        [helper.make_opsetid("", 18)], ["slope"])
    act.node[0].attribute.append(ref("alpha", "slope"))
    block = helper.make_function(
        "kiln.test", "Block", ["x", "w"], ["y", "hidden"],
        [helper.make_node("MatMul", ["x", "w"], ["hidden"], name="mm"),
         helper.make_node("Act", ["hidden"], ["act"], name="act",
                          domain="kiln.test"),
         helper.make_node("Add", ["act", "x"], ["y"], name="residual")],
        [helper.make_opsetid("", 18), helper.make_opsetid("kiln.test", 1)])
    block.node[1].attribute.append(ref("slope", "slope"))
    block = with_default(block, helper.make_attribute("slope", 0.25))
    x, w1, w2 = rand(3, 4), rand(4, 4), rand(4, 4)

    def reference(x, w, slope):
        h = x.astype(np.float64) @ w
        return np.where(h >= 0, h, slope * h) + x

    y1 = f32(reference(x, w1, 0.1))
    y2 = f32(reference(y1, w2, 0.25))
    return [Test(
        "local_functions", 18,
        [helper.make_node("Block", ["x", "w1"], ["y1"], name="block1",
                          domain="kiln.test", slope=0.1),
         helper.make_node("Block", ["y1", "w2"], ["y2", ""], name="block2",
                          domain="kiln.test")],
        {"x": x}, {"y2": y2}, {"w1": w1, "w2": w2}, ir_version=10,
        functions=[act, block], extra_opsets=[("kiln.test", 1)])]


def main():
    root = sys.argv[1]
    tests = reductions() + shapes() + nn() + gelu_patterns() + einsums() + \
        cumsums() + resizes() + external_data() + functions()
    for test in tests:
        test.write(root)
    print(f"wrote {len(tests)} node tests (numpy seed {SEED})",
          file=sys.stderr)
    print(len(tests))


if __name__ == "__main__":
    main()
