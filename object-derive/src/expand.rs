//! Code generation. Everything is wrapped in `const _: () = { … };`, uses absolute
//! paths through the `object_core` crate (or `crate = path`), and is marked
//! `#[automatically_derived]`.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use crate::ast::Input;
use crate::attr::KeyValue;

pub fn expand(input: &Input<'_>) -> TokenStream {
    let a = &input.attrs;
    let name = input.ident;
    let vis = input.vis;
    let krate: TokenStream = match &a.krate {
        Some(p) => {
            let p = &p.value;
            quote!(#p)
        }
        None => quote!(::object_core),
    };
    let private = quote!(#krate::__private);
    let key = match &a.key {
        Some(k) => match &k.value {
            KeyValue::Str(s) => s.clone(),
            // `validate` rejected it already.
            KeyValue::Other(_) => syn::LitStr::new("", name.span()),
        },
        None => syn::LitStr::new("", name.span()),
    };
    let parent: TokenStream = match &a.parent {
        Some(p) => {
            let p = &p.value;
            quote!(#p)
        }
        None => quote!(#krate::Object),
    };
    let parent_span = a
        .parent
        .as_ref()
        .map_or_else(|| name.span(), |p| p.value.span());
    let is_final = a.is_final.is_some();
    let slots = lit_u32(a.slots.as_ref().map(|s| &s.value));
    let index = lit_u32(a.index.as_ref().map(|s| &s.value));
    let overflow = a.overflow.as_ref().is_none_or(|b| b.value.value);

    // The first field (the parent), for the layout checks.
    let Some(first) = input.fields.first() else {
        return TokenStream::new();
    };
    let first_ident = first.ident;
    let first_ty = &first.field.ty;

    // Trait-bound checks, each spanned at the token the user must fix. Every token of a
    // check gets that span: rustc reports a failed where-clause at the whole predicate,
    // which otherwise spans (and points at) the `#[derive(Object)]` call site. That the
    // parent is an object type is checked by `type Parent` (and `NonFinal`'s supertrait).
    let parent_key = respan(
        quote!(<#parent as #krate::ObjectType>::TYPE_KEY),
        parent_span,
    );
    let parent_depth = respan(quote!(<#parent as #krate::ObjectType>::DEPTH), parent_span);
    let depth_ty = respan(
        quote!(#private::Succ<<#parent as #krate::ObjectType>::Depth>),
        parent_span,
    );
    // The three checks a where clause makes, in one function (each predicate spanned at
    // the token to fix): the struct is `Send + Sync` (first, so that its explanation
    // leads the errors about it), the parent is not `final`, the first field is the
    // parent.
    let thread_safe = respan(quote!(#name: #private::ThreadSafe), name.span());
    let parent_not_final = respan(quote!(#parent: #krate::NonFinal), parent_span);
    let first_is_parent = respan(
        quote!(#first_ty: #private::FirstFieldIs<#parent>),
        first_ty.span(),
    );
    let checks = quote! {
        fn __object_checks() where #thread_safe, #parent_not_final, #first_is_parent {}
    };
    let non_final = if is_final {
        quote!()
    } else {
        quote! {
            #[automatically_derived]
            unsafe impl #krate::NonFinal for #name {}
        }
    };

    // The field projection: the parent's projection for the parent field (so no header
    // is ever reachable mutably), `&mut` for the others.
    let proj = format_ident!("__{}FieldsMut", name);
    let parent_proj = respan(
        quote!(<#parent as #krate::FieldsMut>::Mut<'__a>),
        parent_span,
    );
    let proj_fields = input.fields.iter().enumerate().map(|(i, f)| {
        let fvis = &f.field.vis;
        let id = f.ident;
        let ty = &f.field.ty;
        if i == 0 {
            quote!(#fvis #id: #parent_proj)
        } else {
            quote!(#fvis #id: &'__a mut #ty)
        }
    });
    let proj_init = input.fields.iter().enumerate().map(|(i, f)| {
        let id = f.ident;
        if i == 0 {
            // SAFETY (in the generated block below): the parent is the first field, at
            // offset 0, so `this` is the parent object; its projection only reaches the
            // parent's own fields, disjoint from ours.
            quote!(#id: unsafe { <#parent as #krate::FieldsMut>::project(this.cast::<#parent>()) })
        } else {
            // SAFETY (generated): each own field is a disjoint place in the object.
            quote!(#id: unsafe { &mut *::core::ptr::addr_of_mut!((*__p).#id) })
        }
    });
    let reflection = reflection(input, &krate, &parent, parent_span, &key);
    let (ctor_inside, ctor_beside) = crate::ctor::support(input, &krate, &parent);
    let (ref_inside, ref_beside) = typed_ref(input, &krate, &key);
    let abstract_trap = abstract_new(input, &krate);

    quote! {
        #[allow(non_camel_case_types, non_snake_case, dead_code, missing_docs, missing_debug_implementations, clippy::needless_lifetimes)]
        const _: () = {
            #checks

            static __REGISTRATION: #private::TypeRegistration = #private::TypeRegistration {
                key: #key,
                parent_key: #parent_key,
                slots: #slots,
                is_final: #is_final,
                allow_overflow: #overflow,
                static_index: #index,
                rust_type: #private::TypeId::of::<#name>,
                rust_name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name)),
                size: ::core::mem::size_of::<#name>() as u32,
                align: ::core::mem::align_of::<#name>() as u32,
                reflection: &__REFLECTION,
                cache: &__CACHE,
            };
            static __CACHE: #private::TypeCache = #private::TypeCache::new();

            #reflection

            #private::inventory::submit! { #private::LinkedType(&__REGISTRATION) }

            // SAFETY: the checks below prove the layout contract: `#[repr(C)]` (checked by
            // the derive), the first field is `Parent` (trait bound) at offset 0 (const
            // assertion); depth and registration follow the parent's.
            #[automatically_derived]
            unsafe impl #krate::ObjectType for #name {
                const TYPE_KEY: &'static str = #key;
                const FINAL: bool = #is_final;
                const DEPTH: u32 = #parent_depth + 1;
                type Parent = #parent;
                type Depth = #depth_ty;

                #[inline]
                fn registration() -> &'static #private::TypeRegistration {
                    &__REGISTRATION
                }

                #[inline(always)]
                fn type_cache() -> &'static #private::TypeCache {
                    &__CACHE
                }
            }

            #non_final

            const _: () = #private::assert_first_field(::core::mem::offset_of!(#name, #first_ident));

            // Named as `<#name as FieldsMut>::Mut<'a>` (the projection is reached only
            // through `ObjectPtr::get_mut` / `make_mut`), so it adds no name to the
            // user's module.
            #[doc(hidden)]
            #[allow(unnameable_types)]
            #vis struct #proj<'__a> {
                #(#proj_fields,)*
            }

            // Opaque (the fields may not be `Debug`), so that `Result`s holding a
            // projection can be unwrapped.
            #[automatically_derived]
            impl ::core::fmt::Debug for #proj<'_> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(::core::concat!("<fields of ", ::core::stringify!(#name), ">"))
                }
            }

            // SAFETY: the projection holds the parent's projection (which reaches no
            // header, by the parent's own impl) and `&mut` to each of this type's own
            // fields, disjoint from each other and from the parent part.
            #[automatically_derived]
            unsafe impl #krate::FieldsMut for #name {
                type Mut<'__a> = #proj<'__a>;
                #[inline(always)]
                unsafe fn project<'__a>(this: #private::NonNull<Self>) -> #proj<'__a> {
                    let __p = this.as_ptr();
                    // SAFETY: the caller guarantees a live object of this type (or a
                    // subtype), with provenance over it, uniquely accessed for `'__a`;
                    // each reference below is to a distinct field.
                    #proj { #(#proj_init,)* }
                }
            }

            #ctor_inside
            #ref_inside
            #abstract_trap
        };

        #ref_beside
        #ctor_beside
    }
}

/// An `abstract` type's `new` (on its typed reference if it has one): a function whose
/// bound no type meets, so that `Expr::new()` reports that the type is abstract (the
/// bound's message) rather than that no `new` exists. The bound has a lifetime, so that
/// it is checked where the function is called, not where it is defined. Not written
/// with `constructor = false` (a type writing its own `new`).
fn abstract_new(input: &Input<'_>, krate: &TokenStream) -> TokenStream {
    let a = &input.attrs;
    let disabled = matches!(
        a.constructor.as_ref().map(|c| &c.value),
        Some(crate::attr::Constructor::Enabled(b)) if !b.value
    );
    if a.is_abstract.is_none() || a.opaque.is_some() || disabled {
        return TokenStream::new();
    }
    let owner = match &a.reference {
        Some(r) => {
            let r = &r.value;
            quote!(#r)
        }
        None => {
            let name = input.ident;
            quote!(#name)
        }
    };
    let vis = input.vis;
    quote! {
        #[automatically_derived]
        impl #owner {
            /// Not a constructor: an `abstract` type is made only through its subtypes.
            #[doc(hidden)]
            #vis fn new<'__a>() -> ::core::convert::Infallible
            where
                Self: #krate::__private::Instantiable<'__a>,
            {
                ::core::unreachable!()
            }
        }
    }
}

/// The typed reference (`ref = Name`): the struct beside the node, and its impls (inside
/// the `const _` block). What all typed references share comes from blanket impls over
/// `TypedRef` in `object_core`, so this stays short.
fn typed_ref(
    input: &Input<'_>,
    krate: &TokenStream,
    key: &syn::LitStr,
) -> (TokenStream, TokenStream) {
    let Some(r) = &input.attrs.reference else {
        return (TokenStream::new(), TokenStream::new());
    };
    let r = &r.value;
    let name = input.ident;
    let vis = input.vis;
    let support = quote!(#krate::__private::typed_ref);
    let doc = format!(
        "A typed reference to a [`{name}`] (`{}`): 8 bytes, `Deref` to the node, `Clone`, \
         `Eq` and `Hash` by identity; converts into the references and `ObjectPtr`s of its \
         ancestors, `Any`, and typed-call arguments. Written by `#[derive(Object)]` \
         (`ref = {r}`); its methods are those of `object_core::TypedRef` and yours.",
        key.value()
    );
    let beside = quote! {
        #[doc = #doc]
        #[repr(transparent)]
        #vis struct #r(#krate::ObjectPtr<#name>);
    };
    let inside = quote! {
        // SAFETY: `#r` is `repr(transparent)` over its only field, an `ObjectPtr<#name>`,
        // and adds no invariant.
        #[automatically_derived]
        unsafe impl #krate::TypedRef for #r {
            type Node = #name;
        }
        #[automatically_derived]
        impl #krate::HasRef for #name {
            type Ref = #r;
        }
        #[automatically_derived]
        impl ::core::clone::Clone for #r {
            #[inline(always)]
            fn clone(&self) -> Self {
                #r(::core::clone::Clone::clone(&self.0))
            }
        }
        #[automatically_derived]
        impl ::core::ops::Deref for #r {
            type Target = #name;
            #[inline(always)]
            fn deref(&self) -> &#name {
                &self.0
            }
        }
        #[automatically_derived]
        impl ::core::fmt::Debug for #r {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #support::debug(self, f)
            }
        }
        #[automatically_derived]
        impl ::core::cmp::PartialEq for #r {
            #[inline(always)]
            fn eq(&self, other: &Self) -> bool {
                #support::eq(self, other)
            }
        }
        #[automatically_derived]
        impl ::core::cmp::Eq for #r {}
        #[automatically_derived]
        impl ::core::hash::Hash for #r {
            #[inline(always)]
            fn hash<H: ::core::hash::Hasher>(&self, state: &mut H) {
                #support::hash(self, state)
            }
        }
        #[automatically_derived]
        impl ::core::convert::From<#krate::ObjectPtr<#name>> for #r {
            #[inline(always)]
            fn from(p: #krate::ObjectPtr<#name>) -> Self {
                #r(p)
            }
        }
        #[automatically_derived]
        impl ::core::convert::TryFrom<#krate::Any> for #r {
            type Error = #krate::TypeError;
            #[inline]
            fn try_from(a: #krate::Any) -> ::core::result::Result<Self, #krate::TypeError> {
                <#r as #krate::AnyItem>::try_from_any(a)
            }
        }
    };
    (inside, beside)
}

