//! Criterion benchmarks of the JSON graph format (`to_json_graph` / `from_json_graph`)
//! on a 1,000,000-node expression DAG, each beside `serde_json` on an equivalent
//! `#[derive(Serialize, Deserialize)]` Rust enum tree in the *same* group, so that the
//! ratio is read from one run on one machine.
//!
//! Run with `cargo bench -p object-benches --bench json_graph`.
//!
//! # The inputs
//!
//! - **Ours**: the examples' expression AST (`tour.Add`/`Sub`/`Mul` over `tour.IntImm`
//!   and `tour.Var`), a balanced binary tree over 533,334 leaves (depth 20): every
//!   eighth leaf is one of 64 shared `Var`s, the others distinct `IntImm`s. Distinct
//!   objects: 533,333 operators + 466,667 integers + 64 variables = 1,000,064; the
//!   graph adds one string node per variable name (1,000,128 nodes).
//! - **serde**: `SExpr`, an enum with `Box` children, of the same shape with the shared
//!   variables expanded (every leaf its own value): 1,066,667 nodes.
//!
//! Both numbers are printed when the bench starts. The texts differ (ours is a node
//! list with indices and type keys, serde's a nested externally tagged tree), and so do
//! their sizes, which are printed too.
//!
//! # Groups
//!
//! - `json_graph_save`: `to_json_graph(&root)` against `serde_json::to_string(&tree)`.
//! - `json_graph_load`: `from_json_graph(&text)` against
//!   `serde_json::from_str::<SExpr>(&text)`. The loaded value is dropped outside the
//!   timed region (`iter_batched` with `BatchSize::PerIteration`), on both sides.
//! - `json_graph_save_quarter`, `json_graph_load_quarter`: the same over a quarter of
//!   the tree (133,334 leaves: 250,128 graph nodes, 12.6 MB of text; serde 266,667 tree
//!   nodes, 6.6 MB), where both texts stay under glibc's 32 MiB limit for reusing freed
//!   blocks (see "Reading the numbers").
//!
//! Throughput is in nodes (ours: graph nodes; serde: tree nodes). Each iteration takes
//! a good part of a second, so the groups use flat sampling, 10 samples and a short
//! measurement time.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | `json_graph_save/to_json_graph` | ≤ 2 × `json_graph_save/serde_json`, per node (met since the borrowed walk of 2026-11-28: 1.59–1.78× full tree, 1.34–1.43× quarter) |
//! | `json_graph_load/from_json_graph` | ≤ 2 × `json_graph_load/serde_json`, per node (met since the in-place build of 2026-11-25: 0.87–1.06× on 2026-11-28) |
//!
//! # Reading the numbers
//!
//! - On the shared 2-core machine the absolute times move by ±15–25% from run to run
//!   (serde's too, independently); compare the ratios within one run. An earlier
//!   session measured save 1.97–2.16× and load 2.02–2.36× per node (ours: 1,000,128
//!   graph nodes; serde: 1,066,667 tree nodes).
//! - Measured again on 2026-11-24, before the in-place reads below: save 2.82–3.11×,
//!   load 2.32×. After them, save 2.14–2.97× (full tree) and 1.83–2.59× (quarter);
//!   load unchanged. Alternating the two builds in one window, `to_json_graph` on the
//!   quarter tree took 21.4, 24.5, 24.9 ms against 25.3, 28.4, 31.7 ms before (13–21%
//!   less).
//! - Page faults: the full tree's 51 MB text is above glibc's 32 MiB limit, so every
//!   save maps fresh memory and faults it in (`perf stat`: ~14,000 faults a save, about
//!   20% of its time, as system time on this VM), while serde's 26 MB text reuses the
//!   block the previous iteration freed (no faults). The quarter groups show the
//!   per-node cost without that difference.
//! - Our text is 1.9 times as long (51 MB against 26 MB: type keys, field names and
//!   indices for every node); writing and reading those bytes is most of the gap.
//! - Saving: objects reached once (reference count 2 when read: the parent's field
//!   and the saver's clone) skip the hash table; the text between a type's values is
//!   worked out once per type (`TypeForm`, found by type index in a table), so a node
//!   is a few appends; fields are read in place through a `FieldReader` kept with the
//!   form (one type-index compare, then each field by position: no registry look-up,
//!   table search or boxed value per read; one reference-count increment per child
//!   object), children are entered as they are read, and a leaf is written when it is
//!   visited. Callgrind: 953 → 845 instructions a node (an earlier session, 131,071
//!   nodes), then 844 → 621 (this bench's tree, 2026-11-24). What is left is mostly
//!   formatting integers (`itoa`) and short `memcpy`s of the text pieces.
//! - Loading: graphs written children first (as `to_json_graph` writes them) take a
//!   fast path that builds each node as it is read: strings are scanned eight bytes at
//!   a time, the `"type"` and `"data"` keys matched as bytes, type keys compared with
//!   the last four before they are hashed, and fields built through reflection
//!   (`create_from_source`: named fields taken from a list, one allocation per object).
//!   Callgrind: 2,140 → 1,734 instructions a node (1,607 on 2026-11-24), of which
//!   about 500 are `malloc` and building, the rest JSON scanning and the nodes table. Other graphs, and every
//!   error, take the general path (whole document, then a depth-first build from the
//!   root), at about the speed the fast path replaced (~5.5× serde).
//! - 2026-11-25: the reader asks the loader for a node's fields as soon as its type is
//!   read and matches the data's keys to them as bytes (no scan, no name compare
//!   later), type keys are compared in line instead of through `memcmp`, integers are
//!   summed without a check per digit, and `TypeInfo::reflection` is inlined. On the
//!   quarter tree (callgrind, whole loads): 805 → 754 million instructions a load, 6.3%
//!   fewer; serde's load of its tree takes 529 million (3,016 against 1,983 a node,
//!   1.52×). In time the gap stays larger than in instructions: per node against serde,
//!   2.37× and 2.39× in two runs after the change, and 2.08×, 2.22×, 2.71× against the
//!   build before's 2.22×, 2.18×, 1.84× when the two were run in turn (a machine that
//!   moved by ±30% between runs could not tell them apart); the loader's time goes to
//!   memory (objects, the node table) more than serde's does.
//! - Later on 2026-11-25 (another machine: in the first runs, load 2.25–2.29× per node
//!   and save 2.5–2.9× on the quarter tree): an object node whose text is exactly what
//!   the saver writes for its type (a per-type template of the text between the
//!   values) is built straight from the text, its constructor taking each field from
//!   a `reflection::FieldFeed` that checks the text before the value and reads the
//!   value: no list of members, no list of values, no search by name. Callgrind on
//!   the quarter tree: 1,492 → 938 instructions a node for the load (serde: 992).
//!   Criterion, two runs, per node against serde: load 1.39× and 1.43× (full tree),
//!   1.29× and 1.32× (quarter). Save, unchanged: 3.78× and 3.80× (full), 2.72× and
//!   2.77× (quarter); serde's save ran at 22–27 ns a node on this machine. Two
//!   attempts at the save were measured and left out: writing the text in 64 KiB
//!   blocks joined at the end, and a walk that keeps a slot only for values the table
//!   holds (10% fewer instructions, and no 32-byte slot for every node): in a fresh
//!   process the walk cut the save from 109 to 68 ns a node, but in this bench's
//!   process (the full tree's memory freed before) it took 19.0 ms against 16.4 ms on
//!   the quarter tree, and 17.7 against 17.5 ms with glibc's trimming and mapping
//!   turned off: what decides the save's time here is the allocator's state (fresh
//!   pages for the output), not its instructions.
//! - 2026-11-28, the save. Before: 2.77× per node (full tree) and 1.82× (quarter) in
//!   this bench; callgrind 670 instructions a node on the quarter tree (serde: 425).
//!   What changed, in order (callgrind a node, quarter tree):
//!   - values read in place are borrowed for the whole save (the lifetimes chain from
//!     the root the caller lends), so a child costs no reference-count increment and
//!     decrement (12 ns a node measured on this tree), and an object held by one
//!     position gets no slot (32 MB less memory faulted in on the full tree): 670 →
//!     658, and 40% fewer page faults;
//!   - the walk's task is two words and nodes waiting for children sit on a stack of
//!     flat frames: the nested task enum was built on the stack and copied with wider
//!     loads than its stores (store-forwarding stalls, a third of the time spent
//!     entering children), and int fields are written without the generic literal
//!     dispatch: 658 → 572, and in time 1.35–1.41× (quarter, a standalone probe
//!     taking turns with serde);
//!   - pieces of text and numbers appended with copies of a size known when compiled
//!     (`text.rs`: `&padded[..64]` pushed, then the string cut back), no call of
//!     `memcpy` a piece: 572 → 555, and a reflected object of a known type entered and
//!     written in line: 555 → 460;
//!   - children entered last to first, so their tasks need no reversal (another
//!     store-forwarding stall): 460 → 458.
//!
//!   Criterion, three runs after (per node, ours ÷ serde): save 1.59×, 1.76×, 1.78×
//!   (full tree), 1.43×, 1.34×, 1.40× (quarter); load 1.06×, 1.00×, 1.04× (full),
//!   1.01×, 1.03×, 0.87× (quarter). What keeps the full tree's save above the
//!   quarter's is the kernel: our 51 MB text is above glibc's 32 MiB ceiling for
//!   reusing freed blocks, so each save maps fresh memory and faults in ~12,500 pages
//!   (`/usr/bin/time`: 0.22 s of system time for ten saves, ~22 ns a node, where the
//!   user time is ~55 ns a node), while serde's 26 MB text is reused from the heap and
//!   faults none. `perf stat` on this group shows it too: ~13,500 page faults an
//!   iteration for ours, none for serde's. The final shift of the text over the room
//!   left for the header costs 2–4 ns a node (the header's root index is known only
//!   once every node is written, and the text is pinned byte for byte by the golden
//!   files, so it stays).

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use object_core::{Any, ObjectPtr};
use object_examples::expr::{self as tour, Expr};
use object_json::{from_json_graph, to_json_graph};
use serde::{Deserialize, Serialize};

