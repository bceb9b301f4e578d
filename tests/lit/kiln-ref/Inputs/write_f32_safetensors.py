"""write_f32_safetensors.py OUT NAME=v,v,... ...: a safetensors file of
1-D or 2x2 F32 tensors (4 values make [2, 2]) whose values may be nan, inf
or -inf, which kiln-ref cannot write itself."""
import json
import struct
import sys

out, tensors = sys.argv[1], [a.split("=") for a in sys.argv[2:]]
header, data = {}, b""
for name, values in tensors:
    floats = [float(v) for v in values.split(",")]
    shape = [2, 2] if len(floats) == 4 else [len(floats)]
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [len(data), len(data) + 4 * len(floats)]}
    data += struct.pack("<%df" % len(floats), *floats)
encoded = json.dumps(header).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(encoded)) + encoded + data)
