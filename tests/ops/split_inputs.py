#!/usr/bin/env python3
"""Splits the arguments kiln-ref drew for one entry into what kiln-run takes.

    split_inputs.py MODULE.mlir ENTRY DRAWN.safetensors PARAMS.safetensors INPUTS.safetensors

MODULE is kilnc's --emit=mlir output. Arguments whose kiln.role is "param"
or "state" (resident buffers the runtime owns, loaded with kiln-run --params)
go to
PARAMS, the caller's inputs (kiln-run --inputs) to INPUTS. A file that would
be empty is not written."""
import re
import sys

import safetensors_lite as st


def top_level_split(text, sep=","):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def entry_arguments(module_text, entry):
    """(name, role) of each argument of func.func @ENTRY."""
    start = module_text.index(f"func.func @{entry}(") + len(f"func.func @{entry}(")
    depth, end = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(module_text[end], 0)
        end += 1
    arguments = []
    for arg in top_level_split(module_text[start:end - 1]):
        name = re.search(r'kiln\.name = "([^"]*)"', arg)
        role = re.search(r'kiln\.role = "([^"]*)"', arg)
        arguments.append((name.group(1) if name else None, role.group(1) if role else "input"))
    return arguments


def main():
    module, entry, drawn, params_path, inputs_path = sys.argv[1:6]
    with open(module) as f:
        arguments = entry_arguments(f.read(), entry)
    tensors, _ = st.load(drawn)
    params, inputs = {}, {}
    for name, role in arguments:
        (params if role in ("param", "state") else inputs)[name] = tensors[name]
    if params:
        st.save(params_path, params)
    if inputs:
        st.save(inputs_path, inputs)


if __name__ == "__main__":
    main()
