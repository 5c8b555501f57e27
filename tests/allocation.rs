//! Allocation: deleters run exactly once, pool chunks are reused and find their way home
//! from other threads, pooled and globally allocated objects mix, and objects with
//! trailing items live in one block.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use object_core::{
    make_object, make_object_with_items, Allocator, GlobalAllocator, InlineItems, Object,
    ObjectPool, ObjectPtr, ObjectRef, ObjectType,
};
use object_tests::{native_or_miri, scaled, DropCounter, Tracked};

#[derive(Object)]
#[repr(C)]
#[object(key = "alloc.Node")]
struct Node {
    base: Object,
    tag: u64,
    #[object(skip)]
    _tracked: Tracked,
    child: Option<ObjectPtr<Node>>,
}

fn node(counter: &'static DropCounter, tag: u64) -> Node {
    Node {
        base: Object::new(),
        tag,
        _tracked: counter.track(),
        child: None,
    }
}

#[test]
fn deleter_runs_exactly_once() {
    static DROPS: DropCounter = DropCounter::new();
    let a = make_object(node(&DROPS, 1));
    let clones: Vec<_> = (0..10).map(|_| a.clone()).collect();
    let erased: ObjectRef = a.clone().into_object_ref();
    drop(a);
    drop(clones);
    assert_eq!(DROPS.get(), 0, "still referenced");
    drop(erased);
    assert_eq!(DROPS.get(), 1);

    // Through an explicit allocator too.
    let b = GlobalAllocator.make(node(&DROPS, 2));
    drop(b.clone());
    drop(b);
    assert_eq!(DROPS.get(), 2);
}

#[test]
fn pool_reuses_chunks() {
    static DROPS: DropCounter = DropCounter::new();
    let pool = ObjectPool::<Node>::new();
    let a = pool.make(node(&DROPS, 1));
    let addr = ObjectPtr::as_ptr(&a);
    assert_eq!(a.type_key(), "alloc.Node");
    let cap = pool.capacity();
    assert!(cap >= 1);
    drop(a);
    assert_eq!(DROPS.get(), 1);
    for i in 0..100 {
        let b = pool.make(node(&DROPS, i));
        assert_eq!(ObjectPtr::as_ptr(&b), addr, "the same chunk comes back");
    }
    assert_eq!(pool.capacity(), cap, "no new chunks in the steady state");
    assert_eq!(DROPS.get(), 101);
    assert!(format!("{pool:?}").contains("alloc.Node"));

    let with = ObjectPool::<Node>::with_capacity(64);
    assert!(with.capacity() >= 64 && with.free_chunks() >= 64);
}

#[test]
fn pooled_and_global_objects_mix() {
    static DROPS: DropCounter = DropCounter::new();
    let pool = ObjectPool::<Node>::new();
    let mut all: Vec<ObjectRef> = Vec::new();
    for i in 0..200 {
        let n = if i % 2 == 0 {
            pool.make(node(&DROPS, i))
        } else {
            make_object(node(&DROPS, i))
        };
        all.push(n.into_object_ref());
    }
    let tags: u64 = all
        .iter()
        .map(|o| o.downcast_ref::<Node>().unwrap().tag)
        .sum();
    assert_eq!(tags, (0..200).sum::<u64>());
    let free_before = pool.free_chunks();
    drop(all);
    assert_eq!(DROPS.get(), 200);
    assert_eq!(
        pool.free_chunks(),
        free_before + 100,
        "pooled chunks went home"
    );
}

#[test]
fn nested_pool_objects_release_reentrantly() {
    static DROPS: DropCounter = DropCounter::new();
    let pool = ObjectPool::<Node>::new();
    // A chain whose every link is pooled: dropping the head releases each link from
    // inside the previous one's deleter.
    let mut head = pool.make(node(&DROPS, 0));
    for i in 1..50 {
        let mut n = node(&DROPS, i);
        n.child = Some(head);
        head = pool.make(n);
    }
    let free = pool.free_chunks();
    drop(head);
    assert_eq!(DROPS.get(), 50);
    assert_eq!(pool.free_chunks(), free + 50);
}

