#!/bin/bash
# Runs samples/train_reference with the test's arguments; it exits non-zero
# unless the held-out MSE ends below --expect-mse-below.
set -euo pipefail
exec "$@"
