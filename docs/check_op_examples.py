#!/usr/bin/env python3
"""Checks the examples of the op reference (docs/ops.md) with kiln-opt.

Every op's section must have an ```mlir example that uses the op, and every
statement of every example must parse and verify. A statement uses values
it does not define (`%x` in `%y = kiln.abs %x : tensor<4x8xf32>`): they
become arguments of the function the statement is wrapped in, each of the
type the statement uses it with, which kiln-opt's diagnostics name (an
argument first typed `none` is reported as "expects different type than
prior uses: 'T' vs 'none'").

  check_op_examples.py KILN_OPT OPS_MD
"""
import os
import re
import subprocess
import sys
import tempfile

OP_HEADING = re.compile(r"^### `(kiln\.\w+)`")
DIAGNOSTIC = re.compile(r"^[^:]*:(\d+):(\d+): error: (.*)$", re.M)
VALUE = re.compile(r"%[\w$.-]+")
RETYPED = re.compile(r"use of value '(%[^']+)' expects different type than "
                     r"prior uses: '(.*)' vs 'none'")


def sections(text):
    """(op name, heading line number, section text) per op of the reference."""
    lines = text.splitlines()
    starts = [(i, m.group(1)) for i, line in enumerate(lines)
              for m in [OP_HEADING.match(line)] if m]
    for k, (i, name) in enumerate(starts):
        end = len(lines)
        for j in range(i + 1, len(lines)):
            if lines[j].startswith("## ") or lines[j].startswith("### "):
                end = j
                break
        yield name, i + 1, "\n".join(lines[i:end])


def examples(section):
    return re.findall(r"^```mlir\n(.*?)^```", section, re.M | re.S)


def statements(example):
    """Splits an example at the lines that start a statement outside braces."""
    result, current, depth = [], [], 0
    for line in example.splitlines():
        code = line.split("//")[0]
        starts = depth == 0 and re.match(r"(%|kiln\.)", code) is not None
        if starts and current:
            result.append("\n".join(current))
            current = []
        if code.strip():
            current.append(line)
        depth += code.count("{") - code.count("}")
    if current:
        result.append("\n".join(current))
    return result


def wrap(statement, arguments):
    header = ", ".join(f"{name}: {type}" for name, type in arguments)
    return f"func.func @example({header}) {{\n{statement}\n  func.return\n}}\n"


def check(kiln_opt, statement, workdir):
    """Returns None when the statement verifies, else kiln-opt's error."""
    arguments = []  # [name, type]
    path = os.path.join(workdir, "example.mlir")
    for _ in range(32):
        text = wrap(statement, arguments)
        with open(path, "w") as f:
            f.write(text)
        run = subprocess.run([kiln_opt, path], capture_output=True, text=True)
        if run.returncode == 0:
            return None
        errors = DIAGNOSTIC.findall(run.stderr)
        undeclared = [(int(l), int(c)) for l, c, message in errors
                      if message == "use of undeclared SSA value name"]
        retyped = [RETYPED.search(message) for _, _, message in errors]
        retyped = [m for m in retyped if m]
        if undeclared:
            lines = text.splitlines()
            for line, column in undeclared:
                name = VALUE.match(lines[line - 1][column - 1:]).group(0)
                if name not in [a[0] for a in arguments]:
                    arguments.append([name, "none"])
        elif retyped:
            for m in retyped:
                for argument in arguments:
                    if argument[0] == m.group(1):
                        argument[1] = m.group(2)
        else:
            return run.stderr.strip()
    return "the example's operands could not be typed"


def main():
    kiln_opt, ops_md = sys.argv[1], sys.argv[2]
    with open(ops_md) as f:
        text = f.read()
    failures, checked, ops = [], 0, 0
    with tempfile.TemporaryDirectory() as workdir:
        for name, line, section in sections(text):
            ops += 1
            found = examples(section)
            if not any(re.search(re.escape(name) + r"(?![\w])", e)
                       for e in found):
                failures.append(f"{ops_md}:{line}: {name} has no example "
                                "that uses it")
            for example in found:
                for statement in statements(example):
                    checked += 1
                    error = check(kiln_opt, statement, workdir)
                    if error:
                        failures.append(f"{ops_md}:{line}: an example of "
                                        f"{name} does not verify:\n"
                                        f"{statement}\n{error}")
    for failure in failures:
        print("FAIL: " + failure + "\n")
    print(f"{ops} ops, {checked} example statements, "
          f"{len(failures)} failures")
    return 1 if failures or ops == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
