"""Reads and writes safetensors files (f32, bf16, f16, i32) with the standard
library only, so the bundle can be built where numpy is not installed.
Tensors are (dtype, shape, list of Python floats/ints)."""
import json
import struct

_FORMATS = {"F32": ("f", 4), "F16": ("e", 2), "I32": ("i", 4)}


def _bf16_to_floats(raw):
    halves = struct.unpack(f"<{len(raw) // 2}H", raw)
    return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]


def _floats_to_bf16(values):
    out = []
    for v in values:
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        if (bits & 0x7F800000) == 0x7F800000 and (bits & 0x7FFFFF):
            out.append(0x7FC0)  # NaN
            continue
        bits += 0x7FFF + ((bits >> 16) & 1)
        out.append((bits >> 16) & 0xFFFF)
    return struct.pack(f"<{len(out)}H", *out)


def load(path):
    """Returns ({name: (dtype, shape, values)}, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        if info["dtype"] == "BF16":
            values = _bf16_to_floats(raw)
        else:
            code, width = _FORMATS[info["dtype"]]
            values = list(struct.unpack(f"<{len(raw) // width}{code}", raw))
        tensors[name] = (info["dtype"], info["shape"], values)
    return tensors, metadata


def save(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        if dtype == "BF16":
            raw = _floats_to_bf16(values)
        else:
            code, _ = _FORMATS[dtype]
            raw = struct.pack(f"<{len(values)}{code}", *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
