//! Criterion benchmarks of the object protocol, each beside its plain-Rust counterpart
//! in the *same* group, so that the ratio is read from one run on one machine.
//!
//! Run with `cargo bench -p object-benches --bench object`.
//!
//! # Groups
//!
//! - `make_drop`: `make_object(Small)` + drop, against `Arc::new` + drop and
//!   `Box::new` + drop. All three allocate a 32-byte block: the object is the 16-byte
//!   header and 16 bytes of payload; the `Arc` holds the same 16-byte payload behind its
//!   own 16 bytes of counts; the `Box` holds a 32-byte struct.
//! - `clone_drop`: cloning and dropping a handle to an object that stays alive
//!   (`ObjectPtr`), against the same with `Arc`. The clone goes through `black_box`.
//! - `type_check`: `is::<T>()` on an `ObjectRef`, against
//!   `<dyn Any>::downcast_ref::<Concrete>()` on a `Box<dyn Any>` and on a `&dyn Any`.
//!   The handle is passed through `black_box` on every iteration so that nothing is
//!   hoisted or folded. Cases:
//!   - `exact_final`: the object's type is the final type asked for (one compare);
//!   - `base_in_range`: the object's type is a link-time child of the non-final `Base`,
//!     inside `Base`'s index range (two compares);
//!   - `base_overflowed`: the object's type, `bench.Overflowed`, was registered at run
//!     time under `Base2`, which reserves no slots, so it lies outside `Base2`'s range
//!     and the check falls back to the type table's ancestor display;
//!   - `negative_*` (for information): checks that answer `false`, for a final type, a
//!     non-final type without overflowed descendants and one with them; and the
//!     `dyn Any` downcast that fails;
//!   - `floor_type_index` (for information): only the loads every check shares
//!     (`black_box`, the handle, the header's type index), so that a check's own cost
//!     is its time minus this one;
//!   - `exact_final_loop` and, with `TVM_FFI_ROOT` set (see `build.rs`),
//!     `tvm_ffi_cpp_exact_final`: the exact check in a loop that times itself, ours
//!     and tvm-ffi's C++ runtime's (`ref->IsInstance<T>()` on a final type), the
//!     handle's address kept in a register by the same kind of barrier on both sides.
//! - `match4`: the RFC's `Process(Expr)` pattern. An `Expr` base with four final
//!   subtypes (`IntImm`, `Add`, `Sub`, `Mul`); 1024 `ObjectRef`s in a fixed
//!   pseudo-random order, each dispatched with a chain of `downcast_ref`s and folded
//!   into a sum; against the same data as a Rust `enum` with `match` (stored inline in
//!   a `Vec`) and as `Vec<Box<dyn Any>>` with a `downcast_ref` chain. Throughput is
//!   1024 elements per iteration, so criterion reports elements per second; per-element
//!   time is the iteration time / 1024.
//!
//!   Caveat: the same 1024-element sequence is walked on every iteration, so the branch
//!   predictor can learn it. The `downcast_ref` chain compiles to compare-and-branch,
//!   which the conditional predictor memorizes; the `enum` compiles to a jump table,
//!   whose indirect jump it does not, so `enum_match` can come out *slower* than the
//!   chain here. With data that cannot be memorized (e.g. 65536 elements) both are
//!   bound by mispredictions and cost about the same per element; sorted by kind, both
//!   drop to a few cycles per element. `dyn Any` stays ~2× slower in every case.
//! - `pool`: `ObjectPool::make` + drop from a pool created once and warmed outside the
//!   loop, against `Arc::new` + drop of the same payload and `make_object` + drop.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | `type_check/exact_final` | ≤ 0.5 × `type_check/dyn_any_box` |
//! | `type_check/base_in_range` | ≤ 0.6 × `type_check/dyn_any_box` |
//! | `type_check/base_overflowed` | ≤ 1.0 × `type_check/dyn_any_box` |
//! | `clone_drop/object_ptr` | ≤ 1.05 × `clone_drop/arc` |
//! | `make_drop/make_object` | ≤ 1.0 × `make_drop/arc_new` |
//! | `pool/pool_make` | ≤ 0.6 × `pool/arc_new` |
//!
//! `match4` has no fixed target: it shows where the `downcast_ref` chain stands between
//! the closed-world `enum` and the open-world `dyn Any`.
//!
//! The exact check beside the C++ runtime (`exact_final_loop` against
//! `tvm_ffi_cpp_exact_final`). Both loops are the same instructions: per round, the
//! handle and the object's type index are loaded and the index is compared with the
//! type's, held in a register since before the loop (ours: the type cache's word,
//! read by a load the compiler may move out of the loop, see `object_core`'s
//! `TypeCache`; theirs: a static filled before `main`). Each barrier is a pure
//! function of the handle and the round (`opaque_at`; `asm("" : "+r"(p) : "r"(i))`):
//! an `asm volatile` barrier may never return as far as the compiler knows, so it keeps
//! any read that is not a plain load of a global inside the loop, a cost no real loop
//! has. A loop of seven fused instructions takes one cycle more when it straddles a
//! 64-byte boundary, which is where the linker happens to put it, so the two loops
//! are timed aligned alike:
//!
//! ```text
//! TVM_FFI_ROOT=… RUSTFLAGS="-C llvm-args=-align-loops=64" cargo bench -p object-benches \
//!     --bench object --target-dir target/aligned -- 'type_check/(exact_final_loop|tvm_ffi_cpp)'
//! ```
//!
//! (`build.rs` compiles the C++ shim with `-falign-loops=64`.) Ten alternating runs on
//! 2026-11-29: 0.59–1.18 ×, median 0.97 × (best against best 497 against 559 ps). In a
//! default build whose loop does not straddle a boundary, six runs: 0.82–1.00 ×,
//! median 0.96 ×; one that did straddle measured 1.3–1.9 ×.

