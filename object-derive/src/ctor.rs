//! Generated constructors (`Add::new(lhs, rhs)`), which need the fields of every
//! ancestor, which a derive cannot see. The technique:
//!
//! 1. Each derive of `T` writes, beside `T`, a hidden `macro_rules!` that holds `T`'s
//!    *constructor list* (its own constructor fields, then its parent's, up to the
//!    root), re-exported under the name `T` itself (`use __object_ctor_… as T;`): a
//!    macro lives in the macro namespace, so the path that names the type names the
//!    macro too, wherever the type is imported (`use other_crate::nodes::BinOp;`
//!    brings both). A `pub` type's macro is `#[macro_export]`ed (under a name unique
//!    to its key), so it works across crates.
//! 2. The derive of a child `C` with `parent = P` calls `P! { … C's own fields … }`;
//!    `P`'s macro hands its list and `C`'s fields to [`object_ctor`] (the function-like
//!    macro `object_core::__private::object_ctor!`), which writes `C::new` and `C`'s own
//!    list macro. The root (`Object`, and a parent path ending in `Object`) has a
//!    hand-written macro in `object_core` with the empty list.
//!
//! A list names each field by its owner's *level* (0 = the list's type, 1 = its parent,
//! …) and its position in the owner's struct; types are reached through
//! `<<C as ObjectType>::Parent as ObjectType>::Parent` and the hidden
//! `FieldType<N>` impls each derive writes, so nothing depends on what the child's module
//! imports. Each level builds its own value with its hidden `__object_init` (written in
//! its own module, so private fields are fine).

use proc_macro2::{Ident, Punct, Spacing, Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{braced, bracketed, parenthesized, LitInt, LitStr, Token, Visibility};

use crate::ast::Input;
use crate::attr::Constructor;

/// One constructor field of a list: `(ident position obj|val req|def)`.
struct Entry {
    ident: Ident,
    pos: LitInt,
    kind: Kind,
    has_default: bool,
}

/// How a constructor parameter takes its field.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A primitive (integer, float, `bool`, `char`): the field's type itself, so that
    /// literals take it (`Node::new(3)` for a `u32`).
    Exact,
    /// Anything else: `impl IntoField<F>` (for an object field, also one written
    /// through an alias, any subtype's handle; otherwise anything `Into<F>`).
    Into,
}

impl Parse for Entry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let content;
        parenthesized!(content in input);
        let ident = content.call(syn::ext::IdentExt::parse_any)?;
        let pos: LitInt = content.parse()?;
        let kind: Ident = content.parse()?;
        let default: Ident = content.parse()?;
        let kind = if kind == "exact" {
            Kind::Exact
        } else {
            Kind::Into
        };
        Ok(Entry {
            ident,
            pos,
            kind,
            has_default: default == "def",
        })
    }
}

