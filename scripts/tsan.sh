#!/usr/bin/env bash
# Runs the concurrency tests under ThreadSanitizer: the registry's races (first use,
# run-time registration, concurrent look-ups), the type caches against registration, C
# registration and plugin adoption, reference counting and the deferred-release queue
# across threads, the mutable containers (List/Dict) shared between threads, the error
# slot and packed calls on many threads, and object-core's own unit tests. Any data race
# report fails the run (`halt_on_error`).
#
# Needs a nightly toolchain with `rust-src`: the standard library is rebuilt with the
# sanitizer (`-Zbuild-std`), for an explicit target, into its own target directory
# (target/tsan), so that nothing is shared with the ordinary builds. The library the
# tests load (the demo plugin) is built the same way (OBJECT_TEST_NESTED_TARGET, read by
# object-capi's test support). Iteration counts are scaled down (OBJECT_TEST_SCALE,
# PROPTEST_CASES). On a shared 2-core machine the whole run took 3.5 minutes from an
# empty target/tsan (the build 170 s, the tests 45 s).
#
#   scripts/tsan.sh                                # the toolchain `nightly`
#   TSAN_TOOLCHAIN=nightly-2026-10-30 scripts/tsan.sh
#
# No suppressions: none of the reports so far was a false positive. (Should one be
# needed, for a known false positive in std or inventory, it goes in a suppressions file
# named in TSAN_OPTIONS, with its reason.)
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain="${TSAN_TOOLCHAIN:-nightly}"
triple="$(rustc "+$toolchain" -vV | sed -n 's/^host: //p')"
export CARGO_TARGET_DIR="${TSAN_TARGET_DIR:-$PWD/target/tsan}"
export CARGO_TERM_COLOR=never
# The test binaries export their symbols (`--export-dynamic`), so that the plugin they
# load (instrumented, but without a runtime of its own) finds TSan's runtime in them.
export RUSTFLAGS="-Zsanitizer=thread -Clink-arg=-Wl,--export-dynamic"
export OBJECT_TEST_SCALE="${OBJECT_TEST_SCALE:-0.5}"
export PROPTEST_CASES="${PROPTEST_CASES:-16}"
export OBJECT_TEST_NESTED_TARGET="$triple"
# Line tables are all a report's stacks need (full debug info doubles the build), and
# no optimization: on 2 cores the build takes half the time of the test profile's
# opt-level 1 (about 170 s against 310 s, the instrumented std included), the runs five
# times as long (about 45 s against 9 s), which is less in all.
export CARGO_PROFILE_TEST_DEBUG=line-tables-only CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_OPT_LEVEL=0
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# Panics are part of the tests (caught at the C ABI): no backtraces to symbolize.
export RUST_BACKTRACE=0

cargo_tsan() {
    cargo "+$toolchain" "$@" -Zbuild-std --target "$triple"
}

# One build of every target, then each package's run.
object_tests=(--test concurrency --test registry --test first_use --test mutable_containers
    --test functions)
start=$SECONDS
cargo_tsan test -q --no-run -p object-tests "${object_tests[@]}"
cargo_tsan test -q --no-run -p object-core --lib
cargo_tsan test -q --no-run -p object-capi-fixtures --test type_cache_races
# The plugin the type-cache test loads (the test's own build of it is then a no-op). A
# `cargo build` cannot reuse `cargo test`'s units (with -Zbuild-std every unit of a
# test build depends on the `test` crate), so this builds the plugin's dependencies
# once more: some 50 s of CPU.
cargo_tsan build -q --profile test -p object-capi-plugin-demo
echo "== tsan: built in $((SECONDS - start)) s (toolchain $toolchain, target $triple)"

start=$SECONDS
cargo_tsan test -q -p object-tests "${object_tests[@]}"
cargo_tsan test -q -p object-core --lib
cargo_tsan test -q -p object-capi-fixtures --test type_cache_races
echo "== tsan: ran in $((SECONDS - start)) s"
echo "tsan.sh: no data races"
