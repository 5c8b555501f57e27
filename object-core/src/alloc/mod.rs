//! Making objects: the allocator abstraction (the allocator picks the deleter), the
//! global allocator, the size-class pool behind [`make_object`] ([`size_classes`]), a
//! pool of same-size chunks for one type ([`ObjectPool`]),
//! one-block objects with trailing items ([`make_object_with_items`]), and objects with
//! an extra, type-erased tail ([`make_object_with_extra`], read back with [`extra_of`]).
//!
//! The common names are re-exported at the crate root; this module also holds the
//! lower-level ones that only code building its own object layouts needs.

use core::alloc::Layout;
use core::ptr::{self, NonNull};
use std::alloc::{alloc, dealloc, handle_alloc_error};

use crate::header::{Deleter, Object};
use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;
use crate::registry::{self, ForeignMaker, RegistryError, TypeLayout, TypeRegistration};

mod extra;
mod fields;
mod items;
mod pool;
pub mod size_classes;

pub use self::extra::{extra_of, make_object_with_extra};
pub use self::items::{make_object_with_items, make_object_with_slice, InlineItems};
pub use self::pool::ObjectPool;
pub use self::size_classes::{
    set_size_class_pool, size_class_of, size_class_pool_enabled, size_class_pool_reserved_bytes,
    SizeClassAllocator,
};

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

/// How objects of a type are placed, for code that makes them without knowing a Rust
/// type (objects built field by field through their table: `reflection::create`, the
/// JSON graph's loader, the mutator's rebuild): the block's layout, where the object
/// starts in it, and the deleters its objects get, from the size-class pool or from the
/// global allocator. A derived type's is written by the derive (`TypeAlloc::of::<T>()`)
/// into its reflection: `T`'s layout and the deleters [`make_object`] gives its objects.
/// A run-time field table has one of its own ([`TypeAlloc::fields`]). Not public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct TypeAlloc {
    /// The block's layout.
    layout: Layout,
    /// How many bytes of the block come before the object (0 but for run-time field
    /// tables, whose objects' table address lies before them).
    lead: usize,
    /// The block's size class and `size_class_deleter::<T>` (or the fields deleter),
    /// when it has a class.
    pooled: Option<(usize, Deleter)>,
    /// `global_deleter::<T>`.
    global: Deleter,
    /// Drops a `T` in place as `drop_in_place::<T>` does (`drop_value::<T>`), for
    /// objects of run-time types with fields over `T`, whose deleter is not `T`'s. Only
    /// for a type that is not final (only such a type has descendants).
    drop_value: Option<DropValue>,
}

/// Drops the value of a dying object in place (as [`drop_object_in_place`] for its
/// Rust type): the Rust part of a run-time type's object.
pub(crate) type DropValue = unsafe fn(*mut Object);

/// [`drop_object_in_place`] for an object whose Rust part is a `T`.
///
/// # Safety
///
/// `obj` points to a live `T` (or a value whose first bytes are one: a run-time type's
/// object over `T`), dropped here and not used afterwards.
unsafe fn drop_value<T: ObjectType>(obj: *mut Object) {
    // SAFETY: the caller's guarantee.
    unsafe { drop_object_in_place(obj.cast::<T>()) }
}

impl core::fmt::Debug for TypeAlloc {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TypeAlloc")
            .field("layout", &self.layout)
            .field("lead", &self.lead)
            .field("pooled", &self.pooled.is_some())
            .field("drop_value", &self.drop_value.is_some())
            .finish()
    }
}

impl TypeAlloc {
    /// `T`'s layout and deleters (and, if `T` is not final, how its values are dropped
    /// in a run-time descendant's object).
    pub const fn of<T: ObjectType>() -> TypeAlloc {
        let layout = Layout::new::<T>();
        TypeAlloc {
            layout,
            lead: 0,
            pooled: match size_classes::class_of(layout.size(), layout.align()) {
                Some(class) => Some((class, size_classes::size_class_deleter::<T> as Deleter)),
                None => None,
            },
            global: global_deleter::<T> as Deleter,
            drop_value: if T::FINAL {
                None
            } else {
                Some(drop_value::<T> as DropValue)
            },
        }
    }

    /// How a `T`'s value is dropped in place (not for a final `T`).
    pub(crate) fn drop_value(&self) -> Option<DropValue> {
        self.drop_value
    }

    /// The block's layout.
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// How many bytes of the block come before the object.
    pub(crate) fn lead(&self) -> usize {
        self.lead
    }

