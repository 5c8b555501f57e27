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