/// Leaves of the tree: with the operators and the shared variables, ~1,000,000 objects.
const LEAVES: usize = 533_334;
/// Leaves of the quarter-size tree (~250,000 objects), whose texts both stay under
/// glibc's 32 MiB limit for recycling freed blocks.
const SMALL_LEAVES: usize = 133_334;
/// Every `SHARE_EVERY`-th leaf is a shared variable.
const SHARE_EVERY: usize = 8;
/// Distinct variables.
const VARS: usize = 64;

/// The plain-Rust counterpart of the examples' AST.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum SExpr {
    Var { name: String },
    IntImm { value: i64 },
    Add { lhs: Box<SExpr>, rhs: Box<SExpr> },
    Sub { lhs: Box<SExpr>, rhs: Box<SExpr> },
    Mul { lhs: Box<SExpr>, rhs: Box<SExpr> },
}

fn var_name(i: usize) -> String {
    format!("v{i}")
}

fn leaf_value(i: usize) -> i64 {
    (i as i64).wrapping_mul(2_654_435_761) % 1_000_003
}

/// Leaves `lo..hi` as our AST.
fn build_ours(lo: usize, hi: usize, vars: &[ObjectPtr<tour::Var>]) -> ObjectPtr<Expr> {
    if hi - lo == 1 {
        return if lo % SHARE_EVERY == 0 {
            vars[(lo / SHARE_EVERY) % VARS].clone().upcast()
        } else {
            tour::int(leaf_value(lo))
        };
    }
    let mid = lo + (hi - lo) / 2;
    let (l, r) = (build_ours(lo, mid, vars), build_ours(mid, hi, vars));
    match lo % 3 {
        0 => tour::add(l, r),
        1 => tour::sub(l, r),
        _ => tour::mul(l, r),
    }
}

