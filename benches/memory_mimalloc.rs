//! `memory.rs` with mimalloc as the global allocator: the same bytes per node and build
//! and drop times, to say which allocator a user should pick (see the size-class pool's
//! docs, `object_core::alloc::size_classes`).
//!
//! Run with `cargo bench -p object-benches --bench memory_mimalloc`.
//!
//! # Measured
//!
//! On this project's 2-core machine: every 32-byte side takes 32.0 bytes a node (the
//! object with and without the size-class pool, `Arc<enum>`; `Box<enum>` 16.0: mimalloc
//! has 16- and 32-byte classes). Build + drop of the million nodes: object 15.2 ms
//! with the pool, 27.6 ms without, `Arc<enum>` 47.4 ms, `Box<enum>` 33.0 ms.

use criterion::{criterion_group, Criterion};

#[path = "memory_tree.rs"]
mod memory_tree;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn memory(c: &mut Criterion) {
    memory_tree::memory(c, "mimalloc");
}

criterion_group!(benches, memory);

/// `criterion_main!`, with the child side of the memory measurement first.
fn main() {
    memory_tree::run_child_side_if_asked();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
