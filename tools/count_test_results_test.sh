#!/bin/bash
# Runs count_test_results_test.py (python3's unittest) from the runfiles.
exec python3 "$(dirname "$0")/count_test_results_test.py" -v