/// Leaves `lo..hi` as the enum tree (shared variables expanded).
fn build_serde(lo: usize, hi: usize) -> SExpr {
    if hi - lo == 1 {
        return if lo % SHARE_EVERY == 0 {
            SExpr::Var {
                name: var_name((lo / SHARE_EVERY) % VARS),
            }
        } else {
            SExpr::IntImm {
                value: leaf_value(lo),
            }
        };
    }
    let mid = lo + (hi - lo) / 2;
    let (lhs, rhs) = (
        Box::new(build_serde(lo, mid)),
        Box::new(build_serde(mid, hi)),
    );
    match lo % 3 {
        0 => SExpr::Add { lhs, rhs },
        1 => SExpr::Sub { lhs, rhs },
        _ => SExpr::Mul { lhs, rhs },
    }
}

fn serde_nodes(e: &SExpr) -> usize {
    match e {
        SExpr::Var { .. } | SExpr::IntImm { .. } => 1,
        SExpr::Add { lhs, rhs } | SExpr::Sub { lhs, rhs } | SExpr::Mul { lhs, rhs } => {
            1 + serde_nodes(lhs) + serde_nodes(rhs)
        }
    }
}

fn depth(e: &SExpr) -> usize {
    match e {
        SExpr::Var { .. } | SExpr::IntImm { .. } => 1,
        SExpr::Add { lhs, rhs } | SExpr::Sub { lhs, rhs } | SExpr::Mul { lhs, rhs } => {
            1 + depth(lhs).max(depth(rhs))
        }
    }
}

