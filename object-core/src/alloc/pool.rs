//! [`ObjectPool`]: same-size chunks for objects of one type, reused without going back
//! to the system allocator; chunks freed on other threads return through a lock-free
//! stack.

use core::alloc::Layout;
use core::cell::{Cell, UnsafeCell};
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::alloc::{alloc, dealloc, handle_alloc_error};

use super::{drop_object_in_place, Allocator};
use crate::header::{Deleter, Object};
use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;

/// A per-thread identity that is never reused (unlike thread-local addresses).
fn current_thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    std::thread_local! {
        static ID: Cell<u64> = const { Cell::new(0) };
    }
    ID.with(|id| {
        let v = id.get();
        if v != 0 {
            v
        } else {
            let v = NEXT.fetch_add(1, Ordering::Relaxed);
            id.set(v);
            v
        }
    })
}

/// One pool slot: the object first (so the object's address is the chunk's), then the
/// pool it returns to. While free, the object's first word links the free list.
#[repr(C)]
struct Chunk<T> {
    value: MaybeUninit<T>,
    pool: *const PoolShared<T>,
}

/// Tag for the remote free list once the owning handle is gone.
const CLOSED: usize = 1;

struct PoolShared<T> {
    owner: u64,
    /// Owner-thread-only state (the `ObjectPool` handle is neither `Send` nor `Sync`,
    /// and the deleter touches these only on the owner thread while the pool is open).
    local: Cell<*mut Chunk<T>>,
    local_len: Cell<usize>,
    closed: Cell<bool>,
    total: Cell<usize>,
    slabs: UnsafeCell<Vec<(NonNull<Chunk<T>>, usize)>>,
    /// Chunks freed on other threads: a multi-producer stack that the owner takes whole
    /// (`swap`), so there is no ABA. Holds `CLOSED` after the handle is dropped.
    remote: AtomicPtr<Chunk<T>>,
    /// After closing: chunks still out, counted down by late frees (wrapping).
    missing: AtomicUsize,
}

/// A pool of same-size chunks for objects of one type, as the RFC sketches: `make`
/// takes a chunk from the free list (no system allocation in the steady state), and the
/// deleter the pool installs returns the chunk to its pool.
///
/// The pool handle belongs to the thread that created it (it is neither `Send` nor
/// `Sync`), but the objects it makes are ordinary handles: they can be sent anywhere
/// and dropped on any thread (a chunk freed elsewhere goes back through a lock-free
/// stack). Objects may outlive the handle; the memory is released when the handle and
/// the last object are both gone. As with [`make_object`](super::make_object), a `Drop` that panics on an
/// object's last release aborts the process, naming the type.
///
/// ```
/// use object_core::{Object, ObjectPool, ObjectPtr};
///
/// let pool = ObjectPool::<Object>::new();
/// let a = pool.make(Object::new());
/// let addr = ObjectPtr::as_ptr(&a);
/// drop(a);
/// let b = pool.make(Object::new()); // the chunk is reused
/// assert_eq!(ObjectPtr::as_ptr(&b), addr);
/// ```
pub struct ObjectPool<T: ObjectType> {
    shared: NonNull<PoolShared<T>>,
    _not_send: PhantomData<*const T>,
}

impl<T: ObjectType> ObjectPool<T> {
    /// An empty pool; chunks are allocated in growing slabs as needed.
    pub fn new() -> Self {
        let shared = Box::new(PoolShared {
            owner: current_thread_id(),
            local: Cell::new(ptr::null_mut()),
            local_len: Cell::new(0),
            closed: Cell::new(false),
            total: Cell::new(0),
            slabs: UnsafeCell::new(Vec::new()),
            remote: AtomicPtr::new(ptr::null_mut()),
            missing: AtomicUsize::new(0),
        });
        ObjectPool {
            // A raw pointer from `Box::into_raw` (not from a reference): the chunks keep
            // copies of it, and the last one out frees the box through it.
            // SAFETY: `Box::into_raw` never returns null.
            shared: unsafe { NonNull::new_unchecked(Box::into_raw(shared)) },
            _not_send: PhantomData,
        }
    }

    /// A pool with at least `n` chunks ready.
    pub fn with_capacity(n: usize) -> Self {
        let pool = Self::new();
        if n > 0 {
            pool.grow(n);
        }
        pool
    }

    fn shared(&self) -> &PoolShared<T> {
        // SAFETY: the shared part lives until the handle is dropped and every chunk is
        // back (see `Drop`), so it outlives `&self`.
        unsafe { self.shared.as_ref() }
    }

