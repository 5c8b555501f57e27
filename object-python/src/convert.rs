//! Python values ↔ `Any`.
//!
//! | Python | `Any` |
//! | --- | --- |
//! | `None`, `bool`, `int` (64-bit), `float` | None, Bool, Int, Float |
//! | `str` | a string (inline when short, else `ffi.String`) |
//! | `bytes` | `ffi.Bytes` |
//! | `DataType`, `Device` | DataType, Device |
//! | an `Object` (any generated class) | the object itself |
//! | `list`, `tuple` | a new `ffi.Array` (typed parameters check the items) |
//! | `dict` | a new `ffi.Map` |
//! | anything with `__dlpack__` (NumPy arrays, …) | an `ffi.Tensor` sharing the memory |
//! | any other callable | an `ffi.Function` calling it |
//!
//! Back, strings and bytes become `str` and `bytes`, and objects their class's
//! instances.

use object_containers::{Array, Map};
use object_core::{type_index, Any, AnyView, Bytes, ObjectRef};
use pyo3::exceptions::{PyRecursionError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::function::function_from_callable;
use crate::object::{wrap, PyObj};
use crate::tensor::ndarray_from_dlpack;
use crate::values::{PyDataType, PyDevice};

/// How deeply Python lists, tuples and dicts may nest when converted (each level is
/// one Rust stack frame, so the depth is bounded whatever thread converts).
pub(crate) const MAX_NESTING: usize = 256;

/// The first type whose values were converted through `__dlpack__` (NumPy's
/// `ndarray`, usually), checked right after ints and floats: a call taking an array
/// skips the other checks and the `__dlpack__` look-up. Held for the process.
static DLPACK_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A Python value as an `Any`.
pub(crate) fn py_to_any(obj: &Bound<'_, PyAny>) -> PyResult<Any> {
    py_to_any_nested(obj, 0)
}

fn py_to_any_nested(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Any> {
    // The commonest arguments first, by exact type (one pointer compare each).
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(Any::from(obj.extract::<i64>()?));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Any::from(obj.extract::<f64>()?));
    }
    if let Some(t) = DLPACK_TYPE.get(obj.py()) {
        if obj.get_type().is(t.bind(obj.py())) {
            return Ok(Any::from(ndarray_from_dlpack(obj)?));
        }
    }
    if let Ok(o) = obj.cast::<PyObj>() {
        return Ok(Any::from(o.get().obj.clone()));
    }
    if obj.is_none() {
        return Ok(Any::default());
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Any::from(obj.is_truthy()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Any::from(obj.extract::<i64>()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Any::from(obj.extract::<f64>()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Any::from(&*s.to_cow()?));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Any::from(Bytes::new(b.as_bytes())));
    }
    if let Ok(d) = obj.cast::<PyDataType>() {
        return Ok(Any::from(d.get().0));
    }
    if let Ok(d) = obj.cast::<PyDevice>() {
        return Ok(Any::from(d.get().0));
    }
    let nested = |x: Bound<'_, PyAny>| {
        if depth >= MAX_NESTING {
            return Err(PyRecursionError::new_err(format!(
                "lists, tuples and dicts nested more than {MAX_NESTING} deep"
            )));
        }
        py_to_any_nested(&x, depth + 1)
    };
    if let Ok(l) = obj.cast::<PyList>() {
        let items = l.iter().map(nested).collect::<PyResult<Vec<Any>>>()?;
        return Ok(Any::from(Array::<Any>::from(items)));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let items = t.iter().map(nested).collect::<PyResult<Vec<Any>>>()?;
        return Ok(Any::from(Array::<Any>::from(items)));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m: Map<Any, Any> = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            m.insert(nested(k)?, nested(v)?);
        }
        return Ok(Any::from(m));
    }
    let py = obj.py();
    if obj.hasattr(pyo3::intern!(py, "__dlpack__"))? {
        let nd = ndarray_from_dlpack(obj)?;
        // Its type takes this branch whatever the value (every check above looks at
        // the type only): the next one of that type comes here first.
        let _ = DLPACK_TYPE.set(py, obj.get_type().unbind());
        return Ok(Any::from(nd));
    }
    if obj.is_callable() {
        return Ok(Any::from(function_from_callable(obj)));
    }
    Err(PyTypeError::new_err(format!(
        "cannot pass a `{}` as an object value",
        obj.get_type().name()?
    )))
}

/// A borrowed value as a Python value: integers, floats, bools and `None` (what a
/// field read in place mostly yields) directly, anything else through [`any_to_py`].
#[inline]
pub(crate) fn view_to_py(py: Python<'_>, v: AnyView<'_>) -> PyResult<Py<PyAny>> {
    // (Integers first, each kind's own check only.)
    if let Some(i) = v.as_int() {
        return Ok(i.into_pyobject(py)?.into_any().unbind());
    }
    match v.type_index() {
        type_index::FLOAT => {
            if let Some(f) = v.as_float() {
                return Ok(f.into_pyobject(py)?.into_any().unbind());
            }
        }
        type_index::BOOL => {
            if let Some(b) = v.as_bool() {
                return Ok(PyBool::new(py, b).to_owned().into_any().unbind());
            }
        }
        type_index::NONE => return Ok(py.None()),
        _ => {}
    }
    any_to_py(py, v.to_any())
}

/// An `Any` as a Python value.
pub(crate) fn any_to_py(py: Python<'_>, v: Any) -> PyResult<Py<PyAny>> {
    let index = v.type_index();
    match index {
        type_index::NONE => return Ok(py.None()),
        type_index::INT => {
            if let Some(i) = v.as_int() {
                return Ok(i.into_pyobject(py)?.into_any().unbind());
            }
        }
        type_index::BOOL => {
            if let Some(b) = v.as_bool() {
                return Ok(PyBool::new(py, b).to_owned().into_any().unbind());
            }
        }
        type_index::FLOAT => {
            if let Some(f) = v.as_float() {
                return Ok(f.into_pyobject(py)?.into_any().unbind());
            }
        }
        type_index::DATA_TYPE => {
            if let Some(d) = v.as_data_type() {
                return Ok(Py::new(py, PyDataType(d))?.into_any());
            }
        }
        type_index::DEVICE => {
            if let Some(d) = v.as_device() {
                return Ok(Py::new(py, PyDevice(d))?.into_any());
            }
        }
        type_index::OPAQUE_PTR => {
            if let Some(p) = v.as_opaque_ptr() {
                return Ok((p as usize).into_pyobject(py)?.into_any().unbind());
            }
        }
        type_index::BYTES => {
            let b = Bytes::try_from(v).map_err(|e| PyTypeError::new_err(e.to_string()))?;
            return Ok(PyBytes::new(py, b.as_bytes()).into_any().unbind());
        }
        _ => {}
    }
    if let Some(s) = v.as_str() {
        return Ok(PyString::new(py, s).into_any().unbind());
    }
    if v.is_object() {
        let obj = ObjectRef::try_from(v).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        return wrap(py, obj);
    }
    Err(PyTypeError::new_err(format!(
        "a `{}` value has no Python form",
        v.type_key()
    )))
}
