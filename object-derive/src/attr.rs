//! Parsing of `#[object(...)]` attributes. Parsing only: semantic checks live in
//! `check.rs`. Unknown and duplicate keys are rejected here, generically.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Error, LitBool, LitInt, LitStr, Path};

/// The attribute's name.
pub const OBJECT: &str = "object";

/// Container attribute keys.
pub const KEY: &str = "key";
pub const PARENT: &str = "parent";
pub const SLOTS: &str = "slots";
pub const FINAL: &str = "final";
pub const INDEX: &str = "index";
pub const OVERFLOW: &str = "overflow";
pub const CRATE: &str = "crate";
pub const OPAQUE: &str = "opaque";
pub const CUSTOM_DEBUG: &str = "custom_debug";
pub const STRUCTURAL: &str = "structural";
pub const BUILTIN: &str = "builtin";
pub const ABSTRACT: &str = "abstract";
pub const CONSTRUCTOR: &str = "constructor";
pub const REF: &str = "ref";
/// The values `structural = "…"` accepts.
pub const STRUCTURAL_KINDS: &[&str] = &["tree", "dag", "var", "identity"];
const CONTAINER_KEYS: &[&str] = &[
    KEY,
    PARENT,
    SLOTS,
    FINAL,
    INDEX,
    OVERFLOW,
    CRATE,
    OPAQUE,
    CUSTOM_DEBUG,
    STRUCTURAL,
    BUILTIN,
    ABSTRACT,
    CONSTRUCTOR,
    REF,
];

/// Field attribute keys.
pub const SKIP: &str = "skip";
pub const RENAME: &str = "rename";
pub const READ_ONLY: &str = "read_only";
pub const NO_EQ: &str = "no_eq";
pub const DEF: &str = "def";
pub const DEFAULT: &str = "default";
const FIELD_KEYS: &[&str] = &[SKIP, RENAME, READ_ONLY, NO_EQ, DEF, DEFAULT];

/// What `constructor = …` says.
pub enum Constructor {
    /// `constructor = false` (`true` is the default, `new`).
    Enabled(LitBool),
    /// `constructor = "name"`: the constructor's name (checked in `check.rs`).
    Named(LitStr),
}

/// A parsed value with the span of the attribute key that set it.
pub struct Located<T> {
    pub value: T,
    pub span: Span,
}

/// What `key = …` was written as (a non-string is kept for a precise error).
pub enum KeyValue {
    Str(LitStr),
    Other(syn::Expr),
}

#[derive(Default)]
pub struct ContainerAttrs {
    pub key: Option<Located<KeyValue>>,
    pub parent: Option<Located<Path>>,
    pub slots: Option<Located<LitInt>>,
    pub is_final: Option<Located<()>>,
    pub index: Option<Located<LitInt>>,
    pub overflow: Option<Located<LitBool>>,
    pub krate: Option<Located<Path>>,
    pub opaque: Option<Located<()>>,
    pub custom_debug: Option<Located<()>>,
    /// `structural = "tree" | "dag" | "var" | "identity"` (checked in `check.rs`).
    pub structural: Option<Located<LitStr>>,
    pub builtin: Option<Located<Path>>,
    /// `abstract`: never instantiated itself.
    pub is_abstract: Option<Located<()>>,
    /// `constructor = false` (no constructor) or `constructor = "name"` (renamed).
    pub constructor: Option<Located<Constructor>>,
    /// `ref = Name`: the typed reference type the derive writes beside the node.
    pub reference: Option<Located<syn::Ident>>,
    /// An `#[object(...)]` failed to parse (reported); keys after the error are unknown.
    pub malformed: bool,
}

#[derive(Default)]
pub struct FieldAttrs {
    pub skip: Option<Located<()>>,
    pub rename: Option<Located<LitStr>>,
    pub read_only: Option<Located<()>>,
    pub no_eq: Option<Located<()>>,
    pub def: Option<Located<()>>,
    /// `default` (`None`: `Default::default()`) or `default = expr`.
    pub default: Option<Located<Option<syn::Expr>>>,
}

/// Collects errors so the user sees every bad attribute in one build.
#[derive(Default)]
pub struct Errors(Option<Error>);

