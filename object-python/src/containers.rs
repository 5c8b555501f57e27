//! The classes of built-ins, by the shape of what they hold (see
//! `object_core::builtin`): items as a read-only sequence (`ArrayBase`, the base of
//! `ffi.Array`'s class), entries as a read-only mapping (`MapBase`), integers as a
//! read-only sequence of ints (`ShapeBase`). Each reads its object's contents through
//! the type's built-in hooks and builds a new one through them, so a built-in added
//! later gets its class with no change here.

use object_containers::Map;
use object_core::builtin::{BuiltinHooks, BuiltinShape, Contents, Parts};
use object_core::registry;
use object_core::{Any, AnyView, ObjectRef};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyTuple, PyType};

use crate::convert::{any_to_py, py_to_any};
use crate::object::{class_type_index, take_pending, PyObj};

/// The class a built-in's Python class derives from, by its shape: `None` for a
/// shape with no class of its own (the object's class then derives from `Object`).
pub(crate) fn builtin_base<'py>(
    py: Python<'py>,
    hooks: &'static BuiltinHooks,
) -> Option<Bound<'py, PyType>> {
    match (hooks.shape, hooks.mutable) {
        (BuiltinShape::Items, false) => Some(py.get_type::<PyArray>()),
        (BuiltinShape::Entries, false) => Some(py.get_type::<PyMap>()),
        (BuiltinShape::Ints, false) => Some(py.get_type::<PyShape>()),
        (BuiltinShape::Tensor, _) => Some(py.get_type::<crate::tensor::PyNDArray>()),
        _ => None,
    }
}

/// The built-in hooks of `obj`'s type, if they are of `shape` (and not mutable).
fn hooks_of(obj: &ObjectRef, shape: BuiltinShape) -> PyResult<&'static BuiltinHooks> {
    BuiltinHooks::of_object(obj)
        .filter(|h| h.shape == shape && !h.mutable)
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "a `{}` does not hold {}",
                obj.type_key(),
                shape.name()
            ))
        })
}

/// The object being wrapped (see `object::wrap`), or a new one of `cls`'s type built
/// from `parts` (of `shape`) through its hooks.
fn pending_or_built(
    cls: &Bound<'_, PyType>,
    shape: BuiltinShape,
    parts: Option<Parts<'_>>,
) -> PyResult<(ObjectRef, &'static BuiltinHooks)> {
    let obj = match (parts, take_pending()) {
        (None, Some(obj)) => obj,
        (parts, _) => {
            let index = class_type_index(cls)?;
            let hooks = registry::type_info(index)
                .and_then(|i| i.reflection().builtin())
                .filter(|h| h.shape == shape && !h.mutable)
                .ok_or_else(|| {
                    PyTypeError::new_err(format!(
                        "{} is not the class of a built-in holding {}",
                        cls.name()
                            .map_or_else(|_| "this".to_owned(), |n| n.to_string()),
                        shape.name()
                    ))
                })?;
            let (mut no_items, mut no_entries) = (std::iter::empty(), std::iter::empty());
            let built = match parts {
                Some(parts) => (hooks.build)(parts),
                None => (hooks.build)(match shape {
                    BuiltinShape::Entries => Parts::Entries(&mut no_entries),
                    BuiltinShape::Ints => Parts::Ints(Vec::new().into()),
                    _ => Parts::Items(&mut no_items),
                }),
            }
            .map_err(|e| PyTypeError::new_err(e.to_string()))?;
            ObjectRef::try_from(built).map_err(|e| PyTypeError::new_err(e.to_string()))?
        }
    };
    let hooks = hooks_of(&obj, shape)?;
    Ok((obj, hooks))
}

