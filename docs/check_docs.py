#!/usr/bin/env python3
"""Checks the documentation against the code it describes.

For each Markdown file given:
- every ```mlir block parses and verifies with kiln-opt: a block with a
  `func.func` as a file of its own, any other block statement by statement
  (a statement's operands that it does not define become arguments of the
  function it is wrapped in, each of the type the statement uses it with,
  which kiln-opt's diagnostics name: an argument first typed `none` is
  reported as "expects different type than prior uses: 'T' vs 'none'");
- every op of an op reference (a `### \\`kiln.NAME\\`` heading) has an
  example that uses it;
- a block after `<!-- file: PATH -->` is the committed file PATH, byte for
  byte;
- every relative link points to a file that exists and, for a Markdown
  file, to one of its headings.

  check_docs.py --kiln-opt KILN_OPT --root ROOT MD...

MD and the link targets are relative to ROOT.
"""
import argparse
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
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.M | re.S)
FILE_MARKER = re.compile(r"<!-- file: (\S+) -->\s*\n(?:\s*\n)*```\S*\n(.*?)^```$",
                         re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text):
    text = FENCE.sub("", text)
    return {anchor(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def statements(example):
    """Splits a fragment at the lines that start a statement outside braces."""
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


def kiln_opt(tool, text, workdir):
    path = os.path.join(workdir, "example.mlir")
    with open(path, "w") as f:
        f.write(text)
    run = subprocess.run([tool, path], capture_output=True, text=True)
    return run.returncode, run.stderr


def check_fragment(tool, statement, workdir):
    """None when the statement verifies, else kiln-opt's error."""
    arguments = []  # [name, type]
    for _ in range(32):
        header = ", ".join(f"{n}: {t}" for n, t in arguments)
        text = (f"func.func @example({header}) {{\n{statement}\n"
                "  func.return\n}\n")
        status, stderr = kiln_opt(tool, text, workdir)
        if status == 0:
            return None
        errors = DIAGNOSTIC.findall(stderr)
        undeclared = [(int(l), int(c)) for l, c, message in errors
                      if message == "use of undeclared SSA value name"]
        retyped = [m for m in (RETYPED.search(e[2]) for e in errors) if m]
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
            return stderr.strip()
    return "the example's operands could not be typed"


def check_mlir(tool, block, workdir):
    if re.search(r"^\s*func\.func", block, re.M):
        status, stderr = kiln_opt(tool, block, workdir)
        return [] if status == 0 else [stderr.strip()]
    return [e for e in (check_fragment(tool, s, workdir)
                        for s in statements(block)) if e]


def check_ops(path, text):
    """Every op section of a reference has an example that uses the op."""
    failures = []
    lines = text.splitlines()
    starts = [(i, m.group(1)) for i, l in enumerate(lines)
              for m in [OP_HEADING.match(l)] if m]
    for k, (i, name) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        section = "\n".join(lines[i:end])
        section = section.split("\n## ")[0]
        examples = [m.group(2) for m in FENCE.finditer(section + "\n")
                    if m.group(1) == "mlir"]
        if not any(re.search(re.escape(name) + r"(?![\w])", e)
                   for e in examples):
            failures.append(f"{path}:{i + 1}: {name} has no example that "
                            "uses it")
    return failures


def check_links(root, path, text):
    failures = []
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    prose = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), prose)
    for m in LINK.finditer(prose):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        where = f"{path}:{line_of(prose, m.start())}"
        file, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path),
                                                 file)) if file else path
        full = os.path.join(root, resolved)
        if not os.path.exists(full):
            failures.append(f"{where}: the link {target} points to "
                            f"{resolved}, which does not exist")
            continue
        if fragment and resolved.endswith(".md"):
            with open(full) as f:
                if fragment not in anchors(f.read()):
                    failures.append(f"{where}: {resolved} has no heading "
                                    f"#{fragment}")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln-opt", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failures, blocks = [], 0
    with tempfile.TemporaryDirectory() as workdir:
        for path in args.files:
            with open(os.path.join(args.root, path)) as f:
                text = f.read()
            for m in FENCE.finditer(text):
                if m.group(1) != "mlir":
                    continue
                blocks += 1
                for error in check_mlir(args.kiln_opt, m.group(2), workdir):
                    failures.append(f"{path}:{line_of(text, m.start())}: the "
                                    f"example does not verify:\n{error}")
            failures += check_ops(path, text)
            for m in FILE_MARKER.finditer(text):
                with open(os.path.join(args.root, m.group(1))) as f:
                    if f.read() != m.group(2):
                        failures.append(f"{path}:{line_of(text, m.start())}: "
                                        f"the block is not {m.group(1)} as "
                                        "committed")
            failures += check_links(args.root, path, text)
    for failure in failures:
        print("FAIL: " + failure + "\n")
    print(f"{len(args.files)} files, {blocks} mlir blocks, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
