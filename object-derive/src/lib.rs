//! `#[derive(Object)]`, `object_view!` and the constructors' helper macro, for the
//! unified object protocol. Use them through `object_core` (`object_core::Object`,
//! `object_core::object_view!`): the attribute reference, with runnable examples, is
//! the documentation of `object_core::Object`.
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
