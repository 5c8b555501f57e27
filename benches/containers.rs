//! Criterion benchmarks of the containers (`Array`, `Map`, `String`) and of `Any`, each
//! beside its plain-Rust counterpart in the *same* group, so that the ratio is read from
//! one run on one machine.
//!
//! Run with `cargo bench -p object-benches --bench containers`.
//!
//! Every group that works on a whole container uses `iter_batched` with
//! `BatchSize::PerIteration`: the set-up (cloning pre-built keys, say) runs before the
//! clock starts and the container the routine returns is dropped after it stops, so
//! neither set-up nor drop is timed, on either side. Those groups use flat sampling
//! with 10 samples (one iteration takes milliseconds).
//!
//! # Groups
//!
//! - `array_objects` (throughput 1,000,000 elements): 1,000,000 small objects (`Node`:
//!   the 16-byte header and an `i64`, a 24-byte block) against `Arc<ArcNode>` (16 bytes
//!   of counts and the same `i64`, also a 24-byte block). Timed: start from an empty
//!   container (`Array::new()` / `Vec::new()`, so growth is included), push 1,000,000
//!   handles, then iterate once by reference summing `value` (no clone on the way out).
//!   - `precreated/*`: the objects / `Arc`s are made once, outside the measurement;
//!     each iteration pushes *clones* of them (a count increment each);
//!   - `create/*`: each iteration makes the 1,000,000 objects / `Arc`s itself and pushes
//!     them (moved, no clone), so allocation is timed too (their release, at the drop,
//!     is not);
//!   - `*/array_typed` reads through the typed view `Array<ObjectPtr<Node>>`;
//!     `precreated/array_any_downcast` stores `Array<Any>` and reads through
//!     `Any::downcast_ref::<Node>()`; `precreated/vec_object_ptr` (for information) is
//!     `Vec<ObjectPtr<Node>>`, which separates the handle's cost from the array's.
//! - `array_iterate` (throughput 1,000,000 elements): iterating alone, by reference,
//!   summing `value`, over the same 1,000,000 objects / `Arc`s held in an
//!   `Array<ObjectPtr<Node>>` (16-byte `Any` slots), a `Vec<Arc<ArcNode>>` and (for
//!   information) a `Vec<ObjectPtr<Node>>` (8-byte handles), all built before timing.
//! - `array_any_ints` (throughput 1,000,000 elements): push the integers
//!   `0..1_000_000` into an empty `Array<Any>` (`Any::from(i)`), `Array<i64>` and
//!   `Vec<i64>`; growth is timed, drop is not. `vec_any` (for information) is
//!   `Vec<Any>`: 16-byte slots without the array's object header and checks.
//! - `map_string_keys` (throughput 100,000 elements): 100,000 distinct keys
//!   `"key-000000"`..`"key-099999"` (10 bytes, too long for an inline string).
//!   - `insert/*`: into an empty `Map<String, i64>` (keys `object_core::String`),
//!     `HashMap<String, i64>` (std `String`, std's SipHash-1-3 `RandomState`) and the
//!     same `HashMap` with `foldhash::fast::RandomState` (what `Map` uses). The keys are
//!     built once; the set-up of each iteration clones the key vector (untimed), and
//!     the routine *moves* each key in, so no side allocates a key while timed.
//!   - `lookup/*`: `get(&str)` for all 100,000 keys, in a fixed pseudo-random order
//!     (the same for every map, so no side benefits from insertion-order locality),
//!     summing the values. The maps are built once, outside the measurement.
//!   - `lookup_short/*`: the same with 6-byte keys `"000000"`..`"099999"` (inline in the
//!     `String` handle), against the foldhash `HashMap`.
//! - `array_strings` (throughput 100,000 elements): `Array<String>` against
//!   `Vec<Arc<str>>` for 6-byte (inline) and 24-byte strings: `build/*` makes every
//!   string from a `&str` and collects (+ drop); `iterate/*` reads each
//!   string (its length and first byte).
//! - `string_new`: `object_core::String::from(&str)` + drop for a 7-byte (the longest
//!   inline), a 16-byte and a 1 KiB string, against `Arc::<str>::from` + drop (and, for information, std
//!   `String::from`). The source `&str` goes through `black_box`. With `TVM_FFI_ROOT`
//!   set (see `build.rs`), `tvm_ffi_cpp` is the peer's C++ `tvm::ffi::String` made and
//!   dropped in a C++ loop (`cpp/tvmffi_peer.cc`) that times itself.
//! - `any_round_trip`: one value into an `Any` and back out, + drop:
//!   - `int/any`: `Any::from(i64)` → `i64::try_from`, against `int/plain` (a copy);
//!   - `object/any`: `Any::from(ObjectPtr)` (of a clone) → `ObjectPtr::try_from`,
//!     against `object/arc_clone` (`Arc::clone`) and `object/object_ptr_clone`
//!     (the clone alone, for information);
//!   - `str/inline_short`: `Any::from("short")` (5 bytes, stored inline) read back with
//!     `as_str`, against `str/object_long`: `Any::from("a longer string here")`
//!     (20 bytes: allocates an `ffi.String`), with `str/std_string_short` and
//!     `str/arc_str_long` for scale.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | `array_objects/{precreated,create}/array_typed` | ≤ 1.1 × `…/vec_arc` |
//! | `array_iterate/array_typed` | ≤ 1.1 × `array_iterate/vec_arc` |
//! | `array_any_ints/array_any` | ≤ 2.5 × `array_any_ints/vec_i64` |
//! | `map_string_keys/insert/map` | ≤ 2 × `…/insert/hashmap_sip` |
//! | `map_string_keys/lookup/map` | ≤ 1.5 × `…/lookup/hashmap_sip` |
//! | `string_new/ffi_string/{16,1024}` | ≤ 1.0 × `string_new/arc_str/{16,1024}` |
//! | `string_new/ffi_string/7` | ≤ `string_new/tvm_ffi_cpp/7` (the C++ runtime; 2.29 ns when the issue measured it) |
//! | `array_strings/*/array_string` | ≤ 1.0 × `…/vec_arc_str` |
//!
//! `any_round_trip` has no fixed target: it quantifies what the inline small-string
//! representation saves over an `ffi.String` object.
//!
//! Measured beside the C++ runtime (tvm-ffi 0.1.15; two runs on this 2-core VM in a
//! slow phase, where std's `String::from` took 19–22 ns), per string made and dropped:
//!
//! | length | `ffi_string` | `tvm_ffi_cpp` | ratio |
//! | --- | --- | --- | --- |
//! | 7 | 1.79, 1.95 ns | 6.69, 5.44 ns | 0.27, 0.36 |
//! | 16 | 13.8, 13.6 ns | 20.4, 18.8 ns | 0.67, 0.73 |
//!
//! # Reading the numbers
//!
//! - The whole-container groups touch tens of megabytes and go through glibc's `malloc`
//!   slow paths (consolidating the million chunks the previous iteration's untimed drop
//!   freed, page faults after the heap is trimmed), so on a shared machine their ratios
//!   move by about ±0.1 from run to run: compare medians over several runs, with a
//!   longer `--measurement-time` where it matters. `create/*` is the noisiest.
//! - `Array` slots are 16-byte `Any`s, `Vec<Arc<_>>` slots 8-byte pointers: pushing and
//!   walking an array moves twice the memory, which bounds how close the ratios can get.
//! - `string_new/*/1024`: glibc serves blocks of at most 1032 bytes from its per-thread
//!   cache. std's `String` (a 1024-byte block) fits; `Arc<str>` (1040 bytes) and
//!   `ffi.String` (1064 bytes: header, data pointer, size, the bytes and a NUL) do not,
//!   which is why `std_string/1024` is about twice as fast as either.
//! - `int/any` compiles to the same code as `int/plain`: after inlining, an integer
//!   round trip through `Any` costs nothing.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use object_containers::{Array, Map};
use object_core::{make_object, Any, Object, ObjectPtr};