use std::any::Any;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use object_core::registry::{register_type, TypeSpec};
use object_core::{make_object, make_object_as, Object, ObjectPool, ObjectRef, ObjectType};

// ---------------------------------------------------------------------------------
// Node types.
// ---------------------------------------------------------------------------------

/// A small final node: 16-byte header + 16 bytes of payload.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Small", final)]
struct Small {
    base: Object,
    a: u64,
    b: u64,
}

/// `Small`'s payload without the header, for `Arc` (whose counts take the header's
/// 16 bytes): the same 32-byte allocation.
#[allow(dead_code)] // payload: written, never read
struct SmallPayload {
    a: u64,
    b: u64,
}

/// A 32-byte plain struct, for `Box`: the same 32-byte allocation.
#[allow(dead_code)] // payload: written, never read
struct Small32 {
    a: u64,
    b: u64,
    c: u64,
    d: u64,
}

fn small(v: u64) -> Small {
    Small {
        base: Object::new(),
        a: v,
        b: v,
    }
}

/// A final leaf type, for the exact check.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Leaf", final)]
struct Leaf {
    base: Object,
    value: i64,
}

/// Another final type, for the negative check.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Other", final)]
struct Other {
    base: Object,
    value: i64,
}

/// A non-final base with room for run-time descendants; its child is inside its range.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Base", slots = 4)]
struct Base {
    base: Object,
}

/// A link-time child of `Base`.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.BaseChild", parent = Base, final)]
struct BaseChild {
    base: Base,
    value: i64,
}

/// A non-final base with no reserved slots: any run-time child overflows.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Base2", slots = 0)]
struct Base2 {
    base: Object,
    value: i64,
}

/// The key of the run-time descendant of `Base2`.
const OVERFLOWED_KEY: &str = "bench.Overflowed";

/// Plain-Rust concrete types for the `dyn Any` side.
struct AnyLeaf {
    value: i64,
}
struct AnyOther;

