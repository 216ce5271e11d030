#!/usr/bin/env bash
# The README's quick start followed by its install, as a user on a fresh clone runs them:
# scripts/setup.sh, then `cmake --install build` (here with DESTDIR, into a scratch root, so
# nothing lands on this machine), then the installed files are checked: the binary runs, the
# man pages, completions, profiles, docs and the systemd unit template are there. CI runs it on
# its fresh clone before anything else builds, so setup.sh alone must leave what install needs.
#
#   scripts/check_install.sh    exits 1 naming what is missing; reuses build/ (as test.sh does)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fail() { echo "check_install.sh: FAILED: $*" >&2; exit 1; }
if ! DESTDIR=$root/dest cmake --install build >"$root/install.log" 2>&1; then
  cat "$root/install.log" >&2
  fail "DESTDIR=$root/dest cmake --install build"
fi
prefix=$root/dest$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' build/CMakeCache.txt)
out=$("$prefix/bin/gb10tune" --version) && grep -q '^gb10tune ' <<<"$out" \
  || fail "the installed $prefix/bin/gb10tune --version"
for file in share/man/man1/gb10tune.1 share/man/man1/gb10tune-launch.1 \
  share/bash-completion/completions/gb10tune share/zsh/site-functions/_gb10tune \
  share/fish/vendor_completions.d/gb10tune.fish share/gb10tune/configs/gb10-dense-mtp.json \
  share/doc/gb10tune/README.md lib/systemd/user/gb10tune@.service \
  share/gb10tune/units/example.conf; do
  [ -s "$prefix/$file" ] || fail "cmake --install build did not install $file"
done
echo "check_install.sh: ok: scripts/setup.sh, then cmake --install build (${out%%$'\n'*})" >&2
