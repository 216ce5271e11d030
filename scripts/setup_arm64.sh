#!/usr/bin/env bash
# The arm64 (aarch64, the GB10's CPU) build of gb10tune, made on an x86-64 Debian 12 machine:
# installs Debian's cross compiler, qemu-user and the libraries' arm64 `-dev` packages (multiarch),
# configures build-arm64/ with cmake/toolchains/aarch64-linux-gnu.cmake (no CUDA: the kernels need
# the GB10's own CUDA toolkit) and builds gb10tune with its man pages, which the build makes by
# running the arm64 binary under qemu-user. scripts/test.sh --arm64 runs the tests of that build,
# scripts/package.sh --arm64 builds and tries its Debian package.
#
#   scripts/setup_arm64.sh    build-arm64/; the tests also need the native build/ (setup.sh)
#
# Nothing is registered with the kernel (no binfmt_misc): every arm64 program runs as an argument
# of /usr/bin/qemu-aarch64. On Ubuntu, arm64 packages come from ports.ubuntu.com, which the default
# sources do not list: add it (Architectures: arm64) before running this.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fail() { echo "setup_arm64.sh: $*" >&2; exit 1; }
[ "$(dpkg --print-architecture)" = amd64 ] \
  || fail "this cross-builds from an x86-64 (amd64) machine; on an arm64 machine run scripts/setup.sh"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "adding arm64 as a foreign architecture (dpkg --add-architecture arm64)" >&2
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
# What runs on the build machine, then the arm64 libraries the tool and its tests link.
bash scripts/install_packages.sh cmake make pkg-config dpkg-dev crossbuild-essential-arm64 qemu-user \
  libcli11-dev nlohmann-json3-dev libfmt-dev:arm64 libcurl4-openssl-dev:arm64 libssl-dev:arm64 \
  libgtest-dev:arm64
# libyaml-cpp-dev (the tests' YAML reader) cannot be installed for amd64 and arm64 at once: the
# arm64 static archive is unpacked into the build folder instead, linked only by the tests.
yaml=build-arm64/deps/yaml-cpp
if [ ! -f "$yaml/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" ]; then
  mkdir -p "$yaml"
  (cd "$yaml" && apt-get download libyaml-cpp-dev:arm64 >/dev/null 2>&1) \
    || fail "apt-get download libyaml-cpp-dev:arm64 failed (is arm64 in the package sources?)"
  dpkg -x "$yaml"/libyaml-cpp-dev_*_arm64.deb "$yaml"
fi
# The toolchain is given once, when the folder is made; CMake keeps it (and re-reads the file).
toolchain=()
if [ ! -f build-arm64/CMakeCache.txt ]; then
  toolchain=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake")
elif ! grep -q '^CMAKE_TOOLCHAIN_FILE.*aarch64-linux-gnu.cmake$' build-arm64/CMakeCache.txt; then
  fail "build-arm64/ was configured without cmake/toolchains/aarch64-linux-gnu.cmake: remove it"
fi
cmake -S . -B build-arm64 "${toolchain[@]}" -DCMAKE_BUILD_TYPE=Release -DGB10TUNE_CUDA=OFF \
  -DGB10TUNE_BUILD_BENCHMARKS=OFF \
  -DGB10TUNE_WERROR="${GB10TUNE_WERROR:-OFF}" -DGB10TUNE_HOST_BUILD_DIR="$PWD/build" \
  -DGB10TUNE_YAML_CPP_INCLUDE="$PWD/$yaml/usr/include" \
  -DGB10TUNE_YAML_CPP="$PWD/$yaml/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" \
  -DGB10TUNE_TEST_TIMEOUT=600 >/dev/null
cmake --build build-arm64 -j "$(nproc)" --target gb10tune gb10tune_manual_files
