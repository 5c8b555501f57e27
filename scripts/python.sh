#!/usr/bin/env bash
# Builds the Python extension (object-python) into a fresh virtualenv and runs its
# pytest suite against real NumPy. Needs only python3 (with venv) and network access to
# PyPI; the debug build is enough for the tests and about twice as quick to make.
#
#   bash scripts/python.sh                 # venv in target/python-venv
#   OBJECT_PYTHON_VENV=/tmp/v bash scripts/python.sh
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${OBJECT_PYTHON_VENV:-target/python-venv}"
rm -rf "$venv"
python3 -m venv "$venv"
bin="$(cd "$venv" && pwd)/bin"
py="$bin/python"
# maturin's build backend runs the `maturin` executable from PATH.
export PATH="$bin:$PATH" VIRTUAL_ENV="$(cd "$venv" && pwd)"

"$py" -m pip install --quiet --disable-pip-version-check maturin numpy pytest
# The same command a user types (`pip install ./object-python`), with maturin already in
# the venv (no isolated build environment) and a dev-profile build.
MATURIN_PEP517_ARGS="--profile dev" \
    "$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation ./object-python

# The wheel's own configuration (no `abi3`: the vectorcall entry and the buffer-protocol
# yardstick are compiled only there), which `cargo clippy --workspace` does not see.
PYO3_PYTHON="$py" cargo clippy --quiet -p object-python --no-default-features --all-targets -- -D warnings

# Run from the tests folder, so `object_python` is the installed package, not the
# sources in object-python/python/.
cd object-python/tests
"$py" -m pytest -q -p no:cacheprovider .
