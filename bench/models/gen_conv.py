#!/usr/bin/env python3
"""Writes the convolution models of the benchmarks, bench/models/conv_*.mlir:
ResNet-50's layers at N = 32 in bf16 (bench/bench_conv.py's CONV_LAYERS, the conv2d
anchors of TARGETS.md), in NHWC and NCHW, one file per layer and layout.

    python3 bench/models/gen_conv.py [--check] [--out DIR]

--check compares the files with what it would write and exits 1 when one
differs (or is missing) instead of writing them.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import bench_conv as conv  # noqa: E402  bench/bench_conv.py: the layers and their shapes
import model_files  # noqa: E402


def tensor(shape, dtype="bf16"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def conv_attrs(layer, layout):
    """kiln.conv2d's attributes (defaults left out)."""
    text = f"layout = {layout}"
    if layer["stride"] != 1:
        text += f" stride = [{layer['stride']}, {layer['stride']}]"
    if layer["pad"]:
        text += " padding = [" + ", ".join([str(layer["pad"])] * 4) + "]"
    return text


def model(layer, layout):
    """The model file's text: @f (the forward pass), @fwdbwd and, for the
    stem, @fwdbwd_nodx."""
    s = conv.conv_shapes(layer, layout)
    x, w, y = tensor(s["x"]), tensor(s["w"]), tensor(s["y"])
    attrs = conv_attrs(layer, layout)
    k, stride, pad = layer["k"], layer["stride"], layer["pad"]
    directions = conv.conv_directions(layer)
    lines = [
        f"// conv2d, {layout.upper()}, {layer['what']} (ResNet-50), N{conv.CONV_N} bf16:",
        f"// x {s['x']}, w {s['w']} -> y {s['y']};",
        f"// {k}x{k} filter, stride {stride}, padding {pad}, no bias.",
        "// Written by bench/models/gen_conv.py (bench/bench_conv.py's CONV_LAYERS). Compiled",
        "// with `kilnc --inference --function f`, the artifact has the entries that",
        "// bench/run.py times:",
        "//  - forward: y = conv2d(x, w);",
        "//  - fwdbwd: y and, for the gradient g of y, dx and dw (kiln.conv2d's two",
        "//    backward ops, what kiln's autodiff emits for it);",
    ]
    if "fwdbwd_nodx" in directions:
        lines += ["//  - fwdbwd_nodx: y and dw only (the first layer of a network needs no",
                  "//    input gradient)."]
    else:
        lines[-1] = lines[-1][:-1] + "."
    lines += [
        f'func.func @f(%x: {x} {{kiln.name = "x"}},',
        f'             %w: {w} {{kiln.name = "w"}})',
        f'    -> ({y} {{kiln.name = "y"}}) {{',
        f"  %y = kiln.conv2d %x, %w {attrs} : {x}, {w}",
        f"  return %y : {y}",
        "}",
    ]
    for direction in directions[1:]:
        dx = direction == "fwdbwd"
        results = [f'{y} {{kiln.name = "y"}}']
        if dx:
            results.append(f'{x} {{kiln.name = "dx"}}')
        results.append(f'{w} {{kiln.name = "dw"}}')
        lines += [
            "",
            f'func.func @{direction}(%x: {x} {{kiln.name = "x"}},',
            " " * (len(direction) + 11) + f'%w: {w} {{kiln.name = "w"}},',
            " " * (len(direction) + 11) + f'%g: {y} {{kiln.name = "g"}})',
            "    -> (" + ", ".join(results) + ") {",
            f"  %y = kiln.conv2d %x, %w {attrs} : {x}, {w}",
        ]
        if dx:
            lines.append(f"  %dx = kiln.conv2d_backward_input %g, %w {attrs} : {y}, {w} -> {x}")
        lines.append(f"  %dw = kiln.conv2d_backward_filter %g, %x {attrs} : {y}, {x} -> {w}")
        values = ["%y"] + (["%dx"] if dx else []) + ["%dw"]
        types = [y] + ([x] if dx else []) + [w]
        lines += [f"  return {', '.join(values)} : {', '.join(types)}", "}"]
    return "\n".join(lines) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="directory (default: bench/models)")
    p.add_argument("--check", action="store_true",
                   help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    texts = {}
    for layout in conv.CONV_LAYOUTS:
        for entry in conv.CONV_LAYERS:
            layer = conv.conv_layer(entry[0])
            path = os.path.join(args.out, conv.conv_model_name(layout, layer["name"]) + ".mlir")
            texts[path] = model(layer, layout)
    return model_files.write_or_check(texts, args.check, "gen_conv.py")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
