#!/usr/bin/env bash
# Builds the GGUF fuzz target with clang (libFuzzer + AddressSanitizer + UBSan) into
# build-fuzz/, seeds its corpus with files from the tests' GGUF writer, and fuzzes for a
# bounded time. CI calls it; a crash leaves its input in build-fuzz/fuzz-artifacts/.
#
#   scripts/fuzz.sh            60 seconds
#   scripts/fuzz.sh 600        ten minutes
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
case "$seconds" in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [seconds]" >&2; exit 2 ;;
esac
build_dir=build-fuzz
# clang and its libFuzzer runtime, plus the libraries the core library uses.
bash scripts/install_packages.sh clang libclang-rt-dev cmake make pkg-config libfmt-dev \
  nlohmann-json3-dev libcurl4-openssl-dev
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGB10TUNE_FUZZ=ON -DGB10TUNE_BUILD_TESTS=OFF \
    -DGB10TUNE_CUDA=OFF
fi
cmake --build "$build_dir" --target gguf_fuzz gguf_fuzz_seeds -j "$(nproc)"

corpus=$build_dir/fuzz-corpus
artifacts=$build_dir/fuzz-artifacts
mkdir -p "$corpus" "$artifacts"
"$build_dir/fuzz/gguf_fuzz_seeds" "$corpus"

# -rss_limit_mb and -malloc_limit_mb turn a huge allocation into a reported failure.
"$build_dir/fuzz/gguf_fuzz" "$corpus" -dict=fuzz/gguf.dict -max_total_time="$seconds" \
  -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
  -artifact_prefix="$artifacts/" -print_final_stats=1
