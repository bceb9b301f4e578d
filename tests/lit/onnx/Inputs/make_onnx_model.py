#!/usr/bin/env python3
"""Writes small ONNX models for the importer's lit tests.

    make_onnx_model.py NAME OUT.onnx

Built with Debian's python3-onnx (1.12), so every model is one that
libonnx reads. Weights are fixed pseudo-random numbers (numpy seed 0).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

def weights(name, *shape):
    rng = np.random.default_rng(sum(map(ord, name)))
    return numpy_helper.from_array(
        rng.uniform(-1, 1, size=shape).astype(np.float32), name)


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def mlp_nodes():
    return [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu1"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2"),
    ]


def mlp_initializers():
    return [weights("w1", 3, 5), weights("b1", 5), weights("w2", 5, 2),
            weights("b2", 2)]


def mlp():
    graph = helper.make_graph(mlp_nodes(), "mlp",
                              [tensor("x", TensorProto.FLOAT, [4, 3])],
                              [tensor("y", TensorProto.FLOAT, [4, 2])],
                              mlp_initializers())
    return graph


def mlp_mse():
    """The MSE loss written out in ONNX, as exporters write it."""
    nodes = mlp_nodes() + [
        helper.make_node("Sub", ["y", "target"], ["d"], name="diff"),
        helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], name="mse",
                         keepdims=0),
    ]
    return helper.make_graph(nodes, "mlp_mse",
                             [tensor("x", TensorProto.FLOAT, [4, 3]),
                              tensor("target", TensorProto.FLOAT, [4, 2])],
                             [tensor("loss", TensorProto.FLOAT, [])],
                             mlp_initializers())


def classifier_sce():
    nodes = mlp_nodes() + [
        helper.make_node("SoftmaxCrossEntropyLoss", ["y", "labels"], ["loss"],
                         name="xent"),
    ]
    return helper.make_graph(nodes, "classifier",
                             [tensor("x", TensorProto.FLOAT, [4, 3]),
                              tensor("labels", TensorProto.INT64, [4])],
                             [tensor("loss", TensorProto.FLOAT, [])],
                             mlp_initializers())


def unsupported_op():
    nodes = [helper.make_node("Det", ["x"], ["y"], name="det0")]
    return helper.make_graph(nodes, "det",
                             [tensor("x", TensorProto.FLOAT, [2, 3, 3])],
                             [tensor("y", TensorProto.FLOAT, [2])])


def unsupported_attribute():
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="pool0",
                              kernel_shape=[2, 2], dilations=[2, 2])]
    return helper.make_graph(nodes, "pool",
                             [tensor("x", TensorProto.FLOAT, [1, 1, 6, 6])],
                             [tensor("y", TensorProto.FLOAT, [1, 1, 4, 4])])


def unsupported_dtype():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return helper.make_graph(nodes, "double",
                             [tensor("x", TensorProto.DOUBLE, [3])],
                             [tensor("y", TensorProto.DOUBLE, [3])])


def bad_broadcast():
    nodes = [helper.make_node("Add", ["a", "b"], ["c"], name="add0")]
    return helper.make_graph(nodes, "add",
                             [tensor("a", TensorProto.FLOAT, [2, 3]),
                              tensor("b", TensorProto.FLOAT, [4])],
                             [tensor("c", TensorProto.FLOAT, [2, 3])])


def lstm():
    hidden, inputs, seq, batch = 3, 2, 4, 2
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "y_h"],
                              name="lstm0", hidden_size=hidden)]
    return helper.make_graph(
        nodes, "lstm", [tensor("x", TensorProto.FLOAT, [seq, batch, inputs])],
        [tensor("y", TensorProto.FLOAT, [seq, 1, batch, hidden]),
         tensor("y_h", TensorProto.FLOAT, [1, batch, hidden])],
        [weights("w", 1, 4 * hidden, inputs), weights("r", 1, 4 * hidden, hidden),
         weights("b", 1, 8 * hidden)])


def batchnorm():
    """BatchNormalization in inference mode, as torch exports model.eval()."""
    nodes = [helper.make_node("BatchNormalization",
                              ["x", "scale", "bias", "mean", "var"], ["y"],
                              name="bn0")]
    return helper.make_graph(nodes, "bn",
                             [tensor("x", TensorProto.FLOAT, [2, 3, 4, 4])],
                             [tensor("y", TensorProto.FLOAT, [2, 3, 4, 4])],
                             [weights("scale", 3), weights("bias", 3),
                              weights("mean", 3),
                              numpy_helper.from_array(
                                  np.full(3, 0.5, np.float32), "var")])


def operand_constants():
    """Floating-point initializers that are settings, not weights: batch
    norm's running statistics, ReLU6's bounds (Clip), an upsampling's
    scales and an infinite fill value, beside the weights w and the batch
    norm's scale and bias."""
    nodes = [helper.make_node("BatchNormalization",
                              ["x", "scale", "bias", "mean", "var"], ["n"],
                              name="bn0"),
             helper.make_node("Clip", ["n", "low", "high"], ["c"], name="relu6"),
             helper.make_node("Resize", ["c", "", "scales"], ["u"], name="up0"),
             helper.make_node("Mul", ["u", "w"], ["m"], name="mul0"),
             helper.make_node("Max", ["m", "floor"], ["y"], name="max0")]
    scalar = lambda value, name: numpy_helper.from_array(np.float32(value), name)
    return helper.make_graph(
        nodes, "operand_constants",
        [tensor("x", TensorProto.FLOAT, [2, 3, 4, 4])],
        [tensor("y", TensorProto.FLOAT, [2, 3, 8, 8])],
        [weights("scale", 3), weights("bias", 3), weights("mean", 3),
         numpy_helper.from_array(np.full(3, 0.5, np.float32), "var"),
         scalar(0, "low"), scalar(6, "high"),
         numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
         weights("w", 8), scalar(-np.inf, "floor")])


