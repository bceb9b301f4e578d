#!/usr/bin/python3
"""Writes docs/tools.md, the reference of kiln's command-line tools, from
their own --help: every flag of every tool with its default, as the tool's
option table (llvm::cl through tools/common/ToolOptions.h, Abseil flags
through tools/common/command_line.h) prints it, so the reference cannot
drift from the tools.

  gen_tools_md.py OUT NAME=BINARY...

Both help layouts are the same: a header (synopsis and prose), then
sections, a title line ending in ':' followed by one entry per flag,
"  --flag VALUE" and its description from column 28, ending in
"(default: X)" or "(required)"; kiln-opt's passes carry their options on
lines indented by four ("    name=VALUE"), an option's values by six
("      =value"); a footer may follow. A program whose --help fails (one that
takes only positional arguments) is documented by the usage line it prints.
"""

import re
import subprocess
import sys

DESCRIPTION_COLUMN = 28


def run_help(binary):
    """The --help text of `binary`, or its usage line when it has none."""
    done = subprocess.run([binary, "--help"], capture_output=True, text=True)
    if done.returncode == 0:
        return done.stdout, False
    usage = [line for line in done.stderr.splitlines() if "usage:" in line]
    if not usage:
        sys.exit(f"error: {binary} --help exited with {done.returncode} and "
                 f"printed no usage line:\n{done.stderr}")
    return usage[0].strip() + "\n", True


def split_default(description):
    """(description without its final "(default: X)", X) or "required"."""
    text = description.rstrip()
    if text.endswith("(required)"):
        return text[: -len("(required)")].rstrip(), "required"
    if not text.endswith(")"):
        return text, ""
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            group = text[i + 1:-1]
            if group.startswith("default:"):
                return text[:i].rstrip(), group[len("default:"):].strip()
            return text, ""
    return text, ""


class Entry:
    def __init__(self, flag, description):
        self.flag = flag
        self.description = description


def parse_help(text):
    """(header lines, [(title, [Entry])], footer lines)."""
    lines = text.rstrip("\n").split("\n")

    def starts_section(i):
        return (lines[i] and not lines[i].startswith(" ") and
                lines[i].endswith(":") and i + 1 < len(lines) and
                lines[i + 1].startswith("  -"))

    first = next((i for i in range(len(lines)) if starts_section(i)),
                 len(lines))
    header = lines[:first]
    sections, footer = [], []
    entry = parent = None
    i = first
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if starts_section(i):
            sections.append((line[:-1], []))
            entry = parent = None
        elif not line.strip():
            pass
        elif indent == 0:
            footer = lines[i:]
            break
        elif indent >= DESCRIPTION_COLUMN and entry is not None:
            entry.description += " " + line.strip()
        else:
            spec, _, rest = line.strip().partition("  ")
            rest = rest.strip()
            if indent == 2:
                entry = parent = Entry(spec, rest)
                sections[-1][1].append(entry)
            elif spec.startswith("="):
                # A value of the option above, described in its row.
                entry = sections[-1][1][-1]
                entry.description += f" `{spec[1:]}`: {rest}"
            else:
                # An option of the pass above, given inside its flag.
                entry = Entry(f'{parent.flag}="{spec}"', rest)
                sections[-1][1].append(entry)
        i += 1
    return header, sections, footer


def cell(text):
    """Text for a table cell."""
    text = re.sub(r"([|*])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def code(text):
    return "`" + text.replace("|", "\\|") + "`"


def anchor(title):
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^a-z0-9_ -]", "", title.lower())
    return text.replace(" ", "-")


def render(name, text, usage_only):
    out = [f"## {name}", ""]
    if usage_only:
        out += ["Takes positional arguments only:", "", "```text",
                text.rstrip(), "```", ""]
        return out
    header, sections, footer = parse_help(text)
    out += ["```text"] + [line.rstrip() for line in header]
    while out[-1] == "":
        out.pop()
    out += ["```", ""]
    for title, entries in sections:
        out += [f"### {name}: {title}", "", "| Flag | Default | Description |",
                "| --- | --- | --- |"]
        for entry in entries:
            description, default = split_default(entry.description.strip())
            if default in ("", "none", "required") or " " in default:
                default_cell = cell(default)
            else:
                default_cell = code(default)
            out.append(f"| {code(entry.flag)} | {default_cell} | "
                       f"{cell(description)} |")
        out.append("")
    if footer:
        out += ["```text"] + [line.rstrip() for line in footer] + ["```", ""]
    return out


def main():
    out_path, tools = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
    lines = [
        "<!-- Generated from the tools' --help by docs/gen_tools_md.py; do "
        "not edit.",
        "     After changing a tool's options: bazel run "
        "//docs:update_tools_md -->",
        "# Tools reference",
        "",
        "Every command-line tool and sample program of kiln, with every flag "
        "and its default, as its `--help` prints them (each tool also takes "
        "`-h`; the compiler-side tools list LLVM's and MLIR's own options "
        "with `--help-hidden`). A bad command line exits with status 2.",
        "",
    ]
    rendered = []
    for name, binary in tools:
        text, usage_only = run_help(binary)
        rendered.append(render(name, text, usage_only))
        lines.append(f"- [{name}](#{anchor(name)})")
    lines.append("")
    for block in rendered:
        lines += block
    with open(out_path, "w") as out:
        out.write("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
