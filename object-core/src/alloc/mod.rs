//! Making objects: the allocator abstraction (the allocator picks the deleter), the
//! global allocator, a pool of same-size chunks, and one-block allocation of objects
//! with trailing items.

use core::alloc::Layout;
use core::cell::{Cell, UnsafeCell};
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::alloc::{alloc, dealloc, handle_alloc_error};

use crate::header::{Deleter, Object};
use crate::object_type::{is_instance, ObjectType};
use crate::ptr::ObjectPtr;
use crate::registry::{self, RegistryError};

/// A strategy for placing objects in memory. The allocator, not the type, decides how
/// an object is freed: it hands out storage together with the deleter that the header
/// will carry.
///
/// # Safety
///
/// `allocate` must return storage that is valid for writes of a `T`, suitably aligned,
/// and used by nothing else, together with a deleter that — called once, from any
/// thread, with that address cast to `*mut Object` after a `T` was written there —
/// drops the `T` in place exactly once and releases the storage. The deleter must not
/// read the header (it may run after the header was reused for bookkeeping: the release
/// path links deferred objects through it) and must not unwind: drop the value with
/// [`drop_object_in_place`], which aborts, naming the type, if a `Drop` panics.
pub unsafe trait Allocator<T: ObjectType> {
    /// Storage for one `T` and the deleter that will release it.
    fn allocate(&self) -> (NonNull<T>, Deleter);

    /// Allocates `value` as an object: writes it, fills in the header, returns the
    /// only handle.
    #[inline]
    fn make(&self, value: T) -> ObjectPtr<T> {
        // Resolve the index first: if it fails (a registry conflict) nothing is allocated.
        let index = T::type_index();
        let (p, deleter) = self.allocate();
        // SAFETY: `allocate`'s contract: `p` is valid, aligned, unshared storage for a
        // `T`; the header is the first bytes of the `T` (ObjectType's layout contract).
        unsafe {
            p.as_ptr().write(value);
            Object::init(p.as_ptr() as *mut Object, index, Some(deleter));
            ObjectPtr::from_raw(p.as_ptr())
        }
    }
}

/// Drops the value of a dying object in place, for a deleter. If the value's `Drop`
/// panics, prints which object type it was and aborts the process: a deleter is
/// `extern "C"` (it may be called from C, or from another library's copy of this crate)
/// and must not unwind, and a half-dropped object cannot be put back.
///
/// Every deleter of this crate drops through it; an [`Allocator`] written elsewhere
/// should too.
///
/// # Safety
///
/// As for [`core::ptr::drop_in_place`]: `p` points to a live `T` that is dropped once,
/// here, and not used afterwards.
#[inline(always)]
pub unsafe fn drop_object_in_place<T: ObjectType>(p: *mut T) {
    // SAFETY: the caller's guarantee.
    unsafe { drop_or_abort(p, T::TYPE_KEY) }
}

/// [`drop_object_in_place`] for any value dropped by the deleter of an object of type
/// `key` (its trailing items, a function's callable).
///
/// # Safety
///
/// As for [`core::ptr::drop_in_place`].
#[inline(always)]
pub(crate) unsafe fn drop_or_abort<V: ?Sized>(p: *mut V, key: &'static str) {
    /// Armed while the value drops; its own `drop` runs only if that unwinds.
    struct AbortOnUnwind(&'static str, &'static str);
    impl Drop for AbortOnUnwind {
        fn drop(&mut self) {
            abort_in_deleter(self.0, self.1);
        }
    }
    let guard = AbortOnUnwind(key, core::any::type_name::<V>());
    // SAFETY: the caller's guarantee.
    unsafe { ptr::drop_in_place(p) };
    core::mem::forget(guard);
}

#[cold]
#[inline(never)]
fn abort_in_deleter(key: &str, rust_type: &str) -> ! {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "fatal: a `Drop` panicked while an object of type `{key}` was released (dropping a \
         `{rust_type}`); deleters cannot unwind, so the process aborts"
    );
    std::process::abort()
}

/// The global allocator (`std::alloc`), used by [`make_object`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalAllocator;

unsafe extern "C" fn global_deleter<T: ObjectType>(obj: *mut Object) {
    let p = obj as *mut T;
    // SAFETY: the header's deleter is called once, on the last release, with the
    // address `GlobalAllocator::allocate` returned for a `Layout::new::<T>()` block.
    unsafe {
        drop_object_in_place(p);
        dealloc(p as *mut u8, Layout::new::<T>());
    }
}

