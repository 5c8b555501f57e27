//! `#[derive(ObjectEnum)]`: a field-less enum as a reflected object field.
//!
//! Parses the enum and its `#[object_enum(...)]` attributes, checks them (every misuse
//! a spanned error, all reported at once), and writes `unsafe impl ObjectEnum` (the
//! descriptor, a `static`, and the variant ↔ position ↔ value functions) and
//! `impl FieldValue` (kind `Enum`, stored in place, valued as the variant's integer).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Data, DeriveInput, Error, Fields, Ident, LitStr, Path};

/// The attribute's name.
const OBJECT_ENUM: &str = "object_enum";
/// Enum-level keys.
const KEY: &str = "key";
const CRATE: &str = "crate";
/// Variant-level keys.
const RENAME: &str = "rename";

/// Collects errors so that every one is reported in one build.
#[derive(Default)]
struct Errors(Option<Error>);

impl Errors {
    fn push(&mut self, e: Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
}

/// What the enum's representation says, for the descriptor.
enum Repr {
    /// No integer `repr`.
    Rust,
    /// `#[repr(u8)]` …: the integer's size (`None` for `usize`/`isize`, the target's
    /// pointer width) and sign.
    Int { size: Option<u8>, signed: bool },
}

/// One variant: its Rust name and its reflected name.
struct Variant<'a> {
    ident: &'a Ident,
    name: LitStr,
}

/// `#[derive(ObjectEnum)]`'s expansion, or its errors.
pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let data = match &input.data {
        Data::Enum(e) => e,
        Data::Struct(s) => {
            return Err(Error::new_spanned(
                s.struct_token,
                "#[derive(ObjectEnum)] is for field-less enums; a struct is an object type with #[derive(Object)]",
            ))
        }
        Data::Union(u) => {
            return Err(Error::new_spanned(
                u.union_token,
                "#[derive(ObjectEnum)] is for field-less enums, not unions",
            ))
        }
    };
    if !input.generics.params.is_empty() {
        errors.push(Error::new_spanned(
            &input.generics.params,
            "an ObjectEnum cannot be generic: its variants and their values are one table, the same for every use",
        ));
    }
    if let Some(w) = &input.generics.where_clause {
        errors.push(Error::new_spanned(w, "an ObjectEnum takes no where clause"));
    }
    let (key, krate) = parse_enum_attrs(input, &mut errors);
    let repr = parse_repr(input, &mut errors);
    if data.variants.is_empty() {
        errors.push(Error::new_spanned(
            &input.ident,
            "an ObjectEnum needs at least one variant: a field of an enum without variants could hold no value",
        ));
    }
    let mut variants: Vec<Variant<'_>> = Vec::new();
    for v in &data.variants {
        match &v.fields {
            Fields::Unit => {}
            fields => errors.push(Error::new_spanned(
                fields,
                format!(
                    "variant `{}` has fields: #[derive(ObjectEnum)] takes field-less enums only; an enum whose variants hold data is an object hierarchy (an abstract base type with one subtype per variant, matched with `object_view!`)",
                    v.ident
                ),
            )),
        }
        let name = parse_variant_attrs(&v.attrs, &mut errors)
            .unwrap_or_else(|| LitStr::new(&v.ident.to_string(), v.ident.span()));
        if let Some(first) = variants.iter().find(|w| w.name.value() == name.value()) {
            errors.push(Error::new(
                name.span(),
                format!(
                    "duplicate variant name `{}` (variant `{}` has it too): each variant needs its own reflected name",
                    name.value(),
                    first.ident
                ),
            ));
        }
        variants.push(Variant {
            ident: &v.ident,
            name,
        });
    }
    if let Some(e) = errors.0 {
        return Err(e);
    }
    let key = key.unwrap_or_else(|| LitStr::new(&input.ident.to_string(), input.ident.span()));
    Ok(expand(input, &key, krate, &repr, &variants))
}

