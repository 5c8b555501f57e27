//! The handle API: what every `#[repr(transparent)]` handle over an object pointer
//! (`String`, `Bytes` and `Error` here; `Function`, `Module`, `Shape`, `NDArray` in
//! `object-containers`) offers, spelled the same way and generated in one place:
//!
//! - `H::from_object_ptr(ObjectPtr<O>) -> H`, `h.as_object_ptr() -> &ObjectPtr<O>`,
//!   `h.into_object_ptr() -> ObjectPtr<O>`, and `H::ptr_eq(&a, &b)` (an associated
//!   function, as on `Arc`);
//! - `From<H> for ObjectRef`;
//! - the value conversions: `From<H> for Any`, `From<&H> for AnyView`,
//!   `TryFrom<Any> for H`, and the `AnyItem` impl that lets typed containers hold it;
//! - the `FieldValue` impl that makes it a reflected field (an object of key `"key"`).
//!
//! (`Array` and `Map` are typed, so their `from_object_ptr` checks the items and returns
//! a `Result`; they spell the rest the same way by hand.)

/// Implements the handle API (see the module docs) for `$handle`, a
/// `#[repr(transparent)]` tuple struct over `ObjectPtr<$obj>`, whose type key is
/// `$key`. Not public API.
///
/// - `__object_handle!(Handle, Obj, "key")`: everything;
/// - `__object_handle!(@methods Handle, Obj)`: the four methods and
///   `From<Handle> for ObjectRef` only (for handles whose value conversions are their
///   own, such as `String`, which also accepts inline strings);
/// - `__object_handle!(@values Handle, Obj, "key")`: the value conversions only;
/// - `__object_handle!(@field Handle, "key")`: the `FieldValue` impl only.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_handle {
    ($handle:ident, $obj:ty, $key:literal) => {
        $crate::__object_handle!(@methods $handle, $obj);
        $crate::__object_handle!(@values $handle, $obj, $key);
        $crate::__object_handle!(@field $handle, $key);
    };

    (@methods $handle:ident, $obj:ty) => {
        impl $handle {
            /// Wraps an object handle (the inverse of
            /// [`into_object_ptr`](Self::into_object_ptr)).
            #[inline]
            pub fn from_object_ptr(ptr: $crate::ObjectPtr<$obj>) -> Self {
                $handle(ptr)
            }

            /// The underlying object handle.
            #[inline]
            pub fn as_object_ptr(&self) -> &$crate::ObjectPtr<$obj> {
                &self.0
            }

            /// Unwraps the object handle (no count change).
            #[inline]
            pub fn into_object_ptr(self) -> $crate::ObjectPtr<$obj> {
                self.0
            }

            /// Whether two handles point to the same object. An associated function,
            /// as [`Arc::ptr_eq`](std::sync::Arc::ptr_eq), so that it never shadows a
            /// method of the value.
            #[inline]
            pub fn ptr_eq(this: &Self, other: &Self) -> bool {
                $crate::ObjectPtr::ptr_eq(&this.0, &other.0)
            }

            /// Whether `self` and `other` are the same object (identity, as TVM's
            /// `same_as`), whatever `==` compares.
            #[inline]
            pub fn same_as(&self, other: &Self) -> bool {
                $crate::ObjectPtr::ptr_eq(&self.0, &other.0)
            }
        }

        impl ::core::convert::From<$handle> for $crate::ObjectRef {
            /// Erases the static type (no count change).
            #[inline]
            fn from(h: $handle) -> $crate::ObjectRef {
                h.0.into_object_ref()
            }
        }
    };

    (@values $handle:ident, $obj:ty, $key:literal) => {
        impl ::core::convert::From<$handle> for $crate::Any {
            #[inline]
            fn from(h: $handle) -> $crate::Any {
                $crate::Any::from(h.0)
            }
        }

        impl<'a> ::core::convert::From<&'a $handle> for $crate::AnyView<'a> {
            #[inline]
            fn from(h: &'a $handle) -> Self {
                $crate::AnyView::from(&h.0)
            }
        }

        impl ::core::convert::TryFrom<$crate::Any> for $handle {
            type Error = $crate::TypeError;
            #[inline]
            fn try_from(a: $crate::Any) -> ::core::result::Result<Self, $crate::TypeError> {
                <$crate::ObjectPtr<$obj> as ::core::convert::TryFrom<$crate::Any>>::try_from(a)
                    .map($handle)
            }
        }

        // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`, so a slot
        // holding such an object is read through that handle.
        // (The one fenced piece of a handle: allowed here, wherever the macro is used.)
        #[allow(unsafe_code)]
        unsafe impl $crate::AnyItem for $handle {
            fn expected() -> ::std::borrow::Cow<'static, str> {
                $key.into()
            }
            #[inline]
            fn into_any(self) -> $crate::Any {
                $crate::Any::from(self)
            }
            #[inline]
            fn matches(slot: &$crate::Any) -> bool {
                slot.as_object_of::<$obj>().is_some()
            }
            #[inline]
            fn from_slot(slot: &$crate::Any) -> ::core::option::Option<&Self> {
                let p = slot.as_object_of::<$obj>()?;
                // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`.
                ::core::option::Option::Some(unsafe {
                    &*(p as *const $crate::ObjectPtr<$obj> as *const $handle)
                })
            }
            fn try_from_any(slot: $crate::Any) -> ::core::result::Result<Self, $crate::TypeError> {
                <$handle as ::core::convert::TryFrom<$crate::Any>>::try_from(slot)
            }
        }
    };

    (@field $handle:ty, $key:expr) => {
        impl $crate::reflection::FieldValue for $handle {
            const KIND: $crate::reflection::FieldKind = $crate::reflection::FieldKind::Object;
            const STATIC_TYPE_KEY: &'static str = $key;
            type Take = $crate::reflection::ByInto;
            fn to_any(&self) -> ::core::result::Result<$crate::Any, $crate::TypeError> {
                ::core::result::Result::Ok($crate::Any::from(self.clone()))
            }
            fn from_any(value: $crate::Any) -> ::core::result::Result<Self, $crate::TypeError> {
                <$handle as ::core::convert::TryFrom<$crate::Any>>::try_from(value)
            }
            fn visit(
                &self,
                field: &$crate::reflection::FieldInfo,
                v: &mut dyn $crate::reflection::AttrVisitor,
            ) {
                let any = $crate::AnyView::from(self);
                v.visit_object(field, any.as_object());
            }
            #[inline]
            fn borrow_value(&self) -> $crate::reflection::ValueRef<'_> {
                $crate::reflection::ValueRef::Object(self.0.as_object_ref())
            }
        }
    };
}

/// The `FieldValue` impl of a handle, now part of [`__object_handle!`]. Kept, with its
/// arguments, for the handles in `object-containers` that still invoke it beside the
/// value conversions (`__object_handle!(@values …)`); remove once none does. Not public
/// API.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_handle_field {
    ($handle:ty, $key:expr) => {
        $crate::__object_handle!(@field $handle, $key);
    };
}
