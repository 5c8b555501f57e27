//! A typed view of the derive input that keeps the original tokens for spans.

use syn::{Data, DeriveInput, Error, Field, Fields, Generics, Ident, Visibility};

use crate::attr::{self, ContainerAttrs, Errors, FieldAttrs};

pub struct Input<'a> {
    pub ident: &'a Ident,
    pub vis: &'a Visibility,
    pub generics: &'a Generics,
    pub attrs: ContainerAttrs,
    /// The `repr` hints, e.g. `C`, `align(8)`, `packed`, with their spans.
    pub repr: Vec<syn::Meta>,
    pub fields: Vec<FieldInfo<'a>>,
}

pub struct FieldInfo<'a> {
    pub field: &'a Field,
    pub ident: &'a Ident,
    pub attrs: FieldAttrs,
}

impl<'a> Input<'a> {
    /// Parses the input; fails only on what makes any further check impossible (not a
    /// struct with named fields). Errors in attributes are returned alongside, so that
    /// `check::validate` reports them together with its own.
    pub fn from_syn(input: &'a DeriveInput) -> syn::Result<(Self, Errors)> {
        let mut errors = Errors::default();
        let attrs = attr::parse_container(&input.attrs, &mut errors);
        let mut repr = Vec::new();
        for a in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
            match a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            ) {
                Ok(list) => repr.extend(list),
                Err(e) => errors.push(e),
            }
        }
        let data = match &input.data {
            Data::Struct(s) => s,
            Data::Enum(e) => {
                return Err(errors.fail(Error::new_spanned(
                    e.enum_token,
                    "#[derive(Object)] needs a struct: an object embeds its parent as its first field, which an enum cannot",
                )));
            }
            Data::Union(u) => {
                return Err(errors.fail(Error::new_spanned(
                    u.union_token,
                    "#[derive(Object)] needs a struct, not a union: object fields must not overlap the header",
                )));
            }
        };
        let named = match &data.fields {
            Fields::Named(n) => n,
            Fields::Unnamed(u) => {
                return Err(errors.fail(Error::new_spanned(
                    u,
                    "#[derive(Object)] needs named fields, the first one being the parent (e.g. `base: Object`)",
                )));
            }
            Fields::Unit => {
                return Err(errors.fail(Error::new_spanned(
                    &input.ident,
                    "an object struct needs its parent as its first field (e.g. `struct Node { base: Object }`)",
                )));
            }
        };
        let mut fields = Vec::new();
        for f in &named.named {
            let fa = attr::parse_field(&f.attrs, &mut errors);
            if let Some(ident) = &f.ident {
                fields.push(FieldInfo {
                    field: f,
                    ident,
                    attrs: fa,
                });
            }
        }
        let parsed = Input {
            ident: &input.ident,
            vis: &input.vis,
            generics: &input.generics,
            attrs,
            repr,
            fields,
        };
        Ok((parsed, errors))
    }
}
