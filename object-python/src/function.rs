//! Functions both ways.
//!
//! Calling a `Function` from Python (through its vectorcall entry, `crate::vectorcall`,
//! or through `__call__`; both come to `PyFunction::call_python`) converts the
//! arguments to `Any`s, releases the GIL for the call unless the function is marked
//! quick (so other Python threads run, and so a Rust callee may wait for threads that
//! call back into Python; see `PyFunction::call_views` for the rule), and converts the
//! result back. A Python callable becomes a `Function` whose packed entry takes the GIL
//! (`Python::attach`, from whatever thread Rust calls it on), converts the arguments,
//! calls, and converts the result or the exception (see `error`).

use object_containers::{
    get_global as rust_get_global, list_globals as rust_list_globals,
    register_global as rust_register_global, register_global_override,
    remove_global as rust_remove_global, Function, FunctionObj,
};
use object_core::{Any, AnyView, Error};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::convert::{any_to_py, py_to_any};
use crate::error::{error_to_pyerr, pyerr_to_error};
use crate::object::{take_pending, wrap, PyObj};

/// The base of `ffi.Function`'s class: callable with positional arguments.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "FunctionBase")]
pub(crate) struct PyFunction {
    f: Function,
    /// The declared signature's parameter names as interned Python strings, made on
    /// the first keyword call: a call site's keyword names are interned too, so a
    /// keyword is found by its address (`crate::signature`).
    kw_names: std::sync::OnceLock<Vec<Py<PyString>>>,
    /// What CPython calls for this object (`vectorcall`): always the same entry, one
    /// per instance because CPython finds it by offset in the instance.
    #[cfg(not(feature = "abi3"))]
    pub(crate) entry: pyo3::ffi::vectorcallfunc,
}

/// Arguments converted on the stack up to this many.
const INLINE_ARGS: usize = 6;

#[pymethods]
impl PyFunction {
    /// `Function(callable)` makes a `Function` of a Python callable.
    #[new]
    #[pyo3(signature = (callable = None))]
    fn new(callable: Option<&Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        let f = match callable {
            Some(c) => function_from_callable(c),
            None => {
                let obj = take_pending().ok_or_else(|| {
                    PyTypeError::new_err("Function(callable): a callable is needed")
                })?;
                let p = obj
                    .downcast::<FunctionObj>()
                    .map_err(|o| PyTypeError::new_err(format!("not a function: {o:?}")))?;
                Function::from_object_ptr(p)
            }
        };
        let base = PyObj {
            obj: f.as_object_ptr().clone().into_object_ref(),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyFunction::of(f)))
    }

    /// The `tp_call` path: every call in the `abi3` build (the others take the
    /// vectorcall entry, `crate::vectorcall`, keywords included).
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        match kwargs {
            Some(kw) if !kw.is_empty() => {
                let (names, values) = crate::signature::split_kwargs(kw);
                self.call_python_kw(
                    py,
                    args.len(),
                    |i| args.get_borrowed_item(i),
                    names.len(),
                    |i| Ok(names[i].as_borrowed()),
                    |i| Ok(values[i].as_borrowed()),
                )
            }
            _ => self.call_python(py, args.len(), |i| args.get_borrowed_item(i)),
        }
    }

    /// The function's name, if it has one.
    #[getter]
    fn name(&self) -> Option<String> {
        self.f.name().map(str::to_owned)
    }

    /// The last part of the function's name (`add` for `tour.add`).
    #[getter]
    fn __name__(&self) -> String {
        let name = self.f.name().unwrap_or("<anonymous>");
        name.rsplit('.').next().unwrap_or(name).to_owned()
    }

    /// The function's whole name (`tour.add`).
    #[getter]
    fn __qualname__(&self) -> String {
        self.f.name().unwrap_or("<anonymous>").to_owned()
    }

    /// `inspect.signature(f)`: the declared signature, else a typed closure's types
    /// (positional-only), else `(*args)`.
    #[getter]
    fn __signature__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::signature::python_signature(py, &self.f)
    }

    /// The signature's documentation, if any (what `f.__doc__` reads).
    #[getter]
    fn _doc(&self) -> Option<String> {
        self.f
            .declared_signature()
            .and_then(|s| s.doc_text())
            .map(str::to_owned)
    }

    /// Whether a call lets the GIL go while Rust runs: only if the function is marked
    /// long-running (`Function::long_running` in Rust, `obj_function_set_long_running`
    /// in C, or this attribute set to `True`). Set it on a function that computes for
    /// long or waits for threads that call back into Python (held, such a wait
    /// deadlocks).
    #[getter]
    fn releases_gil(&self) -> bool {
        self.f.is_long_running()
    }

    #[setter]
    fn set_releases_gil(&self, value: bool) {
        self.f.set_long_running(value);
    }
}

