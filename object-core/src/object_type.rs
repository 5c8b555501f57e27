//! The `ObjectType` trait that `#[derive(Object)]` implements, the per-type cache of
//! registry facts that makes `is::<T>()` on a final type one load and one compare, and
//! the compile-time subtype relation behind free up-casts.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::registry::{self, TypeInfo, TypeRegistration};

/// A Rust type that is an object type: a `#[repr(C)]` struct whose first field is its
/// parent object type (down to [`Object`](struct@crate::Object), the header), registered under
/// a unique key.
///
/// Implement it with `#[derive(Object)]`; the derive checks the layout rules below.
///
/// # Safety
///
/// An implementation promises, and `ObjectPtr`'s casts rely on it:
///
/// - `Self` is `#[repr(C)]` and its first field, at offset 0, is `Self::Parent` (for
///   [`Object`](struct@crate::Object) itself: the header), so a pointer to `Self` is a valid
///   pointer to every ancestor;
/// - `DEPTH` is `Parent::DEPTH + 1` and `Depth` is `Succ<Parent::Depth>`;
/// - `registration()` describes this type (its key is `TYPE_KEY`, its parent key is
///   `Parent::TYPE_KEY`, its `FINAL` matches) and `type_cache()` returns a cache used by
///   this type only, the one its registration names (`registration().cache`).
///
/// A wrong implementation lets a safe down-cast read one type's memory as another's.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an object type",
    label = "not an object type",
    note = "object types are `#[repr(C)]` structs with `#[derive(Object)]`"
)]
pub unsafe trait ObjectType: Send + Sync + Sized + 'static {
    /// The unique type key, e.g. `"relay.Function"`.
    const TYPE_KEY: &'static str;
    /// Whether the type is final (no descendants, so `is` is one compare).
    const FINAL: bool;
    /// Distance from the root `Object` (which has depth 0).
    const DEPTH: u32;
    /// The parent object type (the type of the first field). `Object`'s is itself.
    type Parent: ObjectType;
    /// `DEPTH` as a type-level number, used for compile-time up-cast checks.
    type Depth;

    /// The static registration the derive wrote for this type.
    #[doc(hidden)]
    fn registration() -> &'static TypeRegistration;

    /// The cache of this type's registry facts.
    #[doc(hidden)]
    fn type_cache() -> &'static TypeCache;

    /// The run-time type index of this type (allocated on first use).
    #[inline]
    fn type_index() -> u32 {
        Self::type_cache().word::<Self>() as u32
    }

    /// This type's registry entry.
    #[inline]
    fn type_info() -> &'static TypeInfo {
        Self::type_cache().info::<Self>()
    }
}

/// Marker for object types that may be a parent: every object type not declared
/// `final`. The derive implements it; a `final` parent fails to compile.
///
/// # Safety
///
/// Only for types whose `ObjectType::FINAL` is `false`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parent object type",
    label = "`{Self}` is declared `final`, or is not an object type",
    note = "a parent must be an object type that is not `final`: remove `final` from the parent's `#[object(...)]` attribute, or pick another parent"
)]
pub unsafe trait NonFinal: ObjectType {}

/// Per-type cache of registry facts, one `static` per object type (written by the
/// derive, and named by the type's registration). It holds a word with `begin` (the
/// type's index) in bits 0..32, the end of its range in bits 32..63, and in bit 63
/// whether some descendant was allocated outside that range. Before it is filled the
/// word is `UNFILLED`: `begin` is `u32::MAX` (no type's index) and the range is empty,
/// so it matches no object.
///
/// # Filled before any object of the type exists
///
/// The registry fills a cache when the type's registration enters it: every collected
/// link-time registration while the registry is built (before any index is handed
/// out), a plugin's when the plugin adopts the host's registry, any other on the type's
/// first use (`type_index()`, which making an object calls first, after its parent's).
/// So an object of `T`, or of any type registered under `T`, is made only after `T`'s
/// cache was filled, and a thread that holds such an object also sees the filled word.
/// Hence `is::<T>()` reads an unfilled word as "not a `T`", as its bits say, with no
/// test of its own: the check never writes memory, and a loop of checks can keep the
/// word in a register (see `TypeCache::word_for_check`).
///
/// The registry fills the cache and updates its overflow bit under its writer lock,
/// before an overflowed descendant's index is handed out, so the word never misses an
/// overflowed descendant of an object the reader holds.
#[derive(Debug)]
pub struct TypeCache {
    word: AtomicU64,
    info: AtomicPtr<TypeInfo>,
}

