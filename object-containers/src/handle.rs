//! The handle API of the handles here ([`Shape`](crate::Shape),
//! [`Function`](crate::Function), [`Module`](crate::Module), [`NDArray`](crate::NDArray))
//! comes from the one macro in `object-core` that also makes `String`, `Bytes` and
//! `Error`'s: `from_object_ptr`, `as_object_ptr`, `into_object_ptr`, `ptr_eq` (an
//! associated function, as on `Arc`), `From<Handle> for ObjectRef`, the value conversions
//! and the `FieldValue` impl. (The typed views [`Array`](crate::Array) and
//! [`Map`](crate::Map) write theirs by hand, since theirs check the items.)

pub(crate) use object_core::__object_handle as object_handle;
