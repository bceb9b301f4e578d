"""Writes the tile sweep's models into OUT_DIR: per layer, one conv2d's
forward (@f), input gradient (@di) and filter gradient (@dw), bf16, NHWC.
    gen_models.py OUT_DIR"""
import os
import sys

def t(shape): return "tensor<" + "x".join(map(str, shape)) + "xbf16>"
def model(n, c, h, o, k, s, p):
    oh = (h + 2 * p - k) // s + 1
    x, w, y = t([n, h, h, c]), t([o, k, k, c]), t([n, oh, oh, o])
    a = f"layout = nhwc stride = [{s}, {s}] padding = [{p}, {p}, {p}, {p}]"
    return f'''func.func @f(%x: {x} {{kiln.name = "x"}}, %w: {w} {{kiln.name = "w"}}) -> ({y} {{kiln.name = "y"}}) {{
  %y = kiln.conv2d %x, %w {a} : {x}, {w}
  return %y : {y}
}}
func.func @di(%g: {y} {{kiln.name = "g"}}, %w: {w} {{kiln.name = "w"}}) -> ({x} {{kiln.name = "dx"}}) {{
  %d = kiln.conv2d_backward_input %g, %w {a} : {y}, {w} -> {x}
  return %d : {x}
}}
func.func @dw(%g: {y} {{kiln.name = "g"}}, %x: {x} {{kiln.name = "x"}}) -> ({w} {{kiln.name = "dw"}}) {{
  %d = kiln.conv2d_backward_filter %g, %x {a} : {y}, {x} -> {w}
  return %d : {w}
}}
'''
shapes = {"s64": (32, 64, 56, 64, 3, 1, 1), "s256": (32, 256, 14, 256, 3, 1, 1),
          "s512": (32, 512, 7, 512, 3, 1, 1), "p1x1": (32, 64, 56, 256, 1, 1, 0),
          "s2": (32, 128, 56, 128, 3, 2, 1)}
for name, sh in shapes.items():
    with open(os.path.join(sys.argv[1], name + ".mlir"), "w") as f:
        f.write(model(*sh))
