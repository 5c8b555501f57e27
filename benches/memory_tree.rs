//! The memory bench's body, shared by `memory.rs` (the system allocator, glibc on this
//! project's machine) and `memory_mimalloc.rs` (mimalloc as the global allocator): one
//! binary per global allocator, the same measurements.
//!
//! # What is measured
//!
//! - **Bytes per node** (printed once, before the timed groups): the resident-set growth
//!   (`/proc/self/statm`, Linux only; elsewhere the line says it was not measured) while
//!   one million nodes are built and kept alive, divided by the number of nodes. Each
//!   side builds a complete binary tree (2^20 - 1 nodes, leaves with no children) in a
//!   process of its own (the bench binary runs itself again), so into fresh memory.
//!   - `object`: `BinNode { base: Object, lhs, rhs }` with `Option<ObjectPtr<BinNode>>`
//!     children: 16 bytes of header and 16 of children, a 32-byte request, from
//!     `make_object` (the size-class pool);
//!   - `object_no_pool`: the same with the size-class pool off
//!     (`OBJECT_SIZE_CLASS_POOL=0`): every node its own block of the global allocator;
//!   - `arc_enum`: `Arc<ArcNode>` with `ArcNode::{Leaf, Bin(Arc<ArcNode>, Arc<ArcNode>)}`:
//!     16 bytes of counts and a 16-byte enum (`Leaf` lives in the null-pointer niche),
//!     also a 32-byte request;
//!   - `box_enum`: `Box<BoxNode>` with the same shape: a 16-byte request, for scale.
//! - **Time** (`build_drop_1m`): building the tree and dropping it, per side, again and
//!   again in one process: the drop order decides where the next build's blocks lie
//!   (see `MAX_NESTED_RELEASES` in `object-core/src/header.rs`), so this is timed too.
//!
//! The resident set counts what the allocator took from the system, so it shows the
//! allocator's rounding: with glibc, a 32-byte request takes a 48-byte chunk (8 bytes
//! of size header, 16-byte alignment), a 16-byte one 32 bytes (the smallest chunk).
//!
//! # Measured
//!
//! See `memory.rs` and `memory_mimalloc.rs`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode};
use object_core::alloc::set_size_class_pool;
use object_core::{make_object, Object, ObjectPtr};

/// Depth of the complete binary tree: 2^20 - 1 = 1,048,575 nodes.
const DEPTH: u32 = 20;
const NODES: usize = (1 << DEPTH) - 1;

/// A binary AST node: the 16-byte header and two children.
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.memory.BinNode", final)]
struct BinNode {
    base: Object,
    lhs: Option<ObjectPtr<BinNode>>,
    rhs: Option<ObjectPtr<BinNode>>,
}

/// The same node as an enum behind `Arc`.
#[allow(dead_code)] // (the children are only held)
enum ArcNode {
    Leaf,
    Bin(Arc<ArcNode>, Arc<ArcNode>),
}

/// The same node as an enum behind `Box`.
#[allow(dead_code)] // (the children are only held)
enum BoxNode {
    Leaf,
    Bin(Box<BoxNode>, Box<BoxNode>),
}

fn object_tree(depth: u32) -> ObjectPtr<BinNode> {
    let (lhs, rhs) = if depth > 1 {
        (Some(object_tree(depth - 1)), Some(object_tree(depth - 1)))
    } else {
        (None, None)
    };
    make_object(BinNode {
        base: Object::new(),
        lhs,
        rhs,
    })
}

fn arc_tree(depth: u32) -> Arc<ArcNode> {
    if depth > 1 {
        let (l, r) = (arc_tree(depth - 1), arc_tree(depth - 1));
        Arc::new(ArcNode::Bin(l, r))
    } else {
        Arc::new(ArcNode::Leaf)
    }
}

fn box_tree(depth: u32) -> Box<BoxNode> {
    if depth > 1 {
        let (l, r) = (box_tree(depth - 1), box_tree(depth - 1));
        Box::new(BoxNode::Bin(l, r))
    } else {
        Box::new(BoxNode::Leaf)
    }
}

/// The resident set in bytes, if the platform says.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // The page size of every Linux target this runs on in CI; `statm` counts pages.
    Some(pages * 4096)
}

/// The variable that makes the bench binary measure one side and exit (see `memory`).
const SIDE_VAR: &str = "OBJECT_BENCH_MEMORY_SIDE";

/// Bytes per node that building `build` adds to the resident set.
fn bytes_per_node<T>(build: impl FnOnce() -> T) -> Option<f64> {
    let before = resident_bytes()?;
    let tree = build();
    let after = resident_bytes()?;
    drop(black_box(tree));
    Some(after.saturating_sub(before) as f64 / NODES as f64)
}

/// Bytes per node of one side, measured in a fresh process (this binary, run again
/// with `SIDE_VAR` set), so that no side reuses memory another freed.
fn measure_in_child(side: &str) -> String {
    let pool = if side == "object_no_pool" { "0" } else { "1" };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("not measured ({e})"),
    };
    match std::process::Command::new(exe)
        .env(SIDE_VAR, side)
        .env("OBJECT_SIZE_CLASS_POOL", pool)
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        Ok(out) => format!("not measured (exit {})", out.status),
        Err(e) => format!("not measured ({e})"),
    }
}

/// In the child process (`SIDE_VAR` set): measures that one side, prints it and exits,
/// before anything else of the bench allocates (an allocator that keeps freed pages
/// resident, as mimalloc does, would otherwise hand the tree memory already counted).
/// Called first thing in `main`.
pub fn run_child_side_if_asked() {
    assert_eq!(std::mem::size_of::<BinNode>(), 32);
    assert_eq!(std::mem::size_of::<ArcNode>(), 16);
    assert_eq!(std::mem::size_of::<BoxNode>(), 16);
    if let Ok(side) = std::env::var(SIDE_VAR) {
        // The child: one side, printed, and out.
        let bytes = match side.as_str() {
            "object" | "object_no_pool" => bytes_per_node(|| object_tree(DEPTH)),
            "arc_enum" => bytes_per_node(|| arc_tree(DEPTH)),
            _ => bytes_per_node(|| box_tree(DEPTH)),
        };
        println!(
            "{}",
            bytes.map_or("not measured".to_owned(), |b| format!("{b:.1}"))
        );
        std::process::exit(0);
    }
}

/// The bench: bytes per node printed (each side in a child process), then the timed
/// group. `allocator` names the global allocator in the printed line.
pub fn memory(c: &mut Criterion, allocator: &str) {
    eprintln!(
        "memory ({allocator}): {NODES} binary nodes, resident bytes per node: object {} \
         (32 requested), object_no_pool {}, arc_enum {} (32 requested), box_enum {} \
         (16 requested)",
        measure_in_child("object"),
        measure_in_child("object_no_pool"),
        measure_in_child("arc_enum"),
        measure_in_child("box_enum"),
    );

    let mut g = c.benchmark_group("build_drop_1m");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    set_size_class_pool(true);
    g.bench_function("object", |b| b.iter(|| drop(black_box(object_tree(DEPTH)))));
    set_size_class_pool(false);
    g.bench_function("object_no_pool", |b| {
        b.iter(|| drop(black_box(object_tree(DEPTH))))
    });
    set_size_class_pool(true);
    g.bench_function("arc_enum", |b| b.iter(|| drop(black_box(arc_tree(DEPTH)))));
    g.bench_function("box_enum", |b| b.iter(|| drop(black_box(box_tree(DEPTH)))));
    g.finish();
}