/// The Python object of `obj`, a built-in, in `cls` (its class, from `class_of`) made
/// as the class's `__new__` makes it without calling the class (no argument tuple,
/// no pending object), when the class is one of the shapes below and neither its
/// `__new__` nor its `__init__` was replaced; else `Err(obj)` back (the caller calls
/// the class). What a call returning an `Array` or a `Map` spends on its result.
#[cfg(not(feature = "abi3"))]
pub(crate) fn builtin_instance_of(
    cls: &Bound<'_, PyType>,
    obj: ObjectRef,
) -> Result<PyResult<Py<PyAny>>, ObjectRef> {
    use crate::vectorcall::instance_from_init;
    let Some(hooks) = BuiltinHooks::of_object(&obj).filter(|h| !h.mutable) else {
        return Err(obj);
    };
    // (One new reference: the base's; the subclass's part takes `obj` itself.)
    match hooks.shape {
        BuiltinShape::Items => instance_from_init::<PyArray>(cls, obj, |obj| {
            PyClassInitializer::from(PyObj { obj: obj.clone() })
                .add_subclass(PyArray { obj, hooks })
        }),
        BuiltinShape::Entries => instance_from_init::<PyMap>(cls, obj, |obj| {
            let map = Map::<Any, Any>::try_from(Any::from(obj.clone())).ok();
            PyClassInitializer::from(PyObj { obj: obj.clone() }).add_subclass(PyMap {
                obj,
                hooks,
                map,
            })
        }),
        BuiltinShape::Ints => instance_from_init::<PyShape>(cls, obj, |obj| {
            PyClassInitializer::from(PyObj { obj: obj.clone() })
                .add_subclass(PyShape { obj, hooks })
        }),
        _ => Err(obj),
    }
}

/// The base of the classes of built-ins holding items (`ffi.Array`'s): a read-only
/// sequence.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "ArrayBase")]
pub(crate) struct PyArray {
    obj: ObjectRef,
    hooks: &'static BuiltinHooks,
}

impl PyArray {
    /// The items, lent by the object.
    fn items(&self) -> &[Any] {
        match (self.hooks.contents)(&self.obj) {
            Contents::Items(items) => items,
            _ => &[],
        }
    }
}

#[pymethods]
impl PyArray {
    #[new]
    #[classmethod]
    #[pyo3(signature = (items = None))]
    fn new(
        cls: &Bound<'_, PyType>,
        items: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut values = match items {
            None => None,
            Some(seq) => Some(
                seq.try_iter()?
                    .map(|x| py_to_any(&x?))
                    .collect::<PyResult<Vec<Any>>>()?
                    .into_iter(),
            ),
        };
        let parts = values.as_mut().map(|v| Parts::Items(v));
        let (obj, hooks) = pending_or_built(cls, BuiltinShape::Items, parts)?;
        let base = PyObj { obj: obj.clone() };
        Ok(PyClassInitializer::from(base).add_subclass(PyArray { obj, hooks }))
    }

    fn __len__(&self) -> usize {
        self.items().len()
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let arr = self.items();
        if let Ok(slice) = index.cast::<PySlice>() {
            let ix = slice.indices(arr.len() as isize)?;
            let mut items = Vec::with_capacity(ix.slicelength);
            let mut i = ix.start;
            for _ in 0..ix.slicelength {
                items.push(any_to_py(py, arr[i as usize].clone())?);
                i += ix.step;
            }
            return Ok(PyList::new(py, items)?.into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = arr.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!(
                "index {i} out of range for an array of length {n}"
            )));
        }
        any_to_py(py, arr[j as usize].clone())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let items = self
            .items()
            .iter()
            .map(|v| any_to_py(py, v.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.try_iter()?.into_any().unbind())
    }
}

/// The base of the classes of built-ins holding entries (`ffi.Map`'s): a read-only
/// mapping.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "MapBase")]
pub(crate) struct PyMap {
    obj: ObjectRef,
    hooks: &'static BuiltinHooks,
    /// The object as a `Map`, for look-ups by hash, if it is one (any other built-in
    /// of entries is searched in order).
    map: Option<Map<Any, Any>>,
}

impl PyMap {
    /// The entries, lent by the object (no entries for contents of another shape).
    fn entries(&self) -> impl DoubleEndedIterator<Item = (&Any, &Any)> + '_ {
        match (self.hooks.contents)(&self.obj) {
            Contents::Entries(entries) => Some(entries),
            _ => None,
        }
        .into_iter()
        .flatten()
    }

    /// The value of `key`.
    fn lookup(&self, key: &Any) -> Option<Any> {
        match &self.map {
            Some(m) => m.get(AnyView::from(key)).cloned(),
            None => self
                .entries()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone()),
        }
    }
}