// ---------------------------------------------------------------------------------
// The `Process(Expr)` types.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Expr", slots = 4)]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.IntImm", parent = Expr, final)]
struct IntImm {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Add", parent = Expr, final)]
struct Add {
    base: Expr,
    a: i64,
    b: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Sub", parent = Expr, final)]
struct Sub {
    base: Expr,
    a: i64,
    b: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.Mul", parent = Expr, final)]
struct Mul {
    base: Expr,
    a: i64,
    b: i64,
}

fn expr() -> Expr {
    Expr {
        base: Object::new(),
    }
}

/// The closed-world counterpart.
enum ExprEnum {
    IntImm(i64),
    Add(i64, i64),
    Sub(i64, i64),
    Mul(i64, i64),
}

/// The open-world counterpart (`Box<dyn Any>`).
struct AnyIntImm {
    value: i64,
}
struct AnyAdd {
    a: i64,
    b: i64,
}
struct AnySub {
    a: i64,
    b: i64,
}
struct AnyMul {
    a: i64,
    b: i64,
}

const MATCH_LEN: usize = 1024;

/// One element of the `match4` data: a kind in `0..4` and two operands.
#[derive(Clone, Copy)]
struct Spec {
    kind: u32,
    a: i64,
    b: i64,
}

/// A fixed pseudo-random sequence (a 64-bit LCG), the same on every run.
fn specs(n: usize) -> Vec<Spec> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    (0..n)
        .map(|_| Spec {
            kind: (next() % 4) as u32,
            a: (next() % 1000) as i64,
            b: (next() % 1000) as i64,
        })
        .collect()
}

#[inline]
fn process_object(e: &ObjectRef) -> i64 {
    if let Some(x) = e.downcast_ref::<IntImm>() {
        x.value
    } else if let Some(x) = e.downcast_ref::<Add>() {
        x.a.wrapping_add(x.b)
    } else if let Some(x) = e.downcast_ref::<Sub>() {
        x.a.wrapping_sub(x.b)
    } else if let Some(x) = e.downcast_ref::<Mul>() {
        x.a.wrapping_mul(x.b)
    } else {
        0
    }
}

#[inline]
fn process_enum(e: &ExprEnum) -> i64 {
    match *e {
        ExprEnum::IntImm(v) => v,
        ExprEnum::Add(a, b) => a.wrapping_add(b),
        ExprEnum::Sub(a, b) => a.wrapping_sub(b),
        ExprEnum::Mul(a, b) => a.wrapping_mul(b),
    }
}

#[inline]
fn process_any(e: &dyn Any) -> i64 {
    if let Some(x) = e.downcast_ref::<AnyIntImm>() {
        x.value
    } else if let Some(x) = e.downcast_ref::<AnyAdd>() {
        x.a.wrapping_add(x.b)
    } else if let Some(x) = e.downcast_ref::<AnySub>() {
        x.a.wrapping_sub(x.b)
    } else if let Some(x) = e.downcast_ref::<AnyMul>() {
        x.a.wrapping_mul(x.b)
    } else {
        0
    }
}

// ---------------------------------------------------------------------------------
// Groups.
// ---------------------------------------------------------------------------------

fn make_drop(c: &mut Criterion) {
    // Register outside the measurement.
    let _ = Small::type_index();
    let mut g = c.benchmark_group("make_drop");
    g.bench_function("make_object", |b| {
        b.iter(|| make_object(small(black_box(1))))
    });
    g.bench_function("arc_new", |b| {
        b.iter(|| {
            let v = black_box(1);
            Arc::new(SmallPayload { a: v, b: v })
        })
    });
    g.bench_function("box_new", |b| {
        b.iter(|| {
            let v = black_box(1);
            Box::new(Small32 {
                a: v,
                b: v,
                c: v,
                d: v,
            })
        })
    });
    g.finish();
}

fn clone_drop(c: &mut Criterion) {
    let obj: ObjectRef = make_object(small(1)).into_object_ref();
    let arc = Arc::new(SmallPayload { a: 1, b: 1 });
    let mut g = c.benchmark_group("clone_drop");
    g.bench_function("object_ptr", |b| {
        b.iter(|| black_box(black_box(&obj).clone()))
    });
    g.bench_function("arc", |b| b.iter(|| black_box(Arc::clone(black_box(&arc)))));
    g.finish();
}

fn type_check(c: &mut Criterion) {
    let leaf: ObjectRef = make_object(Leaf {
        base: Object::new(),
        value: 1,
    })
    .into_object_ref();
    let child: ObjectRef = make_object(BaseChild {
        base: Base {
            base: Object::new(),
        },
        value: 1,
    })
    .into_object_ref();
    let info = register_type(&TypeSpec::new(OVERFLOWED_KEY, Base2::TYPE_KEY))
        .expect("registering the overflowed type");
    let overflowed: ObjectRef = make_object_as(
        Base2 {
            base: Object::new(),
            value: 1,
        },
        info.index(),
    )
    .expect("making an object of the overflowed type")
    .into_object_ref();

    // The set-up is what the benchmark claims it is.
    let base2 = Base2::type_info();
    assert!(
        !base2.range().contains(&info.index()),
        "the child must overflow"
    );
    assert!(base2.has_overflowed_descendants());
    assert!(Base::type_info().range().contains(&child.type_index()));
    assert!(leaf.is::<Leaf>() && child.is::<Base>() && overflowed.is::<Base2>());
    assert!(!leaf.is::<Other>() && !leaf.is::<Base>() && !leaf.is::<Base2>());
    let _ = Other::type_index();

    let any_box: Box<dyn Any> = Box::new(AnyLeaf { value: 1 });
    let any_ref: &dyn Any = &*any_box;
    assert!(any_box
        .downcast_ref::<AnyLeaf>()
        .is_some_and(|l| l.value == 1));
    assert!(any_ref.downcast_ref::<AnyOther>().is_none());

    let mut g = c.benchmark_group("type_check");
    g.bench_function("exact_final", |b| b.iter(|| black_box(&leaf).is::<Leaf>()));
    // The same check in a loop that times itself, with the handle's address kept in a
    // register and taken anew each round, as in the peer's C++ loop below (criterion's
    // `black_box` stores and reloads it).
    g.bench_function("exact_final_loop", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            let mut hits = 0u64;
            let mut r = &leaf;
            for i in 0..iters {
                r = object_benches::opaque_at(r, i);
                hits += r.is::<Leaf>() as u64;
            }
            let elapsed = start.elapsed();
            assert_eq!(black_box(hits), iters);
            elapsed
        })
    });
    #[cfg(tvm_ffi_cpp)]
    g.bench_function("tvm_ffi_cpp_exact_final", |b| {
        b.iter_custom(object_benches::tvm_ffi_cpp::is_final)
    });
    g.bench_function("base_in_range", |b| {
        b.iter(|| black_box(&child).is::<Base>())
    });
    g.bench_function("base_overflowed", |b| {
        b.iter(|| black_box(&overflowed).is::<Base2>())
    });
    g.bench_function("dyn_any_box", |b| {
        b.iter(|| black_box(&any_box).downcast_ref::<AnyLeaf>().is_some())
    });
    g.bench_function("dyn_any_ref", |b| {
        b.iter(|| black_box(any_ref).downcast_ref::<AnyLeaf>().is_some())
    });
    g.bench_function("negative_final", |b| {
        b.iter(|| black_box(&leaf).is::<Other>())
    });
    g.bench_function("negative_base", |b| {
        b.iter(|| black_box(&leaf).is::<Base>())
    });
    g.bench_function("negative_overflowed", |b| {
        b.iter(|| black_box(&leaf).is::<Base2>())
    });
    g.bench_function("floor_type_index", |b| {
        b.iter(|| black_box(&leaf).type_index())
    });
    g.bench_function("negative_dyn_any_box", |b| {
        b.iter(|| black_box(&any_box).downcast_ref::<AnyOther>().is_some())
    });
    g.finish();
}

