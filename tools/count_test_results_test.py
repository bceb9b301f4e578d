#!/usr/bin/env python3
"""Tests of count_test_results.py: test cases counted from JUnit XML, and
results that a cache handed back counted as failures."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "count_test_results.py")

XML = """<?xml version="1.0"?>
<testsuites><testsuite name="s">
<testcase name="a" status="run"/>
<testcase name="b" status="run"><failure message="x"/></testcase>
<testcase name="c" status="notrun"><skipped/></testcase>
<testcase name="d" status="run"/>
</testsuite></testsuites>
"""


def test_result(label, cached_locally=False, cached_remotely=False):
    info = {"strategy": "remote cache hit"} if cached_remotely else {
        "strategy": "linux-sandbox"}
    if cached_remotely:
        info["cachedRemotely"] = True
    result = {"status": "PASSED", "executionInfo": info}
    if cached_locally:
        result["cachedLocally"] = True
    return {"id": {"testResult": {"label": label, "run": 1, "shard": 1,
                                  "attempt": 1}},
            "testResult": result}


class CountTestResultsTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.logs = os.path.join(self.dir.name, "testlogs")

    def tearDown(self):
        self.dir.cleanup()

    def add_target(self, name, xml):
        folder = os.path.join(self.logs, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "test.log"), "w") as log:
            log.write("log\n")
        if xml is not None:
            with open(os.path.join(folder, "test.xml"), "w") as out:
                out.write(xml)

    def run_script(self, *extra):
        done = subprocess.run([sys.executable, SCRIPT, self.logs, *extra],
                              capture_output=True, text=True, check=True)
        return done.stdout.split(), done.stderr

    def write_events(self, events):
        path = os.path.join(self.dir.name, "events.json")
        with open(path, "w") as out:
            out.write(json.dumps({"started": {"uuid": "u"}, "id": {}}) + "\n")
            for event in events:
                out.write(json.dumps(event) + "\n")
        return path

    def test_counts_cases_and_missing_xml(self):
        self.add_target("pkg/one", XML)
        self.add_target("pkg/crashed", None)
        counts, _ = self.run_script()
        self.assertEqual(counts, ["2", "2"])

    def test_fresh_results_pass(self):
        self.add_target("pkg/one", XML)
        events = self.write_events([test_result("//pkg:one")])
        counts, stderr = self.run_script("--events", events)
        self.assertEqual(counts, ["2", "1"])
        self.assertEqual(stderr, "")

    def test_cached_results_fail_by_name(self):
        self.add_target("pkg/one", XML)
        events = self.write_events([
            test_result("//pkg:one"),
            test_result("//pkg:local", cached_locally=True),
            test_result("//pkg:disk", cached_remotely=True),
        ])
        counts, stderr = self.run_script("--events", events)
        self.assertEqual(counts, ["2", "3"])
        self.assertIn("//pkg:local: its result came from a cache", stderr)
        self.assertIn("//pkg:disk: its result came from a cache", stderr)

    def test_unreadable_events_fail(self):
        self.add_target("pkg/one", XML)
        events = os.path.join(self.dir.name, "broken.json")
        with open(events, "w") as out:
            out.write("{not json\n")
        counts, stderr = self.run_script("--events", events)
        self.assertEqual(counts, ["2", "2"])
        self.assertIn("cannot read", stderr)


if __name__ == "__main__":
    unittest.main()
