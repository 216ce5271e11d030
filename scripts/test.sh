#!/usr/bin/env bash
# Builds gb10tune (through setup.sh, same options), then the tests, and runs them with CTest.
# Tests labelled `gpu` skip cleanly on a machine without an NVIDIA GPU.
#
#   scripts/test.sh              release build, all tests
#   scripts/test.sh --sanitize   the same tests under AddressSanitizer + UBSan
#
# GB10TUNE_CHROMIUM=1 also installs Debian's chromium and makes the report's browser test
# (label `chromium`) required; without it that test skips where no Chromium is installed.
# GB10TUNE_SYSTEMD=1 installs systemd and makes the tests that run `systemd-analyze verify`
# required; GB10TUNE_GGUF=1 makes a Python environment with llama.cpp's `gguf` package
# (scripts/install_python_gguf.sh, in the build folder) and makes the tests that read files it
# wrote (GgufPython.*) required. CI sets all three; without them those tests skip and say why.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh "$@"
# groff (with man-db) renders the man pages in a test; prometheus_client parses watch --metrics
bash scripts/install_packages.sh man-db python3-prometheus-client
if [ "${GB10TUNE_CHROMIUM:-0}" = 1 ]; then
  bash scripts/install_packages.sh chromium
  export GB10TUNE_REQUIRE_CHROMIUM=1
fi
build_dir=build
for arg in "$@"; do [ "$arg" = --sanitize ] && build_dir=build-asan; done
if [ "${GB10TUNE_SYSTEMD:-0}" = 1 ]; then
  bash scripts/install_packages.sh systemd
  export GB10TUNE_REQUIRE_SYSTEMD=1
fi
if [ "${GB10TUNE_GGUF:-0}" = 1 ]; then
  GB10TUNE_GGUF_PYTHON=$(bash scripts/install_python_gguf.sh "$build_dir/gguf-python")
  export GB10TUNE_GGUF_PYTHON GB10TUNE_REQUIRE_GGUF=1
fi
cmake --build "$build_dir" -j "$(nproc)"  # the tests, the stand-in server and the benchmarks
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
