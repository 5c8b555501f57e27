//! The size-class pool behind [`make_object`](super::make_object): small objects take
//! their real size, rounded to a size class, instead of the system allocator's chunk.
//!
//! # Why
//!
//! glibc's smallest chunk is 32 bytes and every chunk carries an 8-byte size word, so a
//! 32-byte object (a header and two children) takes 48 bytes, and a bare 16-byte object
//! 32. This pool keeps, per size class, 256 KiB slabs cut into equal chunks with no
//! per-chunk bookkeeping: a 32-byte object takes 32 bytes.
//!
//! # Design (the RFC's F3, generalizing [`ObjectPool`](super::ObjectPool))
//!
//! - **Size classes**: 8-byte steps from 16 to 64 bytes, 16-byte steps from 80 to 128
//!   (11 classes). A type is pooled when its size is at most 128 bytes and its
//!   alignment at most 16 (a 16-aligned type's size is a multiple of 16, and so is its
//!   class); the class is a compile-time constant of the type. Larger or more aligned
//!   types go to the system allocator, as before.
//! - **Thread caches**: each thread keeps, per class, a free list, one spare full batch
//!   (so a thread that frees and allocates around the batch boundary does not go back
//!   and forth to the shared lists), and the unused tail of its current slab, cut on
//!   demand. Allocation and free touch only the thread's cache: no atomic operation, no
//!   lock.
//! - **Freed on any thread**: the deleter returns a chunk to the cache of the thread
//!   that frees it, whichever thread made it. A cache holding more than two batches
//!   hands one to the class's shared list (a mutex, taken once per batch of 64 KiB of
//!   chunks), where threads with empty caches find it. A thread's cache goes to the
//!   shared lists when the thread exits; a chunk freed after that (from another
//!   thread-local's destructor) goes there directly. So objects may be freed on any
//!   thread, at any time, after the thread that made them is gone.
//! - **Memory is kept**: slabs are never given back to the system; a freed chunk is
//!   reused by the next object of its class, on any thread. A program that frees a
//!   large graph of small objects and then works with other sizes keeps that memory
//!   (glibc often does too, for its own reasons). Such a program can turn the pool off
//!   (below).
//! - **`fork`**: the shared lists are `std` mutexes, held for a few instructions once
//!   per 64 KiB batch. A child forked while another thread held one would block at its
//!   next refill of that class (glibc's malloc guards its locks with fork handlers; this
//!   pool has none). A program that forks without `exec` while other threads allocate
//!   objects should turn the pool off before starting them.
//!
//! # Turning it off
//!
//! [`set_size_class_pool`] switches it at run time (objects already made keep their
//! deleter, so switching is always sound); the environment variable
//! `OBJECT_SIZE_CLASS_POOL=0` starts a process with it off. Memory checkers see a
//! pooled object's chunk as part of a live slab, so valgrind and Miri cannot flag a use
//! after free of a pooled object: this project's valgrind script runs with the pool off
//! except in the pool's own tests, and under Miri it starts off.
//!
//! # Which allocator to pick
//!
//! Slabs come from the system allocator whatever the global allocator is (glibc maps a
//! slab on its own and it costs what is touched; mimalloc would round such blocks up
//! again, by 10 to 35% here). Measured on this project's machine with 1,048,575 binary
//! nodes of 32 bytes (`benches/memory.rs`, `benches/memory_mimalloc.rs`):
//!
//! | global allocator | pool | bytes a node | build + drop | `Arc<enum>` build + drop |
//! | --- | --- | --- | --- | --- |
//! | glibc | on | 32.0 | 18.0 ms | 52.0 ms (48.1 bytes) |
//! | glibc | off | 48.0 | 51.9 ms | |
//! | mimalloc | on | 32.1 | 15.2 ms | 47.4 ms (32.1 bytes) |
//! | mimalloc | off | 32.0 | 27.6 ms | |
//!
//! Keep the pool on (the default) with either: it is what makes small objects small
//! under glibc, and the fastest with both. mimalloc as the global allocator helps the
//! rest of a program (and `Arc`); with it, the pool costs no memory over mimalloc's own
//! classes. Turn the pool off only to have freed memory reused by other sizes or
//! returned, or to run memory checkers on object lifetimes.

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::alloc::{handle_alloc_error, GlobalAlloc, System};
use std::sync::{Mutex, PoisonError};

use super::{drop_object_in_place, Allocator, GlobalAllocator};
use crate::header::{Deleter, Object};
use crate::object_type::ObjectType;