// SAFETY: fresh `alloc` blocks of `T`'s layout; `global_deleter::<T>` drops and frees
// exactly such a block and reads nothing else.
unsafe impl<T: ObjectType> Allocator<T> for GlobalAllocator {
    #[inline]
    fn allocate(&self) -> (NonNull<T>, Deleter) {
        let layout = Layout::new::<T>();
        // SAFETY: object types contain the 16-byte header, so the size is nonzero.
        let p = unsafe { alloc(layout) } as *mut T;
        match NonNull::new(p) {
            Some(p) => (p, global_deleter::<T>),
            None => handle_alloc_error(layout),
        }
    }
}

/// Allocates `value` as an object with the global allocator.
///
/// The header is filled in: the type index (registered on first use), a count of one
/// and the global deleter. Whatever header `value` carried is overwritten.
///
/// # Release
///
/// When the last handle goes, the deleter drops the value and frees the block. Freeing
/// a deep graph does not recurse once per level: deleters nest at most a few levels,
/// further releases run after the outermost one, before it returns.
///
/// # Aborts
///
/// If the value's `Drop` (or that of anything it owns) panics on its last release, the
/// process aborts, after printing the object's type key and Rust type: deleters are
/// `extern "C"` (they are called across the C ABI and from other libraries) and cannot
/// unwind. This holds for every allocator of this crate. Do not panic in `Drop`.
///
/// ```
/// use object_core::{make_object, Object};
/// let o = make_object(Object::new());
/// assert_eq!(o.type_key(), "ffi.Object");
/// ```
#[inline]
pub fn make_object<T: ObjectType>(value: T) -> ObjectPtr<T> {
    GlobalAllocator.make(value)
}

/// Allocates `value` as an object whose dynamic type is `type_index`: `T` itself or a
/// descendant of `T` registered at run time (a plugin's or a foreign language's type
/// that extends `T` without adding Rust fields).
///
/// # Errors
///
/// [`RegistryError::UnknownKey`] if the index is not registered;
/// [`RegistryError::NotAnInstance`] if it is not `T` or such a descendant (including a
/// descendant declared by another Rust type, whose layout may be larger than `T`).
///
/// ```
/// use object_core::registry::{register_type, TypeSpec};
/// use object_core::{make_object_as, Object};
///
/// let info = register_type(&TypeSpec::new("doc.alloc.Foreign", "ffi.Object")).unwrap();
/// let o = make_object_as(Object::new(), info.index()).unwrap();
/// assert_eq!(o.type_key(), "doc.alloc.Foreign");
/// assert!(o.is::<Object>());
/// ```
pub fn make_object_as<T: ObjectType>(
    value: T,
    type_index: u32,
) -> Result<ObjectPtr<T>, RegistryError> {
    let info = registry::type_info(type_index).ok_or_else(|| RegistryError::UnknownKey {
        key: format!("<type index {type_index}>"),
    })?;
    let not = || RegistryError::NotAnInstance {
        key: info.key().to_owned(),
        of: T::TYPE_KEY.to_owned(),
    };
    if !info.is_object() || !is_instance::<T>(type_index) {
        return Err(not());
    }
    // Every type below `T` down to the target must be a layout-free extension, now and
    // forever: sealing is one atomic transition that a Rust type's claim cannot undo.
    let anc = info.ancestors();
    for &i in &anc[(T::DEPTH as usize + 1).min(anc.len())..] {
        match registry::type_info(i) {
            Some(t) if t.seal_foreign_layout() => {}
            _ => return Err(not()),
        }
    }
    let obj = make_object(value);
    let raw = ObjectPtr::into_raw(obj);
    // SAFETY: we hold the only reference to a fresh object; rewriting the type index to
    // a layout-compatible descendant (checked above) keeps every cast sound.
    unsafe {
        Object::set_type_index(raw as *mut Object, type_index);
        Ok(ObjectPtr::from_raw(raw))
    }
}

// ---------------------------------------------------------------------------------
// Objects with an extra, type-erased tail.
// ---------------------------------------------------------------------------------

/// An object of registered type `T` followed by data of a type the registry does not
/// know (`E`): the layout of a packed function, whose callable is a generic sub-object
/// after the fixed `#[repr(C)]` part.
#[repr(C)]
#[derive(Debug)]
pub struct WithExtra<T, E> {
    /// The registered part, at offset 0.
    pub value: T,
    /// The tail.
    pub extra: E,
}

