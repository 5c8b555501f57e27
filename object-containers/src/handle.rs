//! The handle API, generated in one place for every `#[repr(transparent)]` handle over
//! an object pointer here ([`Shape`](crate::Shape), [`Function`](crate::Function),
//! [`Module`](crate::Module), [`NDArray`](crate::NDArray)): the value conversions and
//! the reflection field impl from `object-core`'s macros, and the four handle methods
//! every handle spells the same way (the typed views [`Array`](crate::Array) and
//! [`Map`](crate::Map) write theirs by hand, since theirs check the items):
//!
//! - `from_object_ptr(ObjectPtr<Obj>) -> Self`
//! - `as_object_ptr(&self) -> &ObjectPtr<Obj>`
//! - `into_object_ptr(self) -> ObjectPtr<Obj>`
//! - `ptr_eq(&a, &b) -> bool`, an associated function as on `Arc`, so that it never
//!   shadows a method of the object.

/// Everything a handle `$handle`, a `#[repr(transparent)]` tuple struct over
/// `ObjectPtr<$obj>` whose type key is `$key`, needs to be a value: conversions to and
/// from `Any`, the `AnyItem` and `FieldValue` impls, and the handle methods.
macro_rules! object_handle {
    ($handle:ident, $obj:ty, $key:literal) => {
        ::object_core::__object_handle!($handle, $obj, $key);
        ::object_core::__object_handle_field!($handle, $key);
        $crate::handle::handle_methods!($handle, $obj);
    };
}
pub(crate) use object_handle;

/// The four handle methods (see the module docs).
macro_rules! handle_methods {
    ($handle:ident, $obj:ty) => {
        impl $handle {
            #[doc = concat!("The `", stringify!($handle), "` of an object.")]
            #[inline]
            pub fn from_object_ptr(obj: ::object_core::ObjectPtr<$obj>) -> Self {
                $handle(obj)
            }

            /// The underlying object.
            #[inline]
            pub fn as_object_ptr(&self) -> &::object_core::ObjectPtr<$obj> {
                &self.0
            }

            /// The underlying object, taking over this handle's reference.
            #[inline]
            pub fn into_object_ptr(self) -> ::object_core::ObjectPtr<$obj> {
                self.0
            }

            #[doc = concat!(
                                "Whether two handles share one object (`", stringify!($handle),
                                "::ptr_eq(&a, &b)`, as `Arc::ptr_eq`)."
                            )]
            #[inline]
            pub fn ptr_eq(this: &Self, other: &Self) -> bool {
                ::object_core::ObjectPtr::ptr_eq(&this.0, &other.0)
            }
        }
    };
}
pub(crate) use handle_methods;
