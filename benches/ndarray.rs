//! Criterion benchmarks of `NDArray` and DLPack, each beside its plain-Rust counterpart
//! in the *same* group, so that the ratio is read from one run on one machine.
//!
//! Run with `cargo bench -p object-benches --bench ndarray`.
//!
//! # Groups
//!
//! - `dlpack_round_trip`: a 4 × 4 `f32` array (made once) exported and imported back:
//!   - `versioned`: `into_dlpack_versioned` + `from_dlpack_versioned`. The import
//!     recognizes its own unchanged export and hands back the same array: one block
//!     allocated and freed (the export's), two count increments and decrements;
//!   - `legacy`: the same with `into_dlpack` + `from_dlpack`;
//!   - `versioned_general`: the export's `strides` set to null (compact, as a consumer
//!     may pass it back) before the import, so the import takes the general path of a
//!     foreign tensor: it checks the tensor and makes a new array object around it,
//!     whose drop calls the export's deleter. Two blocks allocated and freed;
//!   - `foreign_import`: a foreign producer's export (one boxed managed tensor over
//!     data it keeps) imported and dropped: the cost a foreign round trip adds here;
//!   - `make_object`: `make_object` of a small object (16-byte header + 16 bytes) and
//!     its drop, the unit of the target;
//!   - `vec_with_capacity`: `Vec::<f32>::with_capacity(16)` and its drop.
//! - `empty_1m_f32`: one array of 1,000,000 `f32` made and dropped:
//!   - `ndarray_empty`: `NDArray::empty(&[1_000_000], float32, cpu)`, zero-filled and
//!     64-byte aligned (a `calloc` of 4 MB + 64 bytes, plus the array object);
//!   - `vec_with_capacity`: `Vec::<f32>::with_capacity(1_000_000)`, uninitialized;
//!   - `vec_zeroed`: `vec![0f32; 1_000_000]`, zeroed like `empty` (also `calloc`);
//!   - `make_object`: as above, for scale.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | `dlpack_round_trip/versioned` | ≤ 3 × `dlpack_round_trip/make_object` |
//! | `dlpack_round_trip/versioned_general` | ≤ 3 × `dlpack_round_trip/make_object` |
//!
//! Measured (2-core AMD EPYC, pinned with `taskset -c 1`, machine shared, three runs):
//! `versioned` 1.5–2.2 × `make_object` (24–31 ns against 14–16 ns), `legacy` 1.7–2.4 ×:
//! the target holds for a round trip of our own export. The general path does not meet
//! it: `versioned_general` 4.6–5.5 × and `foreign_import` 4.4–4.9 ×. It allocates and
//! frees two blocks (the export's and the new array object), makes two atomic count
//! changes on the exported array, and checks the tensor; two `make_object`s with their
//! drops are already ~2 ×, and profiles show the rest spread over the checks and over
//! store-forwarding stalls where the description is copied between structs.
//!
//! `empty_1m_f32` has no fixed target. Its cost is the allocator's: glibc serves 4 MB
//! either from fresh `mmap`ed pages (zero already: `calloc` skips the memset, and the
//! pages are touched only when written) or, once its mmap threshold has adapted to the
//! repeated size, from the heap, where `calloc` must clear what was freed before. So
//! `ndarray_empty` is to be read against `vec_zeroed`, which does the same work;
//! `vec_with_capacity` shows what skipping initialization would save (an `NDArray`
//! cannot skip it: safe code may read its data). Measured: `ndarray_empty` 0.96–1.07 ×
//! `vec_zeroed` (66–73 µs); `vec_with_capacity` ~30 ns.

use std::ffi::c_void;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use object_containers::dlpack::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
use object_containers::NDArray;
use object_core::{make_object, DataType, Device, Object, ObjectType};

/// A small final object: 16-byte header + 16 bytes of payload (as in `object.rs`).
#[derive(Object)]
#[repr(C)]
#[object(key = "bench.nd.Small", final)]
struct Small {
    base: Object,
    a: u64,
    b: u64,
}

fn small(v: u64) -> Small {
    Small {
        base: Object::new(),
        a: v,
        b: v,
    }
}

