#!/usr/bin/env bash
# DEV TOOL: one call on the lent GPU machine (see README.md). Runs the prebuilt binaries from
# .devdeps/bin (rebuilding there if they do not start), the variant sweep, run_case for every
# case and compute-sanitizer on the GPU tests; logs go to $OUT.
#   bash tools/bwtune/run_on_device.sh [sweep GiB, default 4] [id prefix ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/bwtune-out}"
mkdir -p "$out"
gib="${1:-4}"
export PATH="$PATH:/usr/local/cuda/bin"
step() { echo; echo "=== $* ($(date +%T))"; }

{
  step environment
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvidia-smi -q | grep -iE "addressing mode|product name|cuda version" | head
  nvcc --version | tail -2
  uname -r
  grep -E "MemTotal|MemAvailable" /proc/meminfo
  if ! .devdeps/bin/bandwidth_test --gtest_list_tests >/dev/null 2>&1; then
    step rebuild on the device
    bash tools/bwtune/build.sh 90
  fi
  cuobjdump --dump-sass .devdeps/bin/bandwidth_test 2>/dev/null |
    grep -oE "LDG[.A-Z0-9_]*|STG[.A-Z0-9_]*" | sort | uniq -c
} 2>&1 | tee "$out/env.log"

step gpu tests 2>&1 | tee "$out/tests.log"
timeout 180 .devdeps/bin/bandwidth_test 2>&1 | tee -a "$out/tests.log" | grep -E "info|OK|FAILED|PASSED|Failure|Expected|Which is|ratio"
# Variant sweep: everything, or only the ids starting with each prefix given after the size.
shift || true
for prefix in "${@:-}"; do
  step "sweep ${prefix:-all}" 2>&1 | tee -a "$out/sweep.log"
  timeout 200 .devdeps/bin/bwtune sweep "$gib" "$prefix" >"$out/sweep.part" 2>&1
  cat "$out/sweep.part" >>"$out/sweep.log"
  sed -n '/# confirmation/,$p' "$out/sweep.part"
done
rm -f "$out/sweep.part"
step cases 2>&1 | tee "$out/cases.log"
timeout 120 .devdeps/bin/bwtune cases 1024 2>&1 | tee -a "$out/cases.log"
timeout 60 .devdeps/bin/bwtune cases 4096 device 2>&1 | tee -a "$out/cases.log"
step compute-sanitizer 2>&1 | tee -a "$out/sanitizer.log"
timeout 240 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
  .devdeps/bin/bandwidth_test >>"$out/sanitizer.log" 2>&1
echo "memcheck rc=$?" | tee -a "$out/sanitizer.log"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 \
  .devdeps/bin/bandwidth_test --gtest_filter='*ReadChecksum*:*OddAndTiny*' >>"$out/sanitizer.log" 2>&1
echo "racecheck rc=$?" | tee -a "$out/sanitizer.log"
timeout 60 compute-sanitizer --tool initcheck --error-exitcode 99 \
  .devdeps/bin/bandwidth_test --gtest_filter='*Validated*:*Accounting*' >>"$out/sanitizer.log" 2>&1
echo "initcheck rc=$?" | tee -a "$out/sanitizer.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 .devdeps/bin/oob_check \
  >>"$out/sanitizer.log" 2>&1
echo "planted out-of-bounds write under memcheck rc=$? (99 = detected)" | tee -a "$out/sanitizer.log"
grep -E "ERROR SUMMARY|PASSED|FAILED|rc=|Invalid" "$out/sanitizer.log"
step done
