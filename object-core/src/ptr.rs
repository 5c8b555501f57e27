//! `ObjectPtr<T>`, the intrusive strong pointer, and `ObjectRef`, the type-erased one.

use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::NonNull;

use crate::header::Object;
use crate::object_type::{is_instance, FieldsMut, IsA, ObjectType};
use crate::registry::TypeInfo;

/// An intrusive, atomically reference-counted pointer to an object of type `T` (or of a
/// subtype of `T`).
///
/// Eight bytes (`Option<ObjectPtr<T>>` too). Cloning increments the count in the
/// object's header; dropping the last handle calls the deleter the allocator installed.
/// The handle is shared: it derefs to `&T` and never to `&mut T`. Unique access goes
/// through [`ObjectPtr::get_mut`] / [`ObjectPtr::make_mut`], which hand out the
/// derive's field projection ([`FieldsMut`]): `&mut` to each field, never to the object
/// or its header, so a header can never be overwritten, moved or swapped.
///
/// Methods that could shadow `T`'s own are associated functions
/// (`ObjectPtr::ptr_eq(&a, &b)`, `ObjectPtr::strong_count(&a)`); the type-check and cast
/// methods (`is`, `downcast_ref`, `downcast`, `upcast`, `type_key`, `type_index`) are
/// methods, so matching reads like the RFC's C++.
///
/// Equality and hashing are by identity (the address), as for TVM's `ObjectRef`.
///
/// # Thread safety
///
/// Every object type is `Send + Sync` (the derive checks it), so `ObjectPtr<T>` is
/// `Send + Sync`. The count follows `std::sync::Arc`: increments are `Relaxed` and abort
/// past `i32::MAX`; decrements are `Release` followed by an `Acquire` fence before the
/// deleter runs, so every use on every thread happens-before destruction.
///
/// # Cycles
///
/// Reference counting cannot free cycles. An object graph that points back at itself
/// leaks; break such relations with an object that refers to both sides, or by id.
///
/// # Examples
///
/// ```
/// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
///
/// let a: ObjectRef = make_object(Object::new());
/// let b = a.clone();
/// assert!(ObjectPtr::ptr_eq(&a, &b));
/// assert_eq!(ObjectPtr::strong_count(&a), 2);
/// assert!(a.is::<Object>());
/// ```
#[repr(transparent)]
pub struct ObjectPtr<T: ObjectType> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

/// The type-erased object handle: `ObjectPtr<Object>`.
pub type ObjectRef = ObjectPtr<Object>;

const _: () = {
    assert!(core::mem::size_of::<ObjectRef>() == 8);
    assert!(core::mem::size_of::<Option<ObjectRef>>() == 8);
};

// SAFETY: every `ObjectType` is `Send + Sync` (supertraits), the count is atomic, and the
// deleter may run on any thread; this is `Arc<T>`'s condition.
unsafe impl<T: ObjectType> Send for ObjectPtr<T> {}
// SAFETY: as above; a shared handle only gives `&T`.
unsafe impl<T: ObjectType> Sync for ObjectPtr<T> {}

/// The handle moves freely; the object it points to never moves.
impl<T: ObjectType> Unpin for ObjectPtr<T> {}

impl<T: ObjectType> ObjectPtr<T> {
    /// Allocates `value` as an object with the global allocator (`make_object`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Object, ObjectPtr};
    /// let o = ObjectPtr::new(Object::new());
    /// assert_eq!((o.type_key(), ObjectPtr::strong_count(&o)), ("ffi.Object", 1));
    /// ```
    #[inline]
    pub fn new(value: T) -> Self {
        crate::alloc::make_object(value)
    }