#[test]
fn pool_chunks_come_home_from_other_threads() {
    static DROPS: DropCounter = DropCounter::new();
    let n = scaled(10_000, 200);
    let pool = ObjectPool::<Node>::with_capacity(n);
    let cap = pool.capacity();
    for round in 0..3 {
        let mut objs: Vec<_> = (0..n).map(|i| pool.make(node(&DROPS, i as u64))).collect();
        let rest = objs.split_off(n / 2);
        // The last handle of every object goes on another thread.
        std::thread::scope(|s| {
            s.spawn(move || drop(objs));
            s.spawn(move || drop(rest));
        });
        assert_eq!(DROPS.get(), n * (round + 1));
    }
    assert_eq!(pool.capacity(), cap, "chunks freed elsewhere were reused");
}

#[test]
fn objects_outlive_their_pool() {
    static DROPS: DropCounter = DropCounter::new();
    let (tx, rx) = mpsc::channel::<ObjectPtr<Node>>();
    let worker = std::thread::spawn(move || {
        let mut sum = 0;
        for o in rx {
            sum += o.tag;
        }
        sum
    });
    let survivors;
    // (Forty under Miri, whose scheduler took four minutes over a thousand hand-offs.)
    let sent = native_or_miri(1000, 40) as u64;
    {
        let pool = ObjectPool::<Node>::new();
        for i in 0..sent {
            tx.send(pool.make(node(&DROPS, i))).unwrap();
        }
        survivors = (0..10)
            .map(|i| pool.make(node(&DROPS, i)))
            .collect::<Vec<_>>();
        // The pool handle goes here; its memory stays until the last object is gone.
    }
    drop(tx);
    assert_eq!(worker.join().unwrap(), (0..sent).sum::<u64>());
    assert_eq!(survivors.iter().map(|s| s.tag).sum::<u64>(), 45);
    drop(survivors);
    assert_eq!(DROPS.get() as u64, sent + 10);
}

// --- trailing items -------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "alloc.Tuple", final)]
struct Tuple {
    base: Object,
    len: usize,
    cap: usize,
}

// SAFETY: values are built only by `tuple()` in this file and become objects only through
// `make_object_with_items`; `len`/`cap` change only through the setters.
unsafe impl InlineItems for Tuple {
    type Item = Tracked;
    fn item_capacity(&self) -> usize {
        self.cap
    }
    fn item_len(&self) -> usize {
        self.len
    }
    unsafe fn set_item_len(&mut self, len: usize) {
        self.len = len;
    }
    unsafe fn set_item_capacity(&mut self, cap: usize) {
        self.cap = cap;
    }
}

fn tuple() -> Tuple {
    Tuple {
        base: Object::new(),
        len: 0,
        cap: 0,
    }
}

#[test]
fn trailing_items_in_one_block() {
    static DROPS: DropCounter = DropCounter::new();
    let t = make_object_with_items(tuple(), 8, (0..5).map(|_| DROPS.track()));
    assert_eq!(ObjectPtr::items(&t).len(), 5);
    assert_eq!(t.item_capacity(), 8);
    // The items follow the fields in the same allocation.
    let start = ObjectPtr::as_ptr(&t) as usize;
    let items = ObjectPtr::items(&t).as_ptr() as usize;
    assert!(items >= start + std::mem::size_of::<Tuple>() && items < start + 64);
    let erased = t.clone().into_object_ref();
    drop(t);
    assert_eq!(DROPS.get(), 0);
    drop(erased);
    assert_eq!(DROPS.get(), 5, "every item dropped once");

    // More items than capacity: the rest are not taken.
    let mut source = (0..10).map(|_| DROPS.track());
    let t = make_object_with_items(tuple(), 3, &mut source);
    assert_eq!(ObjectPtr::items(&t).len(), 3);
    assert_eq!(source.count(), 7); // the rest, dropped here
    drop(t);
    assert_eq!(DROPS.get(), 5 + 10);

    // Zero capacity.
    let t = make_object_with_items(tuple(), 0, std::iter::empty());
    assert!(ObjectPtr::items(&t).is_empty());
    assert_eq!(t.type_key(), "alloc.Tuple");
    assert_eq!(Tuple::type_info().key(), "alloc.Tuple");
}

#[test]
fn panicking_item_iterator_leaks_nothing() {
    static DROPS: DropCounter = DropCounter::new();
    let r = catch_unwind(AssertUnwindSafe(|| {
        make_object_with_items(
            tuple(),
            10,
            (0..10).map(|i| {
                if i == 4 {
                    panic!("item 4")
                } else {
                    DROPS.track()
                }
            }),
        )
    }));
    assert!(r.is_err());
    assert_eq!(
        DROPS.get(),
        4,
        "the four written items were dropped with the object"
    );
}