/// Bit 63 of the cache word: some descendant lies outside the range.
const OVERFLOW_BIT: u64 = 1 << 63;

/// The word of a cache not filled yet: `begin = u32::MAX` (above `MAX_TYPES`, so no
/// type's index), `end = 0`: an exact compare and a range check both fail on it.
const UNFILLED: u64 = u32::MAX as u64;
const _: () = assert!(crate::registry::MAX_TYPES < u32::MAX);

impl TypeCache {
    /// An empty cache, filled by the registry (see the type's docs).
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        TypeCache {
            word: AtomicU64::new(UNFILLED),
            info: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    #[inline(always)]
    pub(crate) fn word<T: ObjectType>(&'static self) -> u64 {
        // Acquire pairs with the Release stores in `publish`, so `info` is visible too.
        let w = self.word.load(Ordering::Acquire);
        if w == UNFILLED {
            return self.fill::<T>();
        }
        w
    }

    /// The word for `is::<T>()`: a relaxed atomic load that, unlike `AtomicU64::load`,
    /// the compiler may merge with another or move out of a loop (a relaxed load may
    /// return the value an earlier one did), so that a loop of checks keeps the word in a
    /// register. It is not moved across code that may write memory or synchronize, so a
    /// word filled before an object reached this thread is seen once the object is.
    /// Relaxed is enough: nothing is read through the word (`info` is read with
    /// `Acquire` where it is used).
    #[inline(always)]
    fn word_for_check(&self) -> u64 {
        #[cfg(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri)))]
        {
            let w: u64;
            // An aligned 8-byte `mov` (x86-64) or `ldr` (AArch64) is one single-copy-
            // atomic load: it races with the registry's stores as a relaxed `load` would.
            // SAFETY: it reads only `self.word`, a live 8-aligned `AtomicU64`, atomically
            // and with no other effect (`pure, readonly`).
            unsafe {
                core::arch::asm!(
                    #[cfg(target_arch = "x86_64")]
                    "mov {w}, qword ptr [{p}]",
                    #[cfg(target_arch = "aarch64")]
                    "ldr {w}, [{p}]",
                    p = in(reg) self.word.as_ptr(),
                    w = lateout(reg) w,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            w
        }
        #[cfg(any(not(any(target_arch = "x86_64", target_arch = "aarch64")), miri))]
        {
            self.word.load(Ordering::Relaxed)
        }
    }

    #[inline]
    pub(crate) fn info<T: ObjectType>(&'static self) -> &'static TypeInfo {
        let p = self.info.load(Ordering::Acquire);
        if p.is_null() {
            self.fill::<T>();
            return self.info::<T>();
        }
        // SAFETY: non-null values stored here come from `&'static TypeInfo` (leaked,
        // never freed or mutated except through atomics) in `publish`.
        unsafe { &*p }
    }

    /// Fills the cache (the registry's entry of `T`, registered if it was not). The
    /// only part that knows `T` is the parent's first use; the rest is
    /// [`fill_registration`](Self::fill_registration), one function for every type.
    #[inline(never)]
    fn fill<T: ObjectType>(&'static self) -> u64 {
        if T::DEPTH > 0 {
            // The parent first: a type whose link-time registration was not collected
            // (a plugin's, whose parent may be the plugin's too) finds it registered.
            let _ = <T::Parent as ObjectType>::type_index();
        }
        self.fill_registration(T::registration())
    }

    #[cold]
    #[inline(never)]
    fn fill_registration(&'static self, registration: &'static TypeRegistration) -> u64 {
        // `ObjectType`'s contract; the derive writes both from one `static`.
        assert!(
            core::ptr::eq(registration.cache, self),
            "object type `{}`: its registration names another cache",
            registration.key
        );
        if let Err(e) = registry::resolve_rust_type(registration) {
            // A link-time conflict (two Rust types claiming one key, a final parent
            // registered at run time, …) leaves this type without a sound index; going on
            // would let down-casts confuse types, so this is a loud programming error.
            panic!(
                "object type `{}` cannot be registered: {e}",
                registration.key
            );
        }
        self.word.load(Ordering::Acquire)
    }

    /// The type's index, read from a cache the registry filled (a type whose entry was
    /// found in the registry); `u32::MAX`, no type's index, if it was not.
    #[inline]
    pub(crate) fn filled_index(&self) -> u32 {
        self.word.load(Ordering::Acquire) as u32
    }

    /// Called by the registry, with its writer lock held.
    pub(crate) fn publish(&self, info: &'static TypeInfo) {
        self.info
            .store(info as *const TypeInfo as *mut TypeInfo, Ordering::Release);
        let mut w = u64::from(info.index()) | (u64::from(info.range().end) << 32);
        if info.has_overflowed_descendants() {
            w |= OVERFLOW_BIT;
        }
        self.word.store(w, Ordering::Release);
    }

    /// Called by the registry, with its writer lock held, when a descendant overflows.
    pub(crate) fn set_overflow(&self) {
        self.word.fetch_or(OVERFLOW_BIT, Ordering::Release);
    }
}

/// Whether an object whose header says `index` is a `T` (or a descendant of `T`).
///
/// `index` must be the type index of an object the caller holds: an unfilled cache
/// answers "no", which is right only because `T`'s cache is filled before any object of
/// `T` or below it exists (see [`TypeCache`]). To ask about an index from the registry
/// instead, fill `T`'s cache first (`T::type_index()`), as `make_object_as` does.
///
/// O(1) on every path, lock-free, and it writes nothing: a final `T` is one compare;
/// an index inside `T`'s range is two; otherwise, only if some descendant of `T` was
/// ever allocated outside its range, one look-up of the object's ancestor display at
/// `T`'s depth.
#[inline(always)]
pub(crate) fn is_instance<T: ObjectType>(index: u32) -> bool {
    if T::DEPTH == 0 {
        // The root: every object is an `Object`.
        return true;
    }
    let w = T::type_cache().word_for_check();
    in_word::<T>(w, index) || overflowed::<T>(w, index)
}

/// The in-line part of [`is_instance`]: `index` is `T`'s (final) or inside its range.
#[inline(always)]
fn in_word<T: ObjectType>(w: u64, index: u32) -> bool {
    let begin = w as u32;
    if T::FINAL {
        return index == begin;
    }
    let end = ((w & !OVERFLOW_BIT) >> 32) as u32;
    index.wrapping_sub(begin) < end.wrapping_sub(begin)
}

/// The rest of [`is_instance`]: a descendant of `T` outside its range, if any exists.
#[inline(always)]
fn overflowed<T: ObjectType>(w: u64, index: u32) -> bool {
    !T::FINAL && w & OVERFLOW_BIT != 0 && registry::display_check(index, T::DEPTH, w as u32)
}

// ---------------------------------------------------------------------------------
// Compile-time subtype relation, for free and checked up-casts.
// ---------------------------------------------------------------------------------

/// Type-level zero (the depth of `Object`).
#[derive(Debug)]
pub enum Zero {}

/// Type-level successor: `Succ<D>` is `D + 1`.
#[derive(Debug)]
pub struct Succ<D>(PhantomData<D>);

/// Type-level subtraction of depths; defined only when `Self >= D`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "an object type is not a subtype of a type deeper in the hierarchy than itself",
    note = "up-casts go from a type to one of its ancestors; a handle to a base converts to a subtype with the checked `.downcast::<T>()`"
)]
pub trait DepthSub<D> {
    type Output;
}
impl<A> DepthSub<Zero> for A {
    type Output = A;
}
impl<A: DepthSub<B>, B> DepthSub<Succ<B>> for Succ<A> {
    type Output = A::Output;
}

/// The ancestor `K` levels above `Self`.
#[doc(hidden)]
pub trait AncestorAt<K> {
    type Output: ObjectType;
}
impl<T: ObjectType> AncestorAt<Zero> for T {
    type Output = T;
}
impl<T: ObjectType, K> AncestorAt<Succ<K>> for T
where
    T::Parent: AncestorAt<K>,
{
    type Output = <T::Parent as AncestorAt<K>>::Output;
}

/// `Self` is `U`: the last step of [`IsA`], where the ancestor of `From` at `U`'s depth
/// is compared with `U`. A trait (not a type equality) so that a failed up-cast is
/// reported with this message, naming both types, rather than as a mismatch of
/// type-level numbers.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{From}` is not a subtype of `{U}`",
    label = "`{U}` is not an ancestor of `{From}`",
    note = "a handle to a subtype converts to an ancestor's for free (`.upcast::<Ancestor>()`, or any `impl IntoObjectPtr<Ancestor>` parameter); between unrelated types, or from a base to a subtype, use the checked `.downcast::<T>()`"
)]
pub trait SameType<U, From> {}
impl<U, From> SameType<U, From> for U {}

