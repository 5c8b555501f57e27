//! `object_view!`: an exhaustive view enum over a base type's listed subtypes.
//!
//! ```ignore
//! object_view! {
//!     /// What an `Expr` is.
//!     pub enum ExprView for Expr { Var, IntImm, BinOp, Add, Sub(ops::Sub) }
//! }
//! ```
//!
//! writes `pub enum ExprView<'a> { Var(&'a Var), …, Other(&'a ObjectPtr<Expr>) }`,
//! `ExprView::of(&ObjectPtr<Expr>)`, `ExprView::unlisted()`,
//! `ExprView::assert_exhaustive()` and `HasView for Expr` (so `expr.view()` works).

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{braced, Attribute, Ident, Path, Token, Visibility};

struct Variant {
    name: Ident,
    ty: Path,
}

impl Parse for Variant {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let ty: Path = input.parse()?;
        if input.peek(syn::token::Paren) {
            let Some(name) = ty.get_ident().cloned() else {
                return Err(syn::Error::new_spanned(
                    ty,
                    "a variant is `Type` or `Name(path::Type)`",
                ));
            };
            let content;
            syn::parenthesized!(content in input);
            let ty: Path = content.parse()?;
            return Ok(Variant { name, ty });
        }
        let Some(last) = ty.segments.last() else {
            return Err(syn::Error::new_spanned(ty, "expected a type"));
        };
        let name = last.ident.clone();
        Ok(Variant { name, ty })
    }
}

struct ViewInput {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    base: Path,
    variants: Punctuated<Variant, Token![,]>,
}

impl Parse for ViewInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let _: Token![enum] = input.parse()?;
        let name: Ident = input.parse()?;
        let _: Token![for] = input.parse()?;
        let base: Path = input.parse()?;
        let content;
        braced!(content in input);
        let variants = content.parse_terminated(Variant::parse, Token![,])?;
        Ok(ViewInput {
            attrs,
            vis,
            name,
            base,
            variants,
        })
    }
}

pub fn object_view(input: TokenStream) -> syn::Result<TokenStream> {
    let ViewInput {
        attrs,
        vis,
        name,
        base,
        variants,
    } = syn::parse2(input)?;
    let krate = quote!(::object_core);
    let private = quote!(#krate::__private);

    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let mut seen_names = std::collections::HashSet::new();
    let mut seen_tys = std::collections::HashSet::new();
    for v in &variants {
        if v.name == "Other" {
            push(syn::Error::new_spanned(
                &v.name,
                "`Other` is the view's own variant for unlisted subtypes; name this one differently",
            ));
        }
        if !seen_names.insert(v.name.to_string()) {
            push(syn::Error::new_spanned(
                &v.name,
                format!("the variant `{}` is listed twice", v.name),
            ));
        }
        let ty = &v.ty;
        if !seen_tys.insert(quote!(#ty).to_string()) {
            push(syn::Error::new_spanned(ty, "this type is listed twice"));
        }
    }
    if variants.len() >= usize::from(u16::MAX - 1) {
        push(syn::Error::new(
            name.span(),
            "a view lists at most 65533 types",
        ));
    }
    if let Some(e) = errors {
        return Err(e);
    }

    let names: Vec<&Ident> = variants.iter().map(|v| &v.name).collect();
    let tys: Vec<&Path> = variants.iter().map(|v| &v.ty).collect();
    let docs = variants.iter().map(|v| {
        let ty = &v.ty;
        let ty = quote!(#ty).to_string().replace(' ', "");
        format!("A `{ty}` (or a subtype that no more derived variant lists).")
    });
    // Each listed type must be a subtype of the base, reported at the type.
    let checks = tys.iter().map(|ty| {
        quote::quote_spanned! {ty.span()=>
            __is_subtype::<#ty>();
        }
    });
    let arms = names.iter().zip(&tys).enumerate().map(|(k, (n, ty))| {
        let k = k + 1;
        quote! {
            // SAFETY: the table maps the object's type to variant `k` only if it is an
            // instance of the `k`-th listed type (`ViewTable::classify`).
            #k => #name::#n(unsafe { #private::view_cast::<#base, #ty>(ptr) }),
        }
    });
    let view_name = name.to_string();
    let doc_other = "Any other subtype of the base: a type that is not listed and is not a subtype of a listed one (a plugin's, one registered at run time, or one of another crate).";

    Ok(quote! {
        #(#attrs)*
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
        #vis enum #name<'a> {
            #(
                #[doc = #docs]
                #names(&'a #tys),
            )*
            #[doc = #doc_other]
            Other(&'a #krate::ObjectPtr<#base>),
        }

        #[allow(dead_code)]
        const _: () = {
            fn __is_subtype<T: #krate::IsA<#base>>() {}
            fn __check() {
                #(#checks)*
            }

            static __VARIANTS: &[fn() -> &'static #krate::TypeInfo] =
                &[#(<#tys as #krate::ObjectType>::type_info,)*];

            #[automatically_derived]
            impl<'a> #name<'a> {
                /// The view of `ptr`: the variant of the most derived listed type the
                /// object is an instance of, or `Other`. O(1): one look-up in a table
                /// built on first use.
                #[inline]
                pub fn of(ptr: &'a #krate::ObjectPtr<#base>) -> Self {
                    static __TABLE: #private::ViewTable = #private::ViewTable::new();
                    match __TABLE.classify::<#base>(ptr.type_index(), __VARIANTS) {
                        #(#arms)*
                        _ => #name::Other(ptr),
                    }
                }

                /// The concrete (not `abstract`) subtypes of the base registered by
                /// Rust code of this crate that this view does not list by exact type:
                /// call it in a test (`assert!(View::unlisted().is_empty())`, or
                /// [`assert_exhaustive`](Self::assert_exhaustive)) so that a node type
                /// added without a variant is caught.
                pub fn unlisted() -> ::std::vec::Vec<&'static #krate::TypeInfo> {
                    #private::view_unlisted::<#base>(__VARIANTS, __crate_name())
                }

                /// Panics naming every type [`unlisted`](Self::unlisted) reports.
                #[track_caller]
                pub fn assert_exhaustive() {
                    #private::view_assert_exhaustive::<#base>(#view_name, __VARIANTS, __crate_name())
                }
            }

            fn __crate_name() -> &'static str {
                let path: &'static str = ::core::module_path!();
                match path.find("::") {
                    ::core::option::Option::Some(i) => &path[..i],
                    ::core::option::Option::None => path,
                }
            }

            #[automatically_derived]
            impl #krate::view::HasView for #base {
                type View<'a> = #name<'a>;
                #[inline]
                fn view_of(ptr: &#krate::ObjectPtr<Self>) -> #name<'_> {
                    #name::of(ptr)
                }
            }
        };
    })
}
