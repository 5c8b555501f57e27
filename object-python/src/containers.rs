//! `Array` and `Shape` as read-only sequences and `Map` as a read-only mapping.

use object_containers::{Array, ArrayObj, Map, MapObj, Shape, ShapeObj};
use object_core::ObjectPtr;
use object_core::{Any, AnyView, ObjectRef};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyTuple};

use crate::convert::{any_to_py, py_to_any};
use crate::object::{take_pending, PyObj};

/// The base of `ffi.Array`'s class: a read-only sequence.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "ArrayBase")]
pub(crate) struct PyArray {
    arr: Array<Any>,
}

fn object_ref<T: object_core::ObjectType>(p: &object_core::ObjectPtr<T>) -> ObjectRef {
    p.clone().into_object_ref()
}

#[pymethods]
impl PyArray {
    #[new]
    #[pyo3(signature = (items = None))]
    fn new(items: Option<&Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        let arr = match items {
            None => match take_pending() {
                Some(obj) => {
                    let p = obj
                        .downcast::<ArrayObj>()
                        .map_err(|o| PyTypeError::new_err(format!("not an array: {o:?}")))?;
                    Array::<Any>::from_object_ptr(p)
                        .map_err(|e| PyTypeError::new_err(e.to_string()))?
                }
                None => Array::new(),
            },
            Some(seq) => seq
                .try_iter()?
                .map(|x| py_to_any(&x?))
                .collect::<PyResult<Array<Any>>>()?,
        };
        let base = PyObj {
            obj: object_ref(arr.as_object_ptr()),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyArray { arr }))
    }

    fn __len__(&self) -> usize {
        self.arr.len()
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ix = slice.indices(self.arr.len() as isize)?;
            let mut items = Vec::with_capacity(ix.slicelength);
            let mut i = ix.start;
            for _ in 0..ix.slicelength {
                items.push(any_to_py(py, self.arr[i as usize].clone())?);
                i += ix.step;
            }
            return Ok(PyList::new(py, items)?.into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = self.arr.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!(
                "index {i} out of range for an array of length {n}"
            )));
        }
        any_to_py(py, self.arr[j as usize].clone())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let items = self
            .arr
            .iter()
            .map(|v| any_to_py(py, v.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.try_iter()?.into_any().unbind())
    }
}

/// The base of `ffi.Map`'s class: a read-only mapping.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "MapBase")]
pub(crate) struct PyMap {
    map: Map<Any, Any>,
}

#[pymethods]
impl PyMap {
    #[new]
    #[pyo3(signature = (items = None))]
    fn new(items: Option<&Bound<'_, PyDict>>) -> PyResult<PyClassInitializer<Self>> {
        let map = match items {
            None => match take_pending() {
                Some(obj) => {
                    let p = obj
                        .downcast::<MapObj>()
                        .map_err(|o| PyTypeError::new_err(format!("not a map: {o:?}")))?;
                    Map::<Any, Any>::from_object_ptr(p)
                        .map_err(|e| PyTypeError::new_err(e.to_string()))?
                }
                None => Map::new(),
            },
            Some(d) => {
                let mut m = Map::with_capacity(d.len());
                for (k, v) in d.iter() {
                    m.insert(py_to_any(&k)?, py_to_any(&v)?);
                }
                m
            }
        };
        let base = PyObj {
            obj: object_ref(map.as_object_ptr()),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyMap { map }))
    }

    fn __len__(&self) -> usize {
        self.map.len()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let k = py_to_any(key)?;
        match self.map.get(AnyView::from(&k)) {
            Some(v) => any_to_py(py, v.clone()),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = py_to_any(key)?;
        Ok(self.map.contains_key(AnyView::from(&k)))
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.keys(py)?.bind(py).try_iter()?.into_any().unbind())
    }

    /// The keys, in the map's order.
    fn keys(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .map
            .keys()
            .map(|k| any_to_py(py, k.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    /// The values, in the map's order.
    fn values(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .map
            .values()
            .map(|v| any_to_py(py, v.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    /// The `(key, value)` pairs, in the map's order.
    fn items(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .map
            .iter()
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
        match self.map.get(AnyView::from(&k)) {
            Some(v) => any_to_py(py, v.clone()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }
}

/// The base of `ffi.Shape`'s class: a read-only sequence of ints.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "ShapeBase")]
pub(crate) struct PyShape {
    shape: ObjectPtr<ShapeObj>,
}

impl PyShape {
    fn dims(&self) -> &[i64] {
        ObjectPtr::items(&self.shape)
    }
}

#[pymethods]
impl PyShape {
    #[new]
    #[pyo3(signature = (dims = None))]
    fn new(dims: Option<&Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        let shape = match dims {
            None => match take_pending() {
                Some(obj) => obj
                    .downcast::<ShapeObj>()
                    .map_err(|o| PyTypeError::new_err(format!("not a shape: {o:?}")))?,
                None => Shape::new(&[]).into_object_ptr(),
            },
            Some(seq) => {
                let dims = seq
                    .try_iter()?
                    .map(|x| x?.extract::<i64>())
                    .collect::<PyResult<Vec<i64>>>()?;
                Shape::new(&dims).into_object_ptr()
            }
        };
        let base = PyObj {
            obj: object_ref(&shape),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyShape { shape }))
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
