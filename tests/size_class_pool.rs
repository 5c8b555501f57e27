//! The size-class pool behind `make_object`: chunks are reused, small objects take
//! their class size, objects made on one thread are freed on another (also after the
//! making thread exited, and from a thread-local's destructor), the pool can be turned
//! off and on while objects of both kinds are alive, and large types bypass it.
//!
//! These tests turn the pool on explicitly (it starts off under Miri, and the valgrind
//! script starts processes with it off), so Miri and memcheck check the pool's own code
//! here. The switch is process-wide, so the tests serialize on a lock.

use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, PoisonError};

use object_core::alloc::{
    set_size_class_pool, size_class_of, size_class_pool_enabled, size_class_pool_reserved_bytes,
};
use object_core::{make_object, Object, ObjectPtr, ObjectRef};
use object_tests::{scaled, DropCounter, LeakCheck, Tracked};

/// A 32-byte node: the header and two children.
#[derive(Object)]
#[repr(C)]
#[object(key = "size_class.Bin", final)]
struct Bin {
    base: Object,
    lhs: Option<ObjectPtr<Bin>>,
    rhs: Option<ObjectPtr<Bin>>,
}

/// A 32-byte node that counts its drops.
#[derive(Object)]
#[repr(C)]
#[object(key = "size_class.Counted", final)]
struct Counted {
    base: Object,
    #[object(skip)]
    tracked: Tracked,
    tag: u64,
}

/// Too large for the pool.
#[derive(Object)]
#[repr(C)]
#[object(key = "size_class.Large", final)]
struct Large {
    base: Object,
    #[object(skip)]
    tracked: Tracked,
    #[object(skip)]
    payload: [u64; 32],
}

/// A 16-aligned type (pooled in a class that keeps the alignment).
#[derive(Object)]
#[repr(C, align(16))]
#[object(key = "size_class.Aligned", final)]
struct Aligned {
    base: Object,
    #[object(skip)]
    value: u128,
}

static SWITCH: Mutex<()> = Mutex::new(());

/// Holds the switch for the test's run with the pool on (a failed test poisons the lock;
/// the others still run).
fn pool_on() -> MutexGuard<'static, ()> {
    let guard = SWITCH.lock().unwrap_or_else(PoisonError::into_inner);
    set_size_class_pool(true);
    guard
}

fn counted(counter: &'static DropCounter, tag: u64) -> Counted {
    Counted {
        base: Object::new(),
        tracked: counter.track(),
        tag,
    }
}

fn leaf() -> ObjectPtr<Bin> {
    make_object(Bin {
        base: Object::new(),
        lhs: None,
        rhs: None,
    })
}

#[test]
fn classes_of_object_types() {
    assert_eq!(size_class_of::<Object>(), Some(16));
    assert_eq!(size_class_of::<Bin>(), Some(32));
    assert_eq!(size_class_of::<Counted>(), Some(32));
    assert_eq!(size_class_of::<Aligned>(), Some(32));
    assert_eq!(size_class_of::<Large>(), None);
}

#[test]
fn a_freed_chunk_is_reused_by_the_next_object_of_its_class() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    let a = leaf();
    let addr = ObjectPtr::as_ptr(&a) as usize;
    drop(a);
    let b = leaf();
    assert_eq!(ObjectPtr::as_ptr(&b) as usize, addr, "the chunk just freed");
    // Same class, other type: the chunk serves it too.
    drop(b);
    static DROPS: DropCounter = DropCounter::new();
    let c = make_object(counted(&DROPS, 7));
    assert_eq!(ObjectPtr::as_ptr(&c) as usize, addr);
    assert_eq!(c.tag, 7);
    drop(c);
    assert_eq!(DROPS.get(), 1);
}

#[test]
fn small_objects_take_their_class_size() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    /// A slab: 256 KiB (less 32 bytes).
    const SLAB: usize = 256 * 1024;
    let n = if cfg!(miri) { 1024 } else { 65_536 };
    let before = size_class_pool_reserved_bytes();
    let nodes: Vec<_> = (0..n).map(|_| leaf()).collect();
    let after = size_class_pool_reserved_bytes();
    // The live nodes lie in slabs...
    assert!(after >= n * 32, "{after} bytes reserved for {n} live nodes");
    // ...at 32 bytes a node (a system allocator takes 48), plus the part of one slab not
    // cut yet; less if chunks freed earlier were reused.
    let grown = after - before;
    assert!(grown <= n * 32 + SLAB, "{grown} bytes for {n} nodes");
    assert!(nodes.iter().all(|o| ObjectPtr::as_ptr(o) as usize % 8 == 0));
    drop(nodes);
    let aligned: Vec<_> = (0..16)
        .map(|i| {
            make_object(Aligned {
                base: Object::new(),
                value: i,
            })
        })
        .collect();
    for (i, a) in aligned.iter().enumerate() {
        assert_eq!(ObjectPtr::as_ptr(a) as usize % 16, 0);
        assert_eq!(a.value, i as u128);
    }
}

