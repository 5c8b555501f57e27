//! # object-containers
//!
//! The containers of the unified object protocol, each an ordinary object type with the
//! static index the tvm-ffi ecosystem uses:
//!
//! | type | key | index |
//! | --- | --- | --- |
//! | [`String`] | `ffi.String` | 65 |
//! | [`Bytes`] | `ffi.Bytes` | 66 |
//! | [`Shape`] | `ffi.Shape` | 69 |
//! | [`Array`] | `ffi.Array` | 71 |
//! | [`Map`] | `ffi.Map` | 72 |
//! | [`Error`] | `ffi.Error` | 67 |
//! | [`Function`] | `ffi.Function` | 68 |
//! | [`Module`] | `ffi.Module` | 73 |
//! | [`NDArray`] | `ffi.Tensor` | 70 |
//!
//! Arrays and maps store [`Any`] slots, so one container holds AST nodes and runtime
//! values alike; `Array<T>` / `Map<K, V>` are checked typed views over those slots
//! (`T` = `Any`, an object handle, `String`, `i64`, `f64`, a nested container).
//! Both are copy-on-write: cloning shares, mutating a shared container copies it.
//!
//! `String` and `Bytes` are defined in `object-core` (an `Any` must be able to make a
//! string object from a `&str`, and Rust's orphan rule keeps that conversion next to
//! `Any`) and re-exported here.
//!
//! ```
//! use object_containers::{Array, Map, Shape, String};
//! use object_core::{make_object, Any, Object};
//!
//! let node = make_object(Object::new());
//! let mut attrs: Map<String, Any> = Map::new();
//! attrs.insert(String::from("shape"), Shape::from([2, 2]).into());
//! let all: Array<Any> = vec![
//!     Any::from(node),
//!     Any::from(String::from("a string")),
//!     Any::from(attrs),
//!     Any::from(Array::<i64>::from(vec![1, 2, 3])),
//! ]
//! .into();
//! assert_eq!(all.len(), 4);
//! assert!(all[2].as_object().is_some_and(|o| o.type_key() == "ffi.Map"));
//! ```

mod array;
pub mod dlpack;
mod function;
mod handle;
mod map;
mod module;
mod ndarray;
mod shape;

pub use array::{Array, ArrayError, ArrayObj, IntoIter, Iter};
pub use function::{
    get_global, list_globals, register_global, register_global_override, remove_global,
    set_last_error, take_last_error, FromArg, FromRet, Function, FunctionObj, IntoArgs, IntoRet,
    PackedCall, TypedCallable, TypedFunction,
};
pub use map::{Map, MapObj};
pub use module::{Module, ModuleBuilder, ModuleObj};
pub use ndarray::{Element, NDArray, NDArrayError, NDArrayObj, TensorView, ALIGNMENT, MAX_NDIM};
pub use object_core::{
    Any, AnyItem, AnyView, Bytes, BytesObj, Error, ErrorObj, String, StringObj, TypeError,
};
pub use shape::{Shape, ShapeObj};
