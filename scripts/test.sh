#!/usr/bin/env bash
# Builds gb10tune (through setup.sh, same options), then the tests, and runs them with CTest.
# Tests labelled `gpu` skip cleanly on a machine without an NVIDIA GPU.
#
#   scripts/test.sh              release build, all tests
#   scripts/test.sh --sanitize   the same tests under AddressSanitizer + UBSan
#   scripts/test.sh --arm64      on an x86-64 Debian machine: the arm64 build (setup_arm64.sh)
#                                and its tests under qemu-user, but the `gpu` and `chromium` ones;
#                                they start the stand-in servers of the native build (build/)
#
# GB10TUNE_CHROMIUM=1 also installs Debian's chromium and makes the report's browser test
# (label `chromium`) required; without it that test skips where no Chromium is installed.
# GB10TUNE_SYSTEMD=1 installs systemd and makes the tests that run `systemd-analyze verify`
# required; GB10TUNE_GGUF=1 makes a Python environment with llama.cpp's `gguf` package
# (scripts/install_python_gguf.sh, in the build folder) and makes the tests that read files it
# wrote (GgufPython.*) required. CI sets all three; without them those tests skip and say why.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=build
python_dir=build/gguf-python  # the host's Python, shared by the native and the arm64 runs
setup=(bash scripts/setup.sh)
ctest_exclude=()
case "${1:-}" in
  "") ;;
  --sanitize) build_dir=build-asan; python_dir=build-asan/gguf-python; setup+=(--sanitize) ;;
  --arm64)
    build_dir=build-arm64
    ctest_exclude=(-LE "gpu|chromium")
    # The native build first: its stand-in servers are what the arm64 tool starts.
    bash scripts/setup.sh
    cmake --build build -j "$(nproc)" --target gb10tune_stand_in_server gb10tune_stand_in_rpc_server
    setup=(bash scripts/setup_arm64.sh) ;;
  -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
  *) echo "test.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
"${setup[@]}"
# groff (with man-db) renders the man pages in a test; prometheus_client parses watch --metrics
bash scripts/install_packages.sh man-db python3-prometheus-client
if [ "${GB10TUNE_CHROMIUM:-0}" = 1 ]; then
  bash scripts/install_packages.sh chromium
  export GB10TUNE_REQUIRE_CHROMIUM=1
fi
if [ "${GB10TUNE_SYSTEMD:-0}" = 1 ]; then
  bash scripts/install_packages.sh systemd
  export GB10TUNE_REQUIRE_SYSTEMD=1
fi
if [ "${GB10TUNE_GGUF:-0}" = 1 ]; then
  GB10TUNE_GGUF_PYTHON=$(bash scripts/install_python_gguf.sh "$python_dir")
  export GB10TUNE_GGUF_PYTHON GB10TUNE_REQUIRE_GGUF=1
fi
cmake --build "$build_dir" -j "$(nproc)"  # the tests, the stand-in server and the benchmarks
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "${ctest_exclude[@]}"