    /// Takes ownership of one strong reference held as a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a live object whose header was initialized by an allocator,
    /// whose dynamic type is `T` or a subtype, and the caller must own one strong
    /// reference to it (e.g. from [`ObjectPtr::into_raw`]), which this handle now owns.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// let raw = ObjectPtr::into_raw(a.clone()); // a reference, held as a pointer
    /// // SAFETY: `raw` carries the reference `into_raw` gave up, taken over once here.
    /// let b = unsafe { ObjectPtr::from_raw(raw) };
    /// assert!(ObjectPtr::ptr_eq(&a, &b));
    /// assert_eq!(ObjectPtr::strong_count(&a), 2);
    /// ```
    #[inline]
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        // SAFETY: the caller guarantees `ptr` is a live object, hence non-null.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        ObjectPtr {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Makes a new strong reference from a raw pointer that someone else keeps alive.
    ///
    /// # Safety
    ///
    /// As [`ObjectPtr::from_raw`], except that the caller need not own a reference: the
    /// object must merely be alive for the duration of this call.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// // SAFETY: `a` keeps the object alive during the call.
    /// let b = unsafe { ObjectPtr::clone_from_raw(ObjectPtr::as_ptr(&a)) };
    /// assert_eq!(ObjectPtr::strong_count(&a), 2);
    /// drop(b);
    /// assert_eq!(ObjectPtr::strong_count(&a), 1);
    /// ```
    #[inline]
    pub unsafe fn clone_from_raw(ptr: *const T) -> Self {
        // SAFETY: the caller guarantees `ptr` is a live object of type `T`.
        let header = unsafe { &*(ptr as *const Object) };
        header.inc_ref();
        // SAFETY: we just took the reference this handle will own.
        unsafe { Self::from_raw(ptr as *mut T) }
    }

    /// Gives up the handle without decrementing, returning the raw pointer. Pair with
    /// [`ObjectPtr::from_raw`] (or the C ABI) to avoid leaking.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// let raw = ObjectPtr::into_raw(a.clone());
    /// assert_eq!(ObjectPtr::strong_count(&a), 2); // the raw pointer still holds one
    /// // SAFETY: `raw` carries the reference `into_raw` gave up; dropping `b` releases it.
    /// let b = unsafe { ObjectPtr::from_raw(raw) };
    /// drop(b);
    /// assert_eq!(ObjectPtr::strong_count(&a), 1);
    /// ```
    #[inline]
    pub fn into_raw(this: Self) -> *mut T {
        let p = this.ptr.as_ptr();
        core::mem::forget(this);
        p
    }

    /// Points the handle at a moved object (the allocator's `grow_items`).
    ///
    /// # Safety
    ///
    /// `p` must be the same object, moved, with this handle's reference.
    #[inline]
    pub(crate) unsafe fn set_raw(this: &mut Self, p: NonNull<T>) {
        this.ptr = p;
    }

    /// The raw pointer, without giving up the handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// assert_eq!(ObjectPtr::as_ptr(&a), ObjectPtr::as_ptr(&a.clone()));
    /// assert_eq!(ObjectPtr::strong_count(&a), 1); // the handle kept its reference
    /// ```
    #[inline]
    pub fn as_ptr(this: &Self) -> *const T {
        this.ptr.as_ptr()
    }

    /// The object's header.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// assert_eq!(a.header().type_index(), a.type_index());
    /// assert_eq!(a.header().type_key(), "ffi.Object");
    /// ```
    #[inline]
    pub fn header(&self) -> &Object {
        // SAFETY: `T` starts with its parent chain down to the header (ObjectType's
        // contract), and the object is alive while we hold a reference.
        unsafe { &*(self.ptr.as_ptr() as *const Object) }
    }

    /// Whether two handles (of any types) point to the same object.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// let b = a.clone();
    /// assert!(ObjectPtr::ptr_eq(&a, &b));
    /// assert!(!ObjectPtr::ptr_eq(&a, &make_object(Object::new())));
    /// ```
    #[inline]
    pub fn ptr_eq<U: ObjectType>(this: &Self, other: &ObjectPtr<U>) -> bool {
        this.ptr.as_ptr() as *const u8 == other.ptr.as_ptr() as *const u8
    }

