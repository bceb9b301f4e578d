#!/usr/bin/env python3
"""Counts passed and failed test cases of one `bazel test` run.

    count_test_results.py TESTLOGS [--events BEP.json]

Prints "PASSED FAILED" on stdout, counting test cases in the JUnit XML files
under TESTLOGS. A target whose XML is missing or unreadable counts as one
failure, so a crash can never look like success.

With --events (the file of `bazel test --build_event_json_file`), a test
result that Bazel took from a cache instead of running the test (its local
action cache, or the disk or remote cache) counts as one failure of that
target, named on stderr: a run must prove what is on main now, not what an
earlier run saw.
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ElementTree


def count_cases(root):
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


def cached_results(events_path):
    """The labels whose test result in the build event file came from a cache."""
    cached = []
    with open(events_path, encoding="utf-8") as events:
        for line in events:
            line = line.strip()
            if not line:
                continue
            event = json.loads(line)
            result = event.get("testResult")
            if result is None:
                continue
            info = result.get("executionInfo", {})
            if result.get("cachedLocally") or info.get("cachedRemotely"):
                label = event["id"]["testResult"]["label"]
                if label not in cached:
                    cached.append(label)
    return cached


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("testlogs", nargs="?", default="bazel-testlogs")
    parser.add_argument("--events", help="bazel's --build_event_json_file")
    args = parser.parse_args(argv)
    passed, failed = count_cases(args.testlogs)
    if args.events:
        try:
            cached = cached_results(args.events)
        except (OSError, ValueError, KeyError) as error:
            print(f"count_test_results: cannot read {args.events}: {error}",
                  file=sys.stderr)
            cached = ["(the build event file)"]
        for label in cached:
            print(f"{label}: its result came from a cache; the test did not run",
                  file=sys.stderr)
        failed += len(cached)
    print(passed, failed)


if __name__ == "__main__":
    main(sys.argv[1:])