impl PyFunction {
    fn of(f: Function) -> Self {
        PyFunction {
            f,
            kw_names: std::sync::OnceLock::new(),
            #[cfg(not(feature = "abi3"))]
            entry: crate::vectorcall::ENTRY,
        }
    }

    /// A call from Python: the `n` arguments, `arg(i)` each, converted to `Any`s, the
    /// function called (`call_views`), its result converted back.
    #[inline]
    pub(crate) fn call_python<'a, 'py>(
        &self,
        py: Python<'py>,
        n: usize,
        arg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        // No arguments, one or two (the commonest calls): converted into locals, with
        // no array to fill and drop.
        let result = if n == 0 {
            self.call_views(py, &[])
        } else if n == 1 {
            let a0 = py_to_any(&*arg(0)?)?;
            self.call_views(py, &[AnyView::from(&a0)])
        } else if n == 2 {
            let a0 = py_to_any(&*arg(0)?)?;
            let a1 = py_to_any(&*arg(1)?)?;
            self.call_views(py, &[AnyView::from(&a0), AnyView::from(&a1)])
        } else if n <= INLINE_ARGS {
            let mut owned: [Any; INLINE_ARGS] = Default::default();
            for (i, slot) in owned.iter_mut().take(n).enumerate() {
                *slot = py_to_any(&*arg(i)?)?;
            }
            let views: [AnyView<'_>; INLINE_ARGS] =
                std::array::from_fn(|i| AnyView::from(&owned[i]));
            self.call_views(py, &views[..n])
        } else {
            let owned = (0..n)
                .map(|i| py_to_any(&*arg(i)?))
                .collect::<PyResult<Vec<Any>>>()?;
            let views: Vec<AnyView<'_>> = owned.iter().map(AnyView::from).collect();
            self.call_views(py, &views)
        };
        match result {
            Ok(v) => any_to_py(py, v),
            Err(e) => Err(error_to_pyerr(py, e)),
        }
    }

    /// A call from Python with keywords: `n` positional arguments, then `nk` keyword
    /// arguments (`name(i)`, `kwarg(i)`), bound by the declared signature (`crate::signature`).
    #[cold]
    pub(crate) fn call_python_kw<'a, 'py>(
        &self,
        py: Python<'py>,
        n: usize,
        arg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
        nk: usize,
        name: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
        kwarg: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let detach = self.f.is_long_running();
        let interned = self.f.declared_signature().map(|sig| {
            self.kw_names.get_or_init(|| {
                sig.parameters()
                    .iter()
                    .map(|p| PyString::intern(py, p.name()).unbind())
                    .collect()
            })
        });
        let r = crate::signature::call_with_keywords(
            py,
            &self.f,
            n,
            arg,
            nk,
            name,
            kwarg,
            interned.map(Vec::as_slice),
            detach,
        )?;
        match r {
            Ok(v) => any_to_py(py, v),
            Err(e) => Err(error_to_pyerr(py, e)),
        }
    }

    /// The call itself. The GIL rule: a function runs with the GIL held (as a plain
    /// pyo3 function does), which saves letting it go and taking it back (more than the
    /// rest of a short call); a function marked long-running runs with the GIL
    /// released, so that other Python threads run meanwhile and a callee that waits
    /// for threads calling back into Python cannot deadlock. Either way a Python
    /// callable called back from Rust takes the GIL itself (`Python::attach`: on this
    /// thread, while it is held, that is a no-op).
    #[inline]
    fn call_views(&self, py: Python<'_>, views: &[AnyView<'_>]) -> Result<Any, Error> {
        if self.f.is_long_running() {
            py.detach(|| self.f.call(views))
        } else {
            self.f.call(views)
        }
    }
}

/// A Python callable as a `Function` with the callable's signature where it has one
/// that a `Function` can carry (see `crate::signature::signature_of_callable`): for
/// callables made into functions on purpose (globals, `as_function`), not for every
/// callable passed as an argument.
/// `name` names it (else the callable's `__qualname__` does).
pub(crate) fn function_with_signature(c: &Bound<'_, PyAny>, name: Option<&str>) -> Function {
    if let Ok(f) = c.cast::<PyFunction>() {
        return f.get().f.clone();
    }
    let f = function_named(c, name);
    match crate::signature::signature_of_callable(c) {
        Some(sig) => f.clone().with_signature(sig).unwrap_or(f),
        None => f,
    }
}

/// A Python callable as a `Function` (or the `Function` itself, for one of ours).
pub(crate) fn function_from_callable(c: &Bound<'_, PyAny>) -> Function {
    if let Ok(f) = c.cast::<PyFunction>() {
        return f.get().f.clone();
    }
    function_named(c, None)
}