    /// Chunks allocated so far (free or in use).
    pub fn capacity(&self) -> usize {
        self.shared().total.get()
    }

    /// Chunks on this thread's free list (chunks freed on other threads are collected
    /// at the next `make` that needs them).
    pub fn free_chunks(&self) -> usize {
        self.shared().local_len.get()
    }

    #[cold]
    fn grow(&self, n: usize) {
        let raw = self.shared.as_ptr() as *const PoolShared<T>;
        let s = self.shared();
        let layout = match Layout::array::<Chunk<T>>(n) {
            Ok(l) => l,
            Err(_) => handle_alloc_error(Layout::new::<Chunk<T>>()),
        };
        // SAFETY: `n > 0` and chunks are at least 16 bytes, so the size is nonzero.
        let base = unsafe { alloc(layout) } as *mut Chunk<T>;
        let Some(base) = NonNull::new(base) else {
            handle_alloc_error(layout)
        };
        for i in (0..n).rev() {
            // SAFETY: `i < n`, inside the fresh block; only this thread sees it.
            unsafe {
                let c = base.as_ptr().add(i);
                ptr::addr_of_mut!((*c).pool).write(raw);
                s.push_local(c);
            }
        }
        // SAFETY: the slab list is touched only by the owner thread while open.
        unsafe { (*s.slabs.get()).push((base, n)) };
        s.total.set(s.total.get() + n);
    }

    #[inline]
    fn take_chunk(&self) -> *mut Chunk<T> {
        let s = self.shared();
        let mut c = s.local.get();
        if c.is_null() {
            if !s.remote.load(Ordering::Relaxed).is_null() {
                // Acquire pairs with the remote frees' Release pushes.
                let list = s.remote.swap(ptr::null_mut(), Ordering::Acquire);
                let mut n = 0;
                let mut p = list;
                while !p.is_null() {
                    n += 1;
                    // SAFETY: free chunks store the next link in their first word.
                    p = unsafe { *(p as *const *mut Chunk<T>) };
                }
                s.local.set(list);
                s.local_len.set(n);
            }
            if s.local.get().is_null() {
                self.grow(s.total.get().clamp(16, 4096));
            }
            c = s.local.get();
        }
        // SAFETY: `c` is a free chunk on the owner's list; its first word is the link.
        s.local.set(unsafe { *(c as *const *mut Chunk<T>) });
        s.local_len.set(s.local_len.get() - 1);
        c
    }
}

impl<T> PoolShared<T> {
    /// Owner thread only.
    #[inline]
    unsafe fn push_local(&self, c: *mut Chunk<T>) {
        // SAFETY: the caller passes a free chunk; its first word becomes the link.
        unsafe { (c as *mut *mut Chunk<T>).write(self.local.get()) };
        self.local.set(c);
        self.local_len.set(self.local_len.get() + 1);
    }
}

/// Returns a chunk whose value was already dropped to its pool.
///
/// Works on the raw pointer throughout: the last chunk home after the handle is gone
/// frees the pool, so no reference to it may be live across that.
///
/// # Safety
///
/// `pool` is the (raw, `Box::into_raw`) pointer of the chunk's live pool; `c` is one of
/// its chunks, out, whose value was dropped.
#[inline]
unsafe fn release_chunk<T>(pool: *const PoolShared<T>, c: *mut Chunk<T>) {
    // SAFETY: the pool is alive while any chunk is out; `owner` never changes, and
    // `closed` (owner-only) is read only on the owner thread; neither borrow outlives
    // the condition.
    if unsafe { (*pool).owner } == current_thread_id() && !unsafe { (*pool).closed.get() } {
        // SAFETY: we are on the owner thread (ids are never reused) and the pool is
        // open, so the owner-only fields are ours; the pool outlives this call.
        unsafe { (*pool).push_local(c) };
        return;
    }
    // SAFETY: the chunk is free; the pool is alive while any chunk is out.
    unsafe { release_remote(pool, c) }
}

