"""Safetensors files as numpy arrays, and the kiln element types.

Floating-point tensors are read into float64 arrays (bf16 and f16 exactly);
writing converts to the file dtype of the kiln type (f32, bf16, f16, i32,
i1), rounding to nearest even.
"""
import json
import struct

import numpy as np

FILE_DTYPES = {"f32": "F32", "bf16": "BF16", "f16": "F16", "i32": "I32", "i1": "BOOL"}
NUMPY = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "BOOL": np.bool_,
         "F64": np.float64, "I64": np.int64}


def to_bf16_bits(values):
    f = np.asarray(values, np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    rounded = ((bits + np.uint64(0x7FFF) + ((bits >> sixteen) & np.uint64(1))) >> sixteen).astype(np.uint16)
    nan = np.isnan(f)
    return np.where(nan, np.uint16(0x7FC0), rounded)


def from_bf16_bits(bits):
    bits = np.asarray(bits, np.uint32)
    return (np.atleast_1d(bits) << np.uint32(16)).view(np.float32).reshape(bits.shape)


def round_to(values, dtype):
    """values rounded to kiln element type `dtype`, as float64 (or ints)."""
    values = np.asarray(values, np.float64)
    if dtype == "f32":
        return values.astype(np.float32).astype(np.float64)
    if dtype == "bf16":
        return from_bf16_bits(to_bf16_bits(values.astype(np.float32))).astype(np.float64)
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float64)
    if dtype == "i32":
        return values.astype(np.int32)
    return values != 0


def save(path, tensors):
    """tensors: {name: (kiln dtype, array)}."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, array = tensors[name]
        array = np.asarray(array)
        if dtype == "bf16":
            raw = to_bf16_bits(array.astype(np.float32)).tobytes()
        else:
            raw = np.ascontiguousarray(array.astype(NUMPY[FILE_DTYPES[dtype]])).tobytes()
        header[name] = {"dtype": FILE_DTYPES[dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load(path):
    """{name: array}, floats as float64."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        if info["dtype"] == "BF16":
            array = from_bf16_bits(np.frombuffer(raw, np.uint16)).astype(np.float64)
        else:
            array = np.frombuffer(raw, NUMPY[info["dtype"]])
            if array.dtype.kind == "f":
                array = array.astype(np.float64)
        out[name] = array.reshape(info["shape"])
    return out
