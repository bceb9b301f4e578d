#!/bin/bash
# The typed header's point: compiles misuse.cc with the system's C++
# compiler for every CASE; case 0 must compile, every other must fail with
# the expected diagnostic (GCC's or Clang's wording).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
cxx="${CXX:-c++}"
export LC_ALL=C  # ASCII quotes in GCC's messages
compile() {
  "$cxx" -std=c++17 -fsyntax-only -I"$root" -I"$root/runtime/include" \
    -DCASE="$1" "$root/tests/header/misuse.cc"
}

out="${TEST_TMPDIR}/case0.log"
if ! compile 0 >"$out" 2>&1; then
  cat "$out"
  echo "FAIL: the right use (CASE 0) does not compile"
  exit 1
fi
echo "ok: case 0 compiles"

failures=0
expect_error() {
  local case="$1" pattern="$2" what="$3"
  local log="${TEST_TMPDIR}/case$case.log"
  if compile "$case" >"$log" 2>&1; then
    echo "FAIL: case $case ($what) compiles"
    failures=$((failures + 1))
  elif ! grep -Eq "$pattern" "$log"; then
    cat "$log"
    echo "FAIL: case $case ($what) fails without /$pattern/"
    failures=$((failures + 1))
  else
    echo "ok: case $case ($what): $(grep -Em1 "$pattern" "$log")"
  fi
}
no_assign="no match for 'operator='|no viable overloaded '='"
expect_error 1 "no member named 'X'" "misspelt input"
expect_error 2 "$no_assign" "wrong static shape"
expect_error 3 "$no_assign" "wrong dtype"
expect_error 4 "no member named 'W1'" "misspelt parameter"
expect_error 5 "$no_assign" "device tensor of another shape"
expect_error 6 "no member named 'Evaluate'" "entry the artifact lacks"
expect_error 7 "cannot convert|no viable conversion|no matching (member )?function" \
  "another entry's inputs"
exit $((failures > 0))
