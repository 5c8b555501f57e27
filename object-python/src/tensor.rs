//! `NDArray` in Python: `__dlpack__`, `__dlpack_device__`, `from_dlpack`.
//!
//! `__dlpack__(stream=None, max_version=None, dl_device=None, copy=None)` exports
//! without copying: the versioned struct (DLPack 1.x, with the read-only flag) when
//! the consumer's `max_version` is 1.0 or later, else the legacy struct (refused, with
//! `BufferError`, for a read-only NDArray, which the legacy struct cannot mark).
//! `from_dlpack(obj)` asks `obj.__dlpack__(max_version=(1, 1))` (falling back to
//! `obj.__dlpack__()` for older producers) and imports without copying.

use object_containers::{NDArray, NDArrayObj};
use object_core::{DataType, Device};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use crate::object::{take_pending, wrap, PyObj};
use crate::values::{PyDataType, PyDevice};
use crate::{dlpack, numpy_struct};

/// The base of `ffi.Tensor`'s class.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "NDArrayBase")]
pub(crate) struct PyNDArray {
    nd: NDArray,
}

#[pymethods]
impl PyNDArray {
    #[new]
    fn new() -> PyResult<PyClassInitializer<Self>> {
        let obj = take_pending().ok_or_else(|| {
            PyTypeError::new_err("make NDArrays with from_dlpack(array) or empty(shape, dtype)")
        })?;
        let p = obj
            .downcast::<NDArrayObj>()
            .map_err(|o| PyTypeError::new_err(format!("not a tensor: {o:?}")))?;
        Ok(init(NDArray::from_object_ptr(p)))
    }

    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(s) = stream {
            if !s.is_none() && s.extract::<i64>().ok() != Some(-1) {
                return Err(PyBufferError::new_err(
                    "host tensors take no stream (stream must be None or -1)",
                ));
            }
        }
        let device = self.nd.device();
        if let Some((t, id)) = dl_device {
            if (t, id) != (device.device_type, device.device_id) {
                return Err(PyBufferError::new_err(format!(
                    "the tensor is on {device}; it cannot be exported to device ({t}, {id}) without a copy"
                )));
            }
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "__dlpack__(copy=True): this NDArray exports its memory without copying only",
            ));
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        dlpack::export(py, &self.nd, versioned)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        let d = self.nd.device();
        (d.device_type, d.device_id)
    }

    /// The extents.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.nd.shape())
    }

    /// The strides, in elements.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.nd.strides())
    }

    #[getter]
    fn dtype(&self) -> PyDataType {
        PyDataType(self.nd.dtype())
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.nd.device())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.nd.ndim()
    }

    /// The number of elements (the product of the extents).
    #[getter]
    fn size(&self) -> i64 {
        self.nd.shape().iter().product()
    }

    /// `NDArray(shape=(2, 3), dtype=float32, device=cpu:0)`.
    fn __repr__(&self) -> String {
        let shape = self.nd.shape();
        let extents = match shape {
            [one] => format!("({one},)"),
            _ => format!(
                "({})",
                shape
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        format!(
            "NDArray(shape={extents}, dtype={}, device={})",
            self.nd.dtype(),
            self.nd.device()
        )
    }

    /// The address of the first element.
    #[getter]
    fn data_ptr(&self) -> usize {
        self.nd.data_ptr() as usize
    }

    #[getter]
    fn read_only(&self) -> bool {
        self.nd.is_read_only()
    }

    /// The tensor as a NumPy array sharing its memory (`numpy.from_dlpack(self)`).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("numpy")?.call_method1("from_dlpack", (slf,))
    }
}

fn init(nd: NDArray) -> PyClassInitializer<PyNDArray> {
    let base = PyObj {
        obj: nd.as_object_ptr().clone().into_object_ref(),
    };
    PyClassInitializer::from(base).add_subclass(PyNDArray { nd })
}

/// `{"max_version": (1, 1)}`, the keywords of every `__dlpack__` call (never mutated).
static ASK_VERSIONED: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Imports anything with `__dlpack__` (a NumPy array, …) without copying; an NDArray
/// of ours is itself.
pub(crate) fn ndarray_from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<NDArray> {
    if let Ok(nd) = obj.cast::<PyNDArray>() {
        return Ok(nd.get().nd.clone());
    }
    if let Some(r) = numpy_struct::import(obj) {
        return r;
    }
    let py = obj.py();
    let kwargs = ASK_VERSIONED.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        d.set_item(intern!(py, "max_version"), (1u32, 1u32))?;
        Ok(d.unbind())
    })?;
    let name = intern!(py, "__dlpack__");
    let capsule = match obj.call_method(name, (), Some(kwargs.bind(py))) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0(name)?,
        Err(e) => return Err(e),
    };
    dlpack::import(&capsule)
}

/// `from_dlpack(obj)`: an NDArray sharing `obj`'s memory.
#[pyfunction]
fn from_dlpack(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if obj.cast::<PyNDArray>().is_ok() {
        return Ok(obj.clone().unbind());
    }
    let nd = ndarray_from_dlpack(obj)?;
    wrap(py, nd.as_object_ptr().clone().into_object_ref())
}

/// `empty(shape, dtype="float32")`: a new zeroed host NDArray.
#[pyfunction]
#[pyo3(signature = (shape, dtype = "float32"))]
fn empty(py: Python<'_>, shape: Vec<i64>, dtype: &str) -> PyResult<Py<PyAny>> {
    let dt: DataType = dtype
        .parse()
        .map_err(|e: object_core::ParseDataTypeError| PyValueError::new_err(e.to_string()))?;
    let nd = NDArray::empty(&shape, dt, Device::cpu())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    wrap(py, nd.as_object_ptr().clone().into_object_ref())
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNDArray>()?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    Ok(())
}
