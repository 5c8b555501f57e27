#!/usr/bin/env bash
# Runs the workspace's integration test binaries (not the trybuild UI tests) and the
# core crate's unit tests under valgrind memcheck. Any invalid access, or a leak that is
# definitely or possibly lost, fails the run. Iteration counts are scaled down through
# OBJECT_TEST_SCALE (default 0.01 here) so the run stays short.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: valgrind is not installed (CI installs it in .ci/run)" >&2
    exit 1
fi

export OBJECT_TEST_SCALE="${OBJECT_TEST_SCALE:-0.01}"
# Memcheck sees an object in the size-class pool as part of a live slab, so it could not
# flag a use after free of one: processes start with the pool off (every object its own
# block), and the pool's own tests (tests/size_class_pool.rs) turn it on.
export OBJECT_SIZE_CLASS_POOL="${OBJECT_SIZE_CLASS_POOL:-0}"
# The C programs that object-capi's tests compile (object-capi/tests/c/) run under
# memcheck too, with the same settings: the test prefixes each run with this.
export OBJECT_CAPI_C_RUNNER="valgrind --quiet --leak-check=full --show-leak-kinds=definite,possible --errors-for-leak-kinds=definite,possible --error-exitcode=1 --suppressions=$PWD/scripts/valgrind.supp"

# Build once and collect the test executables cargo reports. The command is the README's
# test command's (`cargo test --workspace`), so that its build is reused: leaving a
# package out changes the features of shared dependencies (syn's, through pyo3) and
# rebuilds the whole tree, and naming `--lib` asks for object-python's test harness, which
# needs libpython (it is only the extension module, `test = false`; its Python tests run
# under scripts/python.sh). object-derive's tests (a proc-macro's) are left out below. A
# build failure stops here, never a shorter list.
artifacts=$(mktemp)
trap 'rm -f "$artifacts"' EXIT
if ! cargo test --workspace --no-run --message-format=json >"$artifacts"; then
    echo "valgrind.sh: building the tests failed" >&2
    exit 1
fi
mapfile -t bins < <(
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    name = m["target"]["name"]
    if name == "compiletest":  # trybuild UI tests run rustc; not a memcheck target
        continue
    if "proc-macro" in m["target"]["kind"]:  # object-derive: the compiler runs it
        continue
    print(m["executable"])
' <"$artifacts"
)

if [ "${#bins[@]}" -eq 0 ]; then
    echo "valgrind.sh: no test binaries found" >&2
    exit 1
fi

status=0
for bin in "${bins[@]}"; do
    echo "== valgrind: $(basename "$bin")"
    if ! valgrind --quiet --leak-check=full --show-leak-kinds=definite,possible \
        --errors-for-leak-kinds=definite,possible --error-exitcode=1 --fair-sched=yes \
        --suppressions=scripts/valgrind.supp \
        "$bin" --test-threads=2 -q; then
        echo "valgrind.sh: FAILED: $bin" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "valgrind.sh: ${#bins[@]} binaries clean"
exit "$status"
