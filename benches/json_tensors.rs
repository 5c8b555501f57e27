//! The JSON graph's load and save on a field-heavy IR that holds tensors, strings,
//! arrays and floats, beside `serde_json` on an equivalent
//! `#[derive(Serialize, Deserialize)]` enum tree of the same program, in the same group.
//!
//! Run with `cargo bench -p object-benches --bench json_tensors`. With
//! `JSON_TENSORS_ONCE=ours` (or `serde`) in the environment the binary instead loads
//! the text once and exits (`none`: makes the texts only): the form to count
//! instructions in with callgrind (the count of a run less that of `none` is the load
//! alone), which is noise-free on a shared machine.
//!
//! # The program
//!
//! A balanced tree of `bjt.Call` nodes (an operator's name, a `scale: f64`, and an
//! `Array` of three arguments) over `bjt.Const` leaves, each holding a 2 × 2 `f32`
//! `NDArray` (tvm-ffi's `ffi.Tensor` node: dtype, shape, device and the bytes in base64)
//! and a name. serde's tree is the same program as `enum SNode { Const { name, shape,
//! dtype, data: Vec<f32> }, Call { op, scale, args: Vec<SNode> } }`.
//!
//! # Target
//!
//! `json_tensors_load/from_json_graph` ≤ 2 × `json_tensors_load/serde_json` for the
//! same program (issue 38: every node form the saver writes, tensors included, is read
//! by the direct path; before, a tensor node sent the whole text to the general path).
//!
//! # Measured
//!
//! Callgrind, one load of the 200,000-leaf program (300,000 IR nodes, about 800,000
//! graph nodes: each leaf's name and tensor are nodes of their own, each call's
//! `Array` too), the count of a `none` run subtracted, 2026-12-02: ours 2,274 million
//! instructions, serde_json's 1,218 million: **1.87 ×**. Before the direct path read a
//! tensor's data (the loader started over on the general path at the first tensor):
//! 4,662 million, 3.83 ×.

use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use object_containers::{Array, NDArray};
use object_core::prelude::*;
use object_core::Any;
use serde::{Deserialize, Serialize};

#[derive(Object)]
#[repr(C)]
#[object(key = "bjt.Node", abstract, slots = 4)]
struct Node {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bjt.Const", parent = Node, final)]
struct Const {
    base: Node,
    name: String,
    value: NDArray,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "bjt.Call", parent = Node, final)]
struct Call {
    base: Node,
    op: String,
    scale: f64,
    args: Array<ObjectPtr<Node>>,
}

#[derive(Serialize, Deserialize)]
enum SNode {
    Const {
        name: std::string::String,
        shape: Vec<i64>,
        dtype: std::string::String,
        data: Vec<f32>,
    },
    Call {
        op: std::string::String,
        scale: f64,
        args: Vec<SNode>,
    },
}

const OPS: [&str; 4] = ["add", "mul", "conv2d", "matmul"];

fn leaf_data(i: usize) -> [f32; 4] {
    let x = i as f32;
    [x, x * 0.5, -x, x + 0.25]
}

fn leaf_name(i: usize) -> std::string::String {
    format!("weight_{i}")
}

/// The program over leaves `lo..hi`: each call takes three arguments.
fn build_ours(lo: usize, hi: usize) -> ObjectPtr<Node> {
    if hi - lo == 1 {
        let t = NDArray::from_slice(&[2, 2], &leaf_data(lo)).expect("a 2 x 2 tensor");
        return Const::new(leaf_name(lo).as_str(), t).upcast();
    }
    let step = (hi - lo).div_ceil(3);
    let args: Vec<ObjectPtr<Node>> = (lo..hi)
        .step_by(step)
        .map(|a| build_ours(a, (a + step).min(hi)))
        .collect();
    Call::new(OPS[lo % 4], lo as f64 * 0.125, args).upcast()
}

fn build_serde(lo: usize, hi: usize) -> SNode {
    if hi - lo == 1 {
        return SNode::Const {
            name: leaf_name(lo),
            shape: vec![2, 2],
            dtype: "float32".into(),
            data: leaf_data(lo).to_vec(),
        };
    }
    let step = (hi - lo).div_ceil(3);
    SNode::Call {
        op: OPS[lo % 4].into(),
        scale: lo as f64 * 0.125,
        args: (lo..hi)
            .step_by(step)
            .map(|a| build_serde(a, (a + step).min(hi)))
            .collect(),
    }
}

fn nodes(n: &SNode) -> usize {
    match n {
        SNode::Const { .. } => 1,
        SNode::Call { args, .. } => 1 + args.iter().map(nodes).sum::<usize>(),
    }
}

const LEAVES: usize = 200_000;

fn texts() -> (std::string::String, std::string::String, usize) {
    let ours = object_json::to_json_graph(&Any::from(build_ours(0, LEAVES))).expect("saves");
    let tree = build_serde(0, LEAVES);
    let theirs = serde_json::to_string(&tree).expect("serializes");
    (ours, theirs, nodes(&tree))
}

fn bench(c: &mut Criterion) {
    let (ours, theirs, n) = texts();
    eprintln!(
        "json_tensors: {n} IR nodes; our text {} bytes, serde's {} bytes",
        ours.len(),
        theirs.len()
    );
    let root = object_json::from_json_graph(&ours).expect("loads");
    let tree: SNode = serde_json::from_str(&theirs).expect("deserializes");
    for (name, save) in [("json_tensors_load", false), ("json_tensors_save", true)] {
        let mut g = c.benchmark_group(name);
        g.sampling_mode(SamplingMode::Flat);
        g.sample_size(10);
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(4));
        g.throughput(Throughput::Elements(n as u64));
        if save {
            g.bench_function("to_json_graph", |b| {
                b.iter(|| object_json::to_json_graph(&root).expect("saves"))
            });
            g.bench_function("serde_json", |b| {
                b.iter(|| serde_json::to_string(&tree).expect("serializes"))
            });
        } else {
            g.bench_function("from_json_graph", |b| {
                b.iter_batched(
                    || (),
                    |()| object_json::from_json_graph(&ours).expect("loads"),
                    BatchSize::PerIteration,
                )
            });
            g.bench_function("serde_json", |b| {
                b.iter_batched(
                    || (),
                    |()| serde_json::from_str::<SNode>(&theirs).expect("deserializes"),
                    BatchSize::PerIteration,
                )
            });
        }
        g.finish();
    }
}

fn main() {
    if let Ok(which) = std::env::var("JSON_TENSORS_ONCE") {
        let (ours, theirs, _) = texts();
        // (The result is not dropped: a count of the whole run minus one of `none`
        // is the load alone.)
        match which.as_str() {
            "serde" => {
                std::mem::forget(serde_json::from_str::<SNode>(&theirs).expect("deserializes"))
            }
            "ours" => std::mem::forget(object_json::from_json_graph(&ours).expect("loads")),
            _ => {}
        }
        std::mem::forget((ours, theirs));
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
