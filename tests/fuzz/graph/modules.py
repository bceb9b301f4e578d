"""Reading what the tools print: entry signatures, kilnc's IR dump and its
diagnostics."""
import re

TYPE = re.compile(r"tensor<((?:\d+x)*)(f32|bf16|f16|i32|i1)>")
DUMP = "// -----// IR Dump Before KilnEmitCuda (kiln-emit-cuda) //----- //"
DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|note|remark): (?P<text>.*)$")


def parse_type(text):
    m = TYPE.search(text)
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return dims, m.group(2)


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
    return [p.strip() for p in parts if p.strip()]


def balanced(text, start):
    """The index just past the bracket that closes text[start - 1]."""
    depth, i = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def signature(module_text, function):
    """([(name, shape, dtype, role)], [(name, shape, dtype)]) of @function,
    or None when the module has no such function."""
    head = f"func.func @{function}("
    if head not in module_text:
        return None
    start = module_text.index(head) + len(head)
    end = balanced(module_text, start)
    args = []
    for i, arg in enumerate(top_level_split(module_text[start:end - 1])):
        name = re.search(r'kiln\.name = "([^"]*)"', arg)
        role = re.search(r'kiln\.role = "([^"]*)"', arg)
        shape, dtype = parse_type(arg)
        args.append((name.group(1) if name else f"arg{i}", shape, dtype,
                     role.group(1) if role else ("param" if "kiln.param" in arg else "input")))
    rest = module_text[end:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            inner = rest[1:balanced(rest, 1) - 1]
            items = top_level_split(inner)
        else:
            items = [rest.split("{")[0] if rest.split("{")[0].strip() else rest]
        for i, item in enumerate(items):
            name = re.search(r'kiln\.name = "([^"]*)"', item)
            shape, dtype = parse_type(item)
            results.append((name.group(1) if name else f"result{i}", shape, dtype))
    return args, results


def split_dump(stderr):
    """(module text printed before code generation or None, the rest of
    stderr: the diagnostics)."""
    if DUMP not in stderr:
        return None, stderr
    before, after = stderr.split(DUMP, 1)
    lines = after.lstrip("\n").split("\n")
    for i, line in enumerate(lines):
        if line == "}":
            return "\n".join(lines[:i + 1]) + "\n", before + "\n".join(lines[i + 1:])
    return None, stderr


def errors(diagnostics):
    """[(file, line, col, text)] of the error diagnostics; file is None for
    an error without a location."""
    found = []
    for line in diagnostics.splitlines():
        m = DIAGNOSTIC.match(line)
        if m and m.group("kind") == "error":
            found.append((m.group("file"), int(m.group("line")), int(m.group("col")), m.group("text")))
        elif re.match(r"^(error|LLVM ERROR|[\w.-]+: error:)", line) and not m:
            # (A tool's own error; a compiler's message quoted in a located
            # diagnostic, such as NVRTC's "file.cuh(303): error: ...", is
            # part of that diagnostic.)
            found.append((None, 0, 0, line))
    return found
