//! The front-end example's passes (`object-examples/src/frontend/`) over one generated
//! 1,000,000-node program, the object version beside the `enum` + `Arc` baseline in
//! the same run.
//!
//! Run with `cargo bench -p object-benches --bench frontend` (add a filter such as
//! `frontend_fold` to run one group).
//!
//! # Groups
//!
//! One group per stage, each with `enum` and `object`:
//!
//! - `frontend_parse`: text → IR (the same iterative parser, each version's builder);
//! - `frontend_print`: IR → text;
//! - `frontend_fold`, `frontend_cse`, `frontend_dead_let`: the passes, each on the
//!   output of the previous stage (so CSE sees a folded program, as in a pipeline).
//!
//! The time of dropping a result is left out (`iter_with_large_drop`) for both.
//!
//! # Target
//!
//! Each pass ≤ 1.0 × the enum version's time.
//!
//! # Measured
//!
//! On a shared 2-core machine (other agents' builds running), so only the ratios within
//! a group mean anything, and those loosely (object / enum; `--measurement-time 3
//! --sample-size 10`). The object passes are written with `object_view!` views and the
//! generic mutator (`transform::mutate`); the earlier hand-written version (a
//! `downcast_ref` chain and a hand-written rebuild) measured fold 1.05–1.30×, CSE
//! 1.65–2.06×, dead-let 0.81–0.83×.
//!
//! | group | last full run | other runs |
//! | --- | --- | --- |
//! | `frontend_parse` | 163 / 134 ms = 1.22× | 197 / 141 ms = 1.40× |
//! | `frontend_print` | 70 / 85 ms = 0.82× | 79 / 95 ms = 0.83× |
//! | `frontend_fold` | 146 / 92 ms = 1.60× | 162 / 105 ms = 1.54×, 137 / 84 ms = 1.64× |
//! | `frontend_cse` | 799 / 256 ms = 3.12× | 892 / 291 ms = 3.07×, 821 / 297 ms = 2.76×, 1019 / 308 ms = 3.30× |
//! | `frontend_dead_let` | 245 / 172 ms = 1.43× | 265 / 183 ms = 1.45×, 231 / 189 ms = 1.22× |
//!
//!
//! After the walk plans were cached per thread and per walk (a walk used to allocate a
//! table as long as the largest type index, and `for_each_child` took a global lock per
//! call) and CSE's address set moved to `foldhash` — CSE on 100,000 nodes went from
//! 125.6 to 74.0 million instructions (callgrind) — one run: parse 135 / 113 ms =
//! 1.20×, print 72 / 80 ms = 0.90×, fold 155 / 93 ms = 1.67×, CSE 758 / 250 ms =
//! 3.03×, dead-let 223 / 163 ms = 1.36×.
//!
//! The target is missed by every pass. Fold is the mutator's per-node overhead (its
//! identity rewrite is 1.56–1.84× an enum rewrite in `benches/transform.rs`). CSE adds
//! to the structural hashing gap (`StructuralKey` against a derived `Hash`, a fresh
//! type cache per key) one short `mutate` per node that has a `let` below it and
//! address sets the enum does not need (its facts ride on its own walk). Dead-let
//! counts uses with `transform::for_each_child` (reflection) where the enum matches.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use object_examples::frontend::{enum_ir, generate, object_ir, parse};

/// The program's size in nodes.
const NODES: usize = 1_000_000;

fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(NODES as u64));
    g
}

fn bench(c: &mut Criterion) {
    let text = generate(NODES, 42);
    let e0 = parse(&text, &mut enum_ir::EnumBuilder).expect("the generated program parses");
    let o0 = parse(&text, &mut object_ir::ObjectBuilder).expect("the generated program parses");
    let (e1, o1) = (enum_ir::fold_constants(&e0), object_ir::fold_constants(&o0));
    let (e2, o2) = (enum_ir::cse(&e1), object_ir::cse(&o1));
    assert_eq!(
        enum_ir::print(&e2),
        object_ir::print(&o2),
        "the versions agree"
    );

    let mut g = group(c, "frontend_parse");
    g.bench_function("enum", |b| {
        b.iter_with_large_drop(|| parse(&text, &mut enum_ir::EnumBuilder))
    });
    g.bench_function("object", |b| {
        b.iter_with_large_drop(|| parse(&text, &mut object_ir::ObjectBuilder))
    });
    g.finish();

    let mut g = group(c, "frontend_print");
    g.bench_function("enum", |b| b.iter_with_large_drop(|| enum_ir::print(&e0)));
    g.bench_function("object", |b| {
        b.iter_with_large_drop(|| object_ir::print(&o0))
    });
    g.finish();

    let mut g = group(c, "frontend_fold");
    g.bench_function("enum", |b| {
        b.iter_with_large_drop(|| enum_ir::fold_constants(&e0))
    });
    g.bench_function("object", |b| {
        b.iter_with_large_drop(|| object_ir::fold_constants(&o0))
    });
    g.finish();

    let mut g = group(c, "frontend_cse");
    g.bench_function("enum", |b| b.iter_with_large_drop(|| enum_ir::cse(&e1)));
    g.bench_function("object", |b| b.iter_with_large_drop(|| object_ir::cse(&o1)));
    g.finish();

    let mut g = group(c, "frontend_dead_let");
    g.bench_function("enum", |b| {
        b.iter_with_large_drop(|| enum_ir::eliminate_dead_lets(&e2))
    });
    g.bench_function("object", |b| {
        b.iter_with_large_drop(|| object_ir::eliminate_dead_lets(&o2))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