def relu():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return helper.make_graph(nodes, "relu",
                             [tensor("x", TensorProto.FLOAT, [3])],
                             [tensor("y", TensorProto.FLOAT, [3])])


def two_writers():
    """y written twice: by Relu(x) and by Neg(x)."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0"),
             helper.make_node("Neg", ["x"], ["y"], name="neg0")]
    return helper.make_graph(nodes, "two_writers",
                             [tensor("x", TensorProto.FLOAT, [3])],
                             [tensor("y", TensorProto.FLOAT, [3])])


def overwritten_input():
    """A node that writes the graph input x."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0"),
             helper.make_node("Neg", ["y"], ["x"], name="neg0")]
    return helper.make_graph(nodes, "overwritten_input",
                             [tensor("x", TensorProto.FLOAT, [3])],
                             [tensor("y", TensorProto.FLOAT, [3])])


def gelu():
    nodes = [helper.make_node("Gelu", ["x"], ["y"], name="gelu0")]
    return helper.make_graph(nodes, "gelu",
                             [tensor("x", TensorProto.FLOAT, [3])],
                             [tensor("y", TensorProto.FLOAT, [3])])


def resize(scale=2, **attributes):
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["y"],
                              name="up0", **attributes)]
    size = int(4 * scale)
    return helper.make_graph(
        nodes, "resize", [tensor("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [tensor("y", TensorProto.FLOAT, [1, 1, size, size])],
        [numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32),
                                 "scales")])


