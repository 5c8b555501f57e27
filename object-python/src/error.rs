//! Errors both ways.
//!
//! A Rust [`Error`] raised into Python becomes the Python exception its kind names
//! (`ValueError`, `TypeError`, `KeyError`, `AttributeError`, `IndexError`,
//! `NotImplementedError`, `RuntimeError`), or the class registered for its kind
//! (`register_error(kind, cls)`), or else [`ObjectError`]; every one carries `.kind`
//! and `.frames`. A raised exception of a registered class (or a subclass) reaches Rust
//! with the registered kind, others with their class's name.
//!
//! A Python exception raised in a callback that Rust called becomes an `Error` whose
//! kind is the exception's class name and whose message is `str(exc)`; the exception
//! object itself is the `Error`'s payload ([`Error::with_payload`]), held by a small
//! object (`object_python.PyException`), and is raised again, the same object with its
//! own traceback, when the `Error` comes back to Python. The exception lives exactly as
//! long as the `Error`: one that Rust drops without returning it to Python releases its
//! exception then (no side table, no cap, nothing kept for errors that never return).
//! The frames of such an `Error` are the Python ones, a marker
//! (`"<python exception>"`), then the Rust frames it crossed.

use core::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use object_core::{make_object, Error, ErrorKind, Object};
use pyo3::exceptions::{
    PyAttributeError, PyException, PyIndexError, PyKeyError, PyNotImplementedError, PyRuntimeError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

pyo3::create_exception!(
    object_python,
    ObjectError,
    PyException,
    "An error raised in Rust whose kind has no Python exception of its own; `.kind` names it."
);

const MARKER: &str = "<python exception>";

/// Python exceptions held by `Error`s now (for the leak tests).
static HELD: AtomicUsize = AtomicUsize::new(0);

/// The payload of an `Error` that started as a Python exception: the exception object.
/// Dropping it without the GIL is fine: pyo3 releases the reference the next time a
/// thread attaches to the interpreter.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "object_python.PyException", final, opaque)]
pub(crate) struct PyExceptionObj {
    base: Object,
    exc: Py<PyAny>,
}

impl fmt::Debug for PyExceptionObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("object_python.PyException")
    }
}

impl Drop for PyExceptionObj {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The number of Python exceptions held by `Error`s (for the leak tests).
#[pyfunction]
fn _pending_exceptions() -> usize {
    HELD.load(Ordering::Relaxed)
}

/// The exception classes registered for error kinds (`register_error`): kind → class
/// and class → kind, both held for the process.
static KIND_TO_CLASS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
static CLASS_TO_KIND: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

fn table<'py>(py: Python<'py>, cell: &'static PyOnceLock<Py<PyDict>>) -> Bound<'py, PyDict> {
    cell.get_or_init(py, || PyDict::new(py).unbind())
        .bind(py)
        .clone()
}

/// `register_error(kind, cls)`: a Rust `Error` of kind `kind` is raised as `cls`, and a
/// raised `cls` (or subclass) reaches Rust with kind `kind`. Returns `cls`; without it,
/// a class decorator that does so (`@register_error("MyError")`).
#[pyfunction]
#[pyo3(signature = (kind, cls = None))]
fn register_error(
    py: Python<'_>,
    kind: String,
    cls: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    match cls {
        Some(cls) => register_one(py, &kind, cls),
        None => {
            let register = move |args: &Bound<'_, PyTuple>,
                                 _kwargs: Option<&Bound<'_, PyDict>>|
                  -> PyResult<Py<PyAny>> {
                register_one(args.py(), &kind, &args.get_item(0)?)
            };
            Ok(
                pyo3::types::PyCFunction::new_closure(py, None, None, register)?
                    .into_any()
                    .unbind(),
            )
        }
    }
}

fn register_one(py: Python<'_>, kind: &str, cls: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let is_exception = cls
        .cast::<PyType>()
        .map(|t| t.is_subclass_of::<pyo3::exceptions::PyBaseException>())
        .unwrap_or(Ok(false))?;
    if !is_exception {
        return Err(PyTypeError::new_err(format!(
            "register_error({kind:?}, cls): cls must be an exception class"
        )));
    }
    if kind.is_empty() {
        return Err(PyValueError::new_err(
            "register_error: the kind must not be empty",
        ));
    }
    table(py, &KIND_TO_CLASS).set_item(kind, cls)?;
    table(py, &CLASS_TO_KIND).set_item(cls, kind)?;
    Ok(cls.clone().unbind())
}

/// The kind registered for an exception's class or the nearest base registered, if
/// any.
fn registered_kind(value: &Bound<'_, PyAny>) -> Option<String> {
    let py = value.py();
    let classes = KIND_TO_CLASS.get(py)?.bind(py);
    if classes.is_empty() {
        return None;
    }
    let kinds = table(py, &CLASS_TO_KIND);
    let mro = value.get_type().mro();
    for cls in mro.iter() {
        if let Ok(Some(kind)) = kinds.get_item(&cls) {
            return kind.extract().ok();
        }
    }
    None
}

/// The class registered for `kind`, if any.
fn registered_class<'py>(py: Python<'py>, kind: &str) -> Option<Bound<'py, PyAny>> {
    let classes = KIND_TO_CLASS.get(py)?.bind(py);
    classes.get_item(kind).ok().flatten()
}