/// The largest object size the pool takes, in bytes.
pub const MAX_POOLED_SIZE: usize = 128;

/// The chunk sizes of the classes, in bytes.
const CLASS_SIZES: [usize; CLASSES] = [16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128];
const CLASSES: usize = 11;

/// Bytes of one slab, cut into chunks of one class: 256 KiB less glibc's chunk header
/// (so that its own mapping is exactly 64 pages).
pub(crate) const SLAB_BYTES: usize = 256 * 1024 - 32;

/// Bytes of chunks in a batch moved between a thread cache and a shared list.
const BATCH_BYTES: usize = 64 * 1024;

/// The alignment of a slab (and so of every chunk whose size is a multiple of 16).
const SLAB_ALIGN: usize = 16;

/// The class of an object of `size` bytes aligned to `align`, if pooled.
pub(super) const fn class_of(size: usize, align: usize) -> Option<usize> {
    if size == 0 || size > MAX_POOLED_SIZE || align > SLAB_ALIGN {
        return None;
    }
    let class = if size <= 64 {
        let rounded = (size + 7) & !7;
        if rounded < 16 {
            0
        } else {
            rounded / 8 - 2
        }
    } else {
        7 + ((size + 15) & !15) / 16 - 5
    };
    // A chunk at a multiple of its size from a 16-aligned slab is aligned to `align` if
    // the size is a multiple of `align` (always true of a Rust type's size, and rounding
    // up to a class keeps it: classes above 64 are multiples of 16, those up to 64 of 8).
    if CLASS_SIZES[class] % align != 0 {
        return None;
    }
    Some(class)
}

/// The size class an object of type `T` is allocated from by [`make_object`](super::make_object),
/// as its chunk size in bytes; `None` if `T` is too large or too aligned to be pooled.
///
/// ```
/// use object_core::alloc::size_class_of;
/// use object_core::{Object, ObjectPtr};
///
/// #[derive(object_core::Object)]
/// #[repr(C)]
/// #[object(key = "doc.size_classes.Bin", final)]
/// struct Bin {
///     base: Object,
///     lhs: Option<ObjectPtr<Bin>>,
///     rhs: Option<ObjectPtr<Bin>>,
/// }
///
/// assert_eq!(size_class_of::<Object>(), Some(16));
/// assert_eq!(size_class_of::<Bin>(), Some(32));
/// ```
pub const fn size_class_of<T>() -> Option<usize> {
    match class_of(core::mem::size_of::<T>(), core::mem::align_of::<T>()) {
        Some(c) => Some(CLASS_SIZES[c]),
        None => None,
    }
}

/// Whether the pool is on: 0 not read yet, 1 on, 2 off.
static ENABLED: AtomicU8 = AtomicU8::new(0);

/// Turns the size-class pool on or off for allocations from now on, on every thread.
///
/// Objects already made keep the deleter they were made with, so this is sound at any
/// time; chunks already in the pool stay there for when it is turned on again.
///
/// ```
/// use object_core::alloc::{set_size_class_pool, size_class_pool_enabled};
///
/// let was = size_class_pool_enabled();
/// set_size_class_pool(false);
/// assert!(!size_class_pool_enabled());
/// set_size_class_pool(was);
/// ```
pub fn set_size_class_pool(on: bool) {
    ENABLED.store(if on { 1 } else { 2 }, Ordering::Relaxed);
}

/// Whether [`make_object`](super::make_object) takes small objects from the size-class
/// pool: on unless turned off by [`set_size_class_pool`] or by
/// `OBJECT_SIZE_CLASS_POOL=0` (also `off`, `false`, `no`) in the environment when first
/// asked; off by default under Miri.
#[inline]
pub fn size_class_pool_enabled() -> bool {
    match ENABLED.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => enabled_from_env(),
    }
}

#[cold]
fn enabled_from_env() -> bool {
    let on = match std::env::var("OBJECT_SIZE_CLASS_POOL") {
        Ok(v) => !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false" | "no"
        ),
        Err(_) => !cfg!(miri),
    };
    // A concurrent `set_size_class_pool` wins over the environment.
    let _ = ENABLED.compare_exchange(
        0,
        if on { 1 } else { 2 },
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    ENABLED.load(Ordering::Relaxed) == 1
}

