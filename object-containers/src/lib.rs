//! # object-containers
//!
//! The value types of the unified object protocol above `object-core`: containers,
//! packed functions and modules, and tensors. Each is an ordinary object type with the
//! static index the tvm-ffi ecosystem uses:
//!
//! | type | key | index |
//! | --- | --- | --- |
//! | [`String`] | `ffi.String` | 65 |
//! | [`Bytes`] | `ffi.Bytes` | 66 |
//! | [`Shape`] | `ffi.Shape` | 69 |
//! | [`Array`] | `ffi.Array` | 71 |
//! | [`Map`] | `ffi.Map` | 72 |
//! | [`List`] | `ffi.List` | 75 |
//! | [`Dict`] | `ffi.Dict` | 76 |
//! | [`BigInt`] | `ffi.BigInt` | 78 |
//! | [`Error`] | `ffi.Error` | 67 |
//! | [`Function`] | `ffi.Function` | 68 |
//! | [`Module`] | `ffi.Module` | 73 |
//! | [`NDArray`] | `ffi.Tensor` | 70 |
//!
//! Arrays and maps store [`Any`] slots, so one container holds AST nodes and runtime
//! values alike; `Array<T>` / `Map<K, V>` are checked typed views over those slots
//! (`T` = `Any`, an object handle, `String`, `i64`, `f64`, a nested container).
//! Both are copy-on-write: cloning shares, mutating a shared container copies it.
//! [`List`] and [`Dict`] are their mutable counterparts: one shared object that every
//! holder sees change (a lock inside the object; `&self` methods; checked typed reads).
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
//!
//! Every handle here offers the same handle API: `from_object_ptr`, `as_object_ptr`,
//! `into_object_ptr`, and `ptr_eq` as an associated function (`Function::ptr_eq(&a, &b)`,
//! as `Arc::ptr_eq`); the typed views `Array<T>` and `Map<K, V>` check their items in
//! `from_object_ptr`, which therefore returns a `Result`.
//!
//! # Layers
//!
//! The crate's folders are its layers; arrows point down only (see `ARCHITECTURE.md`
//! at the repository root):
//!
//! | folder | holds | depends on |
//! | --- | --- | --- |
//! | `function/` | the packed-call ABI and its error slot, the call traits for core types, typed calls, the global registry, [`Module`] | `object-core` |
//! | `container/` | [`Array`], [`Map`], [`List`], [`Dict`], [`Shape`], [`BigInt`] | `function/` (each implements the call traits in its own file) |
//! | `tensor/` | [`NDArray`], [`TensorView`], [`dlpack`] | `function/` |
//!
//! The JSON graph format (tvm-ffi's), which reads and writes all of these, is its own
//! crate, `object-json`, beside this one (as `serde_json` sits beside `serde`).
//!
//! # Unsafe code
//!
//! `unsafe_code` is denied here and allowed only in the modules that need it, each
//! with its reason at its `mod` line: the packed-call ABI (`function::abi`), the
//! container representations (`container::{array, map, list, dict, shape}`), and the tensor object,
//! views, copies and DLPack (`tensor::{object, ndarray, view, copy, dlpack}`).

#![deny(unsafe_code)]

mod container;
mod function;
mod handle;
mod tensor;

pub use container::{
    Array, ArrayError, ArrayObj, BigInt, BigIntObj, Dict, DictObj, IntoIter, Iter, List, ListObj,
    Map, MapObj, ParseBigIntError, Shape, ShapeObj,
};
pub use function::adopt;
pub use function::{
    call_method, find_method, register_method, register_method_at, register_static_method,
    remove_method, type_methods, Method, MethodKind,
};
pub use function::{
    error_mark, get_global, list_globals, panic_error, register_global, register_global_override,
    remove_global, set_last_error, take_error_since, take_last_error, ErrorMark, FromArg, FromRet,
    Function, FunctionObj, IntoArgs, IntoRet, Module, ModuleBuilder, ModuleObj, PackedCall, Param,
    ParamKind, Signature, TypedCallable, TypedFunction,
};
pub use object_core::{
    Any, AnyItem, AnyView, Bytes, BytesObj, Error, ErrorKind, ErrorObj, String, StringObj,
    TypeError,
};
pub use tensor::{
    dlpack, Element, ForeignWrite, NDArray, NDArrayError, NDArrayObj, TensorLease, TensorView,
    ALIGNMENT, MAX_NDIM,
};

/// Not public API: names that public signatures mention but users never write.
#[doc(hidden)]
pub mod __private {
    pub use crate::function::{ArgLabel, FastEntry};
}
