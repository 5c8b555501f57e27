//! Signatures in Python: keyword calls of a `Function`, `inspect.signature(f)`, and the
//! signature of a Python callable made into a `Function`.
//!
//! A call with keywords (`f(1, y=2)`) converts its values as a positional call does
//! and hands the names to `Function::call_kw`, which binds them by the function's
//! declared signature (defaults fill the rest) and calls: the positional path
//! (`PyFunction::call_python`) is not touched, and a positional call that leaves out
//! trailing parameters gets their defaults from the entry point itself.
//! `__signature__` builds an `inspect.Signature` from `Function::signature` (the
//! declared one, else a typed closure's types as positional-only parameters, else
//! `(*args)`); a Python callable registered as a global (or made a `Function` with
//! `as_function`) gets a signature from `inspect.signature` when every parameter can
//! be one of ours (positional or keyword, defaults that convert to values).

use object_containers::{Function, ParamKind, Signature};
use object_core::{Any, AnyView};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::convert::{any_to_py, py_to_any};

/// Arguments converted on the stack up to this many (positional and keyword together;
/// more go to the heap).
const INLINE: usize = 4;

/// A call with keywords: `n` positional values (`arg(i)`), then `nk` keyword values
/// (`kwarg(i)`) with their names (`name(i)`), bound by `f`'s declared signature, whose
/// parameter names `interned` holds as interned strings (found by address); `detach` says whether the GIL is let go around the call (see
/// `PyFunction::call_views`).
///
/// Each value is converted straight into its parameter's slot (found by name in the
/// signature), the slots left empty take their defaults, and the function is called
/// with one view per parameter. Anything that does not bind (no signature, an unknown
/// or repeated name, a missing argument, too many) goes to `Function::call_kw`, whose
/// error names it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn call_with_keywords<'a, 'py>(
    py: Python<'py>,
    f: &Function,
    n: usize,
    arg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    nk: usize,
    name: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    kwarg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    interned: Option<&[Py<PyString>]>,
    detach: bool,
) -> PyResult<Result<Any, object_core::Error>> {
    let sig = match f.declared_signature() {
        Some(sig) if n <= sig.len() && sig.len() <= INLINE => sig,
        _ => return call_generic(py, f, n, arg, nk, name, kwarg, detach),
    };
    let np = sig.len();
    let mut owned: [Any; INLINE] = Default::default();
    let mut given = [false; INLINE];
    for (i, slot) in owned.iter_mut().take(n).enumerate() {
        *slot = py_to_any(&*arg(i)?)?;
        given[i] = true;
    }
    for k in 0..nk {
        let key = name(k)?;
        // By address first (interned names), else by text.
        let by_address =
            interned.and_then(|names| names.iter().position(|p| p.as_ptr() == key.as_ptr()));
        let found = match by_address {
            Some(i) => Some(i),
            None => sig.index_of(key.cast::<PyString>()?.to_str()?),
        };
        let at =
            found.filter(|&i| !given[i] && sig.parameters()[i].kind() != ParamKind::PositionalOnly);
        let Some(i) = at else {
            return call_generic(py, f, n, arg, nk, name, kwarg, detach);
        };
        owned[i] = py_to_any(&*kwarg(k)?)?;
        given[i] = true;
    }
    let mut views = [AnyView::NONE; INLINE];
    for (i, (v, p)) in views.iter_mut().zip(sig.parameters()).enumerate() {
        *v = if given[i] {
            AnyView::from(&owned[i])
        } else {
            match p.default_value() {
                Some(d) => AnyView::from(d),
                None => return call_generic(py, f, n, arg, nk, name, kwarg, detach),
            }
        };
    }
    let views = &views[..np];
    Ok(if detach {
        py.detach(|| f.call(views))
    } else {
        f.call(views)
    })
}