/// A foreign producer's export: the managed tensor first, then what it describes.
#[repr(C)]
struct Foreign {
    managed: DLManagedTensorVersioned,
    shape: [i64; 2],
}

unsafe extern "C" fn foreign_deleter(p: *mut DLManagedTensorVersioned) {
    // SAFETY: installed only on boxed `Foreign`s.
    drop(unsafe { Box::from_raw(p as *mut Foreign) });
}

/// A foreign export over `data` (16 `f32`s, kept alive by the caller).
fn foreign_export(data: *mut f32) -> *mut DLManagedTensorVersioned {
    let mut b = Box::new(Foreign {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(foreign_deleter),
            flags: 0,
            dl_tensor: DLTensor {
                data: data as *mut c_void,
                device: Device::cpu(),
                ndim: 2,
                dtype: DataType::float(32),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: [4, 4],
    });
    b.managed.dl_tensor.shape = b.shape.as_mut_ptr();
    Box::into_raw(b) as *mut DLManagedTensorVersioned
}

fn dlpack_round_trip(c: &mut Criterion) {
    let _ = Small::type_index();
    let a = NDArray::from_slice(&[4, 4], &[1.0f32; 16]).unwrap();
    let mut foreign_data = [2.0f32; 16];
    let mut g = c.benchmark_group("dlpack_round_trip");
    // Our own export, given up by the only handle, comes back as the same array.
    let mut held = Some(NDArray::from_slice(&[4, 4], &[1.0f32; 16]).unwrap());
    g.bench_function("versioned", |b| {
        b.iter(|| {
            let m = black_box(held.take().unwrap()).into_dlpack_versioned();
            // SAFETY: a fresh export, given up to the import.
            held = Some(unsafe { NDArray::from_dlpack_versioned(black_box(m)) }.unwrap());
        })
    });
    g.bench_function("legacy", |b| {
        b.iter(|| {
            let m = black_box(held.take().unwrap())
                .into_dlpack()
                .map_err(|(_, e)| e)
                .unwrap();
            // SAFETY: as above.
            held = Some(unsafe { NDArray::from_dlpack(black_box(m)) }.unwrap());
        })
    });
    g.bench_function("versioned_general", |b| {
        b.iter(|| {
            let m = black_box(&a).to_dlpack_versioned();
            // SAFETY: a fresh export we own; null strides mean the same compact layout.
            unsafe {
                (*m).dl_tensor.strides = std::ptr::null_mut();
                NDArray::from_dlpack_versioned(black_box(m))
            }
            .unwrap()
        })
    });
    let data = foreign_data.as_mut_ptr();
    g.bench_function("foreign_import", |b| {
        b.iter(|| {
            let m = foreign_export(black_box(data));
            // SAFETY: a fresh foreign export over data that outlives the loop.
            unsafe { NDArray::from_dlpack_versioned(black_box(m)) }.unwrap()
        })
    });
    g.bench_function("make_object", |b| {
        b.iter(|| make_object(small(black_box(1))))
    });
    g.bench_function("vec_with_capacity", |b| {
        b.iter(|| Vec::<f32>::with_capacity(black_box(16)))
    });
    g.finish();
}

fn empty_1m_f32(c: &mut Criterion) {
    let _ = Small::type_index();
    const N: usize = 1_000_000;
    let mut g = c.benchmark_group("empty_1m_f32");
    g.bench_function("ndarray_empty", |b| {
        b.iter(|| {
            NDArray::empty(&[black_box(N as i64)], DataType::float(32), Device::cpu()).unwrap()
        })
    });
    g.bench_function("vec_with_capacity", |b| {
        b.iter(|| Vec::<f32>::with_capacity(black_box(N)))
    });
    g.bench_function("vec_zeroed", |b| b.iter(|| vec![0f32; black_box(N)]));
    g.bench_function("make_object", |b| {
        b.iter(|| make_object(small(black_box(1))))
    });
    g.finish();
}

criterion_group!(benches, dlpack_round_trip, empty_1m_f32);
criterion_main!(benches);
