//! `#[derive(Object)]`: makes a `#[repr(C)]` struct an object type of the unified
//! object protocol. Use it through `object_core::Object`, which re-exports it.
//! (`#[derive(ObjectEnum)]`, re-exported as `object_core::ObjectEnum`, makes a
//! field-less enum a field type: see [`macro@ObjectEnum`].)
//!
//! ```ignore
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "relay.Function", parent = Expr, slots = 8)]
//! pub struct FunctionNode { base: Expr, params: Array<Var>, body: ObjectPtr<Expr> }
//! ```
//!
//! Container attributes, in one or more `#[object(...)]`:
//!
//! | attribute | meaning |
//! | --- | --- |
//! | `key = "…"` | the unique type key (required) |
//! | `parent = Path` | the parent object type, which must be the first field (default `Object`) |
//! | `slots = N` | type indices reserved for descendants registered at run time |
//! | `final` | no descendants; `is::<T>()` is one compare |
//! | `index = N` | a static type index in `65..128` (the core types) |
//! | `overflow = bool` | whether descendants may overflow the slots (default `true`) |
//! | `crate = path` | where `object_core` is, for renamed dependencies |
//! | `opaque` | no reflected fields, no `create`, no generated `Debug` (built-ins with a form of their own) |
//! | `custom_debug` | the type writes its own `Debug`, which the printer then uses too |
//! | `structural = "…"` | how structural equality and hashing treat the type: `"tree"` (by fields, the default), `"dag"` (sharing must correspond), `"var"` (a variable, by binding), `"identity"` (only the same object); a subtype takes its parent's unless it says otherwise |
//! | `builtin = PATH` | a `static object_core::builtin::BuiltinHooks`: what an `opaque` built-in holds (items, entries, text, a tensor …) and how one is built, read by structural equality, the transform walkers, the printer, the JSON graph and Python |
//! | `abstract` | a base that is never instantiated itself: no generated constructor, `create` and the JSON graph loader refuse it (`ReflectErrorKind::Abstract`, `GraphErrorKind::Abstract`), `TypeInfo::is_abstract` says so; its subtypes (link-time or run-time) are instantiated as usual |
//! | `constructor = false` | no generated constructor (for a type with a `new` of another meaning) |
//! | `constructor = "name"` | the constructor is `name` (and `name_value`, `name_all`) instead of `new` |
//!
//! Field attributes:
//!
//! | attribute | meaning |
//! | --- | --- |
//! | `skip` | not reflected; `create` fills it with `Default::default()` |
//! | `rename = "…"` | the reflected name |
//! | `read_only` | a flag in the field table |
//! | `no_eq` | left out of structural equality and hashing (a flag in the field table) |
//! | `def` | a definition site: structural equality binds the variables reached through it (the field must hold objects) |
//! | `default` | a value `create` (and so a JSON graph's node) may leave out: it is then `Default::default()` |
//! | `default = expr` | the same, with `expr` (any expression of the field's type, evaluated each time it is needed, e.g. `default = 42`, `default = String::from("x")`) |
//!
//! A default is recorded in the field table (`FieldInfo::default_value` makes it as
//! an `Any`, the `HAS_DEFAULT` flag marks it), so front-ends and the JSON graph loader
//! see it; an `Option` field may be left out without one (it is then `None`). A
//! `default` on the parent field or on a `skip` field (always built with `Default`) is
//! an error, and so is an expression of another type (reported on the expression) or a
//! bare `default` on a type without `Default` (reported on the key).
//!
//! ```ignore
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "demo.Conv")]
//! pub struct Conv { base: Object, channels: i64, #[object(default = 1)] stride: i64 }
//! // create("demo.Conv", [("channels", Any::from(8))]) has stride 1.
//! ```
//!
//! # Constructors
//!
//! Unless the type is `abstract`, `opaque` or says `constructor = false`, the derive
//! writes
//!
//! - `T::new(…) -> ObjectPtr<T>`: one parameter per reflected field *without* a declared
//!   default, the ancestors' fields first (root-most first), then the type's own, each in
//!   declaration order. A parameter for a field written `ObjectPtr<U>` (or `ObjectRef`)
//!   takes `impl IntoObjectPtr<U>`, so any subtype's handle goes in as it is; a field of
//!   a primitive type (integers, floats, `bool`, `char`) takes that type, so literals
//!   fit; other fields take `impl Into<F>` (`&str` for a `String` field, …). Fields with a declared
//!   default (`#[object(default)]`) take it; `skip` fields are `Default::default()`.
//! - `T::new_value(…) -> T`: the same, as a value, for other allocators
//!   (`ObjectPool::make`, `make_object_as`).
//! - `T::new_all(…) -> ObjectPtr<T>` when some field has a default: every field,
//!   defaulted ones included, in the same order.
//!
//! ```ignore
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "tour.BinOp", parent = Expr, abstract)]
//! pub struct BinOp { base: Expr, pub lhs: ObjectPtr<Expr>, pub rhs: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "tour.Add", parent = BinOp, final)]
//! pub struct Add { base: BinOp }
//!
//! let e: ObjectPtr<Add> = Add::new(IntImm::new(1), Var::new("x"));
//! ```
//!
//! A derive cannot see its parent's fields, so each derive also writes, beside the type,
//! a hidden macro holding its constructor fields (and its ancestors'), re-exported under
//! the type's own name in the macro namespace: wherever the path `parent = …` names the
//! parent type, it names that macro too, in this crate or another (a `pub` type's macro
//! is `#[macro_export]`ed under a name derived from its key). The child's derive calls
//! it, and it writes the child's constructors. Consequences: the parent path must name
//! the type itself (not a `type` alias); a parent named `Object` is taken to be the
//! root; a type's name must not clash with a macro in its module (a type named like
//! a derive, e.g. `Debug`, would shadow it).
//!
//! Besides `ObjectType`, the derive implements `Reflect` (the static field table, the
//! parent's fields first), registers the type's reflection, and writes a `Debug` that
//! prints through it.
//!
//! Every misuse is a compile error on the offending token, all reported at once.

