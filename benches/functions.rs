//! Criterion benchmarks of packed functions (`Function`), each beside its plain-Rust
//! counterpart in the *same* group, so that the ratio is read from one run on one
//! machine.
//!
//! Run with `cargo bench -p object-benches --bench functions`.
//!
//! # Groups
//!
//! - `call_i64_i64`: one call of an `(i64, i64) -> i64` add function. The inputs and the
//!   function handle go through `black_box` on every iteration, so nothing is hoisted
//!   out of the loop or folded into a constant.
//!   - `packed`: `Function::call` with `[AnyView::from(a), AnyView::from(b)]` built on
//!     the stack, the returned `Any` converted to `i64` (`i64::try_from`);
//!   - `typed`: the typed view, `typed::<(i64, i64), i64>().call((a, b))` (the view is
//!     made once, outside the measurement);
//!   - `call_with`: `Function::call_with([a, b])` (arguments converted into views in an
//!     inline buffer of 8 on the stack: no allocation up to 8 arguments), the result
//!     converted as for `packed`;
//!   - `box_dyn_fn`: a `Box<dyn Fn(i64, i64) -> i64>` (one indirect call);
//!   - `direct` (for information): an `#[inline(never)]` `fn` (one direct call).
//!
//!   `packed` and `typed` both cross the C entry point (`call_packed::<F>`): the
//!   indirect call, `catch_unwind`, the argument count check and the two argument
//!   conversions, the result written into the caller's `Any` slot and read back.
//! - `get_global`: `get_global("bench.add")` (a read lock on the registry, a look-up in
//!   its ordered map, a clone of the handle) against `HashMap<String, Function>::get`
//!   by `&str` with std's SipHash-1-3 `RandomState`, also cloning the handle
//!   (`hashmap_sip`), and, for information, without the clone (`hashmap_sip_ref`).
//!   Both registries hold the same [`OTHER_GLOBALS`] other names
//!   (`"bench.fn.000"`…) besides `"bench.add"`; the name goes through `black_box`.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | `call_i64_i64/typed` | ≤ 2 × `call_i64_i64/box_dyn_fn` |
//! | `call_i64_i64/packed` | ≤ 3 × `call_i64_i64/box_dyn_fn` |
//!
//! For scale: the C++ tvm-ffi runtime calls such a function in about 3.9 ns where a
//! `Box<dyn Fn>` takes about 1.4 ns. `get_global` has no fixed target: a registry
//! look-up is meant to be done once and its handle kept.
//!
//! # Reading the numbers
//!
//! - `box_dyn_fn` and `direct` come out about the same: with the inputs and the handle
//!   going through `black_box` (a store and a load each), the loop's own work, not the
//!   indirect call, sets their time.
//! - The C entry point takes its arguments as an array of views in memory and returns
//!   through a slot in memory. On the 2-core AMD EPYC (Zen 3) these numbers were taken on,
//!   a hand-written 13-instruction callee with that signature already costs about 2.3 ×
//!   `box_dyn_fn`; `packed` cannot go below that, and neither can `typed` while it goes
//!   through the same entry point.

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use object_containers::{get_global, register_global, Function};
use object_core::AnyView;

/// How many other names each registry holds besides `"bench.add"`.
const OTHER_GLOBALS: usize = 300;

/// The name the `get_global` group looks up.
const ADD_NAME: &str = "bench.add";

/// The direct-call counterpart.
#[inline(never)]
fn add_direct(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// The add function every side calls.
fn add_function() -> Function {
    Function::from_typed_named(ADD_NAME, |a: i64, b: i64| a.wrapping_add(b))
}

/// The other names in both registries.
fn other_names() -> Vec<String> {
    (0..OTHER_GLOBALS)
        .map(|i| format!("bench.fn.{i:03}"))
        .collect()
}

// ---------------------------------------------------------------------------------
// Groups.
// ---------------------------------------------------------------------------------

fn call_i64_i64(c: &mut Criterion) {
    let f = add_function();
    let typed = f.typed::<(i64, i64), i64>();
    let boxed: Box<dyn Fn(i64, i64) -> i64> = Box::new(|a: i64, b: i64| a.wrapping_add(b));
    let direct: fn(i64, i64) -> i64 = add_direct;

    // Every side computes the same thing.
    let packed_call = |f: &Function, a: i64, b: i64| -> i64 {
        let args = [AnyView::from(a), AnyView::from(b)];
        let ret = f.call(&args).expect("the add function succeeds");
        i64::try_from(ret).expect("the add function returns an int")
    };
    assert_eq!(packed_call(&f, 40, 2), 42);
    assert_eq!(typed.call((40, 2)).expect("the typed call succeeds"), 42);
    assert_eq!(boxed(40, 2), 42);
    assert_eq!(direct(40, 2), 42);

    let mut g = c.benchmark_group("call_i64_i64");
    g.bench_function("packed", |b| {
        b.iter(|| packed_call(black_box(&f), black_box(40), black_box(2)))
    });
    g.bench_function("typed", |b| {
        b.iter(|| {
            black_box(&typed)
                .call((black_box(40), black_box(2)))
                .expect("the typed call succeeds")
        })
    });
    g.bench_function("call_with", |b| {
        b.iter(|| {
            let ret = black_box(&f)
                .call_with([black_box(40i64), black_box(2i64)])
                .expect("the add function succeeds");
            i64::try_from(ret).expect("the add function returns an int")
        })
    });
    g.bench_function("box_dyn_fn", |b| {
        b.iter(|| black_box(&boxed)(black_box(40), black_box(2)))
    });
    g.bench_function("direct", |b| {
        b.iter(|| black_box(direct)(black_box(40), black_box(2)))
    });
    g.finish();
}

fn get_global_group(c: &mut Criterion) {
    let add = add_function();
    register_global(ADD_NAME, add.clone()).expect("registering bench.add");
    let mut sip: HashMap<String, Function> = HashMap::new();
    sip.insert(ADD_NAME.to_owned(), add.clone());
    for name in other_names() {
        let f = Function::from_typed(|a: i64| a);
        register_global(&name, f.clone()).expect("registering a filler name");
        sip.insert(name, f);
    }

    // Both registries find the same function.
    assert!(get_global(ADD_NAME).is_some_and(|f| Function::ptr_eq(&f, &add)));
    assert!(sip.get(ADD_NAME).is_some_and(|f| Function::ptr_eq(f, &add)));
    assert_eq!(sip.len(), OTHER_GLOBALS + 1);

    let mut g = c.benchmark_group("get_global");
    g.bench_function("get_global", |b| b.iter(|| get_global(black_box(ADD_NAME))));
    g.bench_function("hashmap_sip", |b| {
        b.iter(|| black_box(&sip).get(black_box(ADD_NAME)).cloned())
    });
    g.bench_function("hashmap_sip_ref", |b| {
        b.iter(|| black_box(black_box(&sip).get(black_box(ADD_NAME))).is_some())
    });
    g.finish();
}

criterion_group!(benches, call_i64_i64, get_global_group);
criterion_main!(benches);