/// Bytes the pool has taken from the system allocator so far (all slabs, free or in
/// use). Slabs are never returned, so this only grows.
///
/// ```
/// use object_core::alloc::size_class_pool_reserved_bytes;
/// let _ = size_class_pool_reserved_bytes();
/// ```
pub fn size_class_pool_reserved_bytes() -> usize {
    RESERVED.load(Ordering::Relaxed)
}

static RESERVED: AtomicUsize = AtomicUsize::new(0);

/// A free chunk: its first word links the next.
struct FreeChunk {
    next: *mut FreeChunk,
}

/// A linked list of free chunks of one class.
struct Batch {
    head: NonNull<FreeChunk>,
    len: usize,
}

// SAFETY: a batch owns free chunks (memory nobody else uses); moving it to another
// thread through the shared list's mutex moves that ownership.
unsafe impl Send for Batch {}

/// The shared lists, one per class: batches handed over by threads with too many free
/// chunks, or exiting.
static SHARED: [Mutex<Vec<Batch>>; CLASSES] = [const { Mutex::new(Vec::new()) }; CLASSES];

/// Every slab, so that the pool's memory stays reachable (for leak checkers) for the
/// life of the process.
static SLABS: Mutex<Vec<SlabPtr>> = Mutex::new(Vec::new());

