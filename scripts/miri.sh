#!/usr/bin/env bash
# Runs the workspace's unit and integration tests (not the trybuild UI tests, not the
# doctests) under Miri, with Stacked Borrows and with Tree Borrows. Any undefined
# behaviour, data race or leak fails the run.
#
# Iteration counts are scaled far down (OBJECT_TEST_SCALE, PROPTEST_CASES; Miri runs
# some thousand times slower than native code). The tests are built once; then each
# (model, test target) pair runs as its own job, MIRI_JOBS at a time (Miri interprets a
# program on one core), slowest first: on 2 cores, both models over every target take
# the better part of an hour; CI runs a selection (see .ci/run). Needs a nightly
# toolchain with the `miri` and `rust-src` components (`.ci/run` installs them).
#
#   scripts/miri.sh                 # both models
#   scripts/miri.sh tree            # one model
#   MIRI_TARGETS="object-tests:allocation object-core:lib" scripts/miri.sh   # some targets
#   MIRI_SKIP_TARGETS="object-tests:json_graph" scripts/miri.sh             # all but some
#   MIRI_TREE_SKIP_TARGETS="object-tests:json_graph" scripts/miri.sh        # some: stacked only
#   MIRI_TREE_TARGETS="object-core:lib object-capi:*" scripts/miri.sh       # only these: tree
#
# Target lists are words of `package:target` patterns (`*` matches anything).
set -euo pipefail
cd "$(dirname "$0")/.."

export OBJECT_TEST_SCALE="${OBJECT_TEST_SCALE:-0.00002}"
export PROPTEST_CASES="${PROPTEST_CASES:-4}"
# Panics are part of the tests (caught at the C ABI); capturing and symbolizing a
# backtrace for each one under Miri takes minutes, so no backtraces here.
export RUST_BACKTRACE=0
# Miri ignores optimization levels (and warns about the test profile's).
export CARGO_PROFILE_TEST_OPT_LEVEL=0
export CARGO_TERM_COLOR=never
toolchain="${MIRI_TOOLCHAIN:-nightly}"
jobs="${MIRI_JOBS:-2}"
logs="target/miri-logs"
common="-Zmiri-disable-isolation"

models=("$@")
[ "${#models[@]}" -eq 0 ] && models=(stacked tree)
for model in "${models[@]}"; do
    case "$model" in
        stacked | tree) ;;
        *) echo "miri.sh: unknown model '$model' (stacked, tree)" >&2; exit 2 ;;
    esac
done

# The targets: every library's unit tests and every integration test target of the
# workspace (object-derive is a proc-macro crate; `compiletest` is the trybuild runner).
if [ -n "${MIRI_TARGETS:-}" ]; then
    read -r -a targets <<<"$MIRI_TARGETS"
else
    mapfile -t targets < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "object-derive":
        continue
    for t in p["targets"]:
        if "lib" in t["kind"]:
            print(p["name"] + ":lib")
        elif t["kind"] == ["test"] and t["name"] != "compiletest":
            print(p["name"] + ":" + t["name"])
')
fi

# Whether target $1 matches one of the patterns in $2 (words; `*` matches anything).
matches() {
    local pattern patterns
    read -r -a patterns <<<"$2"
    for pattern in "${patterns[@]}"; do
        # shellcheck disable=SC2254  # the pattern is meant to glob
        case "$1" in $pattern) return 0 ;; esac
    done
    return 1
}

# Targets left out (MIRI_SKIP_TARGETS, e.g. CI's time budget): listed, never silent.
if [ -n "${MIRI_SKIP_TARGETS:-}" ]; then
    kept=()
    for target in "${targets[@]}"; do
        if matches "$target" "$MIRI_SKIP_TARGETS"; then
            echo "miri: SKIPPED target $target (MIRI_SKIP_TARGETS)"
        else
            kept+=("$target")
        fi
    done
    targets=("${kept[@]}")
fi

# Whether (model $1, target $2) runs: Tree Borrows can be cut to some targets
# (MIRI_TREE_TARGETS) or spared some (MIRI_TREE_SKIP_TARGETS).
runs_under() {
    [ "$1" = tree ] || return 0
    if [ -n "${MIRI_TREE_TARGETS:-}" ] && ! matches "$2" "$MIRI_TREE_TARGETS"; then
        return 1
    fi
    ! matches "$2" "${MIRI_TREE_SKIP_TARGETS:-}"
}

echo "== miri: building the tests once (toolchain $toolchain)"
start=$SECONDS
MIRIFLAGS="$common" cargo "+$toolchain" miri test -q --workspace --exclude object-derive \
    --lib --tests --no-run
echo "== miri: built in $((SECONDS - start)) s; ${#targets[@]} targets x ${#models[@]} models, $jobs at a time"

rm -rf "$logs"
mkdir -p "$logs"

# One job: a model and a target ("package:lib" or "package:test").
run_one() {
    local model=$1 target=$2 flags="$common" select
    [ "$model" = tree ] && flags="$common -Zmiri-tree-borrows"
    local pkg=${target%%:*} name=${target#*:}
    if [ "$name" = lib ]; then select=(-p "$pkg" --lib); else select=(-p "$pkg" --test "$name"); fi
    local log="$logs/$model-${target//:/-}.log" begin=$SECONDS
    if MIRIFLAGS="$flags" cargo "+$toolchain" miri test -q "${select[@]}" \
        -- --skip ui --test-threads=1 >"$log" 2>&1; then
        echo "ok     $model $target ($((SECONDS - begin)) s)"
    else
        echo "FAILED $model $target ($((SECONDS - begin)) s)"
        touch "$logs/failed"
    fi
}
export -f run_one
export common toolchain logs

# The slowest targets first (longest-first scheduling: the long runs overlap each other
# instead of ending the run alone), in both models; then the rest in workspace order.
slow=(object-tests:json_graph object-examples:frontend object-tests:structural
    object-tests:ndarray object-tests:deep_graphs object-tests:functions object-tests:first_use
    object-tests:any_values object-tests:reflection object-tests:transform
    object-tests:concurrency object-tests:containers object-tests:constructors
    object-json:lib object-tests:views object-tests:mutable_containers object-examples:lib
    object-tests:allocation)
ordered=()
for target in "${slow[@]}"; do
    case " ${targets[*]} " in *" $target "*) ordered+=("$target") ;; esac
done
for target in "${targets[@]}"; do
    case " ${slow[*]} " in *" $target "*) ;; *) ordered+=("$target") ;; esac
done

# Targets left out under Tree Borrows only: listed too.
case " ${models[*]} " in
    *" tree "*)
        for target in "${ordered[@]}"; do
            if ! runs_under tree "$target"; then
                echo "miri: SKIPPED target $target under tree (MIRI_TREE_TARGETS, MIRI_TREE_SKIP_TARGETS)"
            fi
        done
        ;;
esac

start=$SECONDS
for target in "${ordered[@]}"; do
    for model in "${models[@]}"; do
        if runs_under "$model" "$target"; then printf '%s %s\n' "$model" "$target"; fi
    done
done | xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"'
echo "== miri: ran in $((SECONDS - start)) s"

if [ -e "$logs/failed" ]; then
    for log in "$logs"/*.log; do
        if ! grep -q '^test result: ok' "$log" || grep -q 'error:' "$log"; then
            echo "---- $log"
            tail -n 60 "$log"
        fi
    done
    echo "miri.sh: FAILED (logs in $logs)" >&2
    exit 1
fi
echo "miri.sh: clean under: ${models[*]}"
