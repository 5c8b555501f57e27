//! Criterion benchmarks of the `transform` module (dispatch by type, the generic
//! mutator), each beside its plain-Rust counterpart in the *same* group.
//!
//! Run with `cargo bench -p object-benches --bench transform`.
//!
//! # Groups
//!
//! - `dispatch`: finding the handler of a node's type among 4 expression types, on a
//!   rotating set of nodes: `type_dispatch` ([`TypeDispatch::dispatch`], one cache load),
//!   `enum_match` (a `match` on an `enum`'s discriminant), `downcast_chain` (a chain of
//!   `downcast_ref`/`is` checks, the last type found last).
//! - `rewrite_1m`: a bottom-up rewrite of a balanced binary tree of 1,048,575 nodes
//!   (`Add` over `Int` leaves), done by [`mutate`] over objects and by the usual
//!   recursive function over an `enum` + `Arc` tree:
//!   - `identity/*`: nothing changes; both return the very same root;
//!   - `bump_leaves/*`: every `Int` becomes `Int + 1`, so every node is rebuilt;
//!   - `identity/object_recursive` (for information): a hand-written recursive rewrite
//!     over the same objects.
//!
//!   The result is dropped inside the measurement on both sides.
//! - `rewrite_8k`: the identity rewrite of a tree of 8,191 nodes (mostly in cache).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use object_core::transform::{mutate, Rewriter, TransformError, TypeDispatch};
use object_core::{make_object, Object, ObjectPtr, ObjectRef};

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tr.Expr")]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tr.Int", parent = Expr, final)]
struct Int {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tr.Add", parent = Expr, final)]
struct Add {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tr.Mul", parent = Expr, final)]
struct Mul {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tr.Neg", parent = Expr, final)]
struct Neg {
    base: Expr,
    arg: ObjectPtr<Expr>,
}

fn e() -> Expr {
    Expr {
        base: Object::new(),
    }
}
fn int(v: i64) -> ObjectPtr<Expr> {
    make_object(Int {
        base: e(),
        value: v,
    })
    .upcast()
}

/// The enum counterpart.
enum E {
    Int(i64),
    Add(Arc<E>, Arc<E>),
    Mul(Arc<E>, Arc<E>),
    Neg(Arc<E>),
}

fn obj_tree(depth: u32, next: &mut i64) -> ObjectPtr<Expr> {
    if depth == 0 {
        *next += 1;
        return int(*next);
    }
    let lhs = obj_tree(depth - 1, next);
    let rhs = obj_tree(depth - 1, next);
    make_object(Add {
        base: e(),
        lhs,
        rhs,
    })
    .upcast()
}

fn enum_tree(depth: u32, next: &mut i64) -> Arc<E> {
    if depth == 0 {
        *next += 1;
        return Arc::new(E::Int(*next));
    }
    let lhs = enum_tree(depth - 1, next);
    let rhs = enum_tree(depth - 1, next);
    Arc::new(E::Add(lhs, rhs))
}

/// The hand-written enum rewrite: children first, rebuild only if one changed.
fn enum_rewrite(e: &Arc<E>, leaf: &impl Fn(i64) -> Option<i64>) -> Arc<E> {
    match &**e {
        E::Int(v) => match leaf(*v) {
            Some(n) => Arc::new(E::Int(n)),
            None => e.clone(),
        },
        E::Add(l, r) | E::Mul(l, r) => {
            let (nl, nr) = (enum_rewrite(l, leaf), enum_rewrite(r, leaf));
            if Arc::ptr_eq(&nl, l) && Arc::ptr_eq(&nr, r) {
                e.clone()
            } else if matches!(&**e, E::Add(..)) {
                Arc::new(E::Add(nl, nr))
            } else {
                Arc::new(E::Mul(nl, nr))
            }
        }
        E::Neg(a) => {
            let na = enum_rewrite(a, leaf);
            if Arc::ptr_eq(&na, a) {
                e.clone()
            } else {
                Arc::new(E::Neg(na))
            }
        }
    }
}

/// For information: a hand-written recursive rewrite over the objects.
fn obj_rewrite(e: &ObjectPtr<Expr>, leaf: &impl Fn(i64) -> Option<i64>) -> ObjectPtr<Expr> {
    if let Some(a) = e.downcast_ref::<Add>() {
        let (nl, nr) = (obj_rewrite(&a.lhs, leaf), obj_rewrite(&a.rhs, leaf));
        if ObjectPtr::ptr_eq(&nl, &a.lhs) && ObjectPtr::ptr_eq(&nr, &a.rhs) {
            return e.clone();
        }
        return make_object(Add {
            base: self::e(),
            lhs: nl,
            rhs: nr,
        })
        .upcast();
    }
    if let Some(i) = e.downcast_ref::<Int>() {
        if let Some(n) = leaf(i.value) {
            return int(n);
        }
    }
    e.clone()
}

struct Identity;
impl Rewriter for Identity {
    type Error = TransformError;
}

struct BumpLeaves;
impl Rewriter for BumpLeaves {
    type Error = TransformError;
    #[inline]
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        if let Some(i) = node.downcast_ref::<Int>() {
            return Ok(int(i.value + 1).into_object_ref());
        }
        Ok(node)
    }
}

fn rewrite_1m(c: &mut Criterion) {
    let depth = 19; // 2^20 - 1 = 1,048,575 nodes
    let en = enum_tree(depth, &mut 0);
    let obj = obj_tree(depth, &mut 0).into_object_ref();

    // Both sides agree.
    assert!(ObjectPtr::ptr_eq(
        &mutate(&obj, &mut Identity).unwrap(),
        &obj
    ));
    assert!(Arc::ptr_eq(&enum_rewrite(&en, &|_| None), &en));
    let bumped = mutate(&obj, &mut BumpLeaves).unwrap();
    let first = |mut o: ObjectRef| loop {
        match o.downcast_ref::<Add>() {
            Some(a) => o = a.lhs.clone().into_object_ref(),
            None => return o.downcast_ref::<Int>().unwrap().value,
        }
    };
    assert_eq!(first(bumped), 2);

    let mut g = c.benchmark_group("rewrite_1m");
    g.sample_size(10);
    g.bench_function("identity/object_mutate", |b| {
        b.iter(|| mutate(black_box(&obj), &mut Identity).unwrap())
    });
    let objp: ObjectPtr<Expr> = obj.clone().downcast().ok().unwrap();
    g.bench_function("identity/object_recursive", |b| {
        b.iter(|| obj_rewrite(black_box(&objp), &|_| None))
    });
    g.bench_function("identity/enum_arc", |b| {
        b.iter(|| enum_rewrite(black_box(&en), &|_| None))
    });
    g.bench_function("bump_leaves/object_mutate", |b| {
        b.iter(|| mutate(black_box(&obj), &mut BumpLeaves).unwrap())
    });
    g.bench_function("bump_leaves/enum_arc", |b| {
        b.iter(|| enum_rewrite(black_box(&en), &|v| Some(v + 1)))
    });
    g.finish();
}

fn dispatch(c: &mut Criterion) {
    let objs: Vec<ObjectRef> = vec![
        int(1).into_object_ref(),
        make_object(Add {
            base: e(),
            lhs: int(1),
            rhs: int(2),
        })
        .into_object_ref(),
        make_object(Mul {
            base: e(),
            lhs: int(1),
            rhs: int(2),
        })
        .into_object_ref(),
        make_object(Neg {
            base: e(),
            arg: int(1),
        })
        .into_object_ref(),
    ];
    let enums: Vec<E> = vec![
        E::Int(1),
        E::Add(Arc::new(E::Int(1)), Arc::new(E::Int(2))),
        E::Mul(Arc::new(E::Int(1)), Arc::new(E::Int(2))),
        E::Neg(Arc::new(E::Int(1))),
    ];
    let mut table: TypeDispatch<u32> = TypeDispatch::new();
    table.set_dispatch::<Int>(1);
    table.set_dispatch::<Add>(2);
    table.set_dispatch::<Mul>(3);
    table.set_dispatch::<Neg>(4);
    let by_table = |o: &ObjectRef| *table.dispatch(o).unwrap();
    let by_match = |x: &E| match x {
        E::Int(_) => 1u32,
        E::Add(..) => 2,
        E::Mul(..) => 3,
        E::Neg(_) => 4,
    };
    let by_chain = |o: &ObjectRef| {
        if o.downcast_ref::<Int>().is_some() {
            1u32
        } else if o.downcast_ref::<Add>().is_some() {
            2
        } else if o.downcast_ref::<Mul>().is_some() {
            3
        } else if o.downcast_ref::<Neg>().is_some() {
            4
        } else {
            0
        }
    };
    for i in 0..4 {
        assert_eq!(by_table(&objs[i]), by_match(&enums[i]));
        assert_eq!(by_chain(&objs[i]), by_match(&enums[i]));
    }

    let mut g = c.benchmark_group("dispatch");
    let mut i = 0usize;
    g.bench_function("type_dispatch", |b| {
        b.iter(|| {
            i = (i + 1) & 3;
            by_table(black_box(&objs[i]))
        })
    });
    g.bench_function("enum_match", |b| {
        b.iter(|| {
            i = (i + 1) & 3;
            by_match(black_box(&enums[i]))
        })
    });
    g.bench_function("downcast_chain", |b| {
        b.iter(|| {
            i = (i + 1) & 3;
            by_chain(black_box(&objs[i]))
        })
    });
    g.finish();
}

fn rewrite_small(c: &mut Criterion) {
    let depth = 12;
    let en = enum_tree(depth, &mut 0);
    let obj = obj_tree(depth, &mut 0).into_object_ref();
    let objp: ObjectPtr<Expr> = obj.clone().downcast().ok().unwrap();
    let mut g = c.benchmark_group("rewrite_8k");
    g.bench_function("identity/object_mutate", |b| {
        b.iter(|| mutate(black_box(&obj), &mut Identity).unwrap())
    });
    g.bench_function("identity/object_recursive", |b| {
        b.iter(|| obj_rewrite(black_box(&objp), &|_| None))
    });
    g.bench_function("identity/enum_arc", |b| {
        b.iter(|| enum_rewrite(black_box(&en), &|_| None))
    });
    g.finish();
}

criterion_group!(benches, dispatch, rewrite_1m, rewrite_small);
criterion_main!(benches);