/// Elements per iteration in the array groups.
const ARRAY_LEN: usize = 1_000_000;
/// Keys per iteration in the map group.
const MAP_LEN: usize = 100_000;
/// Samples for the whole-container groups (each iteration takes milliseconds).
const CONTAINER_SAMPLES: usize = 10;

// ---------------------------------------------------------------------------------
// Node types.
// ---------------------------------------------------------------------------------

/// A small final object: the 16-byte header and an `i64` (a 24-byte block).
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.containers.Node", final)]
struct Node {
    base: Object,
    value: i64,
}

/// `Node`'s payload for `Arc` (whose counts take the header's 16 bytes): the same
/// 24-byte block.
struct ArcNode {
    value: i64,
}

fn node(value: i64) -> Node {
    Node {
        base: Object::new(),
        value,
    }
}

/// A fixed pseudo-random permutation of `0..n` (Fisher–Yates over a 64-bit LCG), the
/// same on every run.
fn permutation(n: usize) -> Vec<usize> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let j = ((state >> 33) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

// ---------------------------------------------------------------------------------
// Groups.
// ---------------------------------------------------------------------------------

fn array_objects(c: &mut Criterion) {
    let objects: Vec<ObjectPtr<Node>> = (0..ARRAY_LEN as i64)
        .map(|i| make_object(node(i)))
        .collect();
    let arcs: Vec<Arc<ArcNode>> = (0..ARRAY_LEN as i64)
        .map(|i| Arc::new(ArcNode { value: i }))
        .collect();
    let expected: i64 = (0..ARRAY_LEN as i64).sum();

    // Every variant computes the same sum.
    let sum_typed = |a: &Array<ObjectPtr<Node>>| a.iter().map(|p| p.value).sum::<i64>();
    let sum_any = |a: &Array<Any>| {
        a.iter()
            .map(|s| s.downcast_ref::<Node>().map_or(0, |n| n.value))
            .sum::<i64>()
    };
    let sum_vec_ptr = |v: &Vec<ObjectPtr<Node>>| v.iter().map(|p| p.value).sum::<i64>();
    let sum_arc = |v: &Vec<Arc<ArcNode>>| v.iter().map(|p| p.value).sum::<i64>();
    {
        let a: Array<ObjectPtr<Node>> = objects.iter().cloned().collect();
        assert_eq!(sum_typed(&a), expected);
        let a: Array<Any> = objects.iter().map(Any::from).collect();
        assert_eq!(sum_any(&a), expected);
        assert_eq!(sum_vec_ptr(&objects), expected);
        assert_eq!(sum_arc(&arcs), expected);
    }

    let mut g = c.benchmark_group("array_objects");
    g.throughput(Throughput::Elements(ARRAY_LEN as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(CONTAINER_SAMPLES);

    g.bench_function("precreated/array_typed", |b| {
        b.iter_batched(
            Array::<ObjectPtr<Node>>::new,
            |mut a| {
                for p in black_box(&objects) {
                    a.push(p.clone());
                }
                let s = sum_typed(&a);
                (a, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("precreated/array_any_downcast", |b| {
        b.iter_batched(
            Array::<Any>::new,
            |mut a| {
                for p in black_box(&objects) {
                    a.push(Any::from(p.clone()));
                }
                let s = sum_any(&a);
                (a, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("precreated/vec_arc", |b| {
        b.iter_batched(
            Vec::<Arc<ArcNode>>::new,
            |mut v| {
                for p in black_box(&arcs) {
                    v.push(Arc::clone(p));
                }
                let s = sum_arc(&v);
                (v, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("precreated/vec_object_ptr", |b| {
        b.iter_batched(
            Vec::<ObjectPtr<Node>>::new,
            |mut v| {
                for p in black_box(&objects) {
                    v.push(p.clone());
                }
                let s = sum_vec_ptr(&v);
                (v, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("create/array_typed", |b| {
        b.iter_batched(
            Array::<ObjectPtr<Node>>::new,
            |mut a| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    a.push(make_object(node(i)));
                }
                let s = sum_typed(&a);
                (a, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("create/vec_arc", |b| {
        b.iter_batched(
            Vec::<Arc<ArcNode>>::new,
            |mut v| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    v.push(Arc::new(ArcNode { value: i }));
                }
                let s = sum_arc(&v);
                (v, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    // Iteration alone: the containers built once, outside the measurement, then read
    // by reference (no clone on the way out).
    let array: Array<ObjectPtr<Node>> = objects.iter().cloned().collect();
    let vec_arc: Vec<Arc<ArcNode>> = arcs.to_vec();
    let mut g = c.benchmark_group("array_iterate");
    g.throughput(Throughput::Elements(ARRAY_LEN as u64));
    g.bench_function("array_typed", |b| b.iter(|| sum_typed(black_box(&array))));
    g.bench_function("vec_arc", |b| b.iter(|| sum_arc(black_box(&vec_arc))));
    g.bench_function("vec_object_ptr", |b| {
        b.iter(|| sum_vec_ptr(black_box(&objects)))
    });
    g.finish();
    drop((array, vec_arc, objects, arcs));
}

fn array_any_ints(c: &mut Criterion) {
    let mut g = c.benchmark_group("array_any_ints");
    g.throughput(Throughput::Elements(ARRAY_LEN as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(CONTAINER_SAMPLES);

    g.bench_function("array_any", |b| {
        b.iter_batched(
            Array::<Any>::new,
            |mut a| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    a.push(Any::from(i));
                }
                a
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("array_i64", |b| {
        b.iter_batched(
            Array::<i64>::new,
            |mut a| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    a.push(i);
                }
                a
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("vec_i64", |b| {
        b.iter_batched(
            Vec::<i64>::new,
            |mut v| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    v.push(i);
                }
                v
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("vec_any", |b| {
        b.iter_batched(
            Vec::<Any>::new,
            |mut v| {
                for i in 0..black_box(ARRAY_LEN as i64) {
                    v.push(Any::from(i));
                }
                v
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn map_string_keys(c: &mut Criterion) {
    type SipMap = HashMap<String, i64>;
    type FoldMap = HashMap<String, i64, foldhash::fast::RandomState>;

    let std_keys: Vec<String> = (0..MAP_LEN).map(|i| format!("key-{i:06}")).collect();
    let ffi_keys: Vec<object_core::String> =
        std_keys.iter().map(object_core::String::from).collect();
    let order = permutation(MAP_LEN);
    let lookups: Vec<&str> = order.iter().map(|&i| std_keys[i].as_str()).collect();

    // Build once for the look-ups (and check that every map agrees).
    let mut map: Map<object_core::String, i64> = Map::new();
    let mut sip = SipMap::new();
    let mut fold = FoldMap::default();
    for (i, (k, f)) in std_keys.iter().zip(&ffi_keys).enumerate() {
        map.insert(f.clone(), i as i64);
        sip.insert(k.clone(), i as i64);
        fold.insert(k.clone(), i as i64);
    }
    let expected: i64 = (0..MAP_LEN as i64).sum();
    let sum_map = |m: &Map<object_core::String, i64>, keys: &[&str]| {
        keys.iter()
            .map(|&k| m.get(k).copied().unwrap_or(0))
            .sum::<i64>()
    };
    let sum_sip = |m: &SipMap, keys: &[&str]| {
        keys.iter()
            .map(|&k| m.get(k).copied().unwrap_or(0))
            .sum::<i64>()
    };
    let sum_fold = |m: &FoldMap, keys: &[&str]| {
        keys.iter()
            .map(|&k| m.get(k).copied().unwrap_or(0))
            .sum::<i64>()
    };
    assert_eq!(map.len(), MAP_LEN);
    assert_eq!(sum_map(&map, &lookups), expected);
    assert_eq!(sum_sip(&sip, &lookups), expected);
    assert_eq!(sum_fold(&fold, &lookups), expected);

    let mut g = c.benchmark_group("map_string_keys");
    g.throughput(Throughput::Elements(MAP_LEN as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(CONTAINER_SAMPLES);

    g.bench_function("insert/map", |b| {
        b.iter_batched(
            || ffi_keys.clone(),
            |keys| {
                let mut m: Map<object_core::String, i64> = Map::new();
                for (i, k) in keys.into_iter().enumerate() {
                    m.insert(k, i as i64);
                }
                m
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("insert/hashmap_sip", |b| {
        b.iter_batched(
            || std_keys.clone(),
            |keys| {
                let mut m = SipMap::new();
                for (i, k) in keys.into_iter().enumerate() {
                    m.insert(k, i as i64);
                }
                m
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("insert/hashmap_foldhash", |b| {
        b.iter_batched(
            || std_keys.clone(),
            |keys| {
                let mut m = FoldMap::default();
                for (i, k) in keys.into_iter().enumerate() {
                    m.insert(k, i as i64);
                }
                m
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("lookup/map", |b| {
        b.iter(|| sum_map(black_box(&map), black_box(&lookups)))
    });
    g.bench_function("lookup/hashmap_sip", |b| {
        b.iter(|| sum_sip(black_box(&sip), black_box(&lookups)))
    });
    g.bench_function("lookup/hashmap_foldhash", |b| {
        b.iter(|| sum_fold(black_box(&fold), black_box(&lookups)))
    });

    // Short keys (6 bytes, inline in the `String` handle) against the same `HashMap`.
    let short_keys: Vec<String> = (0..MAP_LEN).map(|i| format!("{i:06}")).collect();
    let short_lookups: Vec<&str> = order.iter().map(|&i| short_keys[i].as_str()).collect();
    let short_map: Map<object_core::String, i64> = short_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (object_core::String::from(k.as_str()), i as i64))
        .collect();
    let short_fold: FoldMap = short_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i as i64))
        .collect();
    assert_eq!(sum_map(&short_map, &short_lookups), expected);
    assert_eq!(sum_fold(&short_fold, &short_lookups), expected);
    g.bench_function("lookup_short/map", |b| {
        b.iter(|| sum_map(black_box(&short_map), black_box(&short_lookups)))
    });
    g.bench_function("lookup_short/hashmap_foldhash", |b| {
        b.iter(|| sum_fold(black_box(&short_fold), black_box(&short_lookups)))
    });
    g.finish();
}

/// `Array<String>` against `Vec<Arc<str>>`: building from text and reading every item,
/// for short (inline in the handle) and long (an object each) strings.
fn array_strings(c: &mut Criterion) {
    const LEN: usize = 100_000;
    let mut g = c.benchmark_group("array_strings");
    g.throughput(Throughput::Elements(LEN as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(CONTAINER_SAMPLES);
    for (label, width) in [("short", 6usize), ("long", 24)] {
        let texts: Vec<String> = (0..LEN).map(|i| format!("{i:0width$}")).collect();
        assert!(texts.iter().all(|t| t.len() == width));
        let expected = LEN * width;
        let array: Array<object_core::String> = texts
            .iter()
            .map(|t| object_core::String::from(t.as_str()))
            .collect();
        let arcs: Vec<Arc<str>> = texts.iter().map(|t| Arc::<str>::from(t.as_str())).collect();
        // Reads each string's text (its first byte and its length), as a user would.
        let len_array = |a: &Array<object_core::String>| {
            a.iter()
                .map(|s| s.len() + usize::from(s.as_bytes()[0] & 1))
                .sum::<usize>()
        };
        let len_arcs = |v: &Vec<Arc<str>>| {
            v.iter()
                .map(|s| s.len() + usize::from(s.as_bytes()[0] & 1))
                .sum::<usize>()
        };
        let expected = expected + texts.iter().filter(|t| t.as_bytes()[0] & 1 == 1).count();
        assert_eq!(len_array(&array), expected);
        assert_eq!(len_arcs(&arcs), expected);
        g.bench_function(format!("build/{label}/array_string"), |b| {
            b.iter(|| {
                texts
                    .iter()
                    .map(|t| object_core::String::from(t.as_str()))
                    .collect::<Array<object_core::String>>()
            })
        });
        g.bench_function(format!("build/{label}/vec_arc_str"), |b| {
            b.iter(|| {
                texts
                    .iter()
                    .map(|t| Arc::<str>::from(t.as_str()))
                    .collect::<Vec<Arc<str>>>()
            })
        });
        g.bench_function(format!("iterate/{label}/array_string"), |b| {
            b.iter(|| len_array(black_box(&array)))
        });
        g.bench_function(format!("iterate/{label}/vec_arc_str"), |b| {
            b.iter(|| len_arcs(black_box(&arcs)))
        });
    }
    g.finish();
}

fn string_new(c: &mut Criterion) {
    let _ = <object_core::StringObj as object_core::ObjectType>::type_index();
    let mut g = c.benchmark_group("string_new");
    for len in [7usize, 16, 1024] {
        let text: String = "abcdefghijklmnopqrstuvwxyz0123456789"
            .chars()
            .cycle()
            .take(len)
            .collect();
        assert_eq!(text.len(), len);
        let s = text.as_str();
        assert_eq!(object_core::String::from(s).as_str(), s);
        g.bench_with_input(BenchmarkId::new("ffi_string", len), s, |b, s| {
            b.iter(|| object_core::String::from(black_box(s)))
        });
        g.bench_with_input(BenchmarkId::new("arc_str", len), s, |b, s| {
            b.iter(|| Arc::<str>::from(black_box(s)))
        });
        g.bench_with_input(BenchmarkId::new("std_string", len), s, |b, s| {
            b.iter(|| String::from(black_box(s)))
        });
        #[cfg(tvm_ffi_cpp)]
        g.bench_with_input(BenchmarkId::new("tvm_ffi_cpp", len), s, |b, s| {
            b.iter_custom(|iters| object_benches::tvm_ffi_cpp::string_new(s, iters))
        });
    }
    g.finish();
}

fn any_round_trip(c: &mut Criterion) {
    let obj = make_object(node(7));
    let arc = Arc::new(ArcNode { value: 7 });
    const SHORT: &str = "short";
    const LONG: &str = "a longer string here";
    assert_eq!(Any::from(SHORT).type_key(), "ffi.SmallStr");
    assert_eq!(Any::from(LONG).type_key(), "ffi.String");
    assert_eq!(arc.value, obj.value);

    let mut g = c.benchmark_group("any_round_trip");
    g.bench_function("int/any", |b| {
        b.iter(|| i64::try_from(Any::from(black_box(42i64))).unwrap_or(0))
    });
    g.bench_function("int/plain", |b| b.iter(|| black_box(42i64)));
    g.bench_function("object/any", |b| {
        b.iter(|| ObjectPtr::<Node>::try_from(Any::from(black_box(&obj).clone())).ok())
    });
    g.bench_function("object/arc_clone", |b| {
        b.iter(|| Arc::clone(black_box(&arc)))
    });
    g.bench_function("object/object_ptr_clone", |b| {
        b.iter(|| black_box(&obj).clone())
    });
    g.bench_function("str/inline_short", |b| {
        b.iter(|| {
            black_box(Any::from(black_box(SHORT)))
                .as_str()
                .map_or(0, str::len)
        })
    });
    g.bench_function("str/object_long", |b| {
        b.iter(|| {
            black_box(Any::from(black_box(LONG)))
                .as_str()
                .map_or(0, str::len)
        })
    });
    g.bench_function("str/std_string_short", |b| {
        b.iter(|| black_box(String::from(black_box(SHORT))).len())
    });
    g.bench_function("str/arc_str_long", |b| {
        b.iter(|| black_box(Arc::<str>::from(black_box(LONG))).len())
    });
    g.finish();
}

criterion_group!(
    benches,
    array_objects,
    array_any_ints,
    map_string_keys,
    array_strings,
    string_new,
    any_round_trip
);
criterion_main!(benches);
