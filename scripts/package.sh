#!/usr/bin/env bash
# Builds the Debian package from the release build (build/, as scripts/setup.sh configures it),
# unpacks it into a scratch root and runs what it installed there: `gb10tune --version`,
# `--version --json`, `probe`, `man` on the installed pages and the installed bash completion,
# and checks that the systemd unit template (naming /usr/bin/gb10tune) and its example are there.
#
#   scripts/package.sh            prints the package's path on success; exits 1 naming the failed step
#   scripts/package.sh --arm64    the arm64 package of build-arm64/ (scripts/setup_arm64.sh), its
#                                 binary run under qemu-user: --version, probe of a captured GB10,
#                                 and plan --machine gb10 of a model header (Python's gguf writes it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
arch=native
case "${1:-}" in
  "") ;;
  --arm64) arch=arm64 ;;
  -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
  *) echo "package.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
bash scripts/install_packages.sh dpkg-dev man-db
build_dir=build
run=()  # what runs the installed binary: nothing natively, the emulator for arm64
if [ "$arch" = arm64 ]; then
  build_dir=build-arm64
  run=(/usr/bin/qemu-aarch64)
  bash scripts/setup_arm64.sh
else
  bash scripts/setup.sh
fi
cmake --build "$build_dir" -j "$(nproc)" --target gb10tune gb10tune_manual_files
(cd "$build_dir" && cpack -G DEB >/dev/null)
deb=$(ls -t "$build_dir"/gb10tune_*.deb | head -n 1)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
step() { echo "package.sh: $*" >&2; }
fail() { echo "package.sh: FAILED: $*" >&2; exit 1; }

step "$(dpkg-deb -f "$deb" Package Version Architecture Depends | tr '\n' ' ')"
# The binary links libcurl (http and https): dpkg-shlibdeps must have named it (libcurl4, or
# libcurl4t64 on Ubuntu 24.04).
grep -q 'libcurl4' <<<"$(dpkg-deb -f "$deb" Depends)" || fail "the package's Depends lacks libcurl4"
bin=$root/usr/bin/gb10tune
if [ "$arch" = arm64 ]; then
  [ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "$deb is not an arm64 package"
  file_type=$(od -An -tx1 -j18 -N2 "$bin" | tr -d ' ')
  [ "$file_type" = b700 ] || fail "the packaged gb10tune is not an aarch64 program (e_machine $file_type)"
  out=$("${run[@]}" "$bin" --version) && grep -q '^gb10tune ' <<<"$out" \
    || fail "the installed gb10tune --version under qemu-aarch64"
  step "${out%%$'\n'*} (arm64, under qemu-aarch64)"
  # The captured GB10: its CPU, features and build line, read by the arm64 binary.
  out=$("${run[@]}" "$bin" --sysroot tests/fixtures/sysroot/gb10 probe --no-save) \
    || fail "the installed gb10tune probe of the captured GB10"
  for expected in "10x Cortex-A725 + 10x Cortex-X925" "dotprod i8mm bf16 sve sve2" \
    "-DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod+i8mm+bf16+sve2"; do
    grep -qF -- "$expected" <<<"$out" || fail "probe of the captured GB10 lacks '$expected'"
  done
  python=$(bash scripts/install_python_gguf.sh build/gguf-python)
  "$python" tests/fixtures/gguf/write_shaped.py "$root/tiny.gguf" llama --n-embd 256 --layers 4 \
    --heads 4 --kv-heads 2 --ff 512 --vocab 4096 >/dev/null
  out=$("${run[@]}" "$bin" plan "$root/tiny.gguf" --machine gb10 --json) \
    || fail "the installed gb10tune plan --machine gb10 of a model header"
  grep -q '"what_fits"' <<<"$out" || fail "plan --machine gb10 --json has no what_fits"
  step "ok: $deb (probe of a captured GB10 and plan --machine gb10 under qemu-aarch64)"
  echo "$deb"
  exit 0
fi
# Output is captured before it is searched: grep -q ending a pipe early would fail it (pipefail).
out=$("$bin" --version) && grep -q '^gb10tune ' <<<"$out" || fail "the installed gb10tune --version"
step "${out%%$'\n'*}"
out=$("$bin" --version --json) && grep -q '"cuda_architectures"' <<<"$out" \
  || fail "gb10tune --version --json"
"$bin" probe --no-save >/dev/null || fail "the installed gb10tune probe"
for page in gb10tune gb10tune-launch gb10tune-bench-server; do
  out=$(MANPATH=$root/usr/share/man MANWIDTH=100 man "$page" 2>&1) && grep -q '^NAME' <<<"$out" \
    || fail "man $page from the package"
done
man -l "$root/usr/share/man/man1/gb10tune.1" >/dev/null || fail "man -l gb10tune.1"
offers=$(bash --norc -c "source '$root/usr/share/bash-completion/completions/gb10tune' &&
  COMP_WORDS=(gb10tune launch --print '') COMP_CWORD=3 && _gb10tune && echo \"\${COMPREPLY[*]}\"")
[ "$offers" = "systemd llama-swap preset" ] || fail "the installed bash completion offered '$offers'"
for file in usr/share/zsh/site-functions/_gb10tune usr/share/fish/vendor_completions.d/gb10tune.fish \
  usr/share/doc/gb10tune/README.md usr/share/gb10tune/configs/gb10-dense-mtp.json \
  usr/lib/systemd/user/gb10tune@.service usr/share/gb10tune/units/example.conf; do
  [ -s "$root/$file" ] || fail "$file is not in the package"
done
# The unit template runs the packaged binary, not the build machine's install prefix.
grep -qx 'ExecStart=/usr/bin/gb10tune launch --foreground --model ${MODEL} $ARGS' \
  "$root/usr/lib/systemd/user/gb10tune@.service" || fail "the unit template's ExecStart="
step "ok: $deb"
echo "$deb"
