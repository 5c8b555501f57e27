//! [`AnyItem`]: the types a container holds in `Any` slots and hands out by reference.

use super::{Any, TypeError};
use crate::object_type::{is_instance, ObjectType};
use crate::ptr::ObjectPtr;
use crate::string::String;
use crate::type_index as ti;

/// A type a container can hold in an `Any` slot and hand out by reference: `Any`
/// itself, object handles (`ObjectPtr<T>`, `String`, …), `i64` and `f64`.
///
/// Containers (`Array`, `Map`) store `Any`s; a typed container `Array<T>` checks on the
/// way in and on a typed view that every slot [`matches`](AnyItem::matches), and then
/// reads slots as `&T` without copying.
///
/// # Safety
///
/// `from_slot` must return a reference valid for the slot's lifetime whenever `matches`
/// is true, and `into_any` must produce a slot that `matches`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an item of an `Array`, `Map`, `List` or `Dict`",
    label = "not a container item",
    note = "items are `Any`, object handles (`ObjectPtr<T>`, `object_core::String`, `Bytes`, `Array<T>`, `Map<K, V>`, `NDArray`, …), `i64` and `f64`",
    note = "for text, use the object string `object_core::String` (`String::from(\"text\")`, or `.into()` from a `&str` or `std::string::String`); for a Rust `Vec<T>`, an `Array<T>`"
)]
pub unsafe trait AnyItem: Clone + Sized + 'static {
    /// The type's name in errors (a type key where there is one).
    fn expected() -> std::borrow::Cow<'static, str>;
    /// Converts into a slot.
    fn into_any(self) -> Any;
    /// Whether a slot holds a valid `Self`.
    fn matches(slot: &Any) -> bool;
    /// Reads a slot that `matches`; `None` otherwise.
    fn from_slot(slot: &Any) -> Option<&Self>;
    /// Reads a slot known to match, without checking again.
    ///
    /// # Safety
    ///
    /// `Self::matches(slot)` must be true.
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match Self::from_slot(slot) {
            Some(v) => v,
            // SAFETY: the caller guarantees the slot matches, so `from_slot` is `Some`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    /// Takes a value out of a slot (converting where `TryFrom<Any>` would).
    ///
    /// # Errors
    ///
    /// A [`TypeError`] naming [`expected`](AnyItem::expected) and the slot's type when
    /// the slot does not hold (or convert to) a `Self`.
    fn try_from_any(slot: Any) -> Result<Self, TypeError>;
}

// SAFETY: the identity.
unsafe impl AnyItem for Any {
    fn expected() -> std::borrow::Cow<'static, str> {
        "Any".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        self
    }
    #[inline]
    fn matches(_: &Any) -> bool {
        true
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        Some(slot)
    }
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        slot
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Ok(slot)
    }
}

// SAFETY: `as_object_of` returns a reference into the slot exactly when the slot holds a
// `T`, which is what `From<ObjectPtr<T>>` produces.
unsafe impl<T: ObjectType> AnyItem for ObjectPtr<T> {
    fn expected() -> std::borrow::Cow<'static, str> {
        T::TYPE_KEY.into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.is_object() && is_instance::<T>(slot.type_index())
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.as_object_of::<T>()
    }
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        // SAFETY: the slot matches, so it holds a `T` object.
        unsafe { slot.object_ptr_unchecked::<T>() }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        ObjectPtr::try_from(slot)
    }
}

// SAFETY: `String` is `repr(transparent)` over `Any`, and a `String` is exactly an `Any`
// holding an inline string or a string object, which is what `matches` checks; so a
// matching slot is read as a `String` in place.
unsafe impl AnyItem for String {
    fn expected() -> std::borrow::Cow<'static, str> {
        "ffi.String".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        String::into_any(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        String::holds(slot)
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        if Self::matches(slot) {
            // SAFETY: the slot holds a string (checked), and `String` is
            // `repr(transparent)` over `Any`.
            Some(unsafe { &*(slot as *const Any as *const String) })
        } else {
            None
        }
    }
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        // SAFETY: the caller guarantees the slot matches (holds a string), and `String`
        // is `repr(transparent)` over `Any`.
        unsafe { &*(slot as *const Any as *const String) }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        String::try_from(slot)
    }
}

// SAFETY: `int_ref` returns the payload exactly for INT slots, which `From<i64>` makes.
unsafe impl AnyItem for i64 {
    fn expected() -> std::borrow::Cow<'static, str> {
        "int".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.type_index() == ti::INT
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.int_ref()
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        i64::try_from(slot)
    }
}

// SAFETY: `float_ref` returns the payload exactly for FLOAT slots, which `From<f64>` makes.
unsafe impl AnyItem for f64 {
    fn expected() -> std::borrow::Cow<'static, str> {
        "float".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.type_index() == ti::FLOAT
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.float_ref()
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        match slot.type_index() {
            ti::FLOAT => f64::try_from(slot),
            _ => Err(TypeError::new("float", slot.type_key())),
        }
    }
}