// The derive writes `unsafe impl`s and `unsafe` blocks into its output (as tokens);
// it runs no unsafe code itself.
#![deny(unsafe_code)]

mod ast;
mod attr;
mod check;
mod ctor;
mod enum_field;
mod expand;
mod view;

use proc_macro::TokenStream;

/// Derives `ObjectType` and `Reflect` (with the registration, the field table, the field
/// projection and `Debug`). See the crate docs.
#[proc_macro_derive(Object, attributes(object))]
pub fn derive_object(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    ast::Input::from_syn(&input)
        .and_then(|(parsed, errors)| {
            check::validate(&parsed, errors).map(|()| expand::expand(&parsed))
        })
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `ObjectEnum` and `FieldValue` for a field-less enum, so that it can be a
/// reflected field of an object type: stored in place (the enum itself), compared and
/// hashed by value, printed and written to the JSON graph by name, an `IntEnum` in
/// Python, taken by `create` by name or by value. Use it through
/// `object_core::ObjectEnum`, which re-exports it; `object_core::reflection::ObjectEnum`
/// has a runnable example.
///
/// ```ignore
/// #[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
/// #[repr(u8)]                                   // optional: compared and read by C in place
/// #[object_enum(key = "frontend.BinOpKind")]    // optional: the key (default: the Rust name)
/// pub enum BinOpKind { Add, Sub, #[object_enum(rename = "mul")] Mul, Div = 10 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "frontend.Binary", parent = Expr)]
/// pub struct Binary { base: Expr, op: BinOpKind, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
///
/// let e = Binary::new(BinOpKind::Add, a, b);
/// ```
///
/// | attribute | on | meaning |
/// | --- | --- | --- |
/// | `key = "…"` | the enum | its key: the field's static type key, Python's class, C's descriptor (default: the Rust name) |
/// | `crate = path` | the enum | where `object_core` is, for renamed dependencies |
/// | `rename = "…"` | a variant | its reflected name (default: the Rust name) |
///
/// Explicit discriminants and any integer `#[repr]` (but 128-bit ones) are fine; the
/// value of a variant is `Variant as i64`. An enum with fields, generic parameters or
/// two variants of one name is refused, each with an error on the offending token.
#[proc_macro_derive(ObjectEnum, attributes(object_enum))]
pub fn derive_object_enum(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    enum_field::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Writes a type's generated constructors and its constructor-list macro, from its
/// parent's list. Not public API: the expansion of `#[derive(Object)]` reaches it through
/// the parent's list macro (see `ctor.rs`).
#[doc(hidden)]
#[proc_macro]
pub fn __object_ctor(input: TokenStream) -> TokenStream {
    ctor::object_ctor(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares an exhaustive view of a base object type: an `enum` with one variant per
/// listed subtype (a reference to it) and `Other`, built in O(1) by `View::of(&ptr)` or
/// `ptr.view()`. See `object_core::view` for the semantics and an example.
#[proc_macro]
pub fn object_view(input: TokenStream) -> TokenStream {
    view::object_view(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
