//! Memory per node and build + drop time of 1,000,000 binary AST nodes, as objects
//! (with and without the size-class pool), as `Arc<enum>` and as `Box<enum>`, with the
//! system allocator (glibc here). `memory_mimalloc.rs` is the same with mimalloc as the
//! global allocator; `memory_tree.rs` says what is measured and how.
//!
//! Run with `cargo bench -p object-benches --bench memory`.
//!
//! # Measured
//!
//! On this project's 2-core machine with glibc (the printed line moves by a fraction of
//! a byte between runs): object 32.0 bytes a node (48.0 before the size-class pool, and
//! with `OBJECT_SIZE_CLASS_POOL=0`), `Arc<enum>` 48.1, `Box<enum>` 32.1. Build + drop
//! of the million nodes: object 18.0 ms with the pool (0.35× `Arc<enum>`), 51.9 ms
//! without, `Arc<enum>` 52.0 ms, `Box<enum>` 41.1 ms. `memory_mimalloc.rs` has the
//! figures with mimalloc.

use criterion::{criterion_group, Criterion};

#[path = "memory_tree.rs"]
mod memory_tree;

fn memory(c: &mut Criterion) {
    memory_tree::memory(c, "system allocator");
}

criterion_group!(benches, memory);

/// `criterion_main!`, with the child side of the memory measurement first.
fn main() {
    memory_tree::run_child_side_if_asked();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
