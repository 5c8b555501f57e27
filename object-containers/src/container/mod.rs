//! The containers: [`Array`] (`ffi.Array`, 71), [`Map`] (`ffi.Map`, 72), their mutable
//! counterparts [`List`] (`ffi.List`, 75) and [`Dict`] (`ffi.Dict`, 76), [`Shape`]
//! (`ffi.Shape`, 69) and [`BigInt`] (`ffi.BigInt`, 78), each an ordinary object type with the static index the tvm-ffi
//! ecosystem uses, and each implementing the call traits of
//! [`function`](crate::function) in its own file.
//!
//! `Array<T>` and `Map<K, V>` are checked typed views over `Any` slots: every slot of an
//! `Array<T>` holds a `T`, checked on the way in, so reading one is a cast. That
//! invariant is kept inside each file, which is why each reads its slots with `unsafe`.
//!
//! `List<T>` and `Dict<K, V>` are shared and mutable (a lock inside the object, `&self`
//! methods), so no view can keep such an invariant: their typed reads convert and
//! check each item, and `unsafe` is needed only to read a slot as the handle it holds.

#[allow(unsafe_code, reason = "inline slots; unchecked typed reads")]
mod array;
mod big_int;
#[allow(
    unsafe_code,
    reason = "typed views: a slot read as the handle it holds"
)]
mod dict;
#[allow(
    unsafe_code,
    reason = "typed views: a slot read as the handle it holds"
)]
mod list;
#[allow(unsafe_code, reason = "unchecked typed reads (invariant kept here)")]
mod map;
#[allow(unsafe_code, reason = "inline dimensions with a C data pointer")]
mod shape;

pub use array::{Array, ArrayError, ArrayObj, IntoIter, Iter};
pub use big_int::{BigInt, BigIntObj, ParseBigIntError};
pub use dict::{Dict, DictObj};
pub use list::{List, ListObj};
pub use map::{Map, MapObj};
pub use shape::{Shape, ShapeObj};

/// The `FieldValue` impl of a typed container view (`Array`, `Map`, `List`, `Dict`): a
/// reflected field holding one is an object field of the container's key, converted
/// through the view's checked `TryFrom<Any>`.
macro_rules! view_field_value {
    ($ty:ident<$($g:ident),+>, $key:literal) => {
        impl<$($g: ::object_core::AnyItem),+> ::object_core::reflection::FieldValue
            for $ty<$($g),+>
        {
            const KIND: ::object_core::reflection::FieldKind =
                ::object_core::reflection::FieldKind::Object;
            const STATIC_TYPE_KEY: &'static str = $key;
            type Take = ::object_core::reflection::ByInto;
            fn to_any(&self) -> Result<::object_core::Any, ::object_core::TypeError> {
                Ok(::object_core::Any::from(self.clone()))
            }
            fn from_any(value: ::object_core::Any) -> Result<Self, ::object_core::TypeError> {
                $ty::try_from(value)
            }
            fn visit(
                &self,
                field: &::object_core::reflection::FieldInfo,
                v: &mut dyn ::object_core::reflection::AttrVisitor,
            ) {
                v.visit_object(field, Some(self.obj.as_object_ref()));
            }
            #[inline]
            fn borrow_value(&self) -> ::object_core::reflection::ValueRef<'_> {
                ::object_core::reflection::ValueRef::Object(self.obj.as_object_ref())
            }
        }
    };
}
pub(crate) use view_field_value;