/// A Python exception as an `Error` (the exception object kept for its return).
pub(crate) fn pyerr_to_error(py: Python<'_>, err: PyErr) -> Error {
    let value = err.value(py);
    let kind = registered_kind(value.as_any()).unwrap_or_else(|| {
        value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "Exception".to_owned())
    });
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    let mut frames = Vec::new();
    if let Some(tb) = err.traceback(py) {
        // Before 3.12 a fetched exception's traceback travels beside it: attach it,
        // so the exception raised again later still shows where it started.
        let _ = value.setattr("__traceback__", &tb);
        let mut cur = Some(tb);
        while let Some(t) = cur {
            let frame = t.getattr("tb_frame").ok();
            let line = t
                .getattr("tb_lineno")
                .and_then(|l| l.extract::<i64>())
                .unwrap_or(0);
            if let Some(code) = frame.and_then(|f| f.getattr("f_code").ok()) {
                let name = code
                    .getattr("co_name")
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                let file = code
                    .getattr("co_filename")
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                frames.push(format!("{name} ({file}:{line})"));
            }
            cur = t.getattr("tb_next").ok().and_then(|n| n.cast_into().ok());
        }
    }
    HELD.fetch_add(1, Ordering::Relaxed);
    let held = make_object(PyExceptionObj {
        base: Object::new(),
        exc: value.clone().into_any().unbind(),
    });
    // Innermost Python frame first, as Rust frames are added going outwards; the
    // marker last, so the frames after it are the Rust ones.
    let mut e = Error::new(kind, message).with_payload(held.into_object_ref());
    for f in frames.into_iter().rev() {
        e = e.with_frame(f);
    }
    e.with_frame(MARKER)
}

/// An `Error` as a Python exception: the original one if it started in Python.
pub(crate) fn error_to_pyerr(py: Python<'_>, e: Error) -> PyErr {
    let original = e
        .payload()
        .and_then(|p| p.downcast_ref::<PyExceptionObj>())
        .map(|p| p.exc.clone_ref(py));
    if let Some(exc) = original {
        {
            let rust_frames: Vec<&str> = e
                .frames()
                .iter()
                .map(|s| s.as_str())
                .skip_while(|f| *f != MARKER)
                .skip(1)
                .collect();
            let exc = exc.into_bound(py);
            if let Ok(list) = PyList::new(py, &rust_frames) {
                // Exceptions whose class refuses attributes just go without them.
                let _ = exc.setattr("rust_frames", list);
            }
            return PyErr::from_value(exc);
        }
    }
    let mut text = e.message().to_owned();
    for f in e.frames() {
        text.push_str("\n  in ");
        text.push_str(f);
    }
    let registered = registered_class(py, e.kind().as_str())
        .and_then(|cls| cls.call1((text.as_str(),)).ok())
        .filter(|v| v.is_instance_of::<pyo3::exceptions::PyBaseException>());
    let err = match (registered, e.kind()) {
        (Some(v), _) => PyErr::from_value(v),
        (None, kind) => builtin_exception(kind, text),
    };
    let value = err.value(py);
    let _ = value.setattr("kind", e.kind().as_str());
    if let Ok(list) = PyList::new(py, e.frames()) {
        let _ = value.setattr("frames", list);
    }
    err
}

/// The built-in exception of a kind (`ObjectError` for the kinds Python has none of).
fn builtin_exception(kind: &ErrorKind, text: String) -> PyErr {
    match kind {
        ErrorKind::ValueError => PyValueError::new_err(text),
        ErrorKind::TypeError => PyTypeError::new_err(text),
        ErrorKind::KeyError => PyKeyError::new_err(text),
        ErrorKind::AttributeError => PyAttributeError::new_err(text),
        ErrorKind::IndexError => PyIndexError::new_err(text),
        ErrorKind::NotImplementedError => PyNotImplementedError::new_err(text),
        ErrorKind::RuntimeError => PyRuntimeError::new_err(text),
        _ => ObjectError::new_err(text),
    }
}

/// Raises a Rust `Error` of the given kind (for the tests).
#[pyfunction]
#[pyo3(signature = (kind, message, frames = Vec::new()))]
fn _raise_error(py: Python<'_>, kind: &str, message: &str, frames: Vec<String>) -> PyResult<()> {
    let mut e = Error::new(kind, message);
    for f in frames {
        e = e.with_frame(f);
    }
    Err(error_to_pyerr(py, e))
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ObjectError", m.py().get_type::<ObjectError>())?;
    m.add_function(wrap_pyfunction!(_pending_exceptions, m)?)?;
    m.add_function(wrap_pyfunction!(_raise_error, m)?)?;
    m.add_function(wrap_pyfunction!(register_error, m)?)?;
    Ok(())
}
