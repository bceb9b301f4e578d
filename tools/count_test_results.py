#!/usr/bin/env python3
"""Counts passed and failed test cases in the JUnit XML files under a folder.

Prints "PASSED FAILED". A target whose XML is missing or unreadable counts as
one failure, so a crash can never look like success.
"""
import os
import sys
import xml.etree.ElementTree as ElementTree


def count(root):
    passed = failed = 0
    for folder, _, files in os.walk(root, followlinks=True):
        if "test.log" not in files:
            continue
        try:
            tree = ElementTree.parse(os.path.join(folder, "test.xml"))
        except (OSError, ElementTree.ParseError):
            failed += 1
            continue
        for case in tree.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is None or case.get("status") == "run":
                passed += 1
    return passed, failed


if __name__ == "__main__":
    print(*count(sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs"))
