#!/usr/bin/env bash
# Builds the Python extension (object-python) into a fresh virtualenv and runs its
# pytest suite against real NumPy. Needs only python3 (with venv) and network access to
# PyPI; the debug build is enough for the tests and about twice as quick to make. The
# extension installed is the test build (the `testing` feature: the `testing.*` and
# `tour.*` globals and the benchmarks' yardsticks); the configuration a user installs,
# without it, is built too (only the crate itself recompiles) for the test that looks
# at what it ships.
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

# (mypy: tests/test_stubgen.py type-checks code against the generated stubs.)
"$py" -m pip install --quiet --disable-pip-version-check maturin numpy pytest mypy
# tvm-ffi's own package, in the same venv: tests/test_tvm_kernels.py calls a kernel
# library built with its headers through both loaders in one process.
"$py" -m pip install --quiet --disable-pip-version-check "apache-tvm-ffi==0.1.15.post2"
# The same command a user types (`pip install ./object-python`), with maturin already in
# the venv (no isolated build environment), a dev-profile build and the test globals.
# (The features named replace pyproject.toml's, so `live-count` is named again.)
MATURIN_PEP517_ARGS="--profile dev --features live-count,testing" \
    "$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation ./object-python

# The wheel's own configuration (no `abi3`: the vectorcall entry and the buffer-protocol
# yardstick are compiled only there), which `cargo clippy --workspace` does not see:
# as shipped and as tested.
for features in live-count live-count,testing; do
    PYO3_PYTHON="$py" cargo clippy --quiet -p object-python --no-default-features \
        --features "$features" --all-targets -- -D warnings
done

# built_library TARGET CARGO-ARGS...: builds with cargo and prints the path of the
# shared library cargo names for the target TARGET.
built_library() {
    local target="$1"
    shift
    PYO3_PYTHON="$py" cargo build --quiet --message-format=json-render-diagnostics "$@" |
        TARGET="$target" "$py" -c 'import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == os.environ["TARGET"]:
        print(next(f for f in m["filenames"] if f.endswith(".so")))'
}

# The extension as a user installs it (pyproject.toml's features, no `testing`), for
# tests/test_shipped.py, which loads it in a separate interpreter.
OBJECT_PYTHON_SHIPPED="$(built_library object_python -p object-python --no-default-features --features live-count)"
export OBJECT_PYTHON_SHIPPED="${OBJECT_PYTHON_SHIPPED:?cargo named no library for the build without testing}"

# The C API library (libobject_capi.so), built by the same compiler from the same
# tree, for tests/test_runtime.py: loaded beside the extension, it joins the runtime
# the extension runs (and the other way round).
OBJECT_CAPI_LIBRARY="$(built_library object_capi -p object-capi --features object-core/live-count)"
export OBJECT_CAPI_LIBRARY="${OBJECT_CAPI_LIBRARY:?cargo named no libobject_capi.so}"

# The demo plugin (object-capi/plugins/rust-demo), same profile and compiler, for
# tests/test_modules.py: loaded from Python, it adopts the process's runtime. Both are
# built with `live-count`, as the extension is: objects one copy makes and another
# releases are counted in the one count the copies share.
OBJECT_DEMO_PLUGIN="$(built_library object_capi_plugin_demo -p object-capi-plugin-demo --features object-core/live-count)"
export OBJECT_DEMO_PLUGIN="${OBJECT_DEMO_PLUGIN:?cargo named no demo plugin library}"

# The front-end plugin (object-examples/plugin: a compiler's parser, printer and passes),
# for tests/test_compiler_plugin.py: the same dev profile, compiler and tree as the
# extension (adoption checks the build), and `live-count` as above. The extension links
# object-examples without the front-end, so its `frontend.*` types come from here.
OBJECT_FRONTEND_PLUGIN="$(built_library object_frontend_plugin -p object-frontend-plugin --features object-core/live-count)"
export OBJECT_FRONTEND_PLUGIN="${OBJECT_FRONTEND_PLUGIN:?cargo named no front-end plugin library}"

# The kernel library built with the real tvm-ffi headers (object-capi/tests/cpp), for
# tests/test_tvm_kernels.py.
TVM_KERNELS="$(TVM_FFI_CONFIG="$bin/tvm-ffi-config" bash scripts/build_tvm_kernels.sh "$PWD/target/python-tvm-kernels")"
export TVM_KERNELS

# Run from the tests folder, so `object_python` is the installed package, not the
# sources in object-python/python/.
cd object-python/tests
"$py" -m pytest -q -p no:cacheprovider .
