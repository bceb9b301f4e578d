# lit configuration for kiln's FileCheck tests, run under `bazel test`.
import os

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# The runfiles tree is read-only; lit's Output/ folders go to the test's tmpdir.
config.test_exec_root = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "lit")

# Tools come from the runfiles tree ($TEST_SRCDIR/<repo>/...).
runfiles = os.environ["TEST_SRCDIR"]
workspace = os.environ.get("TEST_WORKSPACE", "kiln")
tool_dirs = [
    os.path.join(runfiles, workspace, "tools", name)
    for name in ("kiln-opt", "kilnc", "kiln-ref", "kiln-run")
] + [os.path.join(runfiles, "llvm", "bin")]
config.environment["PATH"] = os.pathsep.join(
    tool_dirs + [config.environment.get("PATH", "/usr/bin:/bin")])
config.substitutions.append(
    ("%samples", os.path.join(runfiles, workspace, "samples")))
# The CPU stand-in for libcuda: kiln-run up to its first kernel launch
# (KILN_LIBCUDA_PATH=%fake_libcuda kiln-run ...), e.g. what it checks before
# allocating device memory.
config.substitutions.append(
    ("%fake_libcuda",
     os.path.join(runfiles, workspace, "runtime", "cuda", "libfake_cuda.so")))