    /// Whether `self` and `other` (of any types) are the same object: identity, as
    /// TVM's `same_as`. On `ObjectPtr`, `==` is identity too; on handles whose `==`
    /// compares values (`String`, `Array`, `Map`, …) `same_as` is how to ask for
    /// identity, and it reads the same everywhere. (A method, unlike
    /// [`ptr_eq`](Self::ptr_eq), so it can shadow a `same_as` of `T`'s: name that one
    /// through `(*ptr).same_as(…)`.)
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// let b = a.clone();
    /// assert!(a.same_as(&b));
    /// assert!(!a.same_as(&make_object(Object::new())));
    /// ```
    #[inline]
    pub fn same_as<U: ObjectType>(&self, other: &ObjectPtr<U>) -> bool {
        Self::ptr_eq(self, other)
    }

    /// The number of strong references (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let a: ObjectRef = make_object(Object::new());
    /// let b = a.clone();
    /// assert_eq!(ObjectPtr::strong_count(&a), 2);
    /// drop(b);
    /// assert_eq!(ObjectPtr::strong_count(&a), 1);
    /// ```
    #[inline]
    pub fn strong_count(this: &Self) -> u32 {
        this.header().strong_count()
    }

    /// The dynamic type index of the object.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef, String};
    /// let o: ObjectRef = make_object(Object::new());
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// assert_eq!((o.type_index(), s.type_index()), (64, 65)); // tvm-ffi's numbers
    /// ```
    #[inline]
    pub fn type_index(&self) -> u32 {
        self.header().type_index()
    }

