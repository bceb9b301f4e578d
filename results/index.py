#!/usr/bin/env python3
"""Writes results/README.md, the index of the results tree, from its entries.

An entry is a dated folder, or the files sharing one dated name before their
extension, directly under one of the kinds (gpu-checks/, bench/, samples/).
Its line says the date, the card (H100, H200 or CPU), the kiln commit where
the entry's files name one, and what it shows (the heading of its Markdown,
else its name in words and the summary lines of its logs).

  index.py [--root DIR]          rewrite DIR/README.md (DIR: this folder)
  index.py [--root DIR] --check  exit 1 when README.md is not what it writes
"""
import argparse
import os
import re
import sys

KINDS = [
    ("gpu-checks", "GPU checks",
     "Logs of the GPU bundles of tests/gpu (docs/gpu-checks.md)."),
    ("bench", "Benchmarks",
     "bench/run.py's tables against PyTorch, their logs, notes and Nsight "
     "Compute profiles (bench/README.md), and other measurements."),
    ("samples", "Samples",
     "The samples trained on the GPU (docs/samples.md)."),
]
HEADER = """# Results

What runs measured, one dated entry each: `gpu-checks/DATE-CARD-WHAT/` (the
GPU bundles' logs), `bench/DATE-CARD-WHAT.*` (benchmark tables, logs, notes,
profiles) and `samples/DATE-CARD-WHAT/` (the samples' GPU runs). Commit a new
run under its kind with a dated name, then regenerate this index with
`python3 results/index.py` (`//results:index_test` fails while it is stale).
The commit column is the kiln commit the entry's files name, where they do.
"""
DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+)$")
CARD = re.compile(r"\b(H100|H200)\b", re.IGNORECASE)
# Where no card is named, a mention of the CPU or of no GPU says CPU.
MACHINE = re.compile(r"\b(H100|H200|CPU)\b|\bno GPU\b")
# "commit abc1234", "kiln abc1234", "main at abc1234", or a line holding
# only a full hash (COMMIT files, gpu.txt).
COMMIT = re.compile(r"\b(?:[Cc]ommits?:?|kiln|main(?: at)?|at)\s+"
                    r"([0-9a-f]{7,40})\b|^([0-9a-f]{40})(?:-dirty)?$",
                    re.MULTILINE)
SUMMARY = re.compile(r"^\d+ passed, \d+ failed.*$", re.MULTILINE)
TEXT = (".md", ".txt", ".log", ".csv")
# Files that bundles write with the card and the commit, at any depth.
STAMPS = {"gpu.txt", "COMMIT"}


class EntryError(Exception):
    pass


def entry_files(kind_dir, name):
    """The files of entry `name` of kind_dir, relative to kind_dir."""
    path = os.path.join(kind_dir, name)
    if os.path.isdir(path):
        found = []
        for top, dirs, files in os.walk(path):
            dirs.sort()
            found += [os.path.relpath(os.path.join(top, f), kind_dir)
                      for f in sorted(files)]
        return found
    return sorted(f for f in os.listdir(kind_dir)
                  if not os.path.isdir(os.path.join(kind_dir, f))
                  and stem(f) == name)


def stem(file_name):
    return file_name.split(".", 1)[0]


def entry_names(kind_dir):
    names = set()
    for f in os.listdir(kind_dir):
        if f.startswith("."):
            continue
        is_dir = os.path.isdir(os.path.join(kind_dir, f))
        names.add(f if is_dir else stem(f))
    for name in names:
        if not DATED.match(name):
            raise EntryError(f"{kind_dir}/{name}: an entry's name must start "
                             "with its date, YYYY-MM-DD-")
    return sorted(names)


def head(path, lines):
    """The first `lines` lines of a text file ('' for other files)."""
    if not path.endswith(TEXT) and os.path.basename(path) not in STAMPS:
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return "".join(line for _, line in zip(range(lines), f))


def heading(text):
    """The first heading of Markdown text, '' if it has none."""
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def first_paragraph(text):
    """What follows the first heading, up to the next blank line."""
    body = text.split("\n", 1)[1] if text.startswith("#") else text
    return body.strip().split("\n\n", 1)[0]


