#!/usr/bin/env python3
"""Tests of index.py: the committed index is current, and the check fails
when an entry is missing from it, described differently or badly named."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "index.py")


def run(root, *args):
    return subprocess.run([sys.executable, SCRIPT, "--root", root, *args],
                          capture_output=True, text=True)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


class CommittedIndex(unittest.TestCase):
    def test_readme_lists_every_entry_as_index_py_writes_it(self):
        r = run(HERE, "--check")
        self.assertEqual(r.returncode, 0, r.stderr)


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        write(self.root, "gpu-checks/2026-01-02-h100-gemm/README.md",
              "# GEMM check\n\nCommit abc1234, seed 3.\n")
        write(self.root, "gpu-checks/2026-01-02-h100-gemm/logs/gpu.txt", "x\n")
        write(self.root, "bench/2026-01-03-h200-conv.log",
              "seed 1\nPASS a\n3 passed, 0 failed\n")
        write(self.root, "bench/2026-01-03-h200-conv.md",
              "# kiln against PyTorch\n\n- kiln commit: 0123456789abcdef\n")
        write(self.root, "bench/2026-01-04-planned.md",
              "# Planned memory\n\nkilnc --stats, no GPU.\n")
        write(self.root, "samples/2026-01-05-h200/samples.txt",
              "PASS x\n1 passed, 0 failed\n")
        write(self.root, "samples/2026-01-05-h200/gpu.txt",
              "NVIDIA H200, 580\n" + "ab12" * 10 + "-dirty\n")
        self.assertEqual(run(self.root).returncode, 0)

    def tearDown(self):
        self.tmp.cleanup()

    def readme(self):
        with open(os.path.join(self.root, "README.md")) as f:
            return f.read()

    def test_fresh_index_passes_the_check(self):
        r = run(self.root, "--check")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_lines_say_date_card_commit_and_what(self):
        rows = self.readme()
        self.assertIn("| [2026-01-02-h100-gemm](gpu-checks/2026-01-02-h100-"
                      "gemm/) | 2026-01-02 | H100 | abc1234 | GEMM check |",
                      rows)
        self.assertIn("(bench/2026-01-03-h200-conv.md) | 2026-01-03 | H200 | "
                      "0123456 | kiln against PyTorch |", rows)
        self.assertIn("| 2026-01-04 | CPU | — | Planned memory |", rows)
        self.assertIn("| 2026-01-05 | H200 | ab12ab1 | run; samples.txt: "
                      "1 passed, 0 failed |", rows)

    def test_a_new_entry_makes_the_index_stale(self):
        write(self.root, "samples/2026-01-06-h100-digits/summary.txt",
              "2 passed, 0 failed\n")
        r = run(self.root, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("is stale", r.stderr)
        self.assertIn("2026-01-06-h100-digits", r.stderr)

    def test_a_changed_description_makes_the_index_stale(self):
        write(self.root, "bench/2026-01-04-planned.md", "# Other title\n")
        self.assertEqual(run(self.root, "--check").returncode, 1)

    def test_an_undated_entry_is_refused(self):
        write(self.root, "bench/notes.md", "# Notes\n")
        r = run(self.root)
        self.assertEqual(r.returncode, 1)
        self.assertIn("bench/notes: an entry's name must start with its date",
                      r.stderr)

    def test_a_missing_index_fails_the_check(self):
        os.remove(os.path.join(self.root, "README.md"))
        r = run(self.root, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("README.md", r.stderr)


if __name__ == "__main__":
    unittest.main()