unsafe extern "C" fn extra_deleter<T: ObjectType, E>(obj: *mut Object) {
    let p = obj as *mut WithExtra<T, E>;
    // SAFETY: called once on the last release of a block that `make_object_with_extra`
    // allocated for exactly this `WithExtra<T, E>`.
    unsafe {
        drop_or_abort(p, T::TYPE_KEY);
        dealloc(p as *mut u8, Layout::new::<WithExtra<T, E>>());
    }
}

/// Allocates `value` (registered type `T`, a final type) followed by `extra`, in one
/// block whose deleter drops both. Only code that knows `E` can reach `extra`, through
/// [`extra_of`]. A `Drop` of either that panics aborts the process, naming `T` (see
/// [`make_object`]).
///
/// `T` must be final: a subtype's fields would overlap `extra`.
pub fn make_object_with_extra<T: ObjectType, E: Send + Sync + 'static>(
    value: T,
    extra: E,
) -> ObjectPtr<T> {
    const { assert!(T::FINAL, "make_object_with_extra needs a final object type") };
    let index = T::type_index();
    let layout = Layout::new::<WithExtra<T, E>>();
    // SAFETY: the layout is nonzero (it contains the header).
    let p = unsafe { alloc(layout) } as *mut WithExtra<T, E>;
    if p.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: fresh block of this exact layout; `value` is first (repr(C)), so the object
    // address is the block address; the deleter matches the layout.
    unsafe {
        p.write(WithExtra { value, extra });
        Object::init(p as *mut Object, index, Some(extra_deleter::<T, E>));
        ObjectPtr::from_raw(p as *mut T)
    }
}

/// The tail of an object made by [`make_object_with_extra`].
///
/// # Safety
///
/// `obj` must point to a live object made by `make_object_with_extra::<T, E>` with this
/// same `E`, with provenance over the whole block (a raw pointer from the handle, not a
/// `&T`), and the returned reference must not outlive the object.
#[inline]
pub unsafe fn extra_of<'a, T: ObjectType, E>(obj: *const T) -> &'a E {
    // SAFETY: the caller guarantees `obj` is the `value` field of a live
    // `WithExtra<T, E>` (offset 0, repr(C)).
    unsafe { &(*(obj as *const WithExtra<T, E>)).extra }
}

// ---------------------------------------------------------------------------------
// The pool.
// ---------------------------------------------------------------------------------

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
/// the last object are both gone. As with [`make_object`], a `Drop` that panics on an
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

// ---------------------------------------------------------------------------------
// Objects with trailing items, in one block.
// ---------------------------------------------------------------------------------

/// An object type followed in memory by a variable number of items (a string's bytes,
/// an array's elements), allocated in one block: header, fields, items.
///
/// # Safety
///
/// - Values of the type become objects only through [`make_object_with_items`] (keep
///   the fields private to the implementing module, so no other code can build a value
///   and hand it to `make_object` or a pool);
/// - `item_capacity` returns the number of item slots allocated after the value, and
///   changes only through `set_item_capacity`; `item_len` returns how many leading slots
///   hold initialized items, never more than the capacity, and changes only through
///   `set_item_len`.
///
/// The deleter drops exactly `item_len()` items and frees a block sized from
/// `item_capacity()`.
pub unsafe trait InlineItems: ObjectType {
    /// The trailing item type.
    type Item;
    /// Whether the items may change after creation (`Array`). For `false` (strings,
    /// shapes: fixed at creation), `items_mut`, `push_item`, `pop_item`,
    /// `truncate_items` and `grow_items` refuse, and `set_item_len` /
    /// `set_item_capacity` are only called while the object is made.
    const RESIZABLE: bool = true;
    /// Allocated item slots.
    fn item_capacity(&self) -> usize;
    /// Initialized items.
    fn item_len(&self) -> usize;
    /// Records how many items are initialized. Called while items are written.
    ///
    /// # Safety
    ///
    /// `len` leading slots must hold initialized items and `len <= capacity()`.
    unsafe fn set_item_len(&mut self, len: usize);
    /// Records a new capacity. Called when the block is reallocated; must not panic.
    ///
    /// # Safety
    ///
    /// The block after the value must have room for `cap` items.
    unsafe fn set_item_capacity(&mut self, cap: usize);
    /// Told where the items live, after allocation and after every reallocation, for
    /// types that keep a pointer to them (e.g. a string's `data`, as C readers expect).
    /// The default ignores it.
    fn set_items_ptr(&mut self, ptr: *const Self::Item) {
        let _ = ptr;
    }
}