def group_norm_pattern(scale=1.0):
    """nn.GroupNorm(4, 8) as PyTorch's TorchScript exporter writes it: an
    instance norm of [N, 4, -1] between reshapes, then Mul and Add by the
    weight and bias unsqueezed to [8, 1, 1]. `scale` is the instance norm's
    per-group scale (PyTorch's is 1)."""
    const = lambda name, array: helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(array, name))
    nodes = [
        const("grouped", np.array([2, 4, -1], np.int64)),
        helper.make_node("Reshape", ["x", "grouped"], ["r"], name="reshape0"),
        const("ones", np.full(4, scale, np.float32)),
        const("zeros", np.zeros(4, np.float32)),
        helper.make_node("InstanceNormalization", ["r", "ones", "zeros"],
                         ["n"], name="norm0", epsilon=1e-5),
        helper.make_node("Shape", ["x"], ["shape"], name="shape0"),
        helper.make_node("Reshape", ["n", "shape"], ["back"], name="reshape1"),
        const("axes", np.array([1, 2], np.int64)),
        helper.make_node("Unsqueeze", ["weight", "axes"], ["w3"], name="u0"),
        helper.make_node("Mul", ["back", "w3"], ["scaled"], name="mul0"),
        helper.make_node("Unsqueeze", ["bias", "axes"], ["b3"], name="u1"),
        helper.make_node("Add", ["scaled", "b3"], ["y"], name="add0"),
    ]
    return helper.make_graph(
        nodes, "group_norm", [tensor("x", TensorProto.FLOAT, [2, 8, 3, 5])],
        [tensor("y", TensorProto.FLOAT, [2, 8, 3, 5])],
        [weights("weight", 8), weights("bias", 8)])


def instance_norm():
    nodes = [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                              name="norm0", epsilon=1e-3)]
    return helper.make_graph(
        nodes, "instance_norm", [tensor("x", TensorProto.FLOAT, [2, 3, 7])],
        [tensor("y", TensorProto.FLOAT, [2, 3, 7])],
        [weights("s", 3), weights("b", 3)])


def group_norm(parameters):
    """GroupNormalization of [2, 6, 3, 3] in 3 groups, with `parameters`
    scales and biases (3 per group in version 18, 6 per channel from 21)."""
    nodes = [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                              name="norm0", num_groups=3, epsilon=1e-3)]
    return helper.make_graph(
        nodes, "group_norm", [tensor("x", TensorProto.FLOAT, [2, 6, 3, 3])],
        [tensor("y", TensorProto.FLOAT, [2, 6, 3, 3])],
        [weights("s", parameters), weights("b", parameters)])


def conv_transpose(x, w, y, bias=True, **attributes):
    """One ConvTranspose of input shape `x`, weights `w` (and a bias) to
    output shape `y`."""
    inputs = ["x", "w"] + (["b"] if bias else [])
    nodes = [helper.make_node("ConvTranspose", inputs, ["y"], name="up0",
                              **attributes)]
    initializers = [weights("w", *w)] + ([weights("b", w[1] * attributes.get(
        "group", 1))] if bias else [])
    return helper.make_graph(nodes, "conv_transpose",
                             [tensor("x", TensorProto.FLOAT, x)],
                             [tensor("y", TensorProto.FLOAT, y)], initializers)


def pad(mode, pads, out, as_attribute=False, scaled=False):
    """Pad of x [2, 3, 4, 5] in `mode` by `pads`, given as the attribute
    (before opset 11) or as the pads input; `scaled`: of x times a
    per-channel weight (a parameter to train)."""
    nodes, initializers, padded = [], [], "x"
    if scaled:
        nodes.append(helper.make_node("Mul", ["x", "s"], ["xs"], name="mul0"))
        initializers.append(weights("s", 1, 3, 1, 1))
        padded = "xs"
    if as_attribute:
        nodes.append(helper.make_node("Pad", [padded], ["y"], name="pad0",
                                      mode=mode, pads=pads))
    else:
        nodes += [
            helper.make_node("Constant", [], ["pads"],
                             value=numpy_helper.from_array(
                                 np.array(pads, np.int64), "pads")),
            helper.make_node("Pad", [padded, "pads"], ["y"], name="pad0",
                             mode=mode),
        ]
    return helper.make_graph(nodes, "pad",
                             [tensor("x", TensorProto.FLOAT, [2, 3, 4, 5])],
                             [tensor("y", TensorProto.FLOAT, out)],
                             initializers)