/// [`call_with_keywords`] through `Function::call_kw`: for what binding here does not
/// take (more parameters than the stack holds, no signature, an error to name).
#[cold]
#[allow(clippy::too_many_arguments)]
fn call_generic<'a, 'py>(
    py: Python<'py>,
    f: &Function,
    n: usize,
    arg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    nk: usize,
    name: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    kwarg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    detach: bool,
) -> PyResult<Result<Any, object_core::Error>> {
    let owned = (0..n)
        .map(|i| py_to_any(&*arg(i)?))
        .chain((0..nk).map(|k| py_to_any(&*kwarg(k)?)))
        .collect::<PyResult<Vec<Any>>>()?;
    let strs = (0..nk)
        .map(|k| Ok(name(k)?.cast::<PyString>()?.to_owned()))
        .collect::<PyResult<Vec<Bound<'py, PyString>>>>()?;
    let keys = strs
        .iter()
        .map(|s| s.to_str())
        .collect::<PyResult<Vec<&str>>>()?;
    let pos: Vec<AnyView<'_>> = owned[..n].iter().map(AnyView::from).collect();
    let named: Vec<(&str, AnyView<'_>)> = keys
        .iter()
        .zip(&owned[n..])
        .map(|(k, a)| (*k, AnyView::from(a)))
        .collect();
    let run = || f.call_kw(&pos, &named);
    Ok(if detach { py.detach(run) } else { run() })
}

/// `inspect.Signature` of `f`: its declared signature, else a typed closure's types
/// (positional-only parameters), else `(*args)`.
pub(crate) fn python_signature<'py>(py: Python<'py>, f: &Function) -> PyResult<Bound<'py, PyAny>> {
    let inspect = py.import("inspect")?;
    let parameter = inspect.getattr("Parameter")?;
    let signature = inspect.getattr("Signature")?;
    let Some(sig) = f.signature() else {
        let args = parameter.call1(("args", parameter.getattr("VAR_POSITIONAL")?))?;
        return signature.call1((PyList::new(py, [args])?,));
    };
    let params = PyList::empty(py);
    for p in sig.parameters() {
        let kind = match p.kind() {
            ParamKind::PositionalOnly => parameter.getattr("POSITIONAL_ONLY")?,
            ParamKind::PositionalOrKeyword => parameter.getattr("POSITIONAL_OR_KEYWORD")?,
        };
        let kwargs = PyDict::new(py);
        if let Some(d) = p.default_value() {
            kwargs.set_item("default", any_to_py(py, d.clone())?)?;
        }
        if let Some(t) = p.type_str() {
            kwargs.set_item("annotation", t)?;
        }
        params.append(parameter.call((p.name(), kind), Some(&kwargs))?)?;
    }
    let kwargs = PyDict::new(py);
    if let Some(r) = sig.return_type() {
        kwargs.set_item("return_annotation", r)?;
    }
    signature.call((params,), Some(&kwargs))
}

/// The signature of a Python callable as one of ours, when each parameter can be one
/// (by position, or by position or name; a default that converts to a value), with the
/// callable's documentation; `None` otherwise (then the function takes any arguments,
/// as before).
pub(crate) fn signature_of_callable(c: &Bound<'_, PyAny>) -> Option<Signature> {
    let py = c.py();
    let inspect = py.import("inspect").ok()?;
    let sig = inspect.call_method1("signature", (c,)).ok()?;
    let parameter = inspect.getattr("Parameter").ok()?;
    let empty = parameter.getattr("empty").ok()?;
    let positional_only = parameter.getattr("POSITIONAL_ONLY").ok()?;
    let either = parameter.getattr("POSITIONAL_OR_KEYWORD").ok()?;
    let mut out = Signature::new();
    let params = sig
        .getattr("parameters")
        .ok()?
        .call_method0("values")
        .ok()?;
    for p in params.try_iter().ok()? {
        let p = p.ok()?;
        let name: String = p.getattr("name").ok()?.extract().ok()?;
        let kind = p.getattr("kind").ok()?;
        let kind = if kind.eq(&positional_only).ok()? {
            ParamKind::PositionalOnly
        } else if kind.eq(&either).ok()? {
            ParamKind::PositionalOrKeyword
        } else {
            return None; // *args, keyword-only, **kwargs: not ours to bind
        };
        let default = p.getattr("default").ok()?;
        let default = if default.is(&empty) {
            None
        } else {
            Some(py_to_any(&default).ok()?)
        };
        let annotation = p.getattr("annotation").ok()?;
        let type_str = if annotation.is(&empty) {
            None
        } else {
            Some(annotation_text(&annotation))
        };
        out = out.param_full(&name, type_str.as_deref(), default, kind);
    }
    let returns = sig.getattr("return_annotation").ok()?;
    if !returns.is(&sig.getattr("empty").ok()?) {
        out = out.returns(&annotation_text(&returns));
    }
    if let Ok(doc) = inspect.call_method1("getdoc", (c,)) {
        if let Ok(text) = doc.extract::<String>() {
            out = out.doc(&text);
        }
    }
    out.check().ok().map(|()| out)
}

/// An annotation as text: a string as it is, a class by its name, else `str()`.
fn annotation_text(a: &Bound<'_, PyAny>) -> String {
    if let Ok(s) = a.extract::<String>() {
        return s;
    }
    if let Ok(t) = a.cast::<pyo3::types::PyType>() {
        if let Ok(n) = t.name() {
            return n.to_string();
        }
    }
    a.str().map(|s| s.to_string()).unwrap_or_default()
}

/// The keyword names of a `tp_call` call's dict, and its values, for
/// [`call_with_keywords`].
pub(crate) fn split_kwargs<'py>(
    kwargs: &Bound<'py, PyDict>,
) -> (Vec<Bound<'py, PyAny>>, Vec<Bound<'py, PyAny>>) {
    kwargs.iter().unzip()
}