#[test]
fn a_steady_make_and_drop_loop_takes_no_new_slab() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    let n = scaled(100_000, 1_000);
    // Warm up: the working set's chunks exist.
    drop((0..64).map(|_| leaf()).collect::<Vec<_>>());
    let before = size_class_pool_reserved_bytes();
    for _ in 0..n {
        let batch: Vec<_> = (0..64).map(|_| leaf()).collect();
        drop(batch);
    }
    assert_eq!(size_class_pool_reserved_bytes(), before);
}

#[test]
fn deep_trees_are_built_freed_and_rebuilt_in_the_same_memory() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    fn tree(depth: u32) -> ObjectPtr<Bin> {
        let (lhs, rhs) = if depth > 1 {
            (Some(tree(depth - 1)), Some(tree(depth - 1)))
        } else {
            (None, None)
        };
        make_object(Bin {
            base: Object::new(),
            lhs,
            rhs,
        })
    }
    let depth = if cfg!(miri) { 5 } else { 14 };
    drop(tree(depth));
    let before = size_class_pool_reserved_bytes();
    for _ in 0..3 {
        drop(tree(depth));
    }
    assert_eq!(size_class_pool_reserved_bytes(), before);
}

#[test]
fn objects_made_on_one_thread_are_freed_on_others_after_it_exited() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let n = scaled(20_000, 40);
    let start = DROPS.get();
    // The making thread exits before anything is freed.
    let made = std::thread::spawn(move || {
        (0..n)
            .map(|i| make_object(counted(&DROPS, i as u64)))
            .collect::<Vec<_>>()
    })
    .join()
    .unwrap();
    assert_eq!(DROPS.get(), start);
    // Freed on two other threads, half each.
    let (a, b): (Vec<_>, Vec<_>) = made.into_iter().partition(|o| o.tag % 2 == 0);
    let ta = std::thread::spawn(move || drop(a));
    let tb = std::thread::spawn(move || {
        // This thread also allocates from what it freed.
        for o in &b {
            assert_eq!(o.tag % 2, 1);
        }
        drop(b);
        let again: Vec<_> = (0..64).map(|i| make_object(counted(&DROPS, i))).collect();
        again.len()
    });
    ta.join().unwrap();
    assert_eq!(tb.join().unwrap(), 64);
    assert_eq!(DROPS.get(), start + n + 64);
}

#[test]
fn producers_and_consumers_trade_chunks_through_the_shared_lists() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let start = DROPS.get();
    let per_producer = scaled(50_000, 64);
    let producers = 2;
    let (tx, rx) = mpsc::sync_channel::<Vec<ObjectPtr<Counted>>>(8);
    let mut handles = Vec::new();
    for p in 0..producers {
        let tx = tx.clone();
        handles.push(std::thread::spawn(move || {
            let mut batch = Vec::with_capacity(32);
            for i in 0..per_producer {
                batch.push(make_object(counted(&DROPS, (p * per_producer + i) as u64)));
                if batch.len() == 32 {
                    tx.send(std::mem::take(&mut batch)).unwrap();
                }
            }
            tx.send(batch).unwrap();
        }));
    }
    drop(tx);
    let consumer = std::thread::spawn(move || {
        let mut seen = 0usize;
        let mut sum = 0u64;
        for batch in rx {
            seen += batch.len();
            sum += batch.iter().map(|o| o.tag).sum::<u64>();
        }
        (seen, sum)
    });
    for h in handles {
        h.join().unwrap();
    }
    let (seen, sum) = consumer.join().unwrap();
    let total = producers * per_producer;
    assert_eq!(seen, total);
    assert_eq!(
        sum,
        (total as u64 - 1) * total as u64 / 2,
        "every tag intact"
    );
    assert_eq!(DROPS.get(), start + total);
}