#[pymethods]
impl PyMap {
    #[new]
    #[classmethod]
    #[pyo3(signature = (items = None))]
    fn new(
        cls: &Bound<'_, PyType>,
        items: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut pairs = match items {
            None => None,
            Some(d) => {
                let mut entries = Vec::with_capacity(d.len());
                for (k, v) in d.iter() {
                    entries.push((py_to_any(&k)?, py_to_any(&v)?));
                }
                Some(entries.into_iter())
            }
        };
        let parts = pairs.as_mut().map(|e| Parts::Entries(e));
        let (obj, hooks) = pending_or_built(cls, BuiltinShape::Entries, parts)?;
        let map = Map::<Any, Any>::try_from(Any::from(obj.clone())).ok();
        let base = PyObj { obj: obj.clone() };
        Ok(PyClassInitializer::from(base).add_subclass(PyMap { obj, hooks, map }))
    }

    fn __len__(&self) -> usize {
        (self.hooks.contents)(&self.obj).len()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let k = py_to_any(key)?;
        match self.lookup(&k) {
            Some(v) => any_to_py(py, v),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = py_to_any(key)?;
        Ok(self.lookup(&k).is_some())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.keys(py)?.bind(py).try_iter()?.into_any().unbind())
    }

    /// The keys, in the map's order.
    fn keys(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .entries()
            .map(|(k, _)| any_to_py(py, k.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    /// The values, in the map's order.
    fn values(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .entries()
            .map(|(_, v)| any_to_py(py, v.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    /// The `(key, value)` pairs, in the map's order.
    fn items(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .entries()
            .map(|(k, v)| {
                let pair = [any_to_py(py, k.clone())?, any_to_py(py, v.clone())?];
                PyTuple::new(py, pair)
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let k = py_to_any(key)?;
        match self.lookup(&k) {
            Some(v) => any_to_py(py, v),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }
}

/// The base of the classes of built-ins holding integers (`ffi.Shape`'s): a read-only
/// sequence of ints.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "ShapeBase")]
pub(crate) struct PyShape {
    obj: ObjectRef,
    hooks: &'static BuiltinHooks,
}

impl PyShape {
    fn dims(&self) -> &[i64] {
        match (self.hooks.contents)(&self.obj) {
            Contents::Ints(dims) => dims,
            _ => &[],
        }
    }
}

#[pymethods]
impl PyShape {
    #[new]
    #[classmethod]
    #[pyo3(signature = (dims = None))]
    fn new(
        cls: &Bound<'_, PyType>,
        dims: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let parts = match dims {
            None => None,
            Some(seq) => Some(Parts::Ints(
                seq.try_iter()?
                    .map(|x| x?.extract::<i64>())
                    .collect::<PyResult<Vec<i64>>>()?
                    .into(),
            )),
        };
        let (obj, hooks) = pending_or_built(cls, BuiltinShape::Ints, parts)?;
        let base = PyObj { obj: obj.clone() };
        Ok(PyClassInitializer::from(base).add_subclass(PyShape { obj, hooks }))
    }

    fn __len__(&self) -> usize {
        self.dims().len()
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let dims = self.dims();
        if let Ok(slice) = index.cast::<PySlice>() {
            let ix = slice.indices(dims.len() as isize)?;
            let mut items = Vec::with_capacity(ix.slicelength);
            let mut i = ix.start;
            for _ in 0..ix.slicelength {
                items.push(dims[i as usize]);
                i += ix.step;
            }
            return Ok(PyTuple::new(py, items)?.into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = dims.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!(
                "index {i} out of range for a shape of length {n}"
            )));
        }
        Ok(dims[j as usize].into_pyobject(py)?.into_any().unbind())
    }

    fn __contains__(&self, value: &Bound<'_, PyAny>) -> bool {
        value
            .extract::<i64>()
            .is_ok_and(|v| self.dims().contains(&v))
    }

    /// How many dimensions equal `value`.
    fn count(&self, value: &Bound<'_, PyAny>) -> usize {
        value
            .extract::<i64>()
            .map_or(0, |v| self.dims().iter().filter(|&&d| d == v).count())
    }

    /// The position of the first dimension equal to `value`.
    fn index(&self, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let found = value
            .extract::<i64>()
            .ok()
            .and_then(|v| self.dims().iter().position(|&d| d == v));
        found.ok_or_else(|| pyo3::exceptions::PyValueError::new_err("value is not in the shape"))
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyTuple::new(py, self.dims())?
            .try_iter()?
            .into_any()
            .unbind())
    }
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray>()?;
    m.add_class::<PyShape>()?;
    m.add_class::<PyMap>()?;
    Ok(())
}
