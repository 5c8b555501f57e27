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
use pyo3::types::PyTuple;

use crate::convert::{any_to_py, py_to_any};
use crate::error::{error_to_pyerr, pyerr_to_error};
use crate::object::{take_pending, wrap, PyObj};

/// The base of `ffi.Function`'s class: callable with positional arguments.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "FunctionBase")]
pub(crate) struct PyFunction {
    f: Function,
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

    /// The `tp_call` path: calls with a `**kwargs` dict, and every call in the `abi3`
    /// build (the others take the vectorcall entry, `crate::vectorcall`).
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        self.call_python(py, args.len(), |i| args.get_borrowed_item(i))
    }

    /// The function's name, if it has one.
    #[getter]
    fn name(&self) -> Option<String> {
        self.f.name().map(str::to_owned)
    }

    /// Whether a call lets the GIL go while Rust runs: true unless the function is
    /// marked quick (`Function::quick` in Rust).
    #[getter]
    fn releases_gil(&self) -> bool {
        !self.f.is_quick()
    }
}

impl PyFunction {
    fn of(f: Function) -> Self {
        PyFunction {
            f,
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

    /// The call itself. The GIL rule: a function marked quick (it returns in about the
    /// time of a call and never waits for another thread) runs with the GIL held, which
    /// saves letting it go and taking it back (more than the rest of such a call);
    /// every other function runs with the GIL released, so that other Python threads
    /// run meanwhile and a callee that waits for threads calling back into Python
    /// cannot deadlock. Either way a Python callable called back from Rust takes the GIL
    /// itself (`Python::attach`: on this thread, while it is held, that is a no-op).
    #[inline]
    fn call_views(&self, py: Python<'_>, views: &[AnyView<'_>]) -> Result<Any, Error> {
        if self.f.is_quick() {
            self.f.call(views)
        } else {
            py.detach(|| self.f.call(views))
        }
    }
}

/// A Python callable as a `Function` (or the `Function` itself, for one of ours).
pub(crate) fn function_from_callable(c: &Bound<'_, PyAny>) -> Function {
    if let Ok(f) = c.cast::<PyFunction>() {
        return f.get().f.clone();
    }
    let name = c
        .getattr(pyo3::intern!(c.py(), "__qualname__"))
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "<python callable>".to_owned());
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

/// Registers `f` (a `Function` or any Python callable) as the global `name`; a name
/// already taken is an error unless `override` is true.
#[pyfunction]
#[pyo3(signature = (name, f, r#override = false))]
fn register_global(
    py: Python<'_>,
    name: &str,
    f: &Bound<'_, PyAny>,
    r#override: bool,
) -> PyResult<()> {
    if !f.is_callable() {
        return Err(PyTypeError::new_err("register_global needs a callable"));
    }
    let f = function_from_callable(f);
    if r#override {
        drop(register_global_override(name, f));
        Ok(())
    } else {
        rust_register_global(name, f).map_err(|e| error_to_pyerr(py, e))
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
    let f = function_from_callable(callable);
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
