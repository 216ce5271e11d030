#!/usr/bin/env bash
# Installs the build dependencies that are missing (Debian/Ubuntu packages), then configures
# the build and compiles the gb10tune binary with its man pages and shell completions, all that
# `cmake --install build` installs (scripts/test.sh builds the tests). Safe to run again: it
# only installs what is missing and rebuilds what changed.
#
#   scripts/setup.sh              release build in build/ (CUDA parts when nvcc is found)
#   scripts/setup.sh --sanitize   AddressSanitizer + UBSan build of the host code in build-asan/
#
# Environment: GB10TUNE_WERROR=ON turns warnings into errors (CI does this);
# GB10TUNE_CUDA=AUTO|ON|OFF (default AUTO); CUDACXX=/path/to/nvcc to pick a CUDA compiler.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

sanitize=OFF
build_dir=build
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=ON; build_dir=build-asan ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

bash scripts/install_packages.sh cmake make g++ pkg-config libcli11-dev libfmt-dev \
  nlohmann-json3-dev libcurl4-openssl-dev libgtest-dev libcpp-httplib-dev libssl-dev \
  libbenchmark-dev libyaml-cpp-dev cmark-gfm

cuda=${GB10TUNE_CUDA:-AUTO}
if [ "$sanitize" = ON ]; then
  cuda=OFF  # the sanitizers cover the host code; the CUDA runtime is not built for them
fi
if [ "$cuda" != OFF ] && [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null; then
  for candidate in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    if [ -x "$candidate" ]; then export CUDACXX=$candidate; break; fi
  done
fi

build_type=Release
extra=()
if [ "$sanitize" = ON ]; then
  # -O0 with line tables only (-g1): sanitizer reports keep file:line, the build stays short.
  # The benchmarks are built and timed in the release build only.
  build_type=Debug
  extra=(-DCMAKE_CXX_FLAGS_DEBUG=-g1 -DGB10TUNE_BUILD_BENCHMARKS=OFF)
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" \
  -DGB10TUNE_CUDA="$cuda" -DGB10TUNE_SANITIZE="$sanitize" \
  -DGB10TUNE_WERROR="${GB10TUNE_WERROR:-OFF}" "${extra[@]}" >/dev/null
# gb10tune_manual_files: the man pages and completions that cmake --install copies.
cmake --build "$build_dir" -j "$(nproc)" --target gb10tune gb10tune_manual_files