impl Entry {
    fn to_tokens(&self) -> TokenStream {
        let Entry {
            ident,
            pos,
            kind,
            has_default,
        } = self;
        let kind = match kind {
            Kind::Exact => quote!(exact),
            Kind::Into => quote!(val),
        };
        let def = if *has_default {
            quote!(def)
        } else {
            quote!(req)
        };
        quote!((#ident #pos #kind #def))
    }
}

/// A constructor list: `opaque`, or one `{ entries }` group per level (the root's,
/// which has none, left out), preceded by `ref` where that level's type has a typed
/// reference (`#[object(ref = …)]`).
enum List {
    Opaque,
    Levels(Vec<Level>),
}

/// One level of a constructor list.
struct Level {
    /// Whether the level's type has a typed reference (`HasRef`), and if so, the
    /// compilation its type was derived in ([`compilation`]).
    has_ref: Option<LitStr>,
    entries: Vec<Entry>,
}

impl Parse for List {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let content;
        bracketed!(content in input);
        if content.peek(syn::Ident) {
            let kw: Ident = content.parse()?;
            if kw != "opaque" {
                return Err(syn::Error::new(kw.span(), "expected `opaque`"));
            }
            return Ok(List::Opaque);
        }
        let mut levels = Vec::new();
        while !content.is_empty() {
            let has_ref = if content.peek(Token![ref]) {
                let _: Token![ref] = content.parse()?;
                let unit;
                parenthesized!(unit in content);
                Some(unit.parse()?)
            } else {
                None
            };
            let level;
            braced!(level in content);
            let mut entries = Vec::new();
            while !level.is_empty() {
                entries.push(level.parse()?);
            }
            levels.push(Level { has_ref, entries });
        }
        Ok(List::Levels(levels))
    }
}

fn list_tokens(list: &List) -> TokenStream {
    match list {
        List::Opaque => quote!([opaque]),
        List::Levels(levels) => {
            let groups = levels.iter().map(|l| {
                let e = l.entries.iter().map(Entry::to_tokens);
                let r = match &l.has_ref {
                    Some(unit) => quote!(ref(#unit)),
                    None => quote!(),
                };
                quote!(#r { #(#e)* })
            });
            quote!([ #(#groups)* ])
        }
    }
}

/// The input of `object_ctor!`: the parent's list, then what the child's derive says.
struct CtorInput {
    parent: List,
    krate: TokenStream,
    name: Ident,
    vis: Visibility,
    key: LitStr,
    ctor: Option<Ident>,
    /// The type's typed reference (`ref = …`), which then holds the constructors.
    reference: Option<Ident>,
    own: Vec<Entry>,
}

impl Parse for CtorInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let parent: List = input.parse()?;
        let krate;
        bracketed!(krate in input);
        let krate: TokenStream = krate.parse()?;
        let name: Ident = input.parse()?;
        let vis: Visibility = {
            let content;
            bracketed!(content in input);
            content.parse()?
        };
        let key: LitStr = input.parse()?;
        let ctor: Ident = input.parse()?;
        let ctor = if ctor == "__none" { None } else { Some(ctor) };
        let reference: Ident = input.parse()?;
        let reference = if reference == "__none" {
            None
        } else {
            Some(reference)
        };
        let content;
        bracketed!(content in input);
        let mut own = Vec::new();
        while !content.is_empty() {
            own.push(content.parse()?);
        }
        let _: Option<Token![;]> = input.parse()?;
        Ok(CtorInput {
            parent,
            krate,
            name,
            vis,
            key,
            ctor,
            reference,
            own,
        })
    }
}

/// `object_ctor!`: writes the child's list macro and its constructors.
pub fn object_ctor(input: TokenStream) -> syn::Result<TokenStream> {
    let input: CtorInput = syn::parse2(input)?;
    let CtorInput {
        parent,
        krate,
        name,
        vis,
        key,
        ctor,
        reference,
        own,
    } = input;
    let list = match parent {
        List::Opaque => List::Opaque,
        List::Levels(mut levels) => {
            levels.insert(
                0,
                Level {
                    has_ref: reference
                        .as_ref()
                        .map(|_| LitStr::new(&compilation(), Span::call_site())),
                    entries: own,
                },
            );
            List::Levels(levels)
        }
    };
    let define = list_macro(&name, &vis, &key, &list_tokens(&list));
    let ctors = match (&list, ctor) {
        (List::Levels(levels), Some(ctor)) => {
            constructors(&krate, &name, &vis, &key, levels, &ctor, reference.as_ref())
        }
        _ => TokenStream::new(),
    };
    let upcasts = match (&list, &reference) {
        (List::Levels(levels), Some(r)) => ref_upcasts(&krate, &name, r, levels),
        _ => TokenStream::new(),
    };
    Ok(quote! { #define #ctors #upcasts })
}

/// `From<R> for A` for the typed reference `A` of every ancestor that has one and was
/// derived in this crate (an up-cast: `let e: Expr = add.into()`). The ancestor's
/// reference is named through `HasRef`, so nothing depends on what the child's module
/// imports; but coherence does not see through such a name when the `HasRef` impl is in
/// another crate, so an ancestor of another crate gets no `From` (its reference is
/// reached with `TypedRef::upcast`).
fn ref_upcasts(
    krate: &TokenStream,
    name: &Ident,
    reference: &Ident,
    levels: &[Level],
) -> TokenStream {
    let here = compilation();
    let local = |l: &Level| l.has_ref.as_ref().is_some_and(|unit| unit.value() == here);
    let impls = levels
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| local(l))
        .map(|(level, _)| {
            let lty = level_ty(krate, name, level);
            quote! {
                #[automatically_derived]
                impl ::core::convert::From<#reference> for <#lty as #krate::HasRef>::Ref {
                    #[inline(always)]
                    fn from(r: #reference) -> Self {
                        #krate::TypedRef::upcast(r)
                    }
                }
            }
        });
    quote!(#(#impls)*)
}

/// Which compilation this is: a digest of the compiler's arguments that tell one
/// compilation unit from another (the crate's name and type, `--test`, cargo's
/// `-C metadata`, the compiler itself: rustc for a crate, rustdoc for its doctests).
/// A derive runs inside the compiler of the crate it is in, so two derives see the
/// same digest exactly when their types are in the same crate. Deterministic (no time,
/// no process id), so a build is reproducible.
fn compilation() -> std::string::String {
    static UNIT: std::sync::OnceLock<std::string::String> = std::sync::OnceLock::new();
    UNIT.get_or_init(|| {
        let mut args = std::env::args();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |s: &str| {
            for b in s.bytes().chain([0]) {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        if let Some(exe) = args.next() {
            feed(exe.rsplit(['/', '\\']).next().unwrap_or(&exe));
        }
        let mut prev = std::string::String::new();
        for a in args {
            let kept = match prev.as_str() {
                "--crate-name" | "--crate-type" => true,
                "-C" => a.starts_with("metadata="),
                _ => {
                    a == "--test"
                        || a.starts_with("--crate-name=")
                        || a.starts_with("--crate-type=")
                        || a.starts_with("-Cmetadata=")
                }
            };
            if kept {
                feed(&a);
            }
            prev = a;
        }
        format!("{hash:016x}")
    })
    .clone()
}

/// The hidden list macro of `name`, re-exported as `name` (in the macro namespace).
pub fn list_macro(name: &Ident, vis: &Visibility, key: &LitStr, list: &TokenStream) -> TokenStream {
    let sanitized: std::string::String = key
        .value()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let unraw = syn::ext::IdentExt::unraw(name);
    // The key is unique among the types that get an index, but two Rust types may
    // claim one key (a conflict the registry reports at run time, not a compile error),
    // so a per-compilation counter keeps the crate-root names of exported macros apart.
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let hidden = Ident::new(
        &format!("__object_ctor_{sanitized}_{unraw}_{n}"),
        Span::call_site(),
    );
    let d = Punct::new('$', Spacing::Alone);
    let export = if matches!(vis, Visibility::Public(_)) {
        quote!(#[macro_export])
    } else {
        TokenStream::new()
    };
    quote! {
        #[doc(hidden)]
        #export
        #[allow(unused_macros, non_local_definitions)]
        macro_rules! #hidden {
            ([#d(#d krate:tt)*] #d(#d rest:tt)*) => {
                #d(#d krate)* ::__private::object_ctor! { #list [#d(#d krate)*] #d(#d rest)* }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #hidden as #name;
    }
}

/// The type of level `level` (0 = `name`), reached through `ObjectType::Parent`.
fn level_ty(krate: &TokenStream, name: &Ident, level: usize) -> TokenStream {
    let mut ty = quote!(#name);
    for _ in 0..level {
        ty = quote!(<#ty as #krate::ObjectType>::Parent);
    }
    ty
}

/// `new` (the fields without a declared default, the root's ancestors' first) and, when
/// some field has a default, `new_all` (every constructor field).
fn constructors(
    krate: &TokenStream,
    name: &Ident,
    vis: &Visibility,
    key: &LitStr,
    levels: &[Level],
    ctor: &Ident,
    reference: Option<&Ident>,
) -> TokenStream {
    let private = quote!(#krate::__private);
    // Parameters, outermost ancestor first.
    let mut params_req = Vec::new();
    let mut params_all = Vec::new();
    let mut names_req = Vec::new();
    let mut names_def = Vec::new();
    let mut field_impls = Vec::new();
    for (level, l) in levels.iter().enumerate().rev() {
        let lty = level_ty(krate, name, level);
        let lvl = LitInt::new(&level.to_string(), Span::call_site());
        for e in &l.entries {
            let id = &e.ident;
            let pos = &e.pos;
            // Named through `name` itself, so that the signature names no ancestor (a
            // private ancestor would otherwise be a private type in a public interface):
            // the type's own fields through its own `FieldType`, an ancestor's through
            // a `FieldTypeAt` written here.
            let fty = if level == 0 {
                quote!(<#name as #private::FieldType<#pos>>::Type)
            } else {
                field_impls.push(quote! {
                    #[automatically_derived]
                    impl #private::FieldTypeAt<#lvl, #pos> for #name {
                        type Type = <#lty as #private::FieldType<#pos>>::Type;
                    }
                });
                quote!(<#name as #private::FieldTypeAt<#lvl, #pos>>::Type)
            };
            let pty = match e.kind {
                Kind::Exact => fty.clone(),
                Kind::Into => quote!(impl #krate::IntoField<#fty>),
            };
            let p = quote!(#id: #pty);
            params_all.push(p.clone());
            if e.has_default {
                names_def.push(id.to_string());
            } else {
                params_req.push(p);
                names_req.push(id.to_string());
            }
        }
    }
    let init = |defaults: bool| {
        let mut value = quote!(#krate::Object::new());
        for (level, l) in levels.iter().enumerate().rev() {
            let lty = level_ty(krate, name, level);
            let args = l.entries.iter().map(|e| {
                let id = &e.ident;
                let pos = &e.pos;
                if e.has_default && defaults {
                    quote!(<#lty as #private::FieldDefault<#pos>>::default_value())
                } else {
                    match e.kind {
                        Kind::Exact => quote!(#id),
                        Kind::Into => quote!(#krate::IntoField::into_field(#id)),
                    }
                }
            });
            value = quote!(<#lty as #private::ObjectInit>::__object_init(#value, (#(#args,)*)));
        }
        value
    };
    let list = |names: &[std::string::String]| {
        if names.is_empty() {
            "no fields".to_owned()
        } else {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let doc_new = format!(
        "Builds a `{name}` (`{}`) object from {}: the fields of its ancestors first, \
         then its own. Object fields take the handle of any subtype (`impl IntoField<…>`).{}",
        key.value(),
        list(&names_req),
        if names_def.is_empty() {
            std::string::String::new()
        } else {
            format!(
                " The fields with a declared default ({}) take it; `{ctor}_all` sets them too.",
                list(&names_def)
            )
        }
    );
    let new_init = init(true);
    let value = Ident::new(
        &format!("{}_value", syn::ext::IdentExt::unraw(ctor)),
        ctor.span(),
    );
    let doc_value = format!(
        "The value `{ctor}` places in an object, for other allocators \
         (`ObjectPool::make`, `make_object_as`): the same parameters as `{ctor}`."
    );
    // With a typed reference, the constructors that make objects live on it and return
    // it; `new_value` stays on the node.
    let (owner, made, wrap) = match reference {
        Some(r) => (
            quote!(#r),
            quote!(#r),
            quote!(<#r as #krate::TypedRef>::from_object_ptr),
        ),
        None => (quote!(#name), quote!(#krate::ObjectPtr<#name>), quote!()),
    };
    let mut out = quote! {
        #(#field_impls)*

        #[automatically_derived]
        impl #owner {
            #[doc = #doc_new]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            #vis fn #ctor(#(#params_req),*) -> #made {
                #wrap(#krate::make_object(#new_init))
            }
        }

        #[automatically_derived]
        impl #name {
            #[doc = #doc_value]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            #vis fn #value(#(#params_req),*) -> #name {
                #new_init
            }
        }
    };
    if !names_def.is_empty() {
        let all = Ident::new(
            &format!("{}_all", syn::ext::IdentExt::unraw(ctor)),
            ctor.span(),
        );
        let mut every = names_req.clone();
        every.extend(names_def.iter().cloned());
        let doc_all = format!(
            "Builds a `{name}` (`{}`) object from every constructor field, those with a declared default included, in declaration order, ancestors first.",
            key.value()
        );
        let all_init = init(false);
        out.extend(quote! {
            #[automatically_derived]
            impl #owner {
                #[doc = #doc_all]
                #[inline]
                #[allow(clippy::too_many_arguments)]
                #vis fn #all(#(#params_all),*) -> #made {
                    #wrap(#krate::make_object(#all_init))
                }
            }
        });
    }
    out
}

/// How a field's constructor parameter takes it, from how its type is written.
fn field_kind(ty: &syn::Type) -> Kind {
    const PRIMITIVES: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool", "char",
    ];
    if let syn::Type::Path(p) = ty {
        if p.qself.is_none() && PRIMITIVES.iter().any(|n| p.path.is_ident(n)) {
            return Kind::Exact;
        }
    }
    Kind::Into
}

/// What the derive of `T` writes for constructors: `(inside, beside)`, where `inside`
/// goes in the derive's `const _` block (the hidden `__object_init`, the `FieldType` and
/// `FieldDefault` impls) and `beside` next to the type (the call of the parent's list
/// macro, which defines `T`'s own and its constructors).
pub fn support(
    input: &Input<'_>,
    krate: &TokenStream,
    parent: &TokenStream,
) -> (TokenStream, TokenStream) {
    let a = &input.attrs;
    let name = input.ident;
    let vis = input.vis;
    let private = quote!(#krate::__private);
    let key = match &a.key {
        Some(crate::attr::Located {
            value: crate::attr::KeyValue::Str(s),
            ..
        }) => s.clone(),
        _ => return (TokenStream::new(), TokenStream::new()),
    };
    if a.opaque.is_some() {
        // No reflected fields to build from: no constructor, nor any for descendants.
        return (
            TokenStream::new(),
            list_macro(name, vis, &key, &quote!([opaque])),
        );
    }
    let Some(first) = input.fields.first() else {
        return (TokenStream::new(), TokenStream::new());
    };
    let first_ident = first.ident;
    let first_ty = &first.field.ty;
    // Through `FirstFieldIs` (spanned at the first field's type): a first field that is
    // not the parent is then the same error as the derive's own check, reported once.
    let first_init = crate::expand::respan(
        quote!(<#first_ty as #private::FirstFieldIs<#parent>>::from_parent(__object_base)),
        first_ty.span(),
    );

    let mut params = Vec::new();
    let mut inits = Vec::new();
    let mut impls = Vec::new();
    let mut own = Vec::new();
    for (i, f) in input.fields.iter().enumerate().skip(1) {
        let id = f.ident;
        let ty = &f.field.ty;
        if f.attrs.skip.is_some() {
            // Through a probe: a type without `Default` is reported once, by the field
            // table's own bound.
            inits.push(quote!(#id: (&#private::probe::SkipProbe::<#ty>::new()).skipped_value()));
            continue;
        }
        let pos = LitInt::new(&i.to_string(), Span::call_site());
        params.push(quote!(#id));
        inits.push(quote!(#id));
        impls.push(quote! {
            #[automatically_derived]
            impl #private::FieldType<#pos> for #name {
                type Type = #ty;
            }
        });
        let has_default = f.attrs.default.is_some();
        if has_default {
            let unraw = syn::ext::IdentExt::unraw(id);
            let make = format_ident!("__default_{}", unraw);
            impls.push(quote! {
                #[automatically_derived]
                impl #private::FieldDefault<#pos> for #name {
                    #[inline]
                    fn default_value() -> #ty {
                        #make()
                    }
                }
            });
        }
        own.push(
            Entry {
                ident: id.clone(),
                pos,
                kind: field_kind(ty),
                has_default,
            }
            .to_tokens(),
        );
    }
    let own_tys = input
        .fields
        .iter()
        .skip(1)
        .filter(|f| f.attrs.skip.is_none())
        .map(|f| &f.field.ty);
    let inside = quote! {
        #[automatically_derived]
        impl #private::ObjectInit for #name {
            type Base = #parent;
            type Own = (#(#own_tys,)*);
            #[inline(always)]
            fn __object_init(
                __object_base: #parent,
                (#(#params,)*): Self::Own,
            ) -> Self {
                #name { #first_ident: #first_init, #(#inits,)* }
            }
        }
        #(#impls)*
    };

    let ctor = match &a.constructor {
        _ if a.is_abstract.is_some() => format_ident!("__none"),
        Some(c) => match &c.value {
            Constructor::Enabled(b) if !b.value => format_ident!("__none"),
            Constructor::Named(n) => Ident::new(&n.value(), n.span()),
            Constructor::Enabled(_) => format_ident!("new"),
        },
        None => format_ident!("new"),
    };
    // The parent's list macro: the root's for `Object`, else the parent's own path.
    let parent_macro = match &a.parent {
        Some(p) if p.value.segments.last().is_none_or(|s| s.ident != "Object") => {
            let p = &p.value;
            quote!(#p)
        }
        _ => quote!(#krate::__object_ctor_root),
    };
    let vis_tokens = quote!(#vis);
    let reference = match &a.reference {
        Some(r) => r.value.clone(),
        None => format_ident!("__none"),
    };
    let beside = quote! {
        #parent_macro! { [#krate] #name [#vis_tokens] #key #ctor #reference [#(#own)*] }
    };
    (inside, beside)
}
