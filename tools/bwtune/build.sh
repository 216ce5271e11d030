#!/usr/bin/env bash
# DEV TOOL: builds tools/bwtune/bwtune and the GPU tests (tests/gpu) without CMake, with nvcc and
# g++ only, into .devdeps/bin. Needs GoogleTest's sources in .devdeps/googletest (a copy of
# Debian's /usr/src/googletest). Usage: tools/bwtune/build.sh [arch, default 90]
set -euo pipefail
cd "$(dirname "$0")/../.."
arch="${1:-90}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
cuda_lib="$(dirname "$(dirname "$nvcc")")/lib64"
gt=.devdeps/googletest/googletest
obj=.devdeps/obj
mkdir -p "$obj" .devdeps/bin
cxx=(g++ -O2 -std=c++20 -Wall -Wextra -Iinclude)
cu=("$nvcc" -O3 -std=c++20 -Iinclude -gencode "arch=compute_$arch,code=sm_$arch" -Xcompiler -Wall)
static=(-static-libstdc++ -static-libgcc)

"${cxx[@]}" -c src/kernels/names.cpp -o "$obj/names.o"
"${cxx[@]}" -c src/kernels/pattern.cpp -o "$obj/pattern.o"
"${cxx[@]}" -c src/kernels/copy_path.cpp -o "$obj/copy_path.o"
"${cxx[@]}" -c src/kernels/warmup.cpp -o "$obj/warmup.o"
"${cu[@]}" -c src/kernels/bandwidth.cu -o "$obj/bandwidth.o"
"${cu[@]}" -o .devdeps/bin/bwtune tools/bwtune/bwtune.cu "$obj/bandwidth.o" "$obj/pattern.o" \
  "$obj/names.o" "$obj/copy_path.o" "$obj/warmup.o" -Xcompiler "$(IFS=,; echo "${static[*]}")"
"${cu[@]}" -o .devdeps/bin/oob_check tools/bwtune/oob_check.cu
if [[ ! -f "$obj/gtest-all.o" ]]; then
  "${cxx[@]}" -I"$gt/include" -I"$gt" -c "$gt/src/gtest-all.cc" -o "$obj/gtest-all.o"
  "${cxx[@]}" -I"$gt/include" -c "$gt/src/gtest_main.cc" -o "$obj/gtest_main.o"
fi
"${cxx[@]}" -Itests -I"$gt/include" -c tests/gpu/bandwidth_test.cpp -o "$obj/bandwidth_test.o"
g++ -o .devdeps/bin/bandwidth_test "$obj/bandwidth_test.o" "$obj/bandwidth.o" "$obj/pattern.o" \
  "$obj/names.o" "$obj/copy_path.o" "$obj/warmup.o" "$obj/gtest-all.o" "$obj/gtest_main.o" -L"$cuda_lib" -lcudart_static \
  -lpthread -ldl -lrt "${static[@]}"
echo "built .devdeps/bin/bwtune .devdeps/bin/bandwidth_test (sm_$arch)"
