//! Concurrency: counting under contention, racing run-time registration, lock-free reads
//! while writers register, and pools fed from many threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use object_core::registry::{register_type, type_index_of, TypeSpec};
use object_core::{make_object, make_object_as, Object, ObjectPool, ObjectPtr, ObjectRef};
use object_tests::{scaled, DropCounter, Tracked};

/// Threads per test (fewer under Miri, which runs them all on one core, slowly).
const THREADS: usize = object_tests::native_or_miri(8, 3);

#[derive(Object)]
#[repr(C)]
#[object(key = "conc.Shared", slots = 2)]
struct Shared {
    base: Object,
    #[object(skip)]
    _tracked: Tracked,
}

/// 8 threads × 1,000,000 clone/drop on shared objects end with the right count and
/// exactly one deleter call per object.
#[test]
fn clone_drop_under_contention() {
    static DROPS: DropCounter = DropCounter::new();
    let iters = scaled(1_000_000, 2_000);
    let objects: Vec<ObjectRef> = (0..4)
        .map(|_| {
            make_object(Shared {
                base: Object::new(),
                _tracked: DROPS.track(),
            })
            .into_object_ref()
        })
        .collect();
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let objects = &objects;
            let barrier = &barrier;
            s.spawn(move || {
                barrier.wait();
                let mut held = Vec::with_capacity(16);
                for i in 0..iters {
                    let o = &objects[(i + t) % objects.len()];
                    held.push(o.clone());
                    if held.len() == 16 {
                        held.clear();
                    }
                }
            });
        }
    });
    for o in &objects {
        assert_eq!(ObjectPtr::strong_count(o), 1);
    }
    assert_eq!(DROPS.get(), 0);
    // Hand each object to a different thread for its last drop.
    std::thread::scope(|s| {
        for o in objects {
            s.spawn(move || drop(o));
        }
    });
    assert_eq!(DROPS.get(), 4, "one deleter call per object");
}

/// Threads racing to register the same 100 fresh keys get one index per key; threads
/// registering distinct keys never collide.
#[test]
fn racing_registration() {
    let keys = scaled(100, 100);
    let barrier = Barrier::new(THREADS);
    let per_thread: Vec<Vec<u32>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let mut out = Vec::new();
                    for k in 0..keys {
                        // Same key in every thread...
                        let spec = TypeSpec::new(format!("conc.same{k}"), "conc.Shared")
                            .slots((k % 3) as u32);
                        out.push(register_type(&spec).unwrap().index());
                        // ...and one key of its own.
                        let own = TypeSpec::new(format!("conc.own{t}.{k}"), "ffi.Object");
                        out.push(register_type(&own).unwrap().index());
                        // Look-ups never block on writers.
                        assert!(type_index_of(&format!("conc.same{k}")).is_ok());
                    }
                    out
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for k in 0..keys {
        let same: Vec<u32> = per_thread.iter().map(|v| v[2 * k]).collect();
        assert!(
            same.iter().all(|&i| i == same[0]),
            "key conc.same{k}: {same:?}"
        );
    }
    let mut own: Vec<u32> = per_thread
        .iter()
        .flat_map(|v| v.iter().skip(1).step_by(2).copied())
        .collect();
    let n = own.len();
    own.sort_unstable();
    own.dedup();
    assert_eq!(own.len(), n, "distinct keys never share an index");
}

/// Readers check types (including overflowed ones) while a writer keeps registering.
#[test]
fn reads_while_writing() {
    let stop = AtomicBool::new(false);
    let first = register_type(&TypeSpec::new("conc.rw.0", "conc.Shared")).unwrap();
    let obj = make_object_as(
        Shared {
            base: Object::new(),
            _tracked: {
                static D: DropCounter = DropCounter::new();
                D.track()
            },
        },
        first.index(),
    )
    .unwrap()
    .into_object_ref();
    let n = scaled(2_000, 50);
    std::thread::scope(|s| {
        for _ in 0..THREADS - 1 {
            s.spawn(|| {
                let mut checks = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    assert!(obj.is::<Shared>());
                    assert!(obj.is::<Object>());
                    assert_eq!(obj.type_key(), "conc.rw.0");
                    checks += 1;
                }
                checks
            });
        }
        s.spawn(|| {
            let mut parent = "conc.rw.0".to_owned();
            for i in 1..n {
                let key = format!("conc.rw.{i}");
                let info = register_type(&TypeSpec::new(key.clone(), parent.clone())).unwrap();
                let o = make_object_as(
                    Shared {
                        base: Object::new(),
                        _tracked: {
                            static D: DropCounter = DropCounter::new();
                            D.track()
                        },
                    },
                    info.index(),
                )
                .unwrap();
                assert!(o.is::<Shared>());
                if i % 7 == 0 {
                    parent = key;
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
    });
}

#[derive(Object)]
#[repr(C)]
#[object(key = "conc.Pooled", final)]
struct Pooled {
    base: Object,
    value: u64,
}

/// Objects from one pool are dropped on many threads at once while the owner keeps
/// allocating; every chunk is accounted for when the pool and the objects are gone.
#[test]
fn pool_fed_from_many_threads() {
    let rounds = scaled(200, 10);
    let pool = ObjectPool::<Pooled>::new();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<ObjectPtr<Pooled>>>(THREADS);
    let rx = std::sync::Mutex::new(rx);
    std::thread::scope(|s| {
        for _ in 0..THREADS - 1 {
            s.spawn(|| loop {
                let batch = rx.lock().unwrap().recv();
                match batch {
                    Ok(b) => {
                        let sum: u64 = b.iter().map(|p| p.value).sum();
                        assert_eq!(sum, (0..b.len() as u64).sum::<u64>());
                    }
                    Err(_) => break,
                }
            });
        }
        for _ in 0..rounds {
            let batch: Vec<_> = (0..100)
                .map(|i| {
                    pool.make(Pooled {
                        base: Object::new(),
                        value: i,
                    })
                })
                .collect();
            tx.send(batch).unwrap();
        }
        drop(tx);
    });
    // At most the channel's 8 batches, 7 being checked and 1 being built are live at
    // once; slabs double, so capacity stays under twice that however many rounds ran.
    let live_bound = 100 * (2 * THREADS + 2);
    assert!(
        pool.capacity() <= 2 * live_bound,
        "chunks were recycled: capacity {} after {} objects",
        pool.capacity(),
        rounds * 100
    );
}