/// `T: IsA<U>` holds when `U` is `T` or one of its ancestors, so a `T` can be used as a
/// `U` for free. It is implemented for every such pair; there is nothing to implement.
///
/// ```
/// use object_core::{IsA, Object, ObjectType};
/// fn takes_object<T: IsA<Object>>() {}
/// takes_object::<Object>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a subtype of `{U}`",
    label = "`{U}` is not an ancestor of `{Self}`"
)]
pub trait IsA<U: ObjectType>: ObjectType {}

impl<T, U> IsA<U> for T
where
    T: ObjectType,
    U: ObjectType,
    T::Depth: DepthSub<U::Depth>,
    T: AncestorIs<<T::Depth as DepthSub<U::Depth>>::Output, U>,
{
}

/// `Self`'s ancestor `K` levels up is `U` (checked through [`SameType`], for its
/// message).
#[doc(hidden)]
pub trait AncestorIs<K, U> {}
impl<T, K, U> AncestorIs<K, U> for T
where
    T: AncestorAt<K>,
    <T as AncestorAt<K>>::Output: SameType<U, T>,
{
}

/// Unique access to an object's fields: a *projection* that reaches every field except
/// the header. `#[derive(Object)]` implements it with a struct whose fields have the same
/// names and visibility as the object's: `&mut F` for each of the type's own fields, and
/// for the first field (the parent) the parent's projection, recursively, down to
/// [`Object`](struct@crate::Object), whose projection is `()`.
///
/// So no safe code ever holds `&mut T`, `Pin<&mut T>` or `&mut Object` of anything that
/// lives in an object: `mem::swap`, `mem::replace` and `Pin::set` cannot reach a header
/// (its count, type index or deleter).
///
/// Reached through [`ObjectPtr::get_mut`](crate::ObjectPtr::get_mut) and
/// [`ObjectPtr::make_mut`](crate::ObjectPtr::make_mut). The derive's projection struct
/// adds no name to your module; name it as `<T as FieldsMut>::Mut<'a>`.
///
/// ```
/// use object_core::prelude::*;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.fields.Base")]
/// struct Base { base: Object, name: String }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.fields.Leaf", parent = Base)]
/// struct Leaf { base: Base, value: i64 }
///
/// let mut p = Leaf::new("a", 1);
/// let fields = ObjectPtr::get_mut(&mut p).unwrap();
/// *fields.value = 2;
/// fields.base.name.push('b'); // the parent's projection
/// assert_eq!((p.value, p.base.name.as_str()), (2, "ab"));
/// ```
///
/// # Safety
///
/// `Mut<'a>` must give access to nothing but the non-header fields of `Self`: no
/// `&mut Self`, no `Pin<&mut Self>`, no `&mut` of the parent struct or of the header, and
/// no way to move or overwrite any of them. `project` must only create references to
/// disjoint fields of the object it is given.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an object type",
    label = "not an object type",
    note = "object types are `#[repr(C)]` structs with `#[derive(Object)]`, which gives them their field projection"
)]
pub unsafe trait FieldsMut: ObjectType {
    /// The projection: the parent's projection for the parent field, `&mut F` for the
    /// rest.
    type Mut<'a>;

    /// Projects unique access to the fields of the object at `this`. Called by
    /// `ObjectPtr`'s unique-access methods; not meant to be called directly.
    ///
    /// # Safety
    ///
    /// `this` points to a live object whose dynamic type is `Self` or a subtype, with
    /// provenance over the whole object, and nothing else reads or writes its fields for
    /// `'a` (the caller holds the only handle, uniquely borrowed, for `'a`).
    #[doc(hidden)]
    unsafe fn project<'a>(this: core::ptr::NonNull<Self>) -> Self::Mut<'a>;
}
