//! The containers: [`Array`] (`ffi.Array`, 71), [`Map`] (`ffi.Map`, 72) and [`Shape`]
//! (`ffi.Shape`, 69), each an ordinary object type with the static index the tvm-ffi
//! ecosystem uses, and each implementing the call traits of
//! [`function`](crate::function) in its own file.
//!
//! `Array<T>` and `Map<K, V>` are checked typed views over `Any` slots: every slot of an
//! `Array<T>` holds a `T`, checked on the way in, so reading one is a cast. That
//! invariant is kept inside each file, which is why each reads its slots with `unsafe`.

#[allow(unsafe_code, reason = "inline slots; unchecked typed reads")]
mod array;
#[allow(unsafe_code, reason = "unchecked typed reads (invariant kept here)")]
mod map;
#[allow(unsafe_code, reason = "inline dimensions with a C data pointer")]
mod shape;

pub use array::{Array, ArrayError, ArrayObj, IntoIter, Iter};
pub use map::{Map, MapObj};
pub use shape::{Shape, ShapeObj};
