//! Semantic checks of the parsed input, all errors collected.
//!
//! What the derive cannot see (whether the parent is an object type, is final, or is
//! really the first field's type; whether the struct is `Send + Sync`) is checked by
//! trait bounds in the expansion, spanned at the offending tokens.

use syn::Error;

use crate::ast::Input;
use crate::attr::{Constructor, Errors, KeyValue, STRUCTURAL_KINDS};

/// Static indices the derive accepts: the reserved range above `ffi.Object`.
const STATIC_BEGIN: u32 = 65;
const STATIC_END: u32 = 128;

/// Checks `input`, adding to the `errors` found while parsing it, and reports them all.
pub fn validate(input: &Input<'_>, mut errors: Errors) -> syn::Result<()> {
    let a = &input.attrs;

    if !input.generics.params.is_empty() {
        errors.push(Error::new_spanned(
            input.generics,
            "object types cannot be generic: each type needs one key and one type index",
        ));
    }
    if let Some(w) = &input.generics.where_clause {
        errors.push(Error::new_spanned(
            w,
            "object types cannot have a where clause",
        ));
    }

    let has_c = input.repr.iter().any(|m| m.path().is_ident("C"));
    if !has_c {
        errors.push(Error::new_spanned(
            input.ident,
            "object structs must be #[repr(C)]: the parent must stay the first field, at offset 0",
        ));
    }
    for m in &input.repr {
        if m.path().is_ident("packed") || m.path().is_ident("transparent") {
            errors.push(Error::new_spanned(
                m,
                "object structs cannot be `packed` (the header must stay aligned) or `transparent` (they are `repr(C)`)",
            ));
        }
    }

    match &a.key {
        // A malformed `#[object(...)]` was reported already and may have hidden the key.
        None if a.malformed => {}
        None => errors.push(Error::new_spanned(
            input.ident,
            "missing `#[object(key = \"…\")]`: every object type needs a unique type key",
        )),
        Some(k) => match &k.value {
            KeyValue::Str(s) if s.value().is_empty() => {
                errors.push(Error::new_spanned(s, "the type key cannot be empty"))
            }
            KeyValue::Str(_) => {}
            KeyValue::Other(e) => errors.push(Error::new_spanned(
                e,
                "the type key must be a string literal, e.g. `key = \"my.Node\"`",
            )),
        },
    }

    let slots = parse_u32(a.slots.as_ref().map(|s| &s.value), &mut errors);
    if let (Some(f), Some(s)) = (&a.is_final, &a.slots) {
        let mut e = Error::new_spanned(
            &s.value,
            "a `final` type cannot reserve `slots`: it has no descendants",
        );
        e.combine(Error::new(f.span, "declared `final` here"));
        errors.push(e);
    }
    if let Some(i) = &a.index {
        if let Some(n) = parse_u32(Some(&i.value), &mut errors) {
            if !(STATIC_BEGIN..STATIC_END).contains(&n) {
                errors.push(Error::new_spanned(
                    &i.value,
                    format!("static type indices lie in {STATIC_BEGIN}..{STATIC_END}; leave `index` out to get a dynamic one"),
                ));
            }
        }
        if slots.is_some_and(|s| s > 0) {
            errors.push(Error::new_spanned(
                &i.value,
                "a type with a static `index` cannot reserve `slots`; its descendants are found through the overflow check",
            ));
        }
    }

    if let Some(k) = &a.structural {
        let v = k.value.value();
        if !STRUCTURAL_KINDS.contains(&v.as_str()) {
            errors.push(Error::new_spanned(
                &k.value,
                format!(
                    "unknown structural kind `{v}` (expected one of: {})",
                    STRUCTURAL_KINDS.join(", ")
                ),
            ));
        }
    }

    if let (Some(ab), Some(f)) = (&a.is_abstract, &a.is_final) {
        let mut e = Error::new(
            ab.span,
            "an `abstract` type is only instantiated through its subtypes, which a `final` type cannot have",
        );
        e.combine(Error::new(f.span, "declared `final` here"));
        errors.push(e);
    }
    if let Some(c) = &a.constructor {
        match &c.value {
            Constructor::Named(name) => {
                if syn::parse_str::<syn::Ident>(&name.value()).is_err() {
                    errors.push(Error::new_spanned(
                        name,
                        "the constructor's name must be an identifier, e.g. `constructor = \"make\"`",
                    ));
                }
                if let Some(ab) = &a.is_abstract {
                    let mut e =
                        Error::new_spanned(name, "an `abstract` type has no constructor to name");
                    e.combine(Error::new(ab.span, "declared `abstract` here"));
                    errors.push(e);
                }
            }
            Constructor::Enabled(b) if b.value => {
                if let Some(ab) = &a.is_abstract {
                    let mut e = Error::new_spanned(b, "an `abstract` type has no constructor");
                    e.combine(Error::new(ab.span, "declared `abstract` here"));
                    errors.push(e);
                }
            }
            Constructor::Enabled(_) => {}
        }
        if let Some(o) = &a.opaque {
            let mut e = Error::new(
                c.span,
                "an `opaque` type has no generated constructor (its fields are not reflected)",
            );
            e.combine(Error::new(o.span, "declared `opaque` here"));
            errors.push(e);
        }
    }

    match input.fields.first() {
        None => errors.push(Error::new_spanned(
            input.ident,
            "an object struct needs its parent as its first field (e.g. `base: Object`)",
        )),
        Some(first) => {
            if let Some(s) = &first.attrs.skip {
                errors.push(Error::new(s.span, "the parent field cannot be skipped"));
            }
            if let Some(r) = &first.attrs.rename {
                errors.push(Error::new(r.span, "the parent field cannot be renamed"));
            }
            if let Some(d) = &first.attrs.default {
                errors.push(Error::new(
                    d.span,
                    "the parent field has no default: give defaults to the parent's fields instead",
                ));
            }
            for flag in [&first.attrs.read_only, &first.attrs.no_eq, &first.attrs.def]
                .into_iter()
                .flatten()
            {
                errors.push(Error::new(
                    flag.span,
                    "the parent field is not a field of its own; flag the parent's fields instead",
                ));
            }
        }
    }

    for f in input.fields.iter().skip(1) {
        let fa = &f.attrs;
        let named: Vec<proc_macro2::Span> = [
            fa.rename.as_ref().map(|r| r.span),
            fa.read_only.as_ref().map(|r| r.span),
            fa.no_eq.as_ref().map(|r| r.span),
            fa.def.as_ref().map(|r| r.span),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(o) = &a.opaque {
            let first = fa.skip.as_ref().map(|s| s.span).or(named.first().copied());
            if let Some(span) = first {
                let mut e = Error::new(
                    span,
                    "an `opaque` type reflects no fields, so its fields take no reflection attributes",
                );
                e.combine(Error::new(o.span, "declared `opaque` here"));
                errors.push(e);
            }
        } else if let (Some(s), Some(&span)) = (&fa.skip, named.first()) {
            let mut e = Error::new(
                span,
                "a skipped field is not reflected, so it cannot be renamed or flagged",
            );
            e.combine(Error::new(s.span, "skipped here"));
            errors.push(e);
        }
        if let (Some(d), Some(n)) = (&fa.def, &fa.no_eq) {
            let mut e = Error::new(
                d.span,
                "a definition site must take part in structural equality: `def` and `no_eq` exclude each other",
            );
            e.combine(Error::new(n.span, "`no_eq` here"));
            errors.push(e);
        }
        if let (Some(d), Some(s), None) = (&fa.default, &fa.skip, &a.opaque) {
            let mut e = Error::new(
                d.span,
                "a skipped field is always built with `Default::default()`; `default` is for reflected fields, which `create` and the JSON graph may leave out",
            );
            e.combine(Error::new(s.span, "skipped here"));
            errors.push(e);
        }
        if let (Some(d), Some(o)) = (&fa.default, &a.opaque) {
            let mut e = Error::new(
                d.span,
                "an `opaque` type reflects no fields, so its fields take no reflection attributes",
            );
            e.combine(Error::new(o.span, "declared `opaque` here"));
            errors.push(e);
        }
    }

    let mut seen = std::collections::HashMap::new();
    for f in &input.fields {
        let name = f
            .attrs
            .rename
            .as_ref()
            .map_or_else(|| f.ident.to_string(), |r| r.value.value());
        if f.attrs.skip.is_none() {
            if let Some(prev) = seen.insert(name.clone(), f.ident) {
                errors.push(Error::new_spanned(
                    f.ident,
                    format!("field name `{name}` is used twice (also by `{prev}`)"),
                ));
            }
        }
    }
    errors.finish()
}

fn parse_u32(lit: Option<&syn::LitInt>, errors: &mut Errors) -> Option<u32> {
    let lit = lit?;
    match lit.base10_parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            errors.push(Error::new_spanned(
                lit,
                "expected a non-negative integer that fits in u32",
            ));
            None
        }
    }
}
