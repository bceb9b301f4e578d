#!/usr/bin/env python3
"""Runs the tutorial of README.md, block by block, in a fresh folder.

The README marks each block of the tutorial with an HTML comment on the line
before it (blank lines may follow the comment):

  <!-- tutorial: setup -->       building the tools: not run here (the tools
                                 are given); its `bazel build` labels must be
                                 exactly the tools given
  <!-- tutorial: file PATH -->   the block is the committed file PATH, byte for
                                 byte; it is written to the work folder under
                                 its base name
  <!-- tutorial: excerpt PATH -->  the block is a run of whole lines of the
                                 committed file PATH, byte for byte (the
                                 tests build the file itself)
  <!-- tutorial -->              a shell script, run in the work folder
  <!-- tutorial: expect RE -->   the same, and its output must match RE
  <!-- tutorial: gpu -->         commands for the GPU, one per line (a line
                                 ending in a backslash continues): each is run
                                 on its own, and where there is no GPU it must
                                 stop with the runtime's "no NVIDIA driver"
                                 message, which counts it as skipped (a
                                 skipped kiln-run command then runs again
                                 with --dry-run, which must pass); a command
                                 that reads a file which a skipped command
                                 would have written (--checkpoint, --output,
                                 -o) is skipped too, saying so

  run_tutorial.py README --root ROOT --bin BIN --work WORK
                  [--only-gpu] [--require-gpu]

ROOT is the checkout (for the committed files), BIN the folder of the tools.
--only-gpu runs only the GPU blocks (on a GPU machine, in a work folder that
the other blocks filled: make_gpu_bundle.sh); --require-gpu makes a GPU
command that finds no GPU a failure.
Exit status 0 when every block passed (or was skipped for want of a GPU).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

MARKER = re.compile(r"^<!-- tutorial(?::\s*(\w+)\s*(.*?))?\s*-->$")
NO_GPU = "no NVIDIA driver on this machine"
OUTPUT_FLAGS = ("--checkpoint", "--output", "-o")


def outputs(command):
    """The files a command writes, by its output flags."""
    words = shlex.split(command)
    found = []
    for i, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag in OUTPUT_FLAGS:
            found.append(value or (words[i + 1] if i + 1 < len(words) else ""))
    return [f for f in found if f]


def reads(command, files):
    """Those of `files` that the command names (as a word or a flag value)."""
    words = shlex.split(command)
    values = set(words) | {w.partition("=")[2] for w in words}
    return [f for f in files if f in values]


def blocks(readme):
    """(line, kind, argument, text) of every marked block."""
    lines = open(readme).read().split("\n")
    result = []
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = lines[j] if j < len(lines) else ""
        if not fence.startswith("```"):
            sys.exit(f"{readme}:{i + 1}: the tutorial marker is not followed "
                     "by a code block")
        if "```" not in lines[j + 1:]:
            sys.exit(f"{readme}:{j + 1}: the code block does not end")
        end = lines.index("```", j + 1)
        text = "\n".join(lines[j + 1:end]) + "\n"
        result.append((i + 1, m.group(1) or "run", m.group(2) or "", text))
    return result


def commands(text):
    """The commands of a GPU block: its lines, continuations joined."""
    result, current = [], ""
    for line in text.splitlines():
        if line.strip().startswith("#") and not current:
            continue
        current += line.rstrip("\\").strip() + " " if line.endswith("\\") \
            else line.strip()
        if not line.endswith("\\"):
            if current.strip():
                result.append(current.strip())
            current = ""
    return result


def run(script, work, env):
    process = subprocess.run(["bash", "-euo", "pipefail", "-c", script],
                             cwd=work, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(process.stdout)
    sys.stdout.flush()
    return process.returncode, process.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("readme")
    parser.add_argument("--root", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--only-gpu", action="store_true")
    parser.add_argument("--require-gpu", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ)
    env["PATH"] = os.path.abspath(args.bin) + os.pathsep + env["PATH"]
    tools = sorted(os.listdir(args.bin))
    failures, skipped, ran = [], [], 0
    unwritten = []  # files that skipped commands would have written

    def fail(line, message):
        failures.append(f"{args.readme}:{line}: {message}")
        print(f"FAIL: {args.readme}:{line}: {message}", flush=True)

    found = blocks(args.readme)
    if not found:
        sys.exit(f"{args.readme}: no tutorial blocks")
    for line, kind, argument, text in found:
        if args.only_gpu and kind != "gpu":
            continue
        if kind == "setup":
            labels = re.findall(r"//[\w/.-]*(?::[\w.-]+)?", text)
            names = sorted(label.split(":")[-1].split("/")[-1]
                           for label in labels)
            if names != tools:
                fail(line, f"the setup builds {names}, the test runs {tools}")
        elif kind == "file":
            with open(os.path.join(args.root, argument)) as f:
                committed = f.read()
            if text != committed:
                fail(line, f"the block is not {argument} as committed")
            with open(os.path.join(args.work, os.path.basename(argument)),
                      "w") as f:
                f.write(text)
        elif kind == "excerpt":
            with open(os.path.join(args.root, argument)) as f:
                committed = f.read()
            if ("\n" + text) not in ("\n" + committed):
                fail(line, f"the block is not a run of lines of {argument}")
        elif kind in ("run", "expect"):
            print(f"== {args.readme}:{line}", flush=True)
            status, output = run(text, args.work, env)
            ran += 1
            if status != 0:
                fail(line, f"the block exited with status {status}")
                break
            if kind == "expect" and not re.search(argument, output, re.M):
                fail(line, f"its output does not match {argument!r}")
        elif kind == "gpu":
            for command in commands(text):
                print(f"== {args.readme}:{line}: {command}", flush=True)
                missing = [f for f in reads(command, unwritten)
                           if not os.path.exists(os.path.join(args.work, f))]
                if missing:
                    reason = (f"it reads {', '.join(missing)}, which a "
                              "skipped command writes")
                    skipped.append((command, reason))
                    unwritten += outputs(command)
                    print(f"   (skipped: {reason})", flush=True)
                    continue
                status, output = run(command, args.work, env)
                ran += 1
                if status == 0:
                    continue
                if NO_GPU in output and not args.require_gpu:
                    reason = "no GPU on this machine"
                    if shlex.split(command)[0] == "kiln-run":
                        reason += "; checked with --dry-run"
                    print(f"   (skipped: {reason})", flush=True)
                    if "--dry-run" in reason:
                        status, _ = run(command + " --dry-run", args.work, env)
                        if status != 0:
                            fail(line, "kiln-run --dry-run exited with status "
                                 f"{status}")
                    skipped.append((command, reason))
                    unwritten += outputs(command)
                else:
                    fail(line, f"{shlex.split(command)[0]} exited with "
                         f"status {status}")
        else:
            fail(line, f"unknown tutorial marker '{kind}'")
    print()
    for command, reason in skipped:
        print(f"SKIPPED ({reason}): {command}")
    print(f"tutorial: {ran} blocks and commands ran, {len(skipped)} GPU "
          f"commands skipped, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
