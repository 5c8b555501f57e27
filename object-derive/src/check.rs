//! Semantic checks of the parsed input, all errors collected: one function per rule,
//! called in sequence by [`validate`] (the layout of serde_derive's `check.rs`).
//!
//! What the derive cannot see (whether the parent is an object type, is final, or is
//! really the first field's type; whether the struct is `Send + Sync`) is checked by
//! trait bounds in the expansion, spanned at the offending tokens.

use proc_macro2::Span;
use syn::Error;

use crate::ast::{FieldInfo, Input};
use crate::attr::{Constructor, ContainerAttrs, Errors, KeyValue, STRUCTURAL_KINDS};

/// Static indices the derive accepts: the reserved range above `ffi.Object`.
const STATIC_BEGIN: u32 = 65;
const STATIC_END: u32 = 128;

/// Checks `input`, adding to the `errors` found while parsing it, and reports them all.
///
/// The rules run in this order, which is the order their errors are reported in.
pub fn validate(input: &Input<'_>, mut errors: Errors) -> syn::Result<()> {
    let a = &input.attrs;
    let e = &mut errors;

    check_not_generic(input, e);
    check_no_where_clause(input, e);
    check_repr_c(input, e);
    check_repr_not_packed(input, e);
    check_key(input, e);

    let slots = parse_u32(a.slots.as_ref().map(|s| &s.value), e);
    check_final_without_slots(a, e);
    check_static_index_range(a, e);
    check_static_index_without_slots(a, slots, e);
    check_structural_kind(a, e);
    check_abstract_not_final(a, e);
    check_constructor_name(a, e);
    check_abstract_constructor(a, e);
    check_opaque_constructor(a, e);
    check_builtin_opaque(a, e);
    check_reference(input, e);

    check_parent_field_present(input, e);
    if let Some(parent) = input.fields.first() {
        check_parent_field_attrs(parent, e);
        check_parent_declared(a, parent, e);
    }
    for f in input.fields.iter().skip(1) {
        check_field_reflection_attrs(a, f, e);
        check_def_not_no_eq(f, e);
        check_default_not_skipped(a, f, e);
        check_default_not_opaque(a, f, e);
    }
    check_unique_field_names(input, e);

    errors.finish()
}

/// An object type has one key and one type index, so no type parameters.
fn check_not_generic(input: &Input<'_>, errors: &mut Errors) {
    if !input.generics.params.is_empty() {
        errors.push(Error::new_spanned(
            input.generics,
            "object types cannot be generic: each type needs one key and one type index",
        ));
    }
}

fn check_no_where_clause(input: &Input<'_>, errors: &mut Errors) {
    if let Some(w) = &input.generics.where_clause {
        errors.push(Error::new_spanned(
            w,
            "object types cannot have a where clause",
        ));
    }
}

/// The parent stays at offset 0 only in a `#[repr(C)]` struct.
fn check_repr_c(input: &Input<'_>, errors: &mut Errors) {
    let has_c = input.repr.iter().any(|m| m.path().is_ident("C"));
    if !has_c {
        errors.push(Error::new_spanned(
            input.ident,
            "object structs must be #[repr(C)]: the parent must stay the first field, at offset 0",
        ));
    }
}

fn check_repr_not_packed(input: &Input<'_>, errors: &mut Errors) {
    for m in &input.repr {
        if m.path().is_ident("packed") || m.path().is_ident("transparent") {
            errors.push(Error::new_spanned(
                m,
                "object structs cannot be `packed` (the header must stay aligned) or `transparent` (they are `repr(C)`)",
            ));
        }
    }
}

