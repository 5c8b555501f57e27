#!/usr/bin/env bash
# Runs the workspace's unit and integration tests (not the trybuild UI tests, not the
# doctests) under Miri, once with Stacked Borrows and once with Tree Borrows. Any
# undefined behaviour, data race or leak fails the run.
#
# Iteration counts are scaled far down (OBJECT_TEST_SCALE, PROPTEST_CASES; Miri runs
# some thousand times slower than native code), so the whole script takes about a
# quarter of an hour on 2 cores. Needs a nightly toolchain with the `miri` and
# `rust-src` components (`.ci/run` installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

export OBJECT_TEST_SCALE="${OBJECT_TEST_SCALE:-0.00002}"
export PROPTEST_CASES="${PROPTEST_CASES:-4}"
# Miri ignores optimization levels (and warns about the test profile's).
export CARGO_PROFILE_TEST_OPT_LEVEL=0
# Miri's own build of the tests lives apart from the normal target directory.
common="-Zmiri-disable-isolation"
toolchain="${MIRI_TOOLCHAIN:-nightly}"

models=("${@:-stacked tree}")
# shellcheck disable=SC2206 # split the default list
models=(${models[@]})

status=0
for model in "${models[@]}"; do
    case "$model" in
        stacked) flags="$common" ;;
        tree) flags="$common -Zmiri-tree-borrows" ;;
        *) echo "miri.sh: unknown model '$model' (stacked, tree)" >&2; exit 2 ;;
    esac
    echo "== miri ($model borrows): MIRIFLAGS=$flags"
    start=$SECONDS
    if ! MIRIFLAGS="$flags" cargo "+$toolchain" miri test --workspace --exclude object-derive \
        --lib --tests -q -- --skip ui --test-threads=2; then
        echo "miri.sh: FAILED under $model borrows" >&2
        status=1
    fi
    echo "== miri ($model borrows): $((SECONDS - start)) s"
done
[ "$status" -eq 0 ] && echo "miri.sh: clean under: ${models[*]}"
exit "$status"
