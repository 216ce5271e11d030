#!/usr/bin/env bash
# Builds the Debian package from the release build (build/, as scripts/setup.sh configures it),
# unpacks it into a scratch root and runs what it installed there: `gb10tune --version`,
# `--version --json`, `probe`, `man` on the installed pages and the installed bash completion,
# and checks that the systemd unit template (naming /usr/bin/gb10tune) and its example are there.
#
#   scripts/package.sh    prints the package's path on success; exits 1 naming the failed step
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install_packages.sh dpkg-dev man-db
bash scripts/setup.sh
cmake --build build -j "$(nproc)" --target gb10tune gb10tune_manual_files
(cd build && cpack -G DEB >/dev/null)
deb=$(ls -t build/gb10tune_*.deb | head -n 1)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
step() { echo "package.sh: $*" >&2; }
fail() { echo "package.sh: FAILED: $*" >&2; exit 1; }

step "$(dpkg-deb -f "$deb" Package Version Architecture Depends | tr '\n' ' ')"
# The binary links libssl (https): dpkg-shlibdeps must have named it (libssl3, or libssl3t64).
grep -q 'libssl3' <<<"$(dpkg-deb -f "$deb" Depends)" || fail "the package's Depends lacks libssl3"
bin=$root/usr/bin/gb10tune
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
