#!/usr/bin/env python3
"""Writes the attention models of the benchmarks, bench/models/attention_*.mlir:
B8 H16 T2048 in bf16 at head dims 64 and 128, causal and not (bench/bench_attention.py's
ATTENTION_SHAPES), one file per shape.

    python3 bench/models/gen_attention.py [--check] [--out DIR]

--check compares the files with what it would write and exits 1 when one
differs (or is missing) instead of writing them.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import bench_attention as attention  # noqa: E402  bench/bench_attention.py: the shapes
import model_files  # noqa: E402


def model(d, causal):
    t = "tensor<" + "x".join(map(str, attention.attention_shape(d))) + "xbf16>"
    mask = " causal" if causal else ""
    return "\n".join([
        f"// Attention, B{attention.ATTENTION_B} H{attention.ATTENTION_H} T{attention.ATTENTION_T} "
        f"D{d} bf16, {'causal' if causal else 'not causal'}, scale 1/sqrt(D).",
        "// Written by bench/models/gen_attention.py (bench/bench_attention.py's ATTENTION_SHAPES).",
        "// Compiled with `kilnc --inference --function f`, the artifact has the",
        "// entries that bench/run.py times:",
        "//  - forward: o = attention(q, k, v);",
        "//  - fwdbwd: o and, for the gradient g of o, dq, dk and dv (what kiln's",
        "//    autodiff emits for it).",
        f'func.func @f(%q: {t} {{kiln.name = "q"}}, %k: {t} {{kiln.name = "k"}},',
        f'             %v: {t} {{kiln.name = "v"}}) -> ({t} {{kiln.name = "o"}}) {{',
        f"  %o = kiln.attention %q, %k, %v{mask} : {t}, {t}, {t}",
        f"  return %o : {t}",
        "}",
        "",
        f'func.func @fwdbwd(%q: {t} {{kiln.name = "q"}}, %k: {t} {{kiln.name = "k"}},',
        f'                  %v: {t} {{kiln.name = "v"}}, %g: {t} {{kiln.name = "g"}})',
        f'    -> ({t} {{kiln.name = "o"}}, {t} {{kiln.name = "dq"}}, {t} {{kiln.name = "dk"}},',
        f'        {t} {{kiln.name = "dv"}}) {{',
        f"  %o = kiln.attention %q, %k, %v{mask} : {t}, {t}, {t}",
        f"  %d:3 = kiln.attention_backward %q, %k, %v, %o, %g{mask} : {t}, {t}, {t}, {t}",
        f"  return %o, %d#0, %d#1, %d#2 : {t}, {t}, {t}, {t}",
        "}",
        ""])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="directory (default: bench/models)")
    p.add_argument("--check", action="store_true",
                   help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    texts = {os.path.join(args.out, attention.attention_model_name(d, causal) + ".mlir"):
             model(d, causal) for d, causal in attention.ATTENTION_SHAPES}
    return model_files.write_or_check(texts, args.check, "gen_attention.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
