//! `DataType` and `Device` as Python values.

use object_core::{DataType, Device};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A data type (`DataType("float32")`, `str(dt)`, `code`, `bits`, `lanes`).
#[pyclass(frozen, eq, hash, module = "object_python", name = "DataType")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyDataType(pub(crate) DataType);

#[pymethods]
impl PyDataType {
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        text.parse::<DataType>()
            .map(PyDataType)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    #[getter]
    fn code(&self) -> u8 {
        self.0.code
    }

    #[getter]
    fn bits(&self) -> u8 {
        self.0.bits
    }

    #[getter]
    fn lanes(&self) -> u16 {
        self.0.lanes
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("DataType({:?})", self.0.to_string())
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        let cls = py.get_type::<PyDataType>().into_any().unbind();
        Ok((cls, (self.0.to_string(),)))
    }
}

/// A device (`Device("cuda:1")`, `Device("cuda", 1)` or `Device(2, 1)`; `device_type`,
/// `device_id`).
#[pyclass(frozen, eq, hash, module = "object_python", name = "Device")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyDevice(pub(crate) Device);

#[pymethods]
impl PyDevice {
    #[new]
    #[pyo3(signature = (kind, device_id = None))]
    fn new(kind: &Bound<'_, PyAny>, device_id: Option<i32>) -> PyResult<Self> {
        if let Ok(text) = kind.extract::<String>() {
            let text = match device_id {
                // `Device("cuda", 1)`: the kind's name and the id apart.
                Some(_) if text.contains(':') => {
                    return Err(PyValueError::new_err(format!(
                        "Device({text:?}, {}): the text already names the device id",
                        device_id.unwrap_or(0)
                    )))
                }
                Some(id) => format!("{text}:{id}"),
                None => text,
            };
            return text
                .parse::<Device>()
                .map(PyDevice)
                .map_err(|e| PyValueError::new_err(e.to_string()));
        }
        let device_type: i32 = kind.extract()?;
        Ok(PyDevice(Device::new(device_type, device_id.unwrap_or(0))))
    }

    #[getter]
    fn device_type(&self) -> i32 {
        self.0.device_type
    }

    #[getter]
    fn device_id(&self) -> i32 {
        self.0.device_id
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Device({:?})", self.0.to_string())
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (i32, i32))> {
        let cls = py.get_type::<PyDevice>().into_any().unbind();
        Ok((cls, (self.0.device_type, self.0.device_id)))
    }
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDataType>()?;
    m.add_class::<PyDevice>()?;
    Ok(())
}