    /// A block for one object and the deleter that will release it, as
    /// [`make_object`] would choose them: from the size-class pool if the block has a
    /// class and the pool is on, else from the global allocator. Returns the object's
    /// address (`lead` bytes into the block), uninitialized; give the block back with
    /// [`free_block`](Self::free_block) if no object is made in it.
    pub(crate) fn allocate(&self) -> (NonNull<u8>, Deleter, Placed) {
        let (block, deleter, placed) = match self.pooled {
            Some((class, pooled)) => match size_classes::take_class(class) {
                Some(p) => (p, pooled, Placed::Pool),
                None => self.allocate_global(),
            },
            None => self.allocate_global(),
        };
        // SAFETY: `lead` is less than the block's size (the object follows it).
        (unsafe { block.add(self.lead) }, deleter, placed)
    }

    fn allocate_global(&self) -> (NonNull<u8>, Deleter, Placed) {
        // SAFETY: object types contain the 16-byte header, so the size is nonzero.
        let p = unsafe { alloc(self.layout) };
        match NonNull::new(p) {
            Some(p) => (p, self.global, Placed::Global),
            None => handle_alloc_error(self.layout),
        }
    }

    /// Gives back the block of an object from [`allocate`](Self::allocate) that was
    /// never completed, or of a dead one (what was written there is already dropped).
    ///
    /// # Safety
    ///
    /// `obj` and `placed` came from one call of `self.allocate()`, and nothing in the
    /// block is used afterwards.
    pub(crate) unsafe fn free_block(&self, obj: NonNull<u8>, placed: Placed) {
        // SAFETY: the caller's guarantee: `obj` lies `lead` bytes into its block.
        let p = unsafe { obj.as_ptr().sub(self.lead) };
        match placed {
            // SAFETY: the caller's guarantee: `take_block(self.layout)` gave it.
            Placed::Pool => unsafe { size_classes::give_back_block(self.layout, p) },
            // SAFETY: the caller's guarantee: `alloc(self.layout)` gave it.
            Placed::Global => unsafe { dealloc(p, self.layout) },
        }
    }
}

/// Where [`TypeAlloc::allocate`] took a block from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    Pool,
    Global,
}

/// The global allocator (`std::alloc`), used by [`make_object`] for objects larger than
/// the size-class pool takes (and for all objects while the pool is off).
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalAllocator;

pub(super) unsafe extern "C" fn global_deleter<T: ObjectType>(obj: *mut Object) {
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

/// Allocates `value` as an object: from the size-class pool if its type is small (at
/// most 128 bytes, so that a 32-byte object takes 32 bytes; see [`size_classes`]), else
/// with the global allocator.
///
/// The header is filled in: the type index (registered on first use), a count of one
/// and the deleter of the allocator used. Whatever header `value` carried is
/// overwritten.
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
    SizeClassAllocator.make(value)
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
    // `T`'s cache first: the check below reads the registry's entry of `T`, and
    // `type_index` may name a type registered under `T` before `T`'s first use.
    let own = T::type_index();
    if type_index != own {
        check_made_as(T::registration(), own, type_index)?;
    }
    let obj = make_object(value);
    if type_index != own {
        let raw = ObjectPtr::into_raw(obj);
        // SAFETY: we hold the only reference to a fresh object; rewriting the type index
        // to a layout-compatible descendant (checked above) keeps every cast sound.
        return Ok(unsafe {
            Object::set_type_index(raw as *mut Object, type_index);
            ObjectPtr::from_raw(raw)
        });
    }
    Ok(obj)
}

/// Whether an object of the Rust type `reg` (whose own index is `own`) may carry the
/// type index `type_index` instead (a run-time descendant of it without a layout of
/// its own): [`make_object_as`]'s rule, for one type or another without its code
/// (objects built through their table). Seals the descendants' layouts as `reg`'s.
///
/// # Errors
///
/// As [`make_object_as`].
pub(crate) fn check_made_as(
    reg: &'static TypeRegistration,
    own: u32,
    type_index: u32,
) -> Result<(), RegistryError> {
    let info = registry::type_info(type_index).ok_or_else(|| RegistryError::UnknownKey {
        key: format!("<type index {type_index}>"),
    })?;
    let not = || RegistryError::NotAnInstance {
        key: info.key().to_owned(),
        of: reg.key.to_owned(),
    };
    if !info.is_object() || !registry::is_instance_of_index(type_index, own) {
        return Err(not());
    }
    // `reg` must be the nearest ancestor whose layout a Rust struct owns (or another copy
    // of that struct, with its layout), and every type below it down to the target is
    // sealed as having `reg`'s objects, now and forever: a Rust struct that adds fields
    // can never claim them afterwards.
    let same_layout = |r: &'static TypeRegistration| {
        core::ptr::eq(r, reg) || TypeLayout::of_registration(r) == TypeLayout::of_registration(reg)
    };
    match info.rust_layout_ancestor() {
        Some(r) if same_layout(r) => {}
        _ => return Err(not()),
    }
    registry::seal_foreign_layout(
        type_index,
        reg.size as usize,
        ForeignMaker::RustAncestor(reg.rust_name),
    )
    .map(|_| ())
    .map_err(|_| not())
}