    /// The dynamic type key of the object.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{ObjectRef, String};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// assert_eq!(s.type_key(), "ffi.String"); // the dynamic type, whatever the handle says
    /// ```
    #[inline]
    pub fn type_key(&self) -> &'static str {
        self.header().type_key()
    }

    /// The registry entry of the object's dynamic type.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{ObjectRef, String};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// let info = s.type_info();
    /// assert_eq!((info.key(), info.index(), info.depth()), ("ffi.String", 65, 1));
    /// assert_eq!(info.parent().map(|p| p.key()), Some("ffi.Object"));
    /// ```
    pub fn type_info(&self) -> &'static TypeInfo {
        match crate::registry::type_info(self.type_index()) {
            Some(info) => info,
            // An allocator always writes a registered index into the header.
            None => unreachable!("object with unregistered type index {}", self.type_index()),
        }
    }

    /// Whether the object is a `U` (or a subtype of `U`). O(1), lock-free.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef};
    /// let o: ObjectRef = make_object(Object::new());
    /// assert!(o.is::<Object>());
    /// ```
    #[inline(always)]
    pub fn is<U: ObjectType>(&self) -> bool {
        is_instance::<U>(self.type_index())
    }

    /// Borrows the object as a `U` if it is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef, String, StringObj};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// let text = s.downcast_ref::<StringObj>().map(StringObj::as_str);
    /// assert_eq!(text, Some("long enough to be an object"));
    /// let o: ObjectRef = make_object(Object::new());
    /// assert!(o.downcast_ref::<StringObj>().is_none());
    /// ```
    #[inline(always)]
    pub fn downcast_ref<U: ObjectType>(&self) -> Option<&U> {
        if self.is::<U>() {
            // SAFETY: the object is a `U` or a subtype, so by ObjectType's layout
            // contract its address is a valid `U`; the borrow is tied to `self`.
            Some(unsafe { &*(self.ptr.as_ptr() as *const U) })
        } else {
            None
        }
    }

    /// Converts the handle to a `U` handle if the object is one (or a subtype of one).
    ///
    /// # Errors
    ///
    /// The handle, back, if the object is not a `U`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectRef, String, StringObj};
    /// let s: ObjectRef = String::from("a long string").into();
    /// let s = s.downcast::<StringObj>().unwrap();
    /// assert_eq!(s.as_str(), "a long string");
    /// let o: ObjectRef = make_object(Object::new());
    /// let o = o.downcast::<StringObj>().unwrap_err(); // not a string: the handle back
    /// assert_eq!(o.type_key(), "ffi.Object");
    /// ```
    #[inline]
    pub fn downcast<U: ObjectType>(self) -> Result<ObjectPtr<U>, Self> {
        if self.is::<U>() {
            let p = Self::into_raw(self) as *mut U;
            // SAFETY: the object is a `U` (checked) and we transfer our reference.
            Ok(unsafe { ObjectPtr::from_raw(p) })
        } else {
            Err(self)
        }
    }

    /// Converts the handle to an ancestor type, for free (checked at compile time).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let o: ObjectPtr<Object> = make_object(Object::new());
    /// let r: ObjectRef = o.upcast::<Object>();
    /// assert!(r.is::<Object>());
    /// ```
    #[inline(always)]
    pub fn upcast<U: ObjectType>(self) -> ObjectPtr<U>
    where
        T: IsA<U>,
    {
        let p = Self::into_raw(self) as *mut U;
        // SAFETY: `U` is an ancestor of `T` (`IsA`), so by the layout contract the same
        // address is a valid `U`; the reference is transferred.
        unsafe { ObjectPtr::from_raw(p) }
    }

    /// Views the handle as a handle to an ancestor type, without touching the count.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Object, ObjectPtr, ObjectRef, String, StringObj};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// let s: ObjectPtr<StringObj> = s.downcast().unwrap();
    /// let r: &ObjectRef = s.upcast_ref::<Object>();
    /// assert_eq!(r.type_key(), "ffi.String");
    /// assert_eq!(ObjectPtr::strong_count(&s), 1); // borrowed: no new handle
    /// ```
    #[inline(always)]
    pub fn upcast_ref<U: ObjectType>(&self) -> &ObjectPtr<U>
    where
        T: IsA<U>,
    {
        // SAFETY: `ObjectPtr` is `repr(transparent)` over a pointer whatever its
        // parameter, and an ancestor handle to the same object is valid (`IsA`).
        unsafe { &*(self as *const Self as *const ObjectPtr<U>) }
    }

    /// Views the handle as a handle to `U` if the object is a `U` (or a subtype),
    /// without touching the count: the borrowed form of [`downcast`](Self::downcast).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    /// let o: ObjectRef = make_object(Object::new());
    /// let p: &ObjectPtr<Object> = o.downcast_ptr_ref::<Object>().unwrap();
    /// assert!(ObjectPtr::ptr_eq(p, &o));
    /// ```
    #[inline(always)]
    pub fn downcast_ptr_ref<U: ObjectType>(&self) -> Option<&ObjectPtr<U>> {
        if self.is::<U>() {
            // SAFETY: `ObjectPtr` is `repr(transparent)` over a pointer whatever its
            // parameter, and the object is a `U` or a subtype (checked), so by the layout
            // contract a `U` handle to it is valid; the borrow is tied to `self`.
            Some(unsafe { &*(self as *const Self as *const ObjectPtr<U>) })
        } else {
            None
        }
    }

    /// Hints the processor to bring the object's header into the cache (a walk that
    /// will read it soon issues this early, so that several objects load at once). No
    /// effect on other architectures.
    #[inline(always)]
    pub(crate) fn prefetch(this: &Self) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        // SAFETY: `prefetch` never faults and reads nothing observable; SSE is part of the
        // x86_64 baseline, so the target feature is always present.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                this.ptr.as_ptr() as *const i8,
            );
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        let _ = this;
    }

    /// The exhaustive view of the object (an `enum` of the base type's listed subtypes,
    /// declared with [`object_view!`](crate::object_view)), to `match` on. O(1).
    /// See [`view`](crate::view) for an example.
    #[inline]
    pub fn view(&self) -> T::View<'_>
    where
        T: crate::view::HasView,
    {
        T::view_of(self)
    }

    /// Erases the static type: `ObjectPtr<T>` → [`ObjectRef`].
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{ObjectPtr, ObjectRef, String, StringObj};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// let s: ObjectPtr<StringObj> = s.downcast().unwrap();
    /// let r: ObjectRef = s.into_object_ref();
    /// assert!(r.is::<StringObj>()); // still the same object
    /// ```
    #[inline(always)]
    pub fn into_object_ref(self) -> ObjectRef {
        let p = Self::into_raw(self) as *mut Object;
        // SAFETY: every object starts with its header; the reference is transferred.
        unsafe { ObjectPtr::from_raw(p) }
    }

    /// Borrows the handle as an [`ObjectRef`], without touching the count.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{ObjectPtr, ObjectRef, String, StringObj};
    /// let s: ObjectRef = String::from("long enough to be an object").into();
    /// let s: ObjectPtr<StringObj> = s.downcast().unwrap();
    /// fn key(o: &ObjectRef) -> &'static str {
    ///     o.type_key()
    /// }
    /// assert_eq!(key(s.as_object_ref()), "ffi.String");
    /// ```
    #[inline(always)]
    pub fn as_object_ref(&self) -> &ObjectRef {
        // SAFETY: same representation; every object is an `Object`.
        unsafe { &*(self as *const Self as *const ObjectRef) }
    }

    /// Unique access to the fields, when this is the only handle: the derive's
    /// [`FieldsMut`] projection (`&mut` to each field, the parent part as the parent's
    /// projection), never the object itself, so its header can never be overwritten,
    /// moved or swapped.
    ///
    /// `None` when other handles exist (the object is shared).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::prelude::*;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Counter")]
    /// struct Counter { base: Object, n: u32 }
    ///
    /// let mut a = Counter::new(0);
    /// *ObjectPtr::get_mut(&mut a).unwrap().n += 1;
    /// let b = a.clone();
    /// assert!(ObjectPtr::get_mut(&mut a).is_none()); // shared
    /// drop(b);
    /// assert_eq!(a.n, 1);
    /// ```
    #[inline]
    pub fn get_mut(this: &mut Self) -> Option<T::Mut<'_>>
    where
        T: FieldsMut,
    {
        if Self::strong_count(this) == 1 {
            // The count is one and we hold `&mut` to the only handle (Acquire in
            // `strong_count` orders us after the other handles' last uses).
            // SAFETY: so no other reference to the object exists for the borrow; the
            // pointer came from the allocator, with provenance over the whole object.
            Some(unsafe { T::project(this.ptr) })
        } else {
            None
        }
    }

    /// [`get_mut`](Self::get_mut), saying why when there is no unique access: a
    /// [`NotUnique`] with the number of handles at the time.
    ///
    /// # Errors
    ///
    /// [`NotUniqueReason::Shared`] when other handles exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::NotUniqueReason;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Tally")]
    /// struct Tally { base: Object, n: u32 }
    ///
    /// let mut a = Tally::new(0);
    /// *ObjectPtr::try_get_mut(&mut a).unwrap().n += 1;
    /// let b = a.clone();
    /// let e = ObjectPtr::try_get_mut(&mut a).unwrap_err();
    /// assert_eq!((e.reason(), e.strong_count()), (NotUniqueReason::Shared, 2));
    /// assert_eq!(e.to_string(), "no unique access to a `doc.ptr.Tally`: 2 handles share it");
    /// ```
    #[inline]
    pub fn try_get_mut(this: &mut Self) -> Result<T::Mut<'_>, NotUnique>
    where
        T: FieldsMut,
    {
        let count = Self::strong_count(this);
        if count == 1 {
            // SAFETY: as in `get_mut`: the count is one and we hold `&mut` to the only
            // handle, so nothing else reaches the object for the borrow.
            Ok(unsafe { T::project(this.ptr) })
        } else {
            Err(NotUnique {
                reason: NotUniqueReason::Shared,
                strong_count: count,
                type_key: this.type_key(),
            })
        }
    }

    /// [`make_mut`](Self::make_mut), saying why when it cannot copy: the object is
    /// shared and its dynamic type is a strict subtype of `T`, so copying the `T` part
    /// would change its type.
    ///
    /// # Errors
    ///
    /// [`NotUniqueReason::SharedSubtype`], with the number of handles and the dynamic
    /// type's key.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::NotUniqueReason;
    ///
    /// #[derive(Object, Clone)]
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Shape")]
    /// struct Shape { base: Object, sides: u32 }
    ///
    /// #[derive(Object, Clone)]
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Square", parent = Shape)]
    /// struct Square { base: Shape }
    ///
    /// let mut s: ObjectPtr<Shape> = Shape::new(3);
    /// let keep = s.clone();
    /// *ObjectPtr::try_make_mut(&mut s).unwrap().sides = 5; // copies: `keep` is shared
    /// assert_eq!((s.sides, keep.sides), (5, 3));
    ///
    /// let square = Square::new(4);
    /// let mut s: ObjectPtr<Shape> = square.clone().upcast();
    /// let e = ObjectPtr::try_make_mut(&mut s).unwrap_err(); // a copy of the `Shape` part
    /// assert_eq!(e.reason(), NotUniqueReason::SharedSubtype); // would not be a square
    /// assert_eq!(e.type_key(), "doc.ptr.Square");
    /// ```
    pub fn try_make_mut(this: &mut Self) -> Result<T::Mut<'_>, NotUnique>
    where
        T: FieldsMut + Clone,
    {
        let count = Self::strong_count(this);
        if count != 1 {
            if this.type_index() != T::type_index() {
                return Err(NotUnique {
                    reason: NotUniqueReason::SharedSubtype,
                    strong_count: count,
                    type_key: this.type_key(),
                });
            }
            *this = crate::alloc::make_object(T::clone(this));
        }
        Self::try_get_mut(this)
    }

    /// Copy-on-write: unique access to the fields (as [`ObjectPtr::get_mut`]), cloning the
    /// object into a fresh one first if it is shared.
    ///
    /// Returns `None` only when the object is shared *and* its dynamic type is a strict
    /// subtype of `T`: cloning just the `T` part would silently change its type.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::prelude::*;
    ///
    /// #[derive(Object, Clone)]
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Cell")]
    /// struct Cell { base: Object, value: i64 }
    ///
    /// let mut a = Cell::new(1);
    /// let b = a.clone();
    /// *ObjectPtr::make_mut(&mut a).unwrap().value = 2; // copies: `b` is shared
    /// assert!(!ObjectPtr::ptr_eq(&a, &b));
    /// assert_eq!((a.value, b.value), (2, 1));
    /// ```
    #[inline]
    pub fn make_mut(this: &mut Self) -> Option<T::Mut<'_>>
    where
        T: FieldsMut + Clone,
    {
        Self::make_mut_with(this, T::clone)
    }

    /// [`ObjectPtr::make_mut`] with the copy made by `copy` instead of `Clone` (for types
    /// that are not `Clone`, or copy differently).
    ///
    /// The copy becomes a fresh object with a fresh header, so nothing `copy` returns can
    /// affect the shared object.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::prelude::*;
    ///
    /// #[derive(Object)] // not `Clone`
    /// #[repr(C)]
    /// #[object(key = "doc.ptr.Hits")]
    /// struct Hits { base: Object, n: u64 }
    ///
    /// let mut a = Hits::new(1);
    /// let b = a.clone();
    /// let copy = |h: &Hits| Hits::new_value(h.n);
    /// *ObjectPtr::make_mut_with(&mut a, copy).unwrap().n += 1;
    /// assert_eq!((a.n, b.n), (2, 1));
    /// ```
    pub fn make_mut_with(this: &mut Self, copy: impl FnOnce(&T) -> T) -> Option<T::Mut<'_>>
    where
        T: FieldsMut,
    {
        if Self::strong_count(this) != 1 {
            if this.type_index() != T::type_index() {
                return None;
            }
            *this = crate::alloc::make_object(copy(this));
        }
        Self::get_mut(this)
    }
}