def card_of(name, intro):
    """H100 or H200 from the entry's name; else the first machine its
    heading, then its first paragraph, then its first lines name; else CPU."""
    m = CARD.search(name)
    if m:
        return m.group(1).upper()
    for text in (heading(intro), first_paragraph(intro), intro):
        m = MACHINE.search(text)
        if m:
            return m.group(1) or "CPU"
    return "CPU"


def name_in_words(name):
    words = DATED.match(name).group(2).split("-")
    words = [w for w in words if not CARD.fullmatch(w)]
    return " ".join(words).replace("ncu", "Nsight Compute") or "run"


def summaries(kind_dir, files):
    """'file: N passed, M failed' of the entry's top-level logs."""
    found = []
    for f in files:
        path = os.path.join(kind_dir, f)
        if f.count("/") > 1 or not f.endswith((".txt", ".log")):
            continue
        with open(path, encoding="utf-8", errors="replace") as text:
            lines = SUMMARY.findall(text.read())
        if lines:
            found.append(f"{os.path.basename(f)}: {lines[-1]}")
    return found[:3] + (["…"] if len(found) > 3 else [])


def primary_markdown(name, files):
    """The entry's own description: its README.md or NAME.md."""
    for candidate in (f"{name}/README.md", f"{name}.md"):
        if candidate in files:
            return candidate
    return None


def first_commit(texts):
    for text in texts:
        for m in COMMIT.finditer(text):
            found = m.group(1) or m.group(2)
            if not found.isdigit():
                return found[:7]
    return ""


def describe(kind_dir, name):
    """(link, date, card, commit, what) of one entry."""
    files = entry_files(kind_dir, name)
    markdown = primary_markdown(name, files)
    intro = head(os.path.join(kind_dir, markdown), 40) if markdown else ""
    top_level = [f for f in files if f.count("/") <= 1]
    stamps = [f for f in files if os.path.basename(f) in STAMPS]
    logs = [head(os.path.join(kind_dir, f), 5)
            for f in top_level + stamps if f != markdown]
    what = heading(intro) or "; ".join(
        [name_in_words(name)] + summaries(kind_dir, top_level))
    link = name + "/" if os.path.isdir(os.path.join(kind_dir, name)) else (
        markdown or files[0])
    return (link, DATED.match(name).group(1), card_of(name, intro),
            first_commit([intro] + logs), what)


def cell(text):
    return text.replace("|", "\\|")


def kind_section(root, kind, title, about):
    kind_dir = os.path.join(root, kind)
    lines = [f"## {title}", "", about, "",
             "| entry | date | card | commit | what it shows |",
             "|---|---|---|---|---|"]
    names = entry_names(kind_dir) if os.path.isdir(kind_dir) else []
    rows = [describe(kind_dir, name) for name in names]
    shared = [what for *_, what in rows]
    for name, (link, date, card, commit, what) in zip(names, rows):
        if shared.count(what) > 1:  # e.g. run.py's title: name the run
            what = f"{what} ({name_in_words(name)})"
        lines.append(f"| [{cell(name)}]({kind}/{link}) | {date} | {card} "
                     f"| {commit or '—'} | {cell(what)} |")
    return "\n".join(lines) + "\n"


def index(root):
    return "\n".join([HEADER] + [kind_section(root, *k) for k in KINDS])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", default=os.path.dirname(os.path.abspath(__file__)),
                   help="the results folder (default: this script's)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when README.md is stale instead of writing it")
    args = p.parse_args()
    try:
        text = index(args.root)
    except (EntryError, OSError) as e:
        print(f"index.py: {e}", file=sys.stderr)
        return 1
    readme = os.path.join(args.root, "README.md")
    if not args.check:
        with open(readme, "w") as f:
            f.write(text)
        return 0
    try:
        with open(readme) as f:
            current = f.read()
    except OSError as e:
        print(f"index.py: {e}", file=sys.stderr)
        return 1
    if current != text:
        print(f"index.py: {readme} is stale: run python3 results/index.py "
              "(entries listed or described differently:)", file=sys.stderr)
        stale = sorted(set(text.splitlines()) ^ set(current.splitlines()))
        print("\n".join(stale[:20]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