fn match4(c: &mut Criterion) {
    let specs = specs(MATCH_LEN);
    // Each representation is built in one go, so each is laid out as its own
    // allocation sequence.
    let objects: Vec<ObjectRef> = specs
        .iter()
        .map(|s| match s.kind {
            0 => make_object(IntImm {
                base: expr(),
                value: s.a,
            })
            .into_object_ref(),
            1 => make_object(Add {
                base: expr(),
                a: s.a,
                b: s.b,
            })
            .into_object_ref(),
            2 => make_object(Sub {
                base: expr(),
                a: s.a,
                b: s.b,
            })
            .into_object_ref(),
            _ => make_object(Mul {
                base: expr(),
                a: s.a,
                b: s.b,
            })
            .into_object_ref(),
        })
        .collect();
    let enums: Vec<ExprEnum> = specs
        .iter()
        .map(|s| match s.kind {
            0 => ExprEnum::IntImm(s.a),
            1 => ExprEnum::Add(s.a, s.b),
            2 => ExprEnum::Sub(s.a, s.b),
            _ => ExprEnum::Mul(s.a, s.b),
        })
        .collect();
    let anys: Vec<Box<dyn Any>> = specs
        .iter()
        .map(|s| -> Box<dyn Any> {
            match s.kind {
                0 => Box::new(AnyIntImm { value: s.a }),
                1 => Box::new(AnyAdd { a: s.a, b: s.b }),
                2 => Box::new(AnySub { a: s.a, b: s.b }),
                _ => Box::new(AnyMul { a: s.a, b: s.b }),
            }
        })
        .collect();

    let sum_objects = |v: &[ObjectRef]| {
        v.iter()
            .fold(0i64, |s, e| s.wrapping_add(process_object(e)))
    };
    let sum_enums = |v: &[ExprEnum]| v.iter().fold(0i64, |s, e| s.wrapping_add(process_enum(e)));
    let sum_anys = |v: &[Box<dyn Any>]| {
        v.iter()
            .fold(0i64, |s, e| s.wrapping_add(process_any(&**e)))
    };
    // The three walks compute the same thing.
    let expected = sum_enums(&enums);
    assert_eq!(sum_objects(&objects), expected);
    assert_eq!(sum_anys(&anys), expected);

    let mut g = c.benchmark_group("match4");
    g.throughput(Throughput::Elements(MATCH_LEN as u64));
    g.bench_function("object_downcast_chain", |b| {
        b.iter(|| sum_objects(black_box(&objects)))
    });
    g.bench_function("enum_match", |b| b.iter(|| sum_enums(black_box(&enums))));
    g.bench_function("dyn_any_downcast_chain", |b| {
        b.iter(|| sum_anys(black_box(&anys)))
    });
    g.finish();
}

fn pool(c: &mut Criterion) {
    let pool = ObjectPool::<Small>::with_capacity(64);
    // Warm: the chunks are on the free list and in cache.
    for i in 0..1024 {
        drop(black_box(pool.make(small(i))));
    }
    let mut g = c.benchmark_group("pool");
    g.bench_function("pool_make", |b| b.iter(|| pool.make(small(black_box(1)))));
    g.bench_function("arc_new", |b| {
        b.iter(|| {
            let v = black_box(1);
            Arc::new(SmallPayload { a: v, b: v })
        })
    });
    g.bench_function("make_object", |b| {
        b.iter(|| make_object(small(black_box(1))))
    });
    g.finish();
    drop(pool);
}

criterion_group!(benches, make_drop, clone_drop, type_check, match4, pool);
criterion_main!(benches);
