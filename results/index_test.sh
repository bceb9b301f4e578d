#!/bin/bash
# Runs index_test.py (python3's unittest) from the runfiles.
exec python3 "$(dirname "$0")/index_test.py" -v