/// The field table, the `Reflect` impl, the type-erased entry points and (unless
/// `opaque` or `custom_debug`) the reflection-driven `Debug`.
fn reflection(
    input: &Input<'_>,
    krate: &TokenStream,
    parent: &TokenStream,
    parent_span: Span,
    key: &syn::LitStr,
) -> TokenStream {
    let a = &input.attrs;
    let name = input.ident;
    let refl = quote!(#krate::reflection);
    let private = quote!(#krate::__private);
    let opaque = a.opaque.is_some();
    let custom_debug = a.custom_debug.is_some();
    let is_abstract = a.is_abstract.is_some();
    let parent_fields = respan(
        quote!(#private::probe::ParentProbe::<#parent>::FIELDS),
        parent_span,
    );

    let mut own = Vec::new();
    let mut name_checks = Vec::new();
    let mut defaults = Vec::new();
    for (i, f) in input.fields.iter().enumerate() {
        let id = f.ident;
        let ty = &f.field.ty;
        let ty_str = quote!(#ty).to_string().replace(' ', "");
        if i == 0 {
            continue;
        }
        let offset = quote!(::core::mem::offset_of!(#name, #id));
        if opaque {
            // SAFETY (in the generated code): `offset_of!` of this very field.
            own.push(quote!(unsafe { #private::skipped_field(::core::stringify!(#id), #offset, #ty_str) }));
            continue;
        }
        if f.attrs.skip.is_some() {
            // Objects built through the table take the field's `Default`: the bound
            // is spanned at the field's type, where a missing `Default` is reported.
            let new = respan(quote!(#private::skipped_field_default::<), ty.span());
            // SAFETY (in the generated code): `offset_of!` of this very field, of type `#ty`.
            own.push(quote!(unsafe { #new #ty>(::core::stringify!(#id), #offset, #ty_str) }));
            continue;
        }
        let field_name = f
            .attrs
            .rename
            .as_ref()
            .map_or_else(|| id.to_string(), |r| r.value.value());
        // A const check per field, spanned at its name (or its `rename`), so that a
        // clash with an inherited field is reported there.
        let name_span = f
            .attrs
            .rename
            .as_ref()
            .map_or_else(|| id.span(), |r| r.value.span());
        // (A format string: a `rename` may hold braces.)
        let message = format!(
            "the reflected field `{}` has the same name as a field of the parent type; rename one with #[object(rename = \"...\")]",
            field_name.replace('{', "{{").replace('}', "}}")
        );
        name_checks.push(respan(
            quote! {
                ::core::assert!(
                    !#private::has_reflected_field(#parent_fields, #field_name),
                    #message
                );
            },
            name_span,
        ));
        let mut flags = vec![quote!(#refl::FieldFlags::NONE)];
        if f.attrs.read_only.is_some() {
            flags.push(quote!(#refl::FieldFlags::READ_ONLY));
        }
        if f.attrs.no_eq.is_some() {
            flags.push(quote!(#refl::FieldFlags::NO_EQUALITY));
        }
        if let Some(d) = &f.attrs.def {
            flags.push(quote!(#refl::FieldFlags::DEFINITION));
            // A definition site binds variables, which are objects: the field must
            // hold objects (or `Any`). Checked in a constant, spanned at `def`.
            name_checks.push(respan(
                quote! {
                    ::core::assert!(
                        #private::can_define(<#ty as #refl::FieldValue>::KIND),
                        "`#[object(def)]` needs a field that can hold objects (variables, or containers or nodes holding them), which this field's type cannot"
                    );
                },
                d.span,
            ));
        }
        let flags = flags
            .into_iter()
            .reduce(|acc, f| quote!(#acc.union(#f)))
            .unwrap_or_default();
        // The path spanned at the field's type, which keeps its own spans: an
        // unsupported type is reported on the whole type.
        let new = respan(quote!(#private::reflected_field::<), ty.span());
        let Some(default) = &f.attrs.default else {
            // SAFETY (in the generated code): `offset_of!` of this very field, of type `#ty`.
            own.push(quote!(unsafe { #new #ty>(#field_name, #offset, #ty_str, #flags) }));
            continue;
        };
        // The default: a function returning the field's type, whose body is the
        // expression as written (a mismatch is reported on it) or `Default::default()`
        // spanned at the `default` key (a missing `Default` is reported there); and its
        // `Any` form for the field table.
        let unraw = syn::ext::IdentExt::unraw(id);
        let make = format_ident!("__default_{}", unraw);
        let make_any = format_ident!("__default_any_{}", unraw);
        let body = match &default.value {
            Some(expr) => quote!(#expr),
            None => respan(
                quote!(<#ty as ::core::default::Default>::default()),
                default.span,
            ),
        };
        defaults.push(quote! {
            fn #make() -> #ty {
                #body
            }
            fn #make_any() -> ::core::result::Result<#krate::Any, #krate::TypeError> {
                (&#private::probe::FieldProbe::<#ty>::new()).default_to_any(#make())
            }
        });
        // SAFETY (in the generated code): `offset_of!` of this very field, of type `#ty`.
        own.push(quote!(unsafe { #new #ty>(#field_name, #offset, #ty_str, #flags) }.with_default(#make_any)));
    }

    let kind = match a.structural.as_ref().map(|k| k.value.value()) {
        Some(k) => {
            let variant = match k.as_str() {
                "dag" => quote!(Dag),
                "var" => quote!(Var),
                "identity" => quote!(Identity),
                _ => quote!(Tree),
            };
            quote!(#krate::structural::StructuralKind::#variant)
        }
        None => respan(
            quote!(#private::probe::ParentProbe::<#parent>::STRUCTURAL),
            parent_span,
        ),
    };
    let hooks = match &a.builtin {
        Some(p) => {
            let p = &p.value;
            // Spanned at the path, so a wrong static is reported there.
            let hooks_ty = quote!(&'static #krate::builtin::BuiltinHooks);
            respan(
                quote!(::core::option::Option::Some({ let __hooks: #hooks_ty = &#p; __hooks })),
                p.span(),
            )
        }
        None => quote!(::core::option::Option::None),
    };
    let own_count = own.len();
    let debug_entry = if opaque || custom_debug {
        quote!(#private::debug_entry::<#name>)
    } else {
        quote!(#private::debug_entry::<#krate::Object>)
    };
    let debug = if opaque || a.custom_debug.is_some() {
        quote!()
    } else {
        quote! {
            #[automatically_derived]
            impl ::core::fmt::Debug for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #private::debug_reflected(self, #key, f)
                }
            }
        }
    };

    quote! {
        #(#defaults)*

        // The fields' own checks, one constant (each assertion spanned at its field).
        const _: () = {
            #(#name_checks)*
        };

        // SAFETY: `FIELDS` is the parent's table (the parent's part of this type, at
        // offset 0) followed by this type's own fields at their `offset_of!` offsets.
        #[automatically_derived]
        unsafe impl #refl::Reflect for #name {
            const FIELDS: &'static [#refl::FieldInfo] =
                &#private::concat_fields::<{ #parent_fields.len() + #own_count }>(
                    #parent_fields,
                    &[#(#own,)*],
                );
            const STRUCTURAL: #krate::structural::StructuralKind = #kind;
        }

        #[allow(unused_imports)]
        use #private::probe::{
            Field as _, FieldFallback as _, ParentFieldsFallback as _, Skip as _, SkipFallback as _,
        };

        // SAFETY: this type's table (every field, the parent's first), its debug entry
        // (its own only where it prints through its own `Debug`), and its own layout,
        // deleters and registration.
        static __REFLECTION: #refl::TypeReflection = unsafe {
            #private::type_reflection(
                <#name as #refl::Reflect>::FIELDS,
                #opaque,
                #custom_debug,
                #debug_entry,
            )
            .with_structural(<#name as #refl::Reflect>::STRUCTURAL, #hooks)
            .with_abstract(#is_abstract)
            .with_table(#private::TableBuild::of::<#name>(&__REGISTRATION))
        };

        #debug
    }
}

/// `tokens` with every token (inside groups too) given `span`.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut inner = Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                tt = TokenTree::Group(inner);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

fn lit_u32(lit: Option<&syn::LitInt>) -> u32 {
    lit.and_then(|l| l.base10_parse().ok()).unwrap_or(0)
}
