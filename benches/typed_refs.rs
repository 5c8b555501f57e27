//! Typed references (`#[object(ref = Add)]`) beside the `ObjectPtr` they wrap, in the
//! same groups: the promise is zero cost (same size, no extra check on clone, drop or
//! field access).
//!
//! Run with `cargo bench -p object-benches --bench typed_refs`.
//!
//! # Groups
//!
//! - `typed_ref_clone_drop`: cloning and dropping a handle to an object that stays
//!   alive: `ObjectPtr<IntNode>`, the typed reference `Int`, and `Arc` for scale.
//! - `typed_ref_field_sum`: the sum of a field over 1024 handles in a `Vec` (a field
//!   read through `Deref`): `Vec<ObjectPtr<IntNode>>` and `Vec<Int>`.
//! - `typed_ref_walk`: evaluating a 4096-node expression tree whose nodes hold their
//!   children as `ObjectPtr<ExprNode>` fields, and the same tree whose nodes hold typed
//!   references (`Expr` fields), each by recursion with `downcast_ref`.
//!
//! # Target
//!
//! Each typed-reference row ≤ 1.0 × (within noise) its `ObjectPtr` row.
//!
//! # Measured
//!
//! See the closing note of the commit that adds this file; the generated code of the
//! two rows is the same (the reference is `repr(transparent)` and every method is an
//! `#[inline(always)]` forward).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use object_core::prelude::*;

/// A base with a typed reference.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tref.Expr", abstract, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

/// An integer.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tref.Int", parent = ExprNode, final, ref = Int)]
pub struct IntNode {
    base: ExprNode,
    value: i64,
}

/// An addition whose children are typed references.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tref.Add", parent = ExprNode, final, ref = Add)]
pub struct AddNode {
    base: ExprNode,
    lhs: Expr,
    rhs: Expr,
}

/// The same addition with `ObjectPtr` children.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.tref.PtrAdd", parent = ExprNode, final)]
pub struct PtrAddNode {
    base: ExprNode,
    lhs: ObjectPtr<ExprNode>,
    rhs: ObjectPtr<ExprNode>,
}

fn eval_ref(e: &Expr) -> i64 {
    if let Some(i) = e.downcast_ref::<IntNode>() {
        return i.value;
    }
    match e.downcast_ref::<AddNode>() {
        Some(a) => eval_ref(&a.lhs) + eval_ref(&a.rhs),
        None => 0,
    }
}

fn eval_ptr(e: &ObjectPtr<ExprNode>) -> i64 {
    if let Some(i) = e.downcast_ref::<IntNode>() {
        return i.value;
    }
    match e.downcast_ref::<PtrAddNode>() {
        Some(a) => eval_ptr(&a.lhs) + eval_ptr(&a.rhs),
        None => 0,
    }
}

fn tree_ref(depth: u32, v: &mut i64) -> Expr {
    if depth == 0 {
        *v += 1;
        return Int::new(*v).into();
    }
    Add::new(tree_ref(depth - 1, v), tree_ref(depth - 1, v)).into()
}

fn tree_ptr(depth: u32, v: &mut i64) -> ObjectPtr<ExprNode> {
    if depth == 0 {
        *v += 1;
        return Int::new(*v).into();
    }
    PtrAddNode::new(tree_ptr(depth - 1, v), tree_ptr(depth - 1, v)).upcast()
}

fn clone_drop(c: &mut Criterion) {
    let int = Int::new(1);
    let ptr: ObjectPtr<IntNode> = int.clone().into_node_ptr();
    let arc = Arc::new(1_i64);
    let mut g = c.benchmark_group("typed_ref_clone_drop");
    g.bench_function("object_ptr", |b| {
        b.iter(|| black_box(black_box(&ptr).clone()))
    });
    g.bench_function("typed_ref", |b| {
        b.iter(|| black_box(black_box(&int).clone()))
    });
    g.bench_function("arc", |b| b.iter(|| black_box(Arc::clone(black_box(&arc)))));
    g.finish();
}

fn field_sum(c: &mut Criterion) {
    let refs: Vec<Int> = (0..1024).map(Int::new).collect();
    let ptrs: Vec<ObjectPtr<IntNode>> = refs.iter().map(|r| r.clone().into_node_ptr()).collect();
    let mut g = c.benchmark_group("typed_ref_field_sum");
    g.throughput(Throughput::Elements(1024));
    g.bench_function("object_ptr", |b| {
        b.iter(|| black_box(&ptrs).iter().map(|p| p.value).sum::<i64>())
    });
    g.bench_function("typed_ref", |b| {
        b.iter(|| black_box(&refs).iter().map(|r| r.value).sum::<i64>())
    });
    g.finish();
}

fn walk(c: &mut Criterion) {
    let (r, p) = (tree_ref(12, &mut 0), tree_ptr(12, &mut 0));
    assert_eq!(eval_ref(&r), eval_ptr(&p));
    let mut g = c.benchmark_group("typed_ref_walk");
    g.throughput(Throughput::Elements(8191));
    g.bench_function("object_ptr", |b| b.iter(|| eval_ptr(black_box(&p))));
    g.bench_function("typed_ref", |b| b.iter(|| eval_ref(black_box(&r))));
    g.finish();
}

criterion_group!(benches, clone_drop, field_sum, walk);
criterion_main!(benches);
