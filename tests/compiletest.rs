//! Compile-fail (and compile-pass) tests for `#[derive(Object)]`.
//!
//! Regenerate the expected `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p object-tests --test compiletest`, then read them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui-pass/*.rs");
}
