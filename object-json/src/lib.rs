//! # object-json
//!
//! The JSON graph format of the unified object protocol — the one the tvm-ffi
//! ecosystem reads and writes (`ToJSONGraph` / `FromJSONGraph`) — beside the object
//! model the way `serde_json` sits beside `serde`: any value, including any graph of
//! reflected objects with shared nodes, to text and back, with no per-type code.
//!
//! [`to_json_graph`] writes a value and everything it reaches; [`from_json_graph`]
//! reads it back, with every object reached twice one object again. Objects are read
//! and built through reflection (`object_core::reflection`), so a
//! `#[derive(Object)]` type needs nothing more:
//!
//! ```
//! use object_containers::Any;
//! use object_core::prelude::*;
//! use object_json::{from_json_graph, to_json_graph, GraphErrorKind};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "docs.Var")]
//! struct Var { base: Object, name: String }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "docs.Add")]
//! struct Add { base: Object, lhs: ObjectRef, rhs: ObjectRef, weight: f64 }
//!
//! let x: ObjectRef = Var::new("x").into_object_ref();
//! let sum = Add::new(x.clone(), x, 0.5);
//! let text = to_json_graph(&Any::from(sum)).unwrap();
//! assert_eq!(
//!     text,
//!     concat!(
//!         r#"{"root_index":2,"nodes":[{"type":"ffi.String","data":"x"},"#,
//!         r#"{"type":"docs.Var","data":{"name":0}},"#,
//!         r#"{"type":"docs.Add","data":{"lhs":1,"rhs":1,"weight":0.5}}]}"#,
//!     )
//! );
//! let back = from_json_graph(&text).unwrap();
//! let add = back.downcast_ref::<Add>().unwrap();
//! assert!(ObjectPtr::ptr_eq(&add.lhs, &add.rhs)); // still one object
//!
//! // Errors are data: a kind to match, and the node and field they are in.
//! let bad = text.replace(r#""weight":0.5"#, r#""weight":"heavy""#);
//! let e = from_json_graph(&bad).unwrap_err();
//! assert_eq!(e.kind(), GraphErrorKind::Field);
//! assert_eq!((e.node(), e.type_key(), e.field()), (Some(2), Some("docs.Add"), Some("weight")));
//! assert_eq!(e.to_string(), "node 2 (`docs.Add`): field `weight`: expected float, got a string");
//! ```
//!
//! ## The format
//!
//! ```json
//! {"root_index": 3, "nodes": [
//!   {"type": "int", "data": 1},
//!   {"type": "ffi.String", "data": "x"},
//!   {"type": "tour.Var", "data": {"name": 1}},
//!   {"type": "ffi.Array", "data": [0, 2, 2]}
//! ]}
//! ```
//!
//! (That is the readable form, [`to_json_graph_pretty`]; [`to_json_graph`] writes the
//! compact form tvm-ffi writes, with no white space at all:
//! `{"root_index":3,"nodes":[{"type":"int","data":1},…]}`. [`SaveOptions`] chooses.)
//!
//! - `nodes` lists every distinct value once, children before parents; `root_index`
//!   names the value itself. A value reached twice (the same object, or an equal
//!   string or number) is one node, and after loading it is one object again.
//! - `data` is a literal for `int`, `float` and `bool` (`None` has none), a string for
//!   `ffi.String` and `DataType`, base64 for `ffi.Bytes`, `[type, id]` for `Device`,
//!   node indices for `ffi.Array` and `ffi.List`, a flat `[k0, v0, k1, v1, …]` of node
//!   indices for `ffi.Map` and `ffi.Dict`, decimal text for `ffi.BigInt`
//!   (`"-123456789012345678901234567890"`), integers for `ffi.Shape`, `{"dtype", "shape", "device", "data"}` for an
//!   `ffi.Tensor` (`NDArray`; the bytes contiguous, little-endian, in base64: the one
//!   node kind the C++ peer has no form for; the device is always `cpu:0`, that of the
//!   copy loading makes), and `{field: value}` for a reflected object, where
//!   non-optional `bool`, `int`, `float` and `DataType` fields are written inline and
//!   every other field is a node index.
//! - Strings load as `ffi.String` objects (short ones too), so that a map or array
//!   of them fits a typed field such as `Map<String, Any>`.
//! - An optional `"metadata"` object ([`to_json_graph_with_metadata`]) is written
//!   after the nodes and ignored when loading.
//! - Numbers keep their integer-ness (`1` is an int, `1.0` a float); `NaN`,
//!   `Infinity` and `-Infinity` are written for non-finite floats, as the tvm-ffi
//!   writer does; a number beyond `f64` (`1e400`) is an error, not infinity.
//! - Loading looks types up by key and builds objects through
//!   [`reflection::create`](object_core::reflection::create). Every problem is a
//!   [`GraphError`] — its [`GraphErrorKind`], and the line and column, node, type key
//!   and field where it has them — never a panic, and nothing half-built leaks.
//!   Packed functions see it as an [`object_core::Error`] (`?` converts it) of the kind
//!   strings a Python caller knows (`ValueError`, `KeyError`, `TypeError`,
//!   `MemoryError`).
//! - A value that contains itself cannot be saved: only the mutable containers
//!   (`ffi.List`, `ffi.Dict`) can make one, and saving it is a
//!   [`Cycle`](GraphErrorKind::Cycle) error, found as the walk meets a node it is
//!   still writing (never a hang). A graph whose nodes refer back to themselves is a
//!   `Cycle` error when loading too.
//! - Member names are not repeated: a document with `root_index` twice, or a node
//!   with `type` or `data` twice, is a [`DuplicateMember`](GraphErrorKind::DuplicateMember)
//!   error naming the member (as a field given twice in an object's `data` is a
//!   [`Field`](GraphErrorKind::Field) error naming the field).
//! - Graphs of any depth save and load (both sides keep their own work lists); only
//!   the JSON text may not nest deeper than 128 levels, which no graph needs.
//!
//! ## Where it sits
//!
//! `object-json` depends on `object-core` (values, reflection, the registry) and
//! `object-containers` (arrays, maps, shapes, tensors); nothing depends on it but
//! applications, tests and benches. It has no `unsafe` code. `ARCHITECTURE.md` at the
//! repository root shows the crates and their layers, and how a value flows through
//! the JSON graph.

#![forbid(unsafe_code)]

mod data;
mod error;
mod json;
mod load;
mod save;
mod tensor;
#[cfg(test)]
mod tests;
mod text;

pub use error::{GraphError, GraphErrorKind};
pub use load::from_json_graph;
pub use save::{
    to_json_graph, to_json_graph_pretty, to_json_graph_with_metadata, to_json_graph_with_options,
    SaveOptions,
};

/// The README's examples, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
