#!/usr/bin/env bash
# Makes a Python virtual environment with llama.cpp's own `gguf` package (from PyPI), for the
# tests that read files it wrote (GgufPython.*), and prints the path of its python3. Neither
# Debian 12 nor Ubuntu 24.04 packages it (no python3-gguf), so it comes from pip, pinned, into
# an environment of its own (the system's Python refuses pip installs, PEP 668); numpy and the
# package's other dependencies come from the distribution (through install_packages.sh) and
# are shared with --system-site-packages. Does nothing but print the path when the environment
# already has the package.
#
#   scripts/install_python_gguf.sh [DIR]    DIR defaults to build/gguf-python
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-build/gguf-python}
version=0.19.0  # gguf-py as released from llama.cpp; writes every key the fixtures' writers use
bash scripts/install_packages.sh python3-venv python3-numpy python3-yaml python3-tqdm python3-requests >&2
python=$dir/bin/python3
if ! "$python" -c "import gguf, numpy" >/dev/null 2>&1; then
  # The distribution's interpreter, whatever else is first on PATH: its numpy is the one shared.
  /usr/bin/python3 -m venv --system-site-packages "$dir" >&2
  echo "installing gguf==$version into $dir" >&2
  "$python" -m pip install --quiet --disable-pip-version-check "gguf==$version" >&2
  "$python" -c "import gguf, numpy" >&2
fi
echo "$(cd "$dir" && pwd)/bin/python3"
