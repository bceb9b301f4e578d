#!/bin/bash
# check_layering.sh FILE...: checks that the dependency between compiler/ and
# codegen/ runs one way (docs/DESIGN.md, "Layering"). FILE is a path under
# compiler/ or codegen/ (as Bazel's $(locations) gives it). Prints each include
# that breaks the rule and exits with 1 if there is one.
set -u

# What codegen/ may include from compiler/: the IR facts it consumes and the
# option types; its tests also the test context and the compiler's front half,
# which builds their input.
public='compiler/transforms/(Fusion|MemoryPlan|OpClasses|ReductionPlan)\.h|compiler/options/[A-Za-z]+\.h'
test_only='compiler/testing/[A-Za-z]+\.h|compiler/pipeline/Pipeline\.h|compiler/training/TrainStep\.h'

status=0
report() { # FILE ALLOWED-DESCRIPTION INCLUDES
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "$1:$line: $2"
    status=1
  done <<<"$3"
}

for file in "$@"; do
  case "$file" in
    compiler/*|*/compiler/*)
      report "$file" "compiler/ includes nothing of codegen/" \
        "$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"codegen/' "$file")"
      ;;
    codegen/*|*/codegen/*)
      allowed="$public"
      case "$file" in *_test.cc|*_test.cpp) allowed="$public|$test_only" ;; esac
      report "$file" "codegen/ includes only compiler/'s public interfaces" \
        "$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"compiler/' "$file" |
           grep -Ev "\"($allowed)\"")"
      ;;
  esac
done
exit "$status"
