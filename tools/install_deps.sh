#!/bin/bash
# Installs the Debian packages kiln builds with, skipping those already there.
# Safe to run any number of times.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-platforms bazel-skylib
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  clang-19 libclang-rt-19-dev
  libabsl-dev libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev
  googletest libgtest-dev
  protobuf-compiler libprotobuf-dev
  libonnx-dev libonnx-testdata python3-onnx
  libzip-dev
  python3
  # The SDK's users in tests (sdk/examples): CMake, pkg-config, rustc.
  cmake pkg-config rustc
  # The model zoo (tests/zoo) exports PyTorch models while it runs.
  python3-torch python3-torchvision
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "${package}" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("${package}")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  ${SUDO} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install_deps: the CUDA 13 toolkit is expected at /usr/local/cuda" >&2
  exit 1
fi