impl Errors {
    pub fn push(&mut self, e: Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
    /// Ends with `e` added to whatever was collected before.
    pub fn fail(self, e: Error) -> Error {
        match self.0 {
            Some(mut all) => {
                all.combine(e);
                all
            }
            None => e,
        }
    }
}

fn set<T>(slot: &mut Option<Located<T>>, value: T, path: &Path, errors: &mut Errors) {
    if slot.is_some() {
        let name = path_name(path);
        errors.push(Error::new_spanned(
            path,
            format!("duplicate object attribute `{name}`"),
        ));
    } else {
        *slot = Some(Located {
            value,
            span: path.span(),
        });
    }
}

fn path_name(path: &Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

fn unknown(path: &Path, allowed: &[&str], what: &str) -> Error {
    let name = path_name(path);
    Error::new_spanned(
        path,
        format!(
            "unknown object {what} attribute `{name}` (expected one of: {})",
            allowed.join(", ")
        ),
    )
}

pub fn parse_container(attrs: &[Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident(OBJECT)) {
        let res = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident(KEY) {
                let mut expr: syn::Expr = meta.value()?.parse()?;
                // A `$key:literal` from `macro_rules!` arrives in an invisible group.
                while let syn::Expr::Group(g) = expr {
                    expr = *g.expr;
                }
                let v = match expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => KeyValue::Str(s),
                    other => KeyValue::Other(other),
                };
                set(&mut out.key, v, path, errors);
            } else if path.is_ident(PARENT) {
                let p: Path = meta.value()?.parse()?;
                set(&mut out.parent, p, path, errors);
            } else if path.is_ident(SLOTS) {
                let n: LitInt = meta.value()?.parse()?;
                set(&mut out.slots, n, path, errors);
            } else if path.is_ident(FINAL) {
                set(&mut out.is_final, (), path, errors);
            } else if path.is_ident(INDEX) {
                let n: LitInt = meta.value()?.parse()?;
                set(&mut out.index, n, path, errors);
            } else if path.is_ident(OVERFLOW) {
                let b: LitBool = meta.value()?.parse()?;
                set(&mut out.overflow, b, path, errors);
            } else if path.is_ident(CRATE) {
                let value = meta.value()?;
                let p: Path = if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse()?
                } else {
                    Path::parse_mod_style(value)?
                };
                set(&mut out.krate, p, path, errors);
            } else if path.is_ident(OPAQUE) {
                set(&mut out.opaque, (), path, errors);
            } else if path.is_ident(CUSTOM_DEBUG) {
                set(&mut out.custom_debug, (), path, errors);
            } else if path.is_ident(STRUCTURAL) {
                let s: LitStr = meta.value()?.parse()?;
                set(&mut out.structural, s, path, errors);
            } else if path.is_ident(BUILTIN) {
                let p: Path = meta.value()?.parse()?;
                set(&mut out.builtin, p, path, errors);
            } else if path.is_ident(ABSTRACT) {
                set(&mut out.is_abstract, (), path, errors);
            } else if path.is_ident(CONSTRUCTOR) {
                let value = meta.value()?;
                let c = if value.peek(LitStr) {
                    Constructor::Named(value.parse()?)
                } else {
                    Constructor::Enabled(value.parse()?)
                };
                set(&mut out.constructor, c, path, errors);
            } else if path.is_ident(REF) {
                let name: syn::Ident = meta.value()?.parse()?;
                set(&mut out.reference, name, path, errors);
            } else {
                // Skip a value if one follows, so parsing can go on to the next key.
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                errors.push(unknown(path, CONTAINER_KEYS, "type"));
            }
            Ok(())
        });
        if let Err(e) = res {
            out.malformed = true;
            errors.push(e);
        }
    }
    out
}

pub fn parse_field(attrs: &[Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident(OBJECT)) {
        let res = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident(SKIP) {
                set(&mut out.skip, (), path, errors);
            } else if path.is_ident(RENAME) {
                let s: LitStr = meta.value()?.parse()?;
                set(&mut out.rename, s, path, errors);
            } else if path.is_ident(READ_ONLY) {
                set(&mut out.read_only, (), path, errors);
            } else if path.is_ident(NO_EQ) {
                set(&mut out.no_eq, (), path, errors);
            } else if path.is_ident(DEF) {
                set(&mut out.def, (), path, errors);
            } else if path.is_ident(DEFAULT) {
                let expr = if meta.input.peek(syn::Token![=]) {
                    Some(meta.value()?.parse::<syn::Expr>()?)
                } else {
                    None
                };
                set(&mut out.default, expr, path, errors);
            } else {
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                errors.push(unknown(path, FIELD_KEYS, "field"));
            }
            Ok(())
        });
        if let Err(e) = res {
            errors.push(e);
        }
    }
    out
}
