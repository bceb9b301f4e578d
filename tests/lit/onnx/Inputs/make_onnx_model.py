#!/usr/bin/env python3
"""Writes small ONNX models for the importer's lit tests.

    make_onnx_model.py NAME OUT.onnx

Built with Debian's python3-onnx (1.12), so every model is one that
libonnx reads. Weights are fixed pseudo-random numbers (numpy seed 0).
"""
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


def newer_opset():
    """A model of opset 18 (see OPSETS), newer than the importer maps."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return helper.make_graph(nodes, "relu",
                             [tensor("x", TensorProto.FLOAT, [3])],
                             [tensor("y", TensorProto.FLOAT, [3])])


MODELS = {f.__name__: f for f in [mlp, mlp_mse, classifier_sce, unsupported_op,
                                   unsupported_attribute, unsupported_dtype,
                                   bad_broadcast, lstm, batchnorm, newer_opset]}
# Models of another default-domain opset than 17.
OPSETS = {"newer_opset": 18}

if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    opset = [helper.make_opsetid("", OPSETS.get(name, 17))]
    model = helper.make_model(MODELS[name](), opset_imports=opset,
                              producer_name="kiln-lit")
    model.ir_version = 8
    onnx.save(model, out)