impl<T: ObjectType> Clone for ObjectPtr<T> {
    #[inline]
    fn clone(&self) -> Self {
        self.header().inc_ref();
        ObjectPtr {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T: ObjectType> Drop for ObjectPtr<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this handle owns one reference to a live object.
        if unsafe { Object::dec_ref(self.ptr.as_ptr() as *const Object) } {
            #[cfg(feature = "live-count")]
            crate::header::live_counter().fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
            // SAFETY: this was the last reference, so nobody else can reach the object;
            // `release` runs the deleter its allocator installed (or defers it, so that
            // freeing a deep graph does not recurse once per level).
            unsafe { crate::header::release(self.ptr.as_ptr() as *mut Object) }
        }
    }
}

impl<T: ObjectType> Deref for ObjectPtr<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the handle keeps the object alive and it is a valid `T`.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ObjectType> AsRef<T> for ObjectPtr<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ObjectType> PartialEq for ObjectPtr<T> {
    fn eq(&self, other: &Self) -> bool {
        ObjectPtr::ptr_eq(self, other)
    }
}
impl<T: ObjectType> Eq for ObjectPtr<T> {}

impl<T: ObjectType> Hash for ObjectPtr<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.ptr.as_ptr() as *const u8 as usize).hash(state);
    }
}