#[test]
fn items_grow_in_place_when_unique() {
    static DROPS: DropCounter = DropCounter::new();
    let mut t = make_object_with_items(tuple(), 2, std::iter::empty());
    for i in 0..100 {
        let item = DROPS.track();
        if let Err(item) = ObjectPtr::push_item(&mut t, item) {
            // Full: double the capacity (realloc, the object may move) and retry.
            let cap = t.item_capacity();
            assert!(ObjectPtr::grow_items(&mut t, cap * 2));
            assert!(ObjectPtr::push_item(&mut t, item).is_ok());
        }
        assert_eq!(ObjectPtr::items(&t).len(), i + 1);
    }
    assert_eq!(
        t.type_key(),
        "alloc.Tuple",
        "the header moved with the block"
    );
    assert!(t.item_capacity() >= 100);
    assert_eq!(ObjectPtr::items_mut(&mut t).map(|s| s.len()), Some(100));
    assert!(ObjectPtr::pop_item(&mut t).is_some());
    assert_eq!(DROPS.get(), 1);
    // Shared: no in-place change.
    let other = t.clone();
    assert!(ObjectPtr::push_item(&mut t, DROPS.track()).is_err());
    assert!(ObjectPtr::pop_item(&mut t).is_none());
    assert!(ObjectPtr::items_mut(&mut t).is_none());
    assert!(!ObjectPtr::grow_items(&mut t, 1000));
    assert!(!ObjectPtr::truncate_items(&mut t, 0));
    assert_eq!(DROPS.get(), 2, "the refused item was dropped by the test");
    drop(other);
    assert!(ObjectPtr::truncate_items(&mut t, 10));
    assert_eq!(DROPS.get(), 2 + 89);
    // Shrinking keeps the items.
    assert!(ObjectPtr::grow_items(&mut t, 0));
    assert_eq!(t.item_capacity(), 10);
    drop(t);
    assert_eq!(DROPS.get(), 101);
}

/// A value whose `Drop` panics.
#[derive(Default)]
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("boom");
    }
}

#[derive(Object)]
#[repr(C)]
#[object(key = "alloc.PanicsOnDrop")]
struct PanicsOnDrop {
    base: Object,
    #[object(skip)]
    _bomb: Bomb,
}

/// Releases one `PanicsOnDrop` made by `make` in a child process, which must abort
/// with a message that names the type.
fn assert_release_aborts_naming_the_type(test: &str, make: fn() -> ObjectRef) {
    if object_tests::in_child() {
        drop(make());
        eprintln!("still running after the release");
        return;
    }
    let (status, stderr) = object_tests::run_in_child(test);
    assert!(object_tests::aborted(&status), "{status:?}\n{stderr}");
    assert!(
        stderr.contains("an object of type `alloc.PanicsOnDrop` was released")
            && stderr.contains("Bomb"),
        "{stderr}"
    );
    assert!(!stderr.contains("still running"), "{stderr}");
}

/// A deleter cannot unwind (it is `extern "C"`): a panicking `Drop` on the last release
/// aborts, and the message names the object's type (it used to be only "panic in a
/// function that cannot unwind").
#[test]
#[cfg_attr(miri, ignore = "spawns a process")]
fn a_panicking_drop_aborts_naming_the_type() {
    assert_release_aborts_naming_the_type("a_panicking_drop_aborts_naming_the_type", || {
        make_object(PanicsOnDrop {
            base: Object::new(),
            _bomb: Bomb,
        })
        .into_object_ref()
    });
}

/// The same for a pooled object (its own deleter).
#[test]
#[cfg_attr(miri, ignore = "spawns a process")]
fn a_panicking_drop_of_a_pooled_object_aborts_naming_the_type() {
    assert_release_aborts_naming_the_type(
        "a_panicking_drop_of_a_pooled_object_aborts_naming_the_type",
        || {
            let pool = ObjectPool::<PanicsOnDrop>::new();
            pool.make(PanicsOnDrop {
                base: Object::new(),
                _bomb: Bomb,
            })
            .into_object_ref()
        },
    );
}