/// The enum's `#[object_enum(key = "…", crate = path)]`.
fn parse_enum_attrs(input: &DeriveInput, errors: &mut Errors) -> (Option<LitStr>, TokenStream) {
    let mut key: Option<LitStr> = None;
    let mut krate: Option<Path> = None;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident(OBJECT_ENUM))
    {
        let res = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident(KEY) {
                let s: LitStr = meta.value()?.parse()?;
                if s.value().is_empty() {
                    errors.push(Error::new_spanned(&s, "an enum's key must not be empty"));
                }
                if key.replace(s).is_some() {
                    errors.push(Error::new_spanned(path, "duplicate object_enum attribute `key`"));
                }
            } else if path.is_ident(CRATE) {
                let value = meta.value()?;
                let p: Path = if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse()?
                } else {
                    Path::parse_mod_style(value)?
                };
                if krate.replace(p).is_some() {
                    errors.push(Error::new_spanned(path, "duplicate object_enum attribute `crate`"));
                }
            } else {
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                errors.push(Error::new_spanned(
                    path,
                    format!(
                        "unknown object_enum attribute `{}` (expected one of: key, crate; variants take `rename`)",
                        quote!(#path).to_string().replace(' ', "")
                    ),
                ));
            }
            Ok(())
        });
        if let Err(e) = res {
            errors.push(e);
        }
    }
    let krate = match krate {
        Some(p) => quote!(#p),
        None => quote!(::object_core),
    };
    (key, krate)
}

/// A variant's `#[object_enum(rename = "…")]`.
fn parse_variant_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> Option<LitStr> {
    let mut rename: Option<LitStr> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident(OBJECT_ENUM)) {
        let res = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident(RENAME) {
                let s: LitStr = meta.value()?.parse()?;
                if s.value().is_empty() {
                    errors.push(Error::new_spanned(&s, "a variant's name must not be empty"));
                }
                if rename.replace(s).is_some() {
                    errors.push(Error::new_spanned(
                        path,
                        "duplicate object_enum attribute `rename`",
                    ));
                }
            } else {
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                errors.push(Error::new_spanned(
                    path,
                    format!(
                        "unknown object_enum variant attribute `{}` (expected: rename)",
                        quote!(#path).to_string().replace(' ', "")
                    ),
                ));
            }
            Ok(())
        });
        if let Err(e) = res {
            errors.push(e);
        }
    }
    rename
}

/// The integer of the enum's `#[repr(…)]`, if it has one.
fn parse_repr(input: &DeriveInput, errors: &mut Errors) -> Repr {
    let mut repr = Repr::Rust;
    for a in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let Ok(list) = a.parse_args_with(
            syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
        ) else {
            // (rustc reports a malformed `repr` itself.)
            continue;
        };
        for m in list {
            let Some(ident) = m.path().get_ident() else {
                continue;
            };
            let (size, signed) = match ident.to_string().as_str() {
                "u8" => (Some(1), false),
                "i8" => (Some(1), true),
                "u16" => (Some(2), false),
                "i16" => (Some(2), true),
                "u32" => (Some(4), false),
                "i32" => (Some(4), true),
                "u64" => (Some(8), false),
                "i64" => (Some(8), true),
                "usize" => (None, false),
                "isize" => (None, true),
                "u128" | "i128" => {
                    errors.push(Error::new_spanned(
                        ident,
                        "an ObjectEnum's values are `i64`s: a 128-bit representation could hold discriminants no `i64` can",
                    ));
                    continue;
                }
                // `C`, `align(…)`, …: not an integer representation.
                _ => continue,
            };
            repr = Repr::Int { size, signed };
        }
    }
    repr
}