/// Prints the object through its run-time type's reflection (see
/// [`debug_object`](crate::reflection::debug_object)): shared sub-objects once.
impl<T: ObjectType> fmt::Debug for ObjectPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::reflection::debug_object(self.as_object_ref(), f)
    }
}

impl<T: ObjectType> fmt::Pointer for ObjectPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.ptr, f)
    }
}

/// Why [`ObjectPtr::try_get_mut`] / [`ObjectPtr::try_make_mut`] gave no unique access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotUniqueReason {
    /// Other handles to the object exist.
    Shared,
    /// Other handles exist and the object's dynamic type is a strict subtype of the
    /// handle's, so a copy of the handle's type would change the object's type.
    SharedSubtype,
}

/// The error of [`ObjectPtr::try_get_mut`] / [`ObjectPtr::try_make_mut`]: the
/// [`reason`](Self::reason), the number of handles then, and the object's type key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUnique {
    reason: NotUniqueReason,
    strong_count: u32,
    type_key: &'static str,
}

impl NotUnique {
    /// Why.
    pub fn reason(&self) -> NotUniqueReason {
        self.reason
    }
    /// The number of handles to the object when access was refused (a snapshot).
    pub fn strong_count(&self) -> u32 {
        self.strong_count
    }
    /// The object's dynamic type key.
    pub fn type_key(&self) -> &'static str {
        self.type_key
    }
}