/// [`release_chunk`] off the owner thread, or after the handle is gone.
///
/// # Safety
///
/// As for [`release_chunk`].
#[cold]
unsafe fn release_remote<T>(pool: *const PoolShared<T>, c: *mut Chunk<T>) {
    // SAFETY: the pool is alive until the last chunk is home (below); these are shared
    // borrows of its atomic fields, ended before it can be freed.
    let (remote, missing) = unsafe { (&(*pool).remote, &(*pool).missing) };
    let mut head = remote.load(Ordering::Relaxed);
    loop {
        if head.addr() == CLOSED {
            // The handle is gone: count down; the last one frees the pool.
            if missing.fetch_sub(1, Ordering::AcqRel) == 1 {
                // SAFETY: every chunk is home or accounted for, nobody else can reach
                // the pool any more; `pool` is the `Box::into_raw` pointer.
                unsafe { free_pool(pool as *mut PoolShared<T>) };
            }
            return;
        }
        // SAFETY: the chunk is free; its first word becomes the link.
        unsafe { (c as *mut *mut Chunk<T>).write(head) };
        match remote.compare_exchange_weak(head, c, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(h) => head = h,
        }
    }
}

/// Frees every slab and the shared part.
///
/// # Safety
///
/// No chunk may be in use and nobody else may hold a pointer to the pool.
unsafe fn free_pool<T>(s: *mut PoolShared<T>) {
    // SAFETY: the caller guarantees exclusive ownership; `s` came from `Box::into_raw`.
    let shared = unsafe { Box::from_raw(s) };
    for &(base, n) in shared.slabs_ref() {
        // SAFETY: each slab was allocated in `grow` with this exact layout.
        unsafe {
            dealloc(
                base.as_ptr() as *mut u8,
                Layout::array::<Chunk<T>>(n).unwrap_unchecked(),
            )
        };
    }
}

impl<T> PoolShared<T> {
    fn slabs_ref(&self) -> &Vec<(NonNull<Chunk<T>>, usize)> {
        // SAFETY: only called with exclusive ownership of the pool (in `free_pool`).
        unsafe { &*self.slabs.get() }
    }
}

unsafe extern "C" fn pool_deleter<T: ObjectType>(obj: *mut Object) {
    let c = obj as *mut Chunk<T>;
    // SAFETY: pool objects are the first field of a `Chunk<T>` (repr(C)), the deleter runs
    // once on the last release, and the chunk's pool outlives its chunks.
    unsafe {
        drop_object_in_place(c as *mut T);
        let pool = ptr::addr_of!((*c).pool).read();
        release_chunk(pool, c);
    }
}

// SAFETY: chunks are `Chunk<T>`-sized and aligned, taken off the free list (unshared);
// `pool_deleter::<T>` drops the value once and returns the chunk, reading only the
// chunk's `pool` field (outside the object).
unsafe impl<T: ObjectType> Allocator<T> for ObjectPool<T> {
    #[inline]
    fn allocate(&self) -> (NonNull<T>, Deleter) {
        let c = self.take_chunk();
        // SAFETY: `take_chunk` never returns null.
        (
            unsafe { NonNull::new_unchecked(c as *mut T) },
            pool_deleter::<T>,
        )
    }
}

impl<T: ObjectType> ObjectPool<T> {
    /// Allocates `value` from the pool (same as [`Allocator::make`]).
    #[inline]
    pub fn make(&self, value: T) -> ObjectPtr<T> {
        Allocator::make(self, value)
    }
}

impl<T: ObjectType> Default for ObjectPool<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ObjectType> Drop for ObjectPool<T> {
    fn drop(&mut self) {
        let s = self.shared.as_ptr();
        // SAFETY: the shared part is alive (we are its owner handle); the borrow is not
        // used once it may be freed below.
        let sh = unsafe { &*s };
        sh.closed.set(true);
        // From here on every free goes through `missing`; chunks that made it onto the
        // remote list before the swap are home.
        let list = sh
            .remote
            .swap(ptr::without_provenance_mut(CLOSED), Ordering::AcqRel);
        let mut home = sh.local_len.get();
        let mut p = list;
        while !p.is_null() {
            home += 1;
            // SAFETY: free chunks store the next link in their first word.
            p = unsafe { *(p as *const *mut Chunk<T>) };
        }
        let out = sh.total.get() - home;
        let prev = sh.missing.fetch_add(out, Ordering::AcqRel);
        if prev.wrapping_add(out) == 0 {
            // SAFETY: no chunk is out (late frees already counted themselves down).
            unsafe { free_pool(s) };
        }
    }
}

impl<T: ObjectType> fmt::Debug for ObjectPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectPool")
            .field("type_key", &T::TYPE_KEY)
            .field("capacity", &self.capacity())
            .field("free_chunks", &self.free_chunks())
            .finish()
    }
}