fn items_layout<T: InlineItems>(capacity: usize) -> Option<(Layout, usize)> {
    let (layout, offset) = Layout::new::<T>()
        .extend(Layout::array::<T::Item>(capacity).ok()?)
        .ok()?;
    Some((layout.pad_to_align(), offset))
}

/// The offset of the first item from the object's address.
#[inline]
pub(crate) fn items_offset<T: InlineItems>() -> usize {
    let size = core::mem::size_of::<T>();
    let align = core::mem::align_of::<T::Item>();
    size.div_ceil(align) * align
}

unsafe extern "C" fn items_deleter<T: InlineItems>(obj: *mut Object) {
    let p = obj as *mut T;
    // SAFETY: called once on the last release of a block made by
    // `make_object_with_items`, whose `len` items are initialized (InlineItems' contract)
    // and whose layout is recomputed from the same capacity.
    unsafe {
        let (len, cap) = ((*p).item_len(), (*p).item_capacity());
        let items = (p as *mut u8).add(items_offset::<T>()) as *mut T::Item;
        drop_or_abort(ptr::slice_from_raw_parts_mut(items, len), T::TYPE_KEY);
        drop_object_in_place(p);
        let (layout, _) = items_layout::<T>(cap).unwrap_unchecked();
        dealloc(p as *mut u8, layout);
    }
}

/// Allocates `value` with room for `capacity` items, and up to that many items from
/// `items`, in one block.
///
/// The value's capacity and count are set here (whatever it said before); the count is
/// set as items are written (so a panicking iterator leaves a consistent object that is
/// dropped normally). Items beyond the capacity are not taken from the iterator. A `Drop`
/// of the value or an item that panics on release aborts the process, naming `T` (see
/// [`make_object`]).
///
/// # Panics
///
/// If the block size overflows `isize` (like `Vec::with_capacity`).
#[inline]
pub fn make_object_with_items<T: InlineItems>(
    mut value: T,
    capacity: usize,
    items: impl IntoIterator<Item = T::Item>,
) -> ObjectPtr<T> {
    let index = T::type_index();
    let cap = capacity;
    let Some((layout, offset)) = items_layout::<T>(cap) else {
        panic!("object with {cap} trailing items is too large")
    };
    debug_assert_eq!(offset, items_offset::<T>());
    // SAFETY: the block allocated below has `cap` slots, none initialized yet.
    unsafe {
        value.set_item_len(0);
        value.set_item_capacity(cap);
    }
    // SAFETY: the layout has nonzero size (it contains the header).
    let p = unsafe { alloc(layout) } as *mut T;
    if p.is_null() {
        handle_alloc_error(layout);
    }
    let base = (p as *mut u8).wrapping_add(offset) as *mut T::Item;
    // SAFETY: fresh block of the right layout; header first (ObjectType's contract).
    let obj = unsafe {
        p.write(value);
        Object::init(p as *mut Object, index, Some(items_deleter::<T>));
        (*p).set_items_ptr(base);
        ObjectPtr::from_raw(p)
    };
    for (i, item) in items.into_iter().take(cap).enumerate() {
        // SAFETY: `i < cap`, inside the block; we hold the only handle; `len` grows
        // only after the slot is written.
        unsafe {
            base.add(i).write(item);
            (*p).set_item_len(i + 1);
        }
    }
    obj
}

/// [`make_object_with_items`] for `Copy` items taken from a slice (one `memcpy`), the
/// rest of the capacity filled with `pad` (a string's NUL terminator, say): every slot
/// is initialized and counted.
#[inline]
pub fn make_object_with_slice<T: InlineItems>(
    value: T,
    capacity: usize,
    items: &[T::Item],
    pad: T::Item,
) -> ObjectPtr<T>
where
    T::Item: Copy,
{
    let obj = make_object_with_items(value, capacity, core::iter::empty());
    let n = items.len().min(capacity);
    let base = ObjectPtr::items_base(&obj);
    // SAFETY: the fresh object is unshared and has `capacity` slots at `base`; `Copy`
    // items need no drop; the count is set once every slot is written.
    unsafe {
        core::ptr::copy_nonoverlapping(items.as_ptr(), base, n);
        if n < capacity {
            // The common case (a string's single NUL) without a `memset` call.
            base.add(n).write(pad);
            for i in n + 1..capacity {
                base.add(i).write(pad);
            }
        }
        (*(ObjectPtr::as_ptr(&obj) as *mut T)).set_item_len(capacity);
    }
    obj
}

