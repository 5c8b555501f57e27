//! Signatures: what a function says of its parameters (names, defaults, types, how
//! each may be passed), its result's type and its documentation.
//!
//! A function holds at most one *declared* [`Signature`], set once
//! ([`Function::with_signature`](super::Function::with_signature), C's
//! `obj_function_create_with_signature`, a Python callable's own), in a slot of the
//! function object after the C call cell: the cell C and plugins read (the header and
//! the entry point) is unchanged, and a function without a signature pays nothing but
//! the slot. A typed closure's parameter and result types are known from its
//! [`FromArg`](object_core::FromArg) / [`IntoRet`](object_core::IntoRet) impls; a
//! declared signature takes them for the parameters it leaves untyped, and a typed
//! function without one still describes itself ([`Function::signature`]: positional-only
//! parameters `arg0`, `arg1`, … with their types).
//!
//! What a declared signature changes in calls:
//!
//! - a call with fewer arguments than parameters takes the missing trailing ones' defaults
//!   (in the entry point itself, so Rust, C and Python callers alike), and one that still
//!   lacks an argument, or has too many, fails naming the function and the parameters;
//! - keyword calls ([`Function::call_kw`], Python's `f(x, y=2)`) bind by name;
//! - a typed closure's conversion errors name the parameter:
//!   ``argument `y` of `tour.add`: expected int, got str``.
//!
//! [`Function::signature`]: super::Function::signature
//! [`Function::call_kw`]: super::Function::call_kw

use core::fmt;
use std::borrow::Cow;

use object_core::{Any, AnyView, Error, TypeError};

/// How a parameter may be passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ParamKind {
    /// By position or by name (the default).
    PositionalOrKeyword = 0,
    /// By position only (what a typed closure without declared names has).
    PositionalOnly = 1,
}

/// One parameter of a [`Signature`].
#[derive(Clone, Debug)]
pub struct Param {
    name: std::string::String,
    type_str: Option<Cow<'static, str>>,
    default: Option<Any>,
    kind: ParamKind,
}

impl Param {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its type as written in the signature (`int`, `str`, `ffi.Array`, …), if known.
    pub fn type_str(&self) -> Option<&str> {
        self.type_str.as_deref()
    }

    /// Its default value, if it has one.
    pub fn default_value(&self) -> Option<&Any> {
        self.default.as_ref()
    }

    /// How it may be passed.
    pub fn kind(&self) -> ParamKind {
        self.kind
    }
}

/// A function's parameters (names, defaults, types), its result's type and its
/// documentation: built with [`Signature::new`] and the methods after it, attached with
/// [`Function::with_signature`](super::Function::with_signature).
///
/// ```
/// use object_containers::{Function, Signature};
///
/// let add = Function::from_typed_named("doc.add", |x: i64, y: i64| x + y)
///     .with_signature(Signature::new().param("x").param_default("y", 1).doc("x + y"))
///     .unwrap();
/// assert_eq!(add.call_with([41]).unwrap().as_int(), Some(42));        // y's default
/// assert_eq!(add.call_kw(&[], &[("y", 2.into()), ("x", 1.into())]).unwrap().as_int(), Some(3));
/// let sig = add.signature().unwrap();
/// assert_eq!(sig.to_string(), "(x: int, y: int = 1) -> int");        // types from the closure
/// let err = add.call_with(["one"]).unwrap_err();
/// assert_eq!(err.message(), "argument `x` of `doc.add`: expected int, got str");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Signature {
    params: Vec<Param>,
    doc: Option<std::string::String>,
    returns: Option<Cow<'static, str>>,
}

impl Signature {
    /// A signature with no parameters (add them with [`param`](Self::param) and the
    /// methods beside it).
    pub fn new() -> Self {
        Signature::default()
    }

    /// A parameter without a default, passed by position or by name.
    #[must_use]
    pub fn param(self, name: &str) -> Self {
        self.push(name, None, None, ParamKind::PositionalOrKeyword)
    }

    /// A parameter with a default value: a call that leaves it out passes the default.
    #[must_use]
    pub fn param_default(self, name: &str, default: impl Into<Any>) -> Self {
        self.push(
            name,
            None,
            Some(default.into()),
            ParamKind::PositionalOrKeyword,
        )
    }

    /// A parameter with its type written out (`"int"`, `"ffi.Array"`, …): for packed
    /// functions, whose types Rust does not know; a typed closure's types come from its
    /// parameters.
    #[must_use]
    pub fn param_typed(self, name: &str, type_str: &str) -> Self {
        self.push(
            name,
            Some(Cow::Owned(type_str.to_owned())),
            None,
            ParamKind::PositionalOrKeyword,
        )
    }