impl fmt::Display for NotUnique {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            NotUniqueReason::Shared => write!(
                f,
                "no unique access to a `{}`: {} handles share it",
                self.type_key, self.strong_count
            ),
            NotUniqueReason::SharedSubtype => write!(
                f,
                "cannot copy a shared `{}` ({} handles) through a handle to one of its ancestors: the copy would lose its type",
                self.type_key, self.strong_count
            ),
        }
    }
}

impl std::error::Error for NotUnique {}

/// Conversion into a handle of an ancestor type (or the same type), for APIs that take
/// "any object that is a `U`".
///
/// `From<ObjectPtr<Add>> for ObjectPtr<Expr>` cannot exist in Rust: a user crate may not
/// implement a foreign trait for two foreign-constructor types (the orphan rule), and a
/// blanket impl in this crate would overlap `From<T> for T`. This trait is the generic
/// alternative; [`ObjectPtr::upcast`] and [`ObjectPtr::into_object_ref`] are the methods.
///
/// ```
/// use object_core::{make_object, IntoObjectPtr, Object, ObjectRef};
/// fn keep(all: &mut Vec<ObjectRef>, o: impl IntoObjectPtr<Object>) {
///     all.push(o.into_object_ptr());
/// }
/// let mut all = Vec::new();
/// keep(&mut all, make_object(Object::new()));
/// assert_eq!(all.len(), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as an `ObjectPtr<{U}>`",
    label = "expected a handle to a `{U}` or to one of its subtypes",
    note = "a handle to a subtype of `{U}` converts for free: pass it to any `impl IntoObjectPtr<{U}>` parameter (generated constructors take them), or call `.upcast::<{U}>()`",
    note = "a handle to an ancestor or an unrelated type needs the checked `.downcast::<{U}>()`"
)]
pub trait IntoObjectPtr<U: ObjectType> {
    /// Converts, for free.
    fn into_object_ptr(self) -> ObjectPtr<U>;
}

impl<T: IsA<U>, U: ObjectType> IntoObjectPtr<U> for ObjectPtr<T> {
    #[inline(always)]
    fn into_object_ptr(self) -> ObjectPtr<U> {
        self.upcast()
    }
}