/// Distinct objects reachable from `e` (`tour::count_distinct` is quadratic).
fn count_distinct(e: &ObjectPtr<Expr>) -> usize {
    fn walk(e: &ObjectPtr<Expr>, seen: &mut HashSet<usize>) {
        if !seen.insert(ObjectPtr::as_ptr(e) as usize) {
            return;
        }
        if let Some(b) = e.downcast_ref::<tour::BinOp>() {
            walk(&b.lhs, seen);
            walk(&b.rhs, seen);
        }
    }
    let mut seen = HashSet::new();
    walk(e, &mut seen);
    seen.len()
}

/// The same expression, printed from both sides (a check that the two trees agree).
fn print_serde(e: &SExpr, out: &mut String) {
    match e {
        SExpr::Var { name } => out.push_str(name),
        SExpr::IntImm { value } => out.push_str(&value.to_string()),
        SExpr::Add { lhs, rhs } | SExpr::Sub { lhs, rhs } | SExpr::Mul { lhs, rhs } => {
            let sym = match e {
                SExpr::Add { .. } => "+",
                SExpr::Sub { .. } => "-",
                _ => "*",
            };
            out.push('(');
            print_serde(lhs, out);
            out.push(' ');
            out.push_str(sym);
            out.push(' ');
            print_serde(rhs, out);
            out.push(')');
        }
    }
}

fn json_graph(c: &mut Criterion) {
    groups(c, LEAVES, "");
    groups(c, SMALL_LEAVES, "_quarter");
}

/// The save and load groups over a tree of `leaves` leaves, named with `suffix`.
fn groups(c: &mut Criterion, leaves: usize, suffix: &str) {
    let vars: Vec<ObjectPtr<tour::Var>> = (0..VARS).map(|i| tour::var(&var_name(i))).collect();
    let ours = Any::from(build_ours(0, leaves, &vars));
    let tree = build_serde(0, leaves);

    // The two inputs are the same expression, and the counts are what the docs say.
    let expr = ObjectPtr::<Expr>::try_from(ours.clone()).unwrap();
    let mut printed = String::new();
    print_serde(&tree, &mut printed);
    assert_eq!(tour::print(&expr), printed);
    drop(printed);
    let text = to_json_graph(&ours).unwrap();
    // (Compact text: one `{"type":` per node.)
    let graph_nodes = text.matches("{\"type\":").count();
    let objects = graph_nodes - VARS; // the variables' name strings are nodes too
    let tree_nodes = serde_nodes(&tree);
    let serde_text = serde_json::to_string(&tree).unwrap();
    assert!(depth(&tree) < 60);
    eprintln!(
        "json_graph: ours {objects} objects / {graph_nodes} graph nodes, {} bytes of JSON; \
         serde {tree_nodes} tree nodes (shared variables expanded), {} bytes; depth {}",
        text.len(),
        serde_text.len(),
        depth(&tree)
    );
    {
        let loaded = from_json_graph(&text).unwrap();
        let loaded = ObjectPtr::<Expr>::try_from(loaded).unwrap();
        assert_eq!(count_distinct(&loaded), objects);
        let back: SExpr = serde_json::from_str(&serde_text).unwrap();
        assert!(back == tree);
    }

    let mut g = c.benchmark_group(format!("json_graph_save{suffix}"));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(graph_nodes as u64));
    g.bench_function("to_json_graph", |b| {
        b.iter(|| to_json_graph(black_box(&ours)).unwrap())
    });
    g.throughput(Throughput::Elements(tree_nodes as u64));
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::to_string(black_box(&tree)).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group(format!("json_graph_load{suffix}"));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(graph_nodes as u64));
    g.bench_function("from_json_graph", |b| {
        b.iter_batched(
            || (),
            |()| from_json_graph(black_box(&text)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.throughput(Throughput::Elements(tree_nodes as u64));
    g.bench_function("serde_json", |b| {
        b.iter_batched(
            || (),
            |()| serde_json::from_str::<SExpr>(black_box(&serde_text)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, json_graph);
criterion_main!(benches);