#[test]
fn an_object_freed_from_a_thread_local_destructor_is_not_lost() {
    let _on = pool_on();
    static DROPS: DropCounter = DropCounter::new();
    struct HoldsObject(Option<ObjectPtr<Counted>>);
    impl Drop for HoldsObject {
        fn drop(&mut self) {
            drop(self.0.take());
        }
    }
    thread_local! {
        static HELD: std::cell::RefCell<HoldsObject> = const {
            std::cell::RefCell::new(HoldsObject(None))
        };
    }
    let start = DROPS.get();
    std::thread::spawn(|| {
        // Registered after the pool's cache? Either order must work: allocate first
        // (the cache registers), then store; and the other way round on a second run.
        let o = make_object(counted(&DROPS, 1));
        HELD.with(|h| h.borrow_mut().0 = Some(o));
    })
    .join()
    .unwrap();
    std::thread::spawn(|| {
        HELD.with(|h| h.borrow_mut().0 = None);
        let o = make_object(counted(&DROPS, 2));
        HELD.with(|h| h.borrow_mut().0 = Some(o));
    })
    .join()
    .unwrap();
    assert_eq!(DROPS.get(), start + 2);
}

#[test]
fn switching_the_pool_while_objects_of_both_kinds_live_is_sound() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let start = DROPS.get();
    let pooled: Vec<_> = (0..32).map(|i| make_object(counted(&DROPS, i))).collect();
    set_size_class_pool(false);
    assert!(!size_class_pool_enabled());
    let before = size_class_pool_reserved_bytes();
    let system: Vec<ObjectRef> = (0..32)
        .map(|i| make_object(counted(&DROPS, i)).into_object_ref())
        .collect();
    assert_eq!(
        size_class_pool_reserved_bytes(),
        before,
        "no slab while off"
    );
    set_size_class_pool(true);
    // Each is freed by the deleter it was made with.
    drop(pooled);
    drop(system);
    assert_eq!(DROPS.get(), start + 64);
}

#[test]
fn large_types_bypass_the_pool() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let before = size_class_pool_reserved_bytes();
    let big: Vec<_> = (0..8)
        .map(|i| {
            make_object(Large {
                base: Object::new(),
                tracked: DROPS.track(),
                payload: [i; 32],
            })
        })
        .collect();
    assert_eq!(size_class_pool_reserved_bytes(), before);
    assert!(big
        .iter()
        .enumerate()
        .all(|(i, b)| b.payload[31] == i as u64));
    let start = DROPS.get();
    drop(big);
    assert_eq!(DROPS.get(), start + 8);
}

/// A 40-byte object: the class of a string of up to 7 bytes (32 bytes of string object
/// and 8 of bytes with the NUL).
#[derive(Object)]
#[repr(C)]
#[object(key = "size_class.Forty", final)]
struct Forty {
    base: Object,
    a: u64,
    b: u64,
    c: u64,
}

#[test]
fn short_strings_come_from_the_pool_and_long_ones_do_not() {
    let _on = pool_on();
    let _leaks = LeakCheck::new();
    assert_eq!(size_class_of::<Forty>(), Some(40));
    // Seven bytes are inline in a `String` handle; as an object they take 40 bytes.
    let s = object_core::String::new("seven!!").into_object_ptr();
    let addr = ObjectPtr::as_ptr(&s) as usize;
    drop(s);
    // The string's chunk is the next 40-byte object's.
    let f = make_object(Forty {
        base: Object::new(),
        a: 1,
        b: 2,
        c: 3,
    });
    assert_eq!(ObjectPtr::as_ptr(&f) as usize, addr);
    assert_eq!((f.a, f.b, f.c), (1, 2, 3));
    drop(f);

    // Strings made here, read and freed on another thread.
    let n = scaled(10_000, 32);
    let strings: Vec<_> = (0..n)
        .map(|i| object_core::String::new(&format!("s{i}")))
        .collect();
    std::thread::spawn(move || {
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(s.as_str(), format!("s{i}"));
        }
    })
    .join()
    .unwrap();

    // Long strings are not pooled.
    let long = "x".repeat(200);
    let before = size_class_pool_reserved_bytes();
    let longs: Vec<_> = (0..64).map(|_| object_core::String::new(&long)).collect();
    assert_eq!(size_class_pool_reserved_bytes(), before);
    assert!(longs.iter().all(|s| s.as_str() == long));
}
