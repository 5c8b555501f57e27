//! Writing passes: dispatch by type, and a generic visitor and mutator driven by
//! reflection.
//!
//! - [`TypeDispatch<F>`]: a per-type table (TVM's `NodeFunctor`): `set_dispatch::<Add>(f)`,
//!   or by key / index for run-time and plugin types; [`dispatch`](TypeDispatch::dispatch)
//!   falls back to the nearest ancestor with an entry, in O(1) once a type is cached.
//! - [`for_each_child`] and [`walk`]: the child objects of any reflected node (fields
//!   holding objects, a container's items), and a depth-first walk of a whole graph
//!   ([`Visitor`]), each shared node once; [`for_each_child_field`] and
//!   [`Visitor::child`] say where each child sits ([`ChildField`]: the field's name,
//!   whether it is a definition site, the child's position, a container item's index).
//! - [`mutate`] with a [`Rewriter`] (or a [`RewriteTable`] of per-type hooks): a bottom-up
//!   rewrite that rebuilds a node only when a child changed, otherwise keeps the very same
//!   object, and rewrites a shared node once; hooks before a node (`pre`), before each
//!   of its children (`child`: visit, keep or replace it, with the earlier children's
//!   results in hand) and after it (`post`), which is what scoped rewrites need (below);
//!   [`map_children`] for one node's children alone.
//!
//! Everything here walks with explicit stacks: a 10,000,000-deep graph is visited and
//! rewritten on a 2 MiB thread. There is no unsafe code here: fields are read through
//! `reflection::raw`.
//!
//! # Rebuilding
//!
//! A node whose children changed is copied through its type's field table (its
//! reflection's [`RebuildFn`]; `#[derive(Object)]` writes no code of its own for it): each
//! reflected field is copied
//! ([`FieldValue::rebuild_field`](crate::reflection::FieldValue::rebuild_field)) taking
//! its new children in order, the parent's fields first, and a `#[object(skip)]` field
//! takes its `Default` (as [`create`](crate::reflection::create) does); a type registered
//! at run time with fields copies its cells the same way, checking each new child
//! against the field's declared type. No name look-up, no `Any` round trip for the built-in field types. A child that
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
//!         Ok(Some(Stmt::new().into_object_ref()))
//!     }
//! }
//! let e = Neg::new(Expr::new()).into_object_ref();
//! let err = mutate(&e, &mut Bad).unwrap_err();
//! assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
//! assert_eq!((err.type_key(), err.field()), ("doc.tr.Neg", Some("arg")));
//! ```
//!
//! # Scoped rewrites
//!
//! A pass over binders (`let x = v in body`) acts before the body is visited, with
//! state in hand, in the same walk: [`Rewriter::child`] is called before each child
//! with the field it sits in and the results of the earlier children, so at a `let`'s
//! `body` it sees the rewritten `v` and can push `x -> v'` into the pass's state;
//! `pre` of a variable substitutes from that state; `post` of the `let` pops the scope
//! and may return the rewritten body in the `let`'s place. A binder's own field is a
//! definition site (`#[object(def)]`): the hook keeps it ([`ChildStep::Keep`]) rather
//! than let `pre` substitute it. One [`mutate`] call, one memo (a shared subtree is
//! rewritten once), no recursion in proportion to depth. The memo is right for
//! well-scoped IRs (each variable bound once, used only under its binder); for
//! anything else see [`Rewriter::memoize`].
//!
//! Constant folding with `let` substitution:
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::transform::{mutate, ChildField, ChildStep, Rewriter, TransformError};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.scope.Expr", slots = 8)]
//! struct Expr { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.scope.Int", parent = Expr)]
//! struct Int { base: Expr, value: i64 }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.scope.Var", parent = Expr)]
//! struct Var { base: Expr, name: String }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.scope.Add", parent = Expr)]
//! struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.scope.Let", parent = Expr)]
//! struct Let {
//!     base: Expr,
//!     #[object(def)]
//!     var: ObjectPtr<Var>,
//!     value: ObjectPtr<Expr>,
//!     body: ObjectPtr<Expr>,
//! }
//!
//! /// Folds `Int + Int`, and substitutes each `let` whose value folds to an `Int` into
//! /// its body (the `let` goes).
//! #[derive(Default)]
//! struct Fold {
//!     /// The `let`s being visited, innermost last: the variable and, if it folded to
//!     /// a constant, its value (`None` still hides an outer binding of the variable).
//!     scope: Vec<(ObjectPtr<Var>, Option<ObjectRef>)>,
//! }
//!
//! impl Rewriter for Fold {
//!     type Error = TransformError;
//!
//!     fn child(
//!         &mut self,
//!         parent: &ObjectRef,
//!         field: ChildField,
//!         _: &ObjectRef,
//!         earlier: &[ObjectRef],
//!     ) -> Result<ChildStep, TransformError> {
//!         if field.is_definition() {
//!             return Ok(ChildStep::Keep); // a binder is not a use
//!         }
//!         if let (Some(l), Some("body")) = (parent.downcast_ref::<Let>(), field.name()) {
//!             // `earlier` is `[var, value]`, the value already folded.
//!             let value = earlier.get(1).filter(|v| v.is::<Int>()).cloned();
//!             self.scope.push((l.var.clone(), value));
//!         }
//!         Ok(ChildStep::Visit)
//!     }
//!
//!     fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
//!         if !node.is::<Var>() {
//!             return Ok(None);
//!         }
//!         let bound = self.scope.iter().rev().find(|(v, _)| ObjectPtr::ptr_eq(v, node));
//!         Ok(bound.and_then(|(_, value)| value.clone()))
//!     }
//!
//!     fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
//!         if let Some(l) = node.downcast_ref::<Let>() {
//!             return Ok(match self.scope.pop() {
//!                 Some((_, Some(_))) => l.body.clone().into_object_ref(),
//!                 _ => node,
//!             });
//!         }
//!         if let Some(a) = node.downcast_ref::<Add>() {
//!             if let (Some(x), Some(y)) = (a.lhs.downcast_ref::<Int>(), a.rhs.downcast_ref::<Int>()) {
//!                 return Ok(Int::new(x.value + y.value).into_object_ref());
//!             }
//!         }
//!         Ok(node)
//!     }
//! }
//!
//! fn show(e: &ObjectRef) -> String {
//!     if let Some(i) = e.downcast_ref::<Int>() {
//!         return i.value.to_string();
//!     }
//!     if let Some(v) = e.downcast_ref::<Var>() {
//!         return v.name.clone();
//!     }
//!     if let Some(a) = e.downcast_ref::<Add>() {
//!         return format!("({} + {})", show(a.lhs.as_object_ref()), show(a.rhs.as_object_ref()));
//!     }
//!     let l = e.downcast_ref::<Let>().unwrap();
//!     let (value, body) = (show(l.value.as_object_ref()), show(l.body.as_object_ref()));
//!     format!("let {} = {value} in {body}", l.var.name)
//! }
//!
//! // let x = 1 + 2 in let z = x + 4 in let w = y in (z + w) + (x + y), with `x + y` shared
//! let (x, y, z, w) = (Var::new("x"), Var::new("y"), Var::new("z"), Var::new("w"));
//! let xy = Add::new(x.clone(), y.clone());
//! let program = Let::new(
//!     x.clone(),
//!     Add::new(Int::new(1), Int::new(2)),
//!     Let::new(
//!         z.clone(),
//!         Add::new(x.clone(), Int::new(4)),
//!         Let::new(w.clone(), y.clone(), Add::new(Add::new(z, w), xy.clone())),
//!     ),
//! )
//! .into_object_ref();
//! let shared = Let::new(x, Int::new(3), Add::new(xy.clone(), xy)).into_object_ref();
//!
//! let folded = mutate(&program, &mut Fold::default())?;
//! assert_eq!(show(&folded), "let w = y in ((7 + w) + (3 + y))");
//!
//! // The shared `x + y` is rewritten once: both parents hold the same new node.
//! let folded = mutate(&shared, &mut Fold::default())?;
//! let sum = folded.downcast_ref::<Add>().unwrap();
//! assert!(ObjectPtr::ptr_eq(&sum.lhs, &sum.rhs));
//! assert_eq!(show(&folded), "((3 + y) + (3 + y))");
//! # Ok::<(), TransformError>(())
//! ```
//!
//! Dead-`let` elimination with a [`RewriteTable`]: a `let` whose variable is not used
//! in its body (once the body's own dead `let`s are gone) is replaced by its body, and
//! the uses in its value go with it. It counts uses by occurrence, so it turns the memo
//! off ([`RewriteTable::memoize`]): a shared subtree is visited at each occurrence (one
//! that does not change is still kept as the very same object).
//!
//! ```
//! use std::collections::HashMap;
//!
//! use object_core::prelude::*;
//! use object_core::transform::{ChildStep, RewriteTable};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.dle.Expr", slots = 8)]
//! struct Expr { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.dle.Int", parent = Expr)]
//! struct Int { base: Expr, value: i64 }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.dle.Var", parent = Expr)]
//! struct Var { base: Expr, name: String }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.dle.Add", parent = Expr)]
//! struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.dle.Let", parent = Expr)]
//! struct Let {
//!     base: Expr,
//!     #[object(def)]
//!     var: ObjectPtr<Var>,
//!     value: ObjectPtr<Expr>,
//!     body: ObjectPtr<Expr>,
//! }
//!
//! #[derive(Default)]
//! struct Uses {
//!     /// Uses met so far, by variable (its address).
//!     count: HashMap<usize, usize>,
//!     /// Every use met, in order.
//!     log: Vec<usize>,
//!     /// The `let`s being visited, innermost last: where the uses of its value and of
//!     /// its body start in `log`.
//!     open: Vec<(usize, usize)>,
//! }
//! let key = |v: &ObjectPtr<Var>| ObjectPtr::as_ptr(v) as usize;
//!
//! let mut dead_lets: RewriteTable<Uses> = RewriteTable::new();
//! dead_lets
//!     .child::<Let>(|s, _, field, _, _| {
//!         if field.is_definition() {
//!             return Ok(ChildStep::Keep); // a binder is not a use
//!         }
//!         match field.name() {
//!             Some("value") => s.open.push((s.log.len(), s.log.len())),
//!             Some("body") => s.open.last_mut().unwrap().1 = s.log.len(),
//!             _ => {}
//!         }
//!         Ok(ChildStep::Visit)
//!     })
//!     .pre::<Var>(move |s, v| {
//!         *s.count.entry(key(v)).or_default() += 1;
//!         s.log.push(key(v));
//!         Ok(None)
//!     })
//!     .post::<Let>(move |s, l, _| {
//!         let (value_uses, body_uses) = s.open.pop().unwrap();
//!         if s.count.get(&key(&l.var)).is_some_and(|&n| n > 0) {
//!             return Ok(l.into_object_ref());
//!         }
//!         // Dead: the uses in its value go with it (those of the `let`s removed
//!         // inside it are gone from the log already).
//!         for gone in s.log.drain(value_uses..body_uses) {
//!             s.count.entry(gone).and_modify(|n| *n -= 1);
//!         }
//!         Ok(l.body.clone().into_object_ref())
//!     })
//!     .memoize(|_, _| false);
//!
//! // let a = 1 in let b = a + 1 in let c = 5 in c + y: `b` is dead, and with it `a`.
//! let (a, b, c, y) = (Var::new("a"), Var::new("b"), Var::new("c"), Var::new("y"));
//! let program = Let::new(
//!     a.clone(),
//!     Int::new(1),
//!     Let::new(b, Add::new(a, Int::new(1)), Let::new(c.clone(), Int::new(5), Add::new(c.clone(), y))),
//! )
//! .into_object_ref();
//! let out = dead_lets.run(&program, &mut Uses::default())?;
//! let live = out.downcast_ref::<Let>().unwrap();
//! assert!(ObjectPtr::ptr_eq(&live.var, &c));
//! assert!(live.body.is::<Add>());
//! # Ok::<(), object_core::transform::TransformError>(())
//! ```

pub(crate) mod children;
mod dispatch;
mod error;
mod field;
mod mutate;
pub(crate) mod rebuild;
mod visit;

pub use self::dispatch::{DispatchError, DispatchErrorKind, TypeDispatch};
pub use self::error::{TransformError, TransformErrorKind};
pub use self::field::ChildField;
pub use self::mutate::{map_children, mutate, ChildStep, RewriteTable, Rewriter};
pub use self::rebuild::{ChildRef, Children, RebuildFn};
pub use self::visit::{for_each_child, for_each_child_field, walk, Visitor, Walk};