/// A Python callable as a new `Function` called `name` (else after its `__qualname__`).
fn function_named(c: &Bound<'_, PyAny>, name: Option<&str>) -> Function {
    let name = match name {
        Some(n) => n.to_owned(),
        None => c
            .getattr(pyo3::intern!(c.py(), "__qualname__"))
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "<python callable>".to_owned()),
    };
    let callable: Py<PyAny> = c.clone().unbind();
    Function::from_packed_named(Some(&name), move |args: &[AnyView<'_>]| {
        Python::attach(|py| -> Result<Any, Error> {
            let converted = args
                .iter()
                .map(|a| any_to_py(py, a.to_any()))
                .collect::<PyResult<Vec<_>>>()
                .and_then(|items| PyTuple::new(py, items));
            let tuple = converted.map_err(|e| pyerr_to_error(py, e))?;
            match callable.bind(py).call1(tuple) {
                Ok(r) => py_to_any(&r).map_err(|e| pyerr_to_error(py, e)),
                Err(e) => Err(pyerr_to_error(py, e)),
            }
        })
    })
}

/// The global function registered under `name`, or `None`.
#[pyfunction]
fn get_global(py: Python<'_>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    rust_get_global(name)
        .map(|f| wrap(py, f.as_object_ptr().clone().into_object_ref()))
        .transpose()
}

/// The names of the global functions.
#[pyfunction]
fn list_globals() -> Vec<String> {
    rust_list_globals()
}

/// Registers `f` (a `Function` or any Python callable, with its signature) as the
/// global `name` and returns `f`; a name already taken is an error naming it unless
/// `override` is true. Without `f`, a decorator that does so:
/// `@register_global("demo.add")`.
#[pyfunction]
#[pyo3(signature = (name, f = None, r#override = false))]
fn register_global(
    py: Python<'_>,
    name: String,
    f: Option<&Bound<'_, PyAny>>,
    r#override: bool,
) -> PyResult<Py<PyAny>> {
    match f {
        Some(f) => register_one(py, &name, f, r#override),
        None => {
            let register = move |args: &Bound<'_, PyTuple>,
                                 _kwargs: Option<&Bound<'_, PyDict>>|
                  -> PyResult<Py<PyAny>> {
                let f = args.get_item(0)?;
                register_one(args.py(), &name, &f, r#override)
            };
            Ok(
                pyo3::types::PyCFunction::new_closure(py, None, None, register)?
                    .into_any()
                    .unbind(),
            )
        }
    }
}

/// `register_global(name, f, override)` with `f` given.
fn register_one(
    py: Python<'_>,
    name: &str,
    f: &Bound<'_, PyAny>,
    r#override: bool,
) -> PyResult<Py<PyAny>> {
    if !f.is_callable() {
        return Err(PyTypeError::new_err("register_global needs a callable"));
    }
    // (A Python callable registered as a global is named after the global, which
    // its errors and `__name__` then show.)
    let func = function_with_signature(f, Some(name));
    if r#override {
        drop(register_global_override(name, func));
    } else if let Err(e) = rust_register_global(name, func) {
        return Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "{} (pass override=True to replace it)",
            e.message()
        ))
        .tap_kind(py, e.kind().as_str()));
    }
    Ok(f.clone().unbind())
}

/// Sets `kind` on an exception made here (as Rust errors' exceptions carry it).
trait TapKind {
    fn tap_kind(self, py: Python<'_>, kind: &str) -> Self;
}

impl TapKind for PyErr {
    fn tap_kind(self, py: Python<'_>, kind: &str) -> Self {
        let _ = self.value(py).setattr("kind", kind);
        self
    }
}

/// Removes the global `name`; whether there was one.
#[pyfunction]
fn remove_global(name: &str) -> bool {
    rust_remove_global(name).is_some()
}

/// A Python callable as a `Function` object.
#[pyfunction]
fn as_function(py: Python<'_>, callable: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if !callable.is_callable() {
        return Err(PyTypeError::new_err("as_function needs a callable"));
    }
    let f = function_with_signature(callable, None);
    wrap(py, f.as_object_ptr().clone().into_object_ref())
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFunction>()?;
    #[cfg(not(feature = "abi3"))]
    {
        // A probe instance shows where an instance's entry field lies.
        let f = Function::from_typed(|| {});
        let base = PyObj {
            obj: f.as_object_ptr().clone().into_object_ref(),
        };
        let probe = Bound::new(
            m.py(),
            PyClassInitializer::from(base).add_subclass(PyFunction::of(f)),
        )?;
        crate::vectorcall::install(&m.py().get_type::<PyFunction>(), Some(&probe));
    }
    m.add_function(wrap_pyfunction!(get_global, m)?)?;
    m.add_function(wrap_pyfunction!(list_globals, m)?)?;
    m.add_function(wrap_pyfunction!(register_global, m)?)?;
    m.add_function(wrap_pyfunction!(remove_global, m)?)?;
    m.add_function(wrap_pyfunction!(as_function, m)?)?;
    Ok(())
}