    /// A parameter in full: its name, type (if known), default (if any) and kind.
    #[must_use]
    pub fn param_full(
        self,
        name: &str,
        type_str: Option<&str>,
        default: Option<Any>,
        kind: ParamKind,
    ) -> Self {
        let type_str = type_str.map(|t| Cow::Owned(t.to_owned()));
        self.push(name, type_str, default, kind)
    }

    /// Parameters without defaults, one per name.
    #[must_use]
    pub fn params<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        for n in names {
            self = self.param(n);
        }
        self
    }

    /// The function's documentation.
    #[must_use]
    pub fn doc(mut self, text: &str) -> Self {
        self.doc = Some(text.to_owned());
        self
    }

    /// The result's type as written out (a typed closure's comes from its result type).
    #[must_use]
    pub fn returns(mut self, type_str: &str) -> Self {
        self.returns = Some(Cow::Owned(type_str.to_owned()));
        self
    }

    fn push(
        mut self,
        name: &str,
        type_str: Option<Cow<'static, str>>,
        default: Option<Any>,
        kind: ParamKind,
    ) -> Self {
        self.params.push(Param {
            name: name.to_owned(),
            type_str,
            default,
            kind,
        });
        self
    }

    /// The parameters, in order.
    pub fn parameters(&self) -> &[Param] {
        &self.params
    }

    /// The number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The documentation, if any.
    pub fn doc_text(&self) -> Option<&str> {
        self.doc.as_deref()
    }

    /// The result's type, if known.
    pub fn return_type(&self) -> Option<&str> {
        self.returns.as_deref()
    }

    /// The position of the parameter called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }

    /// Checks that the signature can be a function's: names that are identifiers-like
    /// (not empty, no NUL) and distinct, no parameter without a default after one with a
    /// default, positional-only parameters first.
    ///
    /// # Errors
    ///
    /// A `ValueError` naming the parameter.
    pub fn check(&self) -> Result<(), Error> {
        let mut seen_default = None;
        let mut seen_named = false;
        for (i, p) in self.params.iter().enumerate() {
            if p.name.is_empty() || p.name.contains('\0') {
                return Err(Error::value_error(format!(
                    "parameter {i}: a name must be non-empty text without NUL"
                )));
            }
            if self.params[..i].iter().any(|q| q.name == p.name) {
                return Err(Error::value_error(format!(
                    "parameter `{}` is named twice",
                    p.name
                )));
            }
            match p.kind {
                ParamKind::PositionalOnly if seen_named => {
                    return Err(Error::value_error(format!(
                        "positional-only parameter `{}` after a named one",
                        p.name
                    )))
                }
                ParamKind::PositionalOnly => {}
                ParamKind::PositionalOrKeyword => seen_named = true,
            }
            match (&p.default, seen_default) {
                (Some(_), _) => seen_default = Some(&p.name),
                (None, Some(d)) => {
                    return Err(Error::value_error(format!(
                        "parameter `{}` without a default follows `{d}`, which has one",
                        p.name
                    )))
                }
                (None, None) => {}
            }
        }
        Ok(())
    }

    /// This signature with the types a typed closure knows (`types`, one per parameter,
    /// and its result's) filled in where it gives none.
    pub(super) fn typed_by(
        mut self,
        types: &Signature,
        function: Option<&str>,
    ) -> Result<Self, Error> {
        if types.len() != self.len() {
            return Err(Error::value_error(format!(
                "the signature of {} names {} parameter{}, the function takes {}",
                of_function(function),
                self.len(),
                if self.len() == 1 { "" } else { "s" },
                types.len()
            )));
        }
        for (p, t) in self.params.iter_mut().zip(&types.params) {
            if p.type_str.is_none() {
                p.type_str.clone_from(&t.type_str);
            }
        }
        if self.returns.is_none() {
            self.returns.clone_from(&types.returns);
        }
        Ok(self)
    }

    /// A typed closure's description: positional-only `arg0`, `arg1`, … of these types.
    pub(super) fn of_types(params: Vec<Cow<'static, str>>, returns: Cow<'static, str>) -> Self {
        Signature {
            params: params
                .into_iter()
                .enumerate()
                .map(|(i, t)| Param {
                    name: format!("arg{i}"),
                    type_str: Some(t),
                    default: None,
                    kind: ParamKind::PositionalOnly,
                })
                .collect(),
            doc: None,
            returns: Some(returns),
        }
    }

    /// Calls `call` with `args` completed by the defaults of the parameters they leave
    /// out, or fails naming what is missing or too many (`function` names the function).
    pub(crate) fn with_defaults<'a, T>(
        &'a self,
        function: Option<&str>,
        args: &[AnyView<'a>],
        call: impl FnOnce(&[AnyView<'a>]) -> T,
    ) -> Result<T, Error> {
        let n = self.params.len();
        if args.len() > n {
            return Err(too_many(function, n, args.len()));
        }
        let missing = self.params[args.len()..]
            .iter()
            .filter(|p| p.default.is_none());
        if missing.clone().next().is_some() {
            return Err(missing_error(function, missing.map(|p| p.name.as_str())));
        }
        let defaults = self.params[args.len()..]
            .iter()
            .map(|p| p.default.as_ref().map_or(AnyView::NONE, AnyView::from));
        Ok(with_views(args.iter().copied().chain(defaults), n, call))
    }

    /// Binds `positional` and `keywords` (name, value) to the parameters, completing
    /// them with defaults, and calls `call` with one view per parameter.
    pub(crate) fn bind<'a, T>(
        &'a self,
        function: Option<&str>,
        positional: &[AnyView<'a>],
        keywords: &[(&str, AnyView<'a>)],
        call: impl FnOnce(&[AnyView<'a>]) -> T,
    ) -> Result<T, Error> {
        let n = self.params.len();
        if positional.len() > n {
            return Err(too_many(function, n, positional.len() + keywords.len()));
        }
        // The views, written in place, and which are given: on the stack for up to 8.
        let mut inline = [AnyView::NONE; INLINE];
        let mut inline_given = [false; INLINE];
        let (mut heap, mut heap_given) = (Vec::new(), Vec::new());
        let (views, given): (&mut [AnyView<'a>], &mut [bool]) = if n <= INLINE {
            (&mut inline[..n], &mut inline_given[..n])
        } else {
            heap.resize(n, AnyView::NONE);
            heap_given.resize(n, false);
            (&mut heap, &mut heap_given)
        };
        views[..positional.len()].copy_from_slice(positional);
        given[..positional.len()].fill(true);
        for (name, value) in keywords {
            let Some(i) = self.index_of(name) else {
                return Err(Error::type_error(format!(
                    "{} got an unexpected keyword argument `{name}`",
                    of_function_capital(function)
                )));
            };
            if self.params[i].kind == ParamKind::PositionalOnly {
                return Err(Error::type_error(format!(
                    "argument `{name}` of {} is positional-only",
                    of_function(function)
                )));
            }
            if given[i] {
                return Err(Error::type_error(format!(
                    "{} got multiple values for argument `{name}`",
                    of_function_capital(function)
                )));
            }
            views[i] = *value;
            given[i] = true;
        }
        let mut complete = true;
        for ((v, g), p) in views.iter_mut().zip(given.iter()).zip(&self.params) {
            if !*g {
                match &p.default {
                    Some(d) => *v = AnyView::from(d),
                    None => complete = false,
                }
            }
        }
        if !complete {
            let missing = given
                .iter()
                .zip(&self.params)
                .filter(|(g, p)| !**g && p.default.is_none());
            return Err(missing_error(
                function,
                missing.map(|(_, p)| p.name.as_str()),
            ));
        }
        Ok(call(views))
    }
}

/// How many arguments binding keeps on the stack.
const INLINE: usize = 8;

/// Calls `call` with the `n` views of `views`: on the stack for up to [`INLINE`].
fn with_views<'a, T>(
    views: impl Iterator<Item = AnyView<'a>>,
    n: usize,
    call: impl FnOnce(&[AnyView<'a>]) -> T,
) -> T {
    if n <= INLINE {
        let mut buf = [AnyView::NONE; INLINE];
        for (slot, v) in buf.iter_mut().zip(views) {
            *slot = v;
        }
        call(&buf[..n])
    } else {
        let all: Vec<AnyView<'a>> = views.collect();
        call(&all)
    }
}

impl fmt::Display for Signature {
    /// `(x: int, y: int = 1) -> int`, with `/` after positional-only parameters, as
    /// Python writes signatures.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&p.name)?;
            if let Some(t) = &p.type_str {
                write!(f, ": {t}")?;
            }
            if let Some(d) = &p.default {
                f.write_str(if p.type_str.is_some() { " = " } else { "=" })?;
                write_value(f, d)?;
            }
            let last_positional_only = p.kind == ParamKind::PositionalOnly
                && self
                    .params
                    .get(i + 1)
                    .is_none_or(|q| q.kind != ParamKind::PositionalOnly);
            if last_positional_only {
                f.write_str(", /")?;
            }
        }
        f.write_str(")")?;
        if let Some(r) = &self.returns {
            write!(f, " -> {r}")?;
        }
        Ok(())
    }
}

/// A default value as Python would write it (numbers, text, `None`, `True`/`False`),
/// else as the library prints it.
fn write_value(f: &mut fmt::Formatter<'_>, v: &Any) -> fmt::Result {
    if v.is_none() {
        f.write_str("None")
    } else if let Some(b) = v.as_bool() {
        f.write_str(if b { "True" } else { "False" })
    } else if let Some(i) = v.as_int() {
        write!(f, "{i}")
    } else if let Some(x) = v.as_float() {
        write!(f, "{x:?}")
    } else if let Some(s) = v.as_str() {
        write!(f, "{s:?}")
    } else {
        write!(f, "{v:?}")
    }
}

/// "`name`", or "the function" for an anonymous one.
fn of_function(function: Option<&str>) -> std::string::String {
    function.map_or_else(|| "the function".to_owned(), |n| format!("`{n}`"))
}

/// [`of_function`] at the start of a sentence.
fn of_function_capital(function: Option<&str>) -> std::string::String {
    function.map_or_else(|| "The function".to_owned(), |n| format!("`{n}`"))
}

#[cold]
fn too_many(function: Option<&str>, n: usize, got: usize) -> Error {
    Error::type_error(format!(
        "{} takes {n} argument{}, got {got}",
        of_function_capital(function),
        if n == 1 { "" } else { "s" }
    ))
}

#[cold]
fn missing_error<'n>(function: Option<&str>, names: impl Iterator<Item = &'n str>) -> Error {
    let names: Vec<std::string::String> = names.map(|n| format!("`{n}`")).collect();
    Error::type_error(format!(
        "missing argument{} {} of {}",
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        of_function(function)
    ))
}

/// What a typed closure's conversion errors say of the argument: its position, or,
/// with a declared signature, its name and the function's.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgLabel<'a> {
    /// The function's name.
    pub function: Option<&'a str>,
    /// The declared signature.
    pub signature: Option<&'a Signature>,
}

impl ArgLabel<'_> {
    /// No signature: errors name arguments by position.
    pub const NONE: ArgLabel<'static> = ArgLabel {
        function: None,
        signature: None,
    };

    /// The error for argument `i` that did not convert.
    #[cold]
    #[inline(never)]
    pub fn arg_error(&self, i: usize, e: TypeError) -> Error {
        match self.signature.and_then(|s| s.params.get(i)) {
            Some(p) => {
                let of = match self.function {
                    Some(f) => format!(" of `{f}`"),
                    None => std::string::String::new(),
                };
                Error::type_error(format!(
                    "argument `{}`{of}: expected {}, got {}",
                    p.name,
                    python_name(&e.expected),
                    python_name(e.actual)
                ))
            }
            None => Error::type_error(format!("argument {i}: {e}")),
        }
    }

    /// The error for a call with `got` arguments of a closure taking `expected`.
    #[cold]
    #[inline(never)]
    pub fn count_error(&self, expected: usize, got: usize) -> Error {
        if let Some(sig) = self.signature {
            if got < sig.len() {
                let missing = sig.params[got..].iter().map(|p| p.name.as_str());
                return missing_error(self.function, missing);
            }
            return too_many(self.function, sig.len(), got);
        }
        Error::type_error(format!(
            "expected {} argument{}, got {}",
            expected,
            if expected == 1 { "" } else { "s" },
            got
        ))
    }
}

/// A type's name as Python calls it, where it differs: text is `str`, bytes are
/// `bytes` (whichever form the value had).
fn python_name(key: &str) -> &str {
    match key {
        "ffi.String" | "ffi.SmallStr" | "const char*" => "str",
        "ffi.Bytes" | "ffi.SmallBytes" | "TVMFFIByteArray*" => "bytes",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_what_python_would() {
        assert!(Signature::new().param("x").param("x").check().is_err());
        assert!(Signature::new()
            .param_default("x", 1)
            .param("y")
            .check()
            .is_err());
        assert!(Signature::new().param("").check().is_err());
        let ok = Signature::new().param("x").param_default("y", 2);
        assert!(ok.check().is_ok());
        assert_eq!(ok.to_string(), "(x, y=2)");
    }
}