fn expand(
    input: &DeriveInput,
    key: &LitStr,
    krate: TokenStream,
    repr: &Repr,
    variants: &[Variant<'_>],
) -> TokenStream {
    let name = &input.ident;
    let refl = quote!(#krate::reflection);
    let idents: Vec<&Ident> = variants.iter().map(|v| v.ident).collect();
    let names: Vec<&LitStr> = variants.iter().map(|v| &v.name).collect();
    let positions: Vec<usize> = (0..variants.len()).collect();
    let repr = match repr {
        Repr::Rust => quote!(#refl::EnumRepr::Rust),
        Repr::Int { size, signed } => {
            let size = match size {
                Some(n) => quote!(#n),
                None => quote!(::core::mem::size_of::<usize>() as u8),
            };
            quote!(#refl::EnumRepr::Int { size: #size, signed: #signed })
        }
    };
    let info = Ident::new("__OBJECT_ENUM_INFO", Span::call_site());
    // (Call-site spans throughout: the `unsafe impl` must not carry a span of the
    // user's code, or a crate's `forbid(unsafe_code)` would reject it.)
    quote! {
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            static #info: #refl::EnumInfo = #refl::EnumInfo::new(
                #key,
                &[#(#refl::EnumVariant::new(#names, #name::#idents as i64)),*],
                #repr,
            );

            #[automatically_derived]
            // SAFETY: `#name` is a field-less enum (the derive accepts unit variants
            // only); the descriptor lists its variants in declaration order, each with
            // `Variant as i64`, and says `Int` only for the integer `#[repr]` the enum
            // has (of the size and sign written there); the functions below follow the
            // same list.
            unsafe impl #refl::ObjectEnum for #name {
                const ENUM_INFO: &'static #refl::EnumInfo = &#info;

                #[inline]
                fn variant_index(&self) -> usize {
                    match self {
                        #(Self::#idents => #positions,)*
                    }
                }

                #[inline]
                fn from_variant_index(index: usize) -> ::core::option::Option<Self> {
                    match index {
                        #(#positions => ::core::option::Option::Some(Self::#idents),)*
                        _ => ::core::option::Option::None,
                    }
                }

                #[inline]
                fn value(&self) -> i64 {
                    match self {
                        #(Self::#idents => Self::#idents as i64,)*
                    }
                }
            }

            #[automatically_derived]
            impl #refl::FieldValue for #name {
                const KIND: #refl::FieldKind = #refl::FieldKind::Enum;
                const STATIC_TYPE_KEY: &'static str = #key;
                const ENUM: ::core::option::Option<&'static #refl::EnumInfo> =
                    ::core::option::Option::Some(&#info);
                const LAYOUT: #refl::FieldLayout<Self> = #refl::FieldLayout::<Self>::object_enum();
                type Take = #refl::ByInto;

                #[inline]
                fn to_any(&self) -> ::core::result::Result<#krate::Any, #krate::TypeError> {
                    ::core::result::Result::Ok(#krate::Any::from(#refl::ObjectEnum::value(self)))
                }

                #[inline]
                fn from_any(value: #krate::Any) -> ::core::result::Result<Self, #krate::TypeError> {
                    <Self as #refl::ObjectEnum>::from_view(value.view())
                }

                #[inline]
                fn visit(&self, field: &#refl::FieldInfo, v: &mut dyn #refl::AttrVisitor) {
                    v.visit_enum(
                        field,
                        #refl::ObjectEnum::value(self),
                        #refl::ObjectEnum::variant_name(self),
                    );
                }

                #[inline]
                fn borrow_value(&self) -> #refl::ValueRef<'_> {
                    #refl::ValueRef::Value(#krate::AnyView::from(#refl::ObjectEnum::value(self)))
                }

                #[inline]
                fn rebuild_field(
                    &self,
                    _: &mut #krate::transform::Children<'_>,
                ) -> ::core::result::Result<Self, #krate::TypeError> {
                    // A copy of the variant (the enum holds no child), by its position:
                    // no look-up by value.
                    <Self as #refl::ObjectEnum>::from_variant_index(
                        #refl::ObjectEnum::variant_index(self),
                    )
                    .ok_or_else(|| #krate::TypeError::new(#key, "a variant the enum does not list"))
                }
            }
        };
    }
}