struct SlabPtr(#[allow(dead_code)] NonNull<u8>);

// SAFETY: only held, never used through: it keeps the slab reachable.
unsafe impl Send for SlabPtr {}

fn push_shared(class: usize, batch: Batch) {
    #[cfg(debug_assertions)]
    {
        // A list's length and its count agree (checked in tests: the unit tests, the
        // pool's integration tests, Miri).
        let (mut n, mut p) = (0, batch.head.as_ptr());
        while !p.is_null() {
            n += 1;
            // SAFETY: a batch's chunks are free and linked through their first word.
            p = unsafe { (*p).next };
        }
        debug_assert_eq!(n, batch.len, "a batch of class {class} miscounted");
    }
    SHARED[class]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(batch);
}

fn pop_shared(class: usize) -> Option<Batch> {
    SHARED[class]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop()
}

/// One class's part of a thread cache.
struct ClassCache {
    /// Free chunks, and how many.
    free: Cell<*mut FreeChunk>,
    len: Cell<usize>,
    /// A batch of at least `batch_len(class)` chunks kept back (or null), and how many.
    spare: Cell<*mut FreeChunk>,
    spare_len: Cell<usize>,
    /// The uncut tail of the thread's current slab of this class.
    bump: Cell<*mut u8>,
    end: Cell<*mut u8>,
}

impl ClassCache {
    const fn empty() -> ClassCache {
        ClassCache {
            free: Cell::new(ptr::null_mut()),
            len: Cell::new(0),
            spare: Cell::new(ptr::null_mut()),
            spare_len: Cell::new(0),
            bump: Cell::new(ptr::null_mut()),
            end: Cell::new(ptr::null_mut()),
        }
    }
}

/// How many chunks a batch moved to or from the shared list holds: 64 KiB of chunks.
const fn batch_len(class: usize) -> usize {
    BATCH_BYTES / CLASS_SIZES[class]
}

struct ThreadCache {
    classes: [ClassCache; CLASSES],
}

impl Drop for ThreadCache {
    /// The thread is exiting: its free chunks and uncut slab tails go to the shared
    /// lists, for other threads.
    fn drop(&mut self) {
        for (class, c) in self.classes.iter().enumerate() {
            if let Some(head) = NonNull::new(c.free.replace(ptr::null_mut())) {
                push_shared(
                    class,
                    Batch {
                        head,
                        len: c.len.replace(0),
                    },
                );
            }
            if let Some(head) = NonNull::new(c.spare.replace(ptr::null_mut())) {
                push_shared(
                    class,
                    Batch {
                        head,
                        len: c.spare_len.replace(0),
                    },
                );
            }
            // Cut the tail into a list.
            let size = CLASS_SIZES[class];
            let (mut p, end) = (
                c.bump.replace(ptr::null_mut()),
                c.end.replace(ptr::null_mut()),
            );
            let mut head: *mut FreeChunk = ptr::null_mut();
            let mut len = 0;
            while end.addr() - p.addr() >= size {
                // SAFETY: `[p, p + size)` is an uncut chunk of this thread's slab,
                // owned by nobody; it becomes a free chunk.
                unsafe {
                    (p as *mut FreeChunk).write(FreeChunk { next: head });
                    head = p as *mut FreeChunk;
                    p = p.add(size);
                }
                len += 1;
            }
            if let Some(head) = NonNull::new(head) {
                push_shared(class, Batch { head, len });
            }
        }
    }
}

std::thread_local! {
    static CACHE: ThreadCache = const {
        ThreadCache { classes: [const { ClassCache::empty() }; CLASSES] }
    };
}

/// A chunk of class `class` from this thread's cache; `None` if the thread's storage
/// is gone (the caller falls back to the system allocator).
#[inline]
fn take(class: usize) -> Option<NonNull<u8>> {
    CACHE
        .try_with(|cache| {
            let c = &cache.classes[class];
            let f = c.free.get();
            if !f.is_null() {
                // SAFETY: a free chunk of this thread's list; its first word is the link.
                c.free.set(unsafe { (*f).next });
                c.len.set(c.len.get() - 1);
                return f as *mut u8;
            }
            let (b, size) = (c.bump.get(), CLASS_SIZES[class]);
            if c.end.get().addr() - b.addr() >= size {
                // SAFETY: the tail has room for a chunk: `b + size` stays in the slab.
                c.bump.set(unsafe { b.add(size) });
                return b;
            }
            refill(c, class)
        })
        .ok()
        // SAFETY: chunks are never null (they lie in allocated slabs).
        .map(|p| unsafe { NonNull::new_unchecked(p) })
}

/// The thread's list and tail of `class` are empty: takes the spare batch, a batch from
/// the shared list, or a new slab, and returns a chunk from it.
#[cold]
#[inline(never)]
fn refill(c: &ClassCache, class: usize) -> *mut u8 {
    let size = CLASS_SIZES[class];
    let mut batch = NonNull::new(c.spare.replace(ptr::null_mut())).map(|head| Batch {
        head,
        len: c.spare_len.replace(0),
    });
    if batch.is_none() {
        batch = pop_shared(class);
    }
    if let Some(Batch { head, len }) = batch {
        let f = head.as_ptr();
        // SAFETY: the batch is ours (taken from the spare slot or the shared list);
        // its first chunk's first word links the rest.
        c.free.set(unsafe { (*f).next });
        c.len.set(len - 1);
        return f as *mut u8;
    }
    let layout = Layout::from_size_align(SLAB_BYTES, SLAB_ALIGN).expect("a valid slab layout");
    // From the system allocator, whatever the global one is: glibc maps a slab of this
    // size on its own, so it costs what is touched; an allocator with size classes
    // (mimalloc) would round it up a second time.
    // SAFETY: the size is nonzero.
    let slab = unsafe { System.alloc(layout) };
    let Some(slab) = NonNull::new(slab) else {
        handle_alloc_error(layout)
    };
    SLABS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(SlabPtr(slab));
    RESERVED.fetch_add(SLAB_BYTES, Ordering::Relaxed);
    let slab = slab.as_ptr();
    // SAFETY: both offsets are within the fresh slab (the second is its cut end: a whole
    // number of chunks).
    unsafe {
        c.bump.set(slab.add(size));
        c.end.set(slab.add(SLAB_BYTES / size * size));
    }
    slab
}

/// Returns a chunk of class `class` whose object was dropped to this thread's cache.
///
/// # Safety
///
/// `p` is a chunk of that class, taken with [`take`], whose object is dead; nobody uses
/// it any more.
#[inline]
unsafe fn give_back(class: usize, p: *mut u8) {
    let p = p as *mut FreeChunk;
    let cached = CACHE.try_with(|cache| {
        let c = &cache.classes[class];
        // SAFETY: the chunk is free and ours; its first word becomes the link.
        unsafe { p.write(FreeChunk { next: c.free.get() }) };
        c.free.set(p);
        let len = c.len.get() + 1;
        c.len.set(len);
        if len >= batch_len(class) {
            // SAFETY: `p` is `c.free`, the head of a list of `len` free chunks.
            unsafe { spill(c, class) };
        }
    });
    if cached.is_err() {
        // The thread's cache is gone (a free from another thread-local's destructor):
        // straight to the shared list.
        // SAFETY: the chunk is free and ours; it becomes a batch of one.
        unsafe {
            p.write(FreeChunk {
                next: ptr::null_mut(),
            });
            push_shared(
                class,
                Batch {
                    head: NonNull::new_unchecked(p),
                    len: 1,
                },
            );
        }
    }
}

/// The thread's list of `class` holds at least a batch (a batch taken from the shared
/// list may hold more): it becomes the spare, and the spare there was (if any) goes to
/// the shared list.
///
/// # Safety
///
/// `c.free` heads a list of `c.len` free chunks, and `c.spare` one of `c.spare_len`.
#[cold]
#[inline(never)]
unsafe fn spill(c: &ClassCache, class: usize) {
    let old = c.spare.replace(c.free.replace(ptr::null_mut()));
    let old_len = c.spare_len.replace(c.len.replace(0));
    if let Some(old) = NonNull::new(old) {
        push_shared(
            class,
            Batch {
                head: old,
                len: old_len,
            },
        );
    }
}

/// A chunk for a block of `layout` (an object's, or one with trailing items whose size
/// never changes), if the pool is on and the layout fits a class.
#[inline]
pub(super) fn take_block(layout: Layout) -> Option<NonNull<u8>> {
    let class = class_of(layout.size(), layout.align())?;
    if !size_class_pool_enabled() {
        return None;
    }
    take(class)
}

/// Returns a block that [`take_block`] gave for `layout`.
///
/// # Safety
///
/// `p` came from `take_block(layout)` with this layout, and its object is dead.
#[inline]
pub(super) unsafe fn give_back_block(layout: Layout, p: *mut u8) {
    // SAFETY: `take_block` found a class for this layout; the caller's guarantee.
    unsafe {
        let class = class_of(layout.size(), layout.align()).unwrap_unchecked();
        give_back(class, p);
    }
}

/// Allocates objects from the size-class pool, falling back to the system allocator for
/// types too large or too aligned to be pooled, while the pool is off, or on a thread
/// whose storage is gone. [`make_object`](super::make_object) uses it; see the
/// [module docs](self) for the design.
///
/// ```
/// use object_core::alloc::SizeClassAllocator;
/// use object_core::{Allocator, Object};
///
/// let o = SizeClassAllocator.make(Object::new());
/// assert_eq!(o.type_key(), "ffi.Object");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SizeClassAllocator;

pub(super) unsafe extern "C" fn size_class_deleter<T: ObjectType>(obj: *mut Object) {
    let p = obj as *mut T;
    // SAFETY: the header's deleter is called once, on the last release, with the
    // address `SizeClassAllocator::allocate` took with `take_block` for `T`'s layout.
    unsafe {
        drop_object_in_place(p);
        give_back_block(Layout::new::<T>(), p as *mut u8);
    }
}

// SAFETY: a pooled chunk is at least `T`'s size (its class), aligned to `T` (see
// `class_of`) and unshared (taken off a free list or cut fresh); `size_class_deleter::<T>`
// drops the `T` once and returns the chunk, reading nothing else. The fallback is the
// global allocator's own pair.
unsafe impl<T: ObjectType> Allocator<T> for SizeClassAllocator {
    #[inline]
    fn allocate(&self) -> (NonNull<T>, Deleter) {
        // (The layout is a constant: the class is found at compile time.)
        if let Some(p) = take_block(Layout::new::<T>()) {
            return (p.cast(), size_class_deleter::<T>);
        }
        <GlobalAllocator as Allocator<T>>::allocate(&GlobalAllocator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_and_keep_alignment() {
        assert_eq!(class_of(16, 8).map(|c| CLASS_SIZES[c]), Some(16));
        assert_eq!(class_of(17, 8).map(|c| CLASS_SIZES[c]), Some(24));
        assert_eq!(class_of(24, 8).map(|c| CLASS_SIZES[c]), Some(24));
        assert_eq!(class_of(64, 8).map(|c| CLASS_SIZES[c]), Some(64));
        assert_eq!(class_of(72, 8).map(|c| CLASS_SIZES[c]), Some(80));
        assert_eq!(class_of(128, 16).map(|c| CLASS_SIZES[c]), Some(128));
        assert_eq!(class_of(129, 8), None);
        assert_eq!(class_of(64, 32), None);
        assert_eq!(class_of(48, 16).map(|c| CLASS_SIZES[c]), Some(48));
        for size in 1..=MAX_POOLED_SIZE {
            for align in [1, 2, 4, 8, 16] {
                if size % align != 0 {
                    continue;
                }
                let c = class_of(size, align).expect("pooled");
                assert!(CLASS_SIZES[c] >= size && CLASS_SIZES[c] % align == 0);
                assert!(
                    c == 0 || CLASS_SIZES[c - 1] < size,
                    "smallest class for {size}"
                );
            }
        }
    }
}
