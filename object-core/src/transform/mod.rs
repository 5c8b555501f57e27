//! Writing passes: dispatch by type, and a generic visitor and mutator driven by
//! reflection.
//!
//! - [`TypeDispatch<F>`]: a per-type table (TVM's `NodeFunctor`): `set_dispatch::<Add>(f)`,
//!   or by key / index for run-time and plugin types; [`dispatch`](TypeDispatch::dispatch)
//!   falls back to the nearest ancestor with an entry, in O(1) once a type is cached.
//! - [`for_each_child`] and [`walk`]: the child objects of any reflected node (fields
//!   holding objects, a container's items), and a depth-first walk of a whole graph
//!   ([`Visitor`]), each shared node once.
//! - [`mutate`] with a [`Rewriter`] (or a [`RewriteTable`] of per-type hooks): a bottom-up
//!   rewrite that rebuilds a node only when a child changed, otherwise keeps the very same
//!   object, and rewrites a shared node once; [`map_children`] for one node's children
//!   alone.
//!
//! Everything here walks with explicit stacks: a 10,000,000-deep graph is visited and
//! rewritten on a 2 MiB thread. There is no unsafe code here: fields are read through
//! `reflection::raw`.
//!
//! # Rebuilding
//!
//! A node whose children changed is copied through its type's [`Rebuild`] impl, which
//! `#[derive(Object)]` generates: each reflected field is copied
//! ([`FieldValue::rebuild_field`](crate::reflection::FieldValue::rebuild_field)) taking
//! its new children in order, the parent's part through the parent's impl, and a
//! `#[object(skip)]` field takes its `Default` (as [`create`](crate::reflection::create)
//! does). No name look-up, no `Any` round trip for the built-in field types. A child that
//! does not fit its field is a [`TransformError`] of kind
//! [`WrongChildType`](TransformErrorKind::WrongChildType). Built-in containers
//! (`Array`, `Map`, `List`, `Dict`) take part through their [`BuiltinHooks`](crate::builtin::BuiltinHooks).
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::transform::{mutate, Rewriter, TransformError, TransformErrorKind};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.tr.Expr")]
//! struct Expr { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.tr.Neg", parent = Expr)]
//! struct Neg { base: Expr, arg: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.tr.Stmt")]
//! struct Stmt { base: Object }
//!
//! // A pass that puts a `Stmt` where an `Expr` belongs gets an error, not UB.
//! struct Bad;
//! impl Rewriter for Bad {
//!     type Error = TransformError;
//!     fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
//!         if node.is::<Neg>() {
//!             return Ok(None);
//!         }
//!         Ok(Some(make_object(Stmt { base: Object::new() }).into_object_ref()))
//!     }
//! }
//! let leaf = make_object(Expr { base: Object::new() });
//! let e = make_object(Neg { base: Expr { base: Object::new() }, arg: leaf }).into_object_ref();
//! let err = mutate(&e, &mut Bad).unwrap_err();
//! assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
//! assert_eq!((err.type_key(), err.field()), ("doc.tr.Neg", Some("arg")));
//! ```

pub(crate) mod children;
mod dispatch;
mod error;
mod mutate;
pub(crate) mod rebuild;
mod visit;

pub use self::dispatch::{DispatchError, DispatchErrorKind, TypeDispatch};
pub use self::error::{TransformError, TransformErrorKind};
pub use self::mutate::{map_children, mutate, RewriteTable, Rewriter};
pub use self::rebuild::{ChildRef, Children, Rebuild, RebuildFn};
pub use self::visit::{for_each_child, walk, Visitor, Walk};
