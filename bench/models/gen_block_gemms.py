#!/usr/bin/env python3
"""Writes the matrix products of the transformer block's training step as
models of their own, bench/models/gemm_block_<form>_<M>x<K>x<N>.mlir
(bench/bench_gemm.py's block_gemms: the forward's, the input gradients' and the
weight gradients' products), one file per shape.

    python3 bench/models/gen_block_gemms.py [--check] [--out DIR]

--check compares the files with what it would write and exits 1 when one
differs (or is missing) instead of writing them.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import bench_gemm as gemm  # noqa: E402  bench/bench_gemm.py: the shapes
import model_files  # noqa: E402

FORMS = {"nn": ("y = a @ b", ""),
         "nt": ("y = a @ b^T", " transpose_rhs"),
         "tn": ("y = a^T @ b", " transpose_lhs")}


def tensor(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xbf16>"


def model(form, m, k, n, count, what):
    a, b = (tensor(s) for s in gemm.block_gemm_operands(form, m, k, n))
    y = tensor([m, n])
    formula, flag = FORMS[form]
    return "\n".join([
        f"// {formula}, bf16, M x K x N = {m} x {k} x {n}:",
        f"// {what} ({count} per training step of the transformer block).",
        "// Written by bench/models/gen_block_gemms.py; compiled with",
        "// `kilnc --inference --function f`, timed by bench/run.py against cuBLAS.",
        f'func.func @f(%a: {a} {{kiln.name = "a"}}, %b: {b} {{kiln.name = "b"}})',
        f'    -> ({y} {{kiln.name = "y"}}) {{',
        f"  %y = kiln.matmul %a, %b{flag} : {a}, {b}",
        f"  return %y : {y}",
        "}",
        ""])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="directory (default: bench/models)")
    p.add_argument("--check", action="store_true",
                   help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    texts = {os.path.join(args.out, gemm.block_gemm_name(*shape[:4]) + ".mlir"):
             model(*shape) for shape in gemm.block_gemms()}
    return model_files.write_or_check(texts, args.check, "gen_block_gemms.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