impl<T: InlineItems> ObjectPtr<T> {
    /// The initialized trailing items.
    #[inline]
    pub fn items(this: &Self) -> &[T::Item] {
        // SAFETY: objects of an `InlineItems` type are made by `make_object_with_items`,
        // so `item_len` initialized items follow at `items_offset`; the pointer is the
        // handle's, with provenance over the whole block (not from a `&T`, which would
        // cover the value only); the borrow is tied to the handle.
        unsafe { core::slice::from_raw_parts(Self::items_base(this), this.item_len()) }
    }

    #[inline]
    fn items_base(this: &Self) -> *mut T::Item {
        (ObjectPtr::as_ptr(this) as *mut u8).wrapping_add(items_offset::<T>()) as *mut T::Item
    }

    /// The items, mutably, when this is the only handle.
    #[inline]
    pub fn items_mut(this: &mut Self) -> Option<&mut [T::Item]> {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return None;
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle (count 1 and `&mut self`), `item_len` initialized items
        // at `items_offset` (InlineItems' contract); items are not part of any header.
        Some(unsafe { core::slice::from_raw_parts_mut(base, this.item_len()) })
    }

    /// Appends an item in place when this is the only handle and there is room;
    /// gives the item back otherwise.
    #[inline]
    pub fn push_item(this: &mut Self, item: T::Item) -> Result<(), T::Item> {
        let len = this.item_len();
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 || len >= this.item_capacity() {
            return Err(item);
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle; slot `len < capacity` is inside the block and free; the
        // count grows only after the slot is written.
        unsafe {
            base.add(len).write(item);
            Self::header_mut(this).set_item_len(len + 1);
        }
        Ok(())
    }

    /// Removes the last item when this is the only handle.
    #[inline]
    pub fn pop_item(this: &mut Self) -> Option<T::Item> {
        let len = this.item_len();
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 || len == 0 {
            return None;
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle; the count shrinks first, then the (initialized) last
        // slot is moved out and is no longer counted.
        unsafe {
            Self::header_mut(this).set_item_len(len - 1);
            Some(base.add(len - 1).read())
        }
    }

    /// Drops the items past `len` when this is the only handle; false if shared.
    pub fn truncate_items(this: &mut Self, len: usize) -> bool {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return false;
        }
        while this.item_len() > len {
            drop(Self::pop_item(this));
        }
        true
    }

    /// Reallocates the block for `capacity` item slots (at least the current count)
    /// when this is the only handle; false if shared. The object may move: this handle
    /// is updated.
    ///
    /// # Panics
    ///
    /// If the block size overflows `isize` (like `Vec::reserve`).
    pub fn grow_items(this: &mut Self, capacity: usize) -> bool {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return false;
        }
        let capacity = capacity.max(this.item_len());
        let old_cap = this.item_capacity();
        if capacity == old_cap {
            return true;
        }
        let (Some((old, _)), Some((new, _))) =
            (items_layout::<T>(old_cap), items_layout::<T>(capacity))
        else {
            panic!("object with {capacity} trailing items is too large")
        };
        let p = ObjectPtr::as_ptr(this) as *mut T;
        // Every object of an `InlineItems` type is a global-allocator block of
        // `items_layout(item_capacity())` (the trait's contract).
        // SAFETY: that block; we hold the only reference, so it may move (items move
        // bitwise with it); on failure it is untouched and `handle_alloc_error` diverges.
        unsafe {
            let q = std::alloc::realloc(p as *mut u8, old, new.size()) as *mut T;
            let Some(q) = NonNull::new(q) else {
                handle_alloc_error(new)
            };
            ObjectPtr::set_raw(this, q);
            (*q.as_ptr()).set_item_capacity(capacity);
            let base = Self::items_base(this);
            (*q.as_ptr()).set_items_ptr(base);
        }
        true
    }

    /// `&mut T` for the allocator's own bookkeeping (count and capacity fields).
    ///
    /// # Safety
    ///
    /// Unique handle; the caller must not move the value or touch its header.
    #[inline]
    unsafe fn header_mut(this: &mut Self) -> &mut T {
        // SAFETY: see the function's contract.
        unsafe { &mut *(ObjectPtr::as_ptr(this) as *mut T) }
    }
}
