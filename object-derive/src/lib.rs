//! `#[derive(Object)]`, `#[derive(ObjectEnum)]`, `object_view!` and the constructors'
//! helper macro, for the unified object protocol. Use them through `object_core`
//! (`object_core::Object`, `object_core::ObjectEnum`, `object_core::object_view!`): the
//! attribute reference of `Object`, with runnable examples, is the documentation of
//! `object_core::Object`; `ObjectEnum`'s is [`macro@ObjectEnum`]'s.
//!
//! How the crate is laid out (serde_derive's phases): `ast` (a typed view of the input
//! keeping its tokens for spans), `attr` (parsing `#[object(...)]`, unknown and
//! duplicate keys rejected generically), `check` (one function per semantic rule, all
//! errors collected), `expand` (the impls, the field table, the typed reference),
//! `ctor` (generated constructors: each derive writes a hidden macro holding its
//! constructor fields and its ancestors', which a child's derive calls, because a
//! derive cannot see its parent's fields), `view` (`object_view!`).

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
/// projection, `Debug`, the constructors and, with `ref = …`, the typed reference). The
/// attribute reference is the documentation of `object_core::Object`.
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