def external(files=None, **entries):
    """The mlp_mse with w1's data in a file beside the model, as `entries`
    describe it; `files` maps file names (relative to the model) to what to
    write there: w1's bytes after `prefix` padding bytes."""
    graph = mlp_mse()
    w1 = graph.initializer[0]
    data = numpy_helper.to_array(w1).tobytes()
    w1.ClearField("raw_data")
    w1.ClearField("float_data")
    w1.data_location = TensorProto.EXTERNAL
    for key, value in entries.items():
        w1.external_data.add(key=key, value=str(value))
    written = {name: b"\xff" * prefix + data
               for name, prefix in (files or {}).items()}
    return graph, [], written


def attention_block():
    """Einsum attention, a CumSum and GELU written out as TorchScript
    exports it (Div, Erf, Add, Mul, Mul), on trainable projections."""
    def const(name, value):
        return numpy_helper.from_array(np.array(value, np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        helper.make_node("Einsum", ["q", "k"], ["s"], name="scores",
                         equation="bqd,bkd->bqk"),
        helper.make_node("CumSum", ["s", "axis"], ["c"], name="cumsum",
                         exclusive=1),
        helper.make_node("Div", ["c", "sqrt2"], ["u"], name="gelu_div"),
        helper.make_node("Erf", ["u"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["p"], name="gelu_add"),
        helper.make_node("Mul", ["c", "p"], ["m"], name="gelu_mul"),
        helper.make_node("Mul", ["m", "half"], ["g"], name="gelu_half"),
        helper.make_node("Einsum", ["g", "x"], ["y"], name="mix",
                         equation="bqk,bkd->bqd"),
    ]
    return helper.make_graph(
        nodes, "attention", [tensor("x", TensorProto.FLOAT, [2, 4, 8])],
        [tensor("y", TensorProto.FLOAT, [2, 4, 8])],
        [weights("wq", 8, 8), weights("wk", 8, 8),
         numpy_helper.from_array(np.array(-1, np.int64), "axis"),
         const("sqrt2", 2 ** 0.5), const("one", 1.0), const("half", 0.5)])


def einsum(equation, shapes):
    names = ["a", "b", "c"][:len(shapes)]
    nodes = [helper.make_node("Einsum", names, ["y"], name="einsum0",
                              equation=equation)]
    return helper.make_graph(
        nodes, "einsum",
        [tensor(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
        [tensor("y", TensorProto.FLOAT, [3])])


def scatter_nd(indices, constant_indices=True, **attributes):
    """y = ScatterND(x [4, 3], indices, u): u an initializer, the indices an
    initializer or a graph input."""
    indices = np.array(indices, dtype=np.int64)
    count = indices.shape[0]
    inputs = [tensor("x", TensorProto.FLOAT, [4, 3])]
    initializers = [weights("u", count, 3)]
    if constant_indices:
        initializers.append(numpy_helper.from_array(indices, "idx"))
    else:
        inputs.append(tensor("idx", TensorProto.INT64, list(indices.shape)))
    nodes = [helper.make_node("ScatterND", ["x", "idx", "u"], ["y"],
                              name="scatter0", **attributes)]
    return helper.make_graph(nodes, "scatter_nd", inputs,
                             [tensor("y", TensorProto.FLOAT, [4, 3])],
                             initializers)


def recursive_function():
    """Functions f and g calling each other."""
    def call(callee):
        return helper.make_node(callee, ["a"], ["b"], name="call_" + callee,
                                domain="lit")

    f = helper.make_function("lit", "f", ["a"], ["b"], [call("g")],
                             [helper.make_opsetid("", 18)])
    g = helper.make_function("lit", "g", ["a"], ["b"], [call("f")],
                             [helper.make_opsetid("", 18)])
    nodes = [helper.make_node("f", ["x"], ["y"], name="f0", domain="lit")]
    graph = helper.make_graph(nodes, "recursive",
                              [tensor("x", TensorProto.FLOAT, [3])],
                              [tensor("y", TensorProto.FLOAT, [3])])
    return graph, [f, g], {}


def bad_data(dims, raw=None, floats=None):
    """y = x + c, where the initializer c's data does not fit its dims."""
    c = TensorProto()
    c.name = "c"
    c.data_type = TensorProto.FLOAT
    c.dims.extend(dims)
    if raw is not None:
        c.raw_data = raw
    if floats is not None:
        c.float_data.extend(floats)
    nodes = [helper.make_node("Add", ["x", "c"], ["y"], name="add0")]
    return helper.make_graph(nodes, "bad_data",
                             [tensor("x", TensorProto.FLOAT, [2])],
                             [tensor("y", TensorProto.FLOAT, [2])], [c])


# name: (graph builder, default-domain opset, IR version).
MODELS = {f.__name__: (f, 17, 8)
          for f in [mlp, mlp_mse, classifier_sce, unsupported_op,
                    unsupported_attribute, unsupported_dtype, bad_broadcast,
                    lstm, batchnorm, operand_constants]}
MODELS.update({
    # Opsets and IR versions newer than the importer knows.
    "newer_opset": (relu, 28, 8),
    "newer_ir": (relu, 21, 14),
    # An op used before the opset that defines it.
    "gelu_opset17": (gelu, 17, 8),
    "group_norm_pattern": (group_norm_pattern, 17, 8),
    "group_norm_pattern_scaled": (lambda: group_norm_pattern(2.0), 17, 8),
    "instance_norm": (instance_norm, 17, 8),
    "conv_transpose_2d": (lambda: conv_transpose(
        [2, 4, 3, 5], [4, 3, 3, 3], [2, 3, 7, 11], strides=[2, 2],
        pads=[1, 0, 0, 1], output_padding=[1, 1]), 17, 8),
    "conv_transpose_groups": (lambda: conv_transpose(
        [1, 4, 4, 4], [4, 1, 2, 2], [1, 2, 6, 6], bias=False, group=2,
        dilations=[2, 2]), 11, 8),
    "conv_transpose_1d": (lambda: conv_transpose(
        [2, 3, 7], [3, 2, 4], [2, 2, 15], strides=[2], pads=[1, 0]), 17, 8),
    "conv_transpose_output_shape": (lambda: conv_transpose(
        [1, 1, 3, 3], [1, 2, 3, 3], [1, 2, 10, 8], strides=[3, 2],
        output_shape=[10, 8]), 17, 8),
    "conv_transpose_same": (lambda: conv_transpose(
        [1, 1, 3, 3], [1, 2, 3, 3], [1, 2, 6, 6], strides=[2, 2],
        auto_pad="SAME_UPPER"), 17, 8),
    "conv_transpose_big_output_padding": (lambda: conv_transpose(
        [1, 1, 3, 3], [1, 2, 3, 3], [1, 2, 7, 7], strides=[2, 2],
        output_padding=[2, 0]), 17, 8),
    "conv_transpose_3d": (lambda: conv_transpose(
        [1, 1, 2, 2, 2], [1, 1, 2, 2, 2], [1, 1, 3, 3, 3]), 17, 8),
    "pad_reflect": (lambda: pad("reflect", [0, 0, 1, 2, 0, 0, 3, 1],
                                [2, 3, 8, 8]), 13, 8),
    "pad_edge_opset2": (lambda: pad("edge", [0, 1, 0, 2, 0, 0, 0, 3],
                                    [2, 4, 4, 10], as_attribute=True), 2, 8),
    "pad_reflect_scaled": (lambda: pad("reflect", [0, 0, 1, 2, 0, 0, 3, 1],
                                       [2, 3, 8, 8], scaled=True), 13, 8),
    "pad_edge_scaled": (lambda: pad("edge", [0, 1, 0, 2, 0, 0, 0, 3],
                                    [2, 4, 4, 10], as_attribute=True,
                                    scaled=True), 2, 8),
    "pad_reflect_too_far": (lambda: pad("reflect", [0, 0, 0, 5, 0, 0, 0, 0],
                                        [2, 3, 4, 10]), 13, 8),
    "pad_wrap_18": (lambda: pad("wrap", [0, 0, 0, 1, 0, 0, 0, 1],
                                [2, 3, 4, 7]), 18, 8),
    "group_norm_18": (lambda: group_norm(3), 18, 8),
    "group_norm_21": (lambda: group_norm(6), 21, 8),
    "resize_linear": (lambda: resize(mode="linear"), 18, 8),
    "resize_cubic": (lambda: resize(mode="cubic"), 18, 8),
    "resize_antialias": (lambda: resize(0.5, mode="linear", antialias=1), 18,
                         8),
    "resize_crop": (lambda: resize(
        coordinate_transformation_mode="tf_crop_and_resize"), 18, 8),
    "resize_round_up": (lambda: resize(
        coordinate_transformation_mode="asymmetric",
        nearest_mode="round_prefer_ceil"), 18, 8),
    "recursive_function": (recursive_function, 18, 10),
    # Values written more than once.
    "two_writers": (two_writers, 17, 8),
    "overwritten_input": (overwritten_input, 17, 8),
    "attention_block": (attention_block, 17, 8),
    "einsum_diagonal": (lambda: einsum("bii->bi", [[2, 3, 3]]), 17, 8),
    "einsum_three": (lambda: einsum("i,i,i->i", [[3], [3], [3]]), 17, 8),
    "einsum_broadcast": (lambda: einsum("bi,bi->b", [[1, 3], [2, 3]]), 17,
                         8),
    # ScatterND: rows 2 and 0 (0 twice with reduction add), indices known or
    # not at compile time, out of range.
    "scatter_nd": (lambda: scatter_nd([[2], [0]]), 17, 8),
    "scatter_nd_add": (lambda: scatter_nd([[0], [2], [-4]], reduction="add"),
                       18, 8),
    "scatter_nd_input": (lambda: scatter_nd([[2], [0]],
                                            constant_indices=False), 17, 8),
    "scatter_nd_range": (lambda: scatter_nd([[4]]), 17, 8),
    # External data (written beside the model where the entry names files).
    "external": (lambda: external({"w1.bin": 0}, location="w1.bin"), 18, 8),
    "external_offset": (lambda: external({"data/w.bin": 8},
                                         location="data/w.bin", offset=8,
                                         length=60), 18, 8),
    "external_escape": (lambda: external(location="../w1.bin"), 18, 8),
    "external_absolute": (lambda: external(location="/etc/hostname"), 18, 8),
    "external_link": (lambda: external(location="link.bin"), 18, 8),
    "external_missing": (lambda: external(location="nowhere.bin"), 18, 8),
    "external_short": (lambda: external({"w1.bin": 0}, location="w1.bin",
                                        offset=4, length=60), 18, 8),
    "external_key": (lambda: external(location="w1.bin",
                                      compression="zstd"), 18, 8),
    "external_no_location": (lambda: external(offset=0), 18, 8),
    "external_length": (lambda: external({"w1.bin": 0}, location="w1.bin",
                                         length=8), 18, 8),
    # Initializers whose data does not fit their dims.
    "huge_dims": (lambda: bad_data([10**9, 10**9], raw=b"\0" * 4), 17, 8),
    "overflowing_dims": (lambda: bad_data([2**62, 4], raw=b"\0" * 4), 17, 8),
    "short_typed_data": (lambda: bad_data([2], floats=[1.0]), 17, 8),
})

if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    build, opset, ir_version = MODELS[name]
    built = build()
    graph, functions, files = built if isinstance(built, tuple) else \
        (built, [], {})
    for name, data in files.items():
        path = os.path.join(os.path.dirname(os.path.abspath(out)), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    opsets = [helper.make_opsetid("", opset)]
    if functions:
        opsets.append(helper.make_opsetid("lit", 1))
    model = helper.make_model(graph, opset_imports=opsets,
                              producer_name="kiln-lit", functions=functions)
    model.ir_version = ir_version
    onnx.save(model, out)