/// `key = "…"` is present, a string literal, and not empty.
fn check_key(input: &Input<'_>, errors: &mut Errors) {
    match &input.attrs.key {
        // A malformed `#[object(...)]` was reported already and may have hidden the key.
        None if input.attrs.malformed => {}
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
}

/// A `final` type has no descendants to reserve `slots` for.
fn check_final_without_slots(a: &ContainerAttrs, errors: &mut Errors) {
    if let (Some(f), Some(s)) = (&a.is_final, &a.slots) {
        push_with_note(
            errors,
            Error::new_spanned(
                &s.value,
                "a `final` type cannot reserve `slots`: it has no descendants",
            ),
            f.span,
            "declared `final` here",
        );
    }
}

/// A static `index` is a `u32` in the reserved range.
fn check_static_index_range(a: &ContainerAttrs, errors: &mut Errors) {
    let Some(i) = &a.index else { return };
    if let Some(n) = parse_u32(Some(&i.value), errors) {
        if !(STATIC_BEGIN..STATIC_END).contains(&n) {
            errors.push(Error::new_spanned(
                &i.value,
                format!("static type indices lie in {STATIC_BEGIN}..{STATIC_END}; leave `index` out to get a dynamic one"),
            ));
        }
    }
}

/// A type with a static `index` reserves no `slots` (`slots`: the parsed value).
fn check_static_index_without_slots(a: &ContainerAttrs, slots: Option<u32>, errors: &mut Errors) {
    let Some(i) = &a.index else { return };
    if slots.is_some_and(|s| s > 0) {
        errors.push(Error::new_spanned(
            &i.value,
            "a type with a static `index` cannot reserve `slots`; its descendants are found through the overflow check",
        ));
    }
}

/// `structural = "…"` names one of [`STRUCTURAL_KINDS`].
fn check_structural_kind(a: &ContainerAttrs, errors: &mut Errors) {
    let Some(k) = &a.structural else { return };
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

/// An `abstract` type needs subtypes, which a `final` type cannot have.
fn check_abstract_not_final(a: &ContainerAttrs, errors: &mut Errors) {
    if let (Some(ab), Some(f)) = (&a.is_abstract, &a.is_final) {
        push_with_note(
            errors,
            Error::new(
                ab.span,
                "an `abstract` type is only instantiated through its subtypes, which a `final` type cannot have",
            ),
            f.span,
            "declared `final` here",
        );
    }
}

/// `constructor = "name"` names an identifier.
fn check_constructor_name(a: &ContainerAttrs, errors: &mut Errors) {
    if let Some(Constructor::Named(name)) = a.constructor.as_ref().map(|c| &c.value) {
        if syn::parse_str::<syn::Ident>(&name.value()).is_err() {
            errors.push(Error::new_spanned(
                name,
                "the constructor's name must be an identifier, e.g. `constructor = \"make\"`",
            ));
        }
    }
}

/// An `abstract` type has no constructor, so none can be named or asked for.
fn check_abstract_constructor(a: &ContainerAttrs, errors: &mut Errors) {
    let (Some(c), Some(ab)) = (&a.constructor, &a.is_abstract) else {
        return;
    };
    let e = match &c.value {
        Constructor::Named(name) => {
            Error::new_spanned(name, "an `abstract` type has no constructor to name")
        }
        Constructor::Enabled(b) if b.value => {
            Error::new_spanned(b, "an `abstract` type has no constructor")
        }
        Constructor::Enabled(_) => return,
    };
    push_with_note(errors, e, ab.span, "declared `abstract` here");
}

/// An `opaque` type's fields are not reflected, so it gets no generated constructor.
fn check_opaque_constructor(a: &ContainerAttrs, errors: &mut Errors) {
    if let (Some(c), Some(o)) = (&a.constructor, &a.opaque) {
        push_with_note(
            errors,
            Error::new(
                c.span,
                "an `opaque` type has no generated constructor (its fields are not reflected)",
            ),
            o.span,
            "declared `opaque` here",
        );
    }
}

/// A built-in shows its contents through its hooks instead of reflected fields, so it
/// must be `opaque`.
fn check_builtin_opaque(a: &ContainerAttrs, errors: &mut Errors) {
    if let (Some(b), None) = (&a.builtin, &a.opaque) {
        errors.push(Error::new(
            b.span,
            "a `builtin` type shows its contents through its hooks, not reflected fields: add `opaque`",
        ));
    }
}

/// The first field is the parent, so there must be one.
/// `ref = Name`: a new type beside the node, so not the node's own name, and not for an
/// `opaque` type (a built-in has a handle of its own).
fn check_reference(input: &Input<'_>, errors: &mut Errors) {
    let a = &input.attrs;
    let Some(r) = &a.reference else {
        return;
    };
    if r.value == *input.ident {
        errors.push(Error::new_spanned(
            &r.value,
            "the typed reference needs a name of its own: TVM's convention names the node `AddNode` and its reference `Add`",
        ));
    }
    if let Some(o) = &a.opaque {
        push_with_note(
            errors,
            Error::new_spanned(
                &r.value,
                "an `opaque` type has no typed reference: a built-in writes its own handle type",
            ),
            o.span,
            "declared `opaque` here",
        );
    }
}

fn check_parent_field_present(input: &Input<'_>, errors: &mut Errors) {
    if input.fields.is_empty() {
        errors.push(Error::new_spanned(
            input.ident,
            "an object struct needs its parent as its first field (e.g. `base: Object`)",
        ));
    }
}

/// Without `parent = …` the type is a root, whose first field is `Object`: a first field
/// of another type is a parent left undeclared (the usual slip), so the fix named is
/// the attribute, not the field.
fn check_parent_declared(a: &ContainerAttrs, parent: &FieldInfo<'_>, errors: &mut Errors) {
    // (Only for a field named as a parent is: another first field, say `value: i64`, is
    // a field put before the parent, which the type checks report as such.)
    if a.parent.is_some() || !(parent.ident == "base" || parent.ident == "parent") {
        return;
    }
    let syn::Type::Path(tp) = &parent.field.ty else {
        return;
    };
    let Some(last) = tp.path.segments.last() else {
        return;
    };
    if last.ident == "Object" {
        return;
    }
    let ty = quote::ToTokens::to_token_stream(&tp.path)
        .to_string()
        .replace(' ', "");
    errors.push(Error::new_spanned(
        &parent.field.ty,
        format!(
            "the first field embeds `{ty}` as the parent, but no parent is declared: \
             add `parent = {ty}` to `#[object(...)]` (a type without `parent` is a root, \
             whose first field is `base: Object`)"
        ),
    ));
}

/// The parent field is not a field of its own: it takes no field attributes.
fn check_parent_field_attrs(parent: &FieldInfo<'_>, errors: &mut Errors) {
    let pa = &parent.attrs;
    if let Some(s) = &pa.skip {
        errors.push(Error::new(s.span, "the parent field cannot be skipped"));
    }
    if let Some(r) = &pa.rename {
        errors.push(Error::new(r.span, "the parent field cannot be renamed"));
    }
    if let Some(d) = &pa.default {
        errors.push(Error::new(
            d.span,
            "the parent field has no default: give defaults to the parent's fields instead",
        ));
    }
    for flag in [&pa.read_only, &pa.no_eq, &pa.def].into_iter().flatten() {
        errors.push(Error::new(
            flag.span,
            "the parent field is not a field of its own; flag the parent's fields instead",
        ));
    }
}

/// A field that is not reflected (every field of an `opaque` type, a `skip`ped field)
/// takes no reflection attributes. Reports the first one.
fn check_field_reflection_attrs(a: &ContainerAttrs, f: &FieldInfo<'_>, errors: &mut Errors) {
    let fa = &f.attrs;
    let named: Vec<Span> = [
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
            push_with_note(
                errors,
                Error::new(
                    span,
                    "an `opaque` type reflects no fields, so its fields take no reflection attributes",
                ),
                o.span,
                "declared `opaque` here",
            );
        }
    } else if let (Some(s), Some(&span)) = (&fa.skip, named.first()) {
        push_with_note(
            errors,
            Error::new(
                span,
                "a skipped field is not reflected, so it cannot be renamed or flagged",
            ),
            s.span,
            "skipped here",
        );
    }
}

/// A definition site (`def`) takes part in structural equality (no `no_eq`).
fn check_def_not_no_eq(f: &FieldInfo<'_>, errors: &mut Errors) {
    if let (Some(d), Some(n)) = (&f.attrs.def, &f.attrs.no_eq) {
        push_with_note(
            errors,
            Error::new(
                d.span,
                "a definition site must take part in structural equality: `def` and `no_eq` exclude each other",
            ),
            n.span,
            "`no_eq` here",
        );
    }
}

/// A `skip`ped field is always built with `Default::default()`: `default` is for
/// reflected fields. (An `opaque` type's fields: [`check_default_not_opaque`].)
fn check_default_not_skipped(a: &ContainerAttrs, f: &FieldInfo<'_>, errors: &mut Errors) {
    if let (Some(d), Some(s), None) = (&f.attrs.default, &f.attrs.skip, &a.opaque) {
        push_with_note(
            errors,
            Error::new(
                d.span,
                "a skipped field is always built with `Default::default()`; `default` is for reflected fields, which `create` and the JSON graph may leave out",
            ),
            s.span,
            "skipped here",
        );
    }
}

/// An `opaque` type's fields are not reflected, so they declare no `default`.
fn check_default_not_opaque(a: &ContainerAttrs, f: &FieldInfo<'_>, errors: &mut Errors) {
    if let (Some(d), Some(o)) = (&f.attrs.default, &a.opaque) {
        push_with_note(
            errors,
            Error::new(
                d.span,
                "an `opaque` type reflects no fields, so its fields take no reflection attributes",
            ),
            o.span,
            "declared `opaque` here",
        );
    }
}

/// Reflected fields (after `rename`) have distinct names.
fn check_unique_field_names(input: &Input<'_>, errors: &mut Errors) {
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
}

/// Reports `e`, with a note at `other` (the attribute it conflicts with).
fn push_with_note(errors: &mut Errors, mut e: Error, other: Span, note: &str) {
    e.combine(Error::new(other, note));
    errors.push(e);
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
