//! Modules: `load_module(path)` (this project's plugins and tvm-ffi-convention
//! libraries, through `object_capi::load_module`) and `ModuleBase`, the base of
//! `ffi.Module`'s class: functions by attribute, by name (`m["f"]`), `in`, a listing,
//! the imports.
//!
//! A Rust plugin loaded here adopts this process's runtime (the registry this
//! extension uses), so its types are classes like any other and its globals are
//! `get_global`'s.

use object_containers::{Module, ModuleObj};
use object_core::registry::adopt::{process_runtime, ProcessRuntime};
use object_core::registry::process::this_library;
use pyo3::exceptions::{PyAttributeError, PyImportError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::error::error_to_pyerr;
use crate::object::{take_pending, wrap, PyObj};

/// The base of `ffi.Module`'s class.
#[pyclass(extends = PyObj, frozen, subclass, module = "object_python", name = "ModuleBase")]
pub(crate) struct PyModuleBase {
    m: Module,
}

#[pymethods]
impl PyModuleBase {
    #[new]
    fn new() -> PyResult<PyClassInitializer<Self>> {
        let obj = take_pending().ok_or_else(|| {
            PyTypeError::new_err("modules are made by load_module or by a library, not directly")
        })?;
        let p = obj
            .downcast::<ModuleObj>()
            .map_err(|o| PyTypeError::new_err(format!("not a module: {o:?}")))?;
        let m = Module::from_object_ptr(p);
        let base = PyObj {
            obj: m.as_object_ptr().clone().into_object_ref(),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyModuleBase { m }))
    }

    /// The module's name.
    #[getter]
    fn name(&self) -> &str {
        self.m.name()
    }

    /// The names of the module's own functions, sorted (not its imports').
    fn functions(&self) -> Vec<String> {
        self.m.function_names().map(str::to_owned).collect()
    }

    /// The modules this one imports.
    #[getter]
    fn imports(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.m
            .imports()
            .iter()
            .map(|i| wrap(py, i.as_object_ptr().clone().into_object_ref()))
            .collect()
    }

    /// The function `name`, from the module or (with `query_imports`) its imports, or
    /// `None`.
    #[pyo3(signature = (name, query_imports = true))]
    fn get_function(
        &self,
        py: Python<'_>,
        name: &str,
        query_imports: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        self.m
            .get_function(name, query_imports)
            .map(|f| wrap(py, f.as_object_ptr().clone().into_object_ref()))
            .transpose()
    }

    /// `m["name"]`: the function (imports included), else `KeyError`.
    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        self.get_function(py, name, true)?.ok_or_else(|| {
            PyKeyError::new_err(format!(
                "module `{}` has no function `{name}`",
                self.m.name()
            ))
        })
    }

    /// `m.name`: the function (imports included), else `AttributeError`.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        self.get_function(py, name, true)?.ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "module `{}` has no function `{name}`",
                self.m.name()
            ))
        })
    }

    /// `"name" in m`: whether the module or its imports have the function.
    fn __contains__(&self, name: &str) -> bool {
        self.m.get_function(name, true).is_some()
    }

    /// `len(m)`: the number of the module's own functions.
    fn __len__(&self) -> usize {
        self.m.function_names().count()
    }

    /// The attributes, with the module's own functions.
    fn __dir__(slf: &Bound<'_, Self>) -> PyResult<Py<PyList>> {
        let py = slf.py();
        let names = PyList::empty(py);
        for n in slf.get().m.function_names() {
            names.append(n)?;
        }
        for n in ["name", "functions", "imports", "get_function"] {
            names.append(n)?;
        }
        Ok(names.unbind())
    }
}

/// `load_module(path)`: loads a shared library and returns its module.
///
/// This project's plugins (`obj_plugin_entry`) and libraries of tvm-ffi packed
/// functions (`__tvm_ffi_<name>` symbols) are told apart by their symbols. A Rust plugin
/// adopts this process's runtime: its types become classes here, its globals
/// `get_global`'s. A library is never unloaded. A failed load raises the loader's
/// error (`PluginError`, or the plugin's own error).
#[pyfunction]
fn load_module(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Py<PyAny>> {
    match object_capi::load_module(&path) {
        Ok(m) => wrap(py, m.into_object_ptr().into_object_ref()),
        Err(e) => Err(error_to_pyerr(py, e.into())),
    }
}

/// `runtime()`: which copy of the runtime this extension's objects, types, globals and
/// errors live in, as a dict: `registry` is `"own"` (this extension runs the process's
/// registry), `"joined"` (another copy found in the process runs it: `library` names
/// its file), `"host"` or `"refused"`; `extension` is this extension's file.
#[pyfunction]
fn runtime(py: Python<'_>) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    match process_runtime() {
        ProcessRuntime::Own => {
            d.set_item("registry", "own")?;
            d.set_item("library", this_library())?;
        }
        ProcessRuntime::Joined { library } => {
            d.set_item("registry", "joined")?;
            d.set_item("library", library)?;
        }
        ProcessRuntime::Host => {
            d.set_item("registry", "host")?;
            d.set_item("library", py.None())?;
        }
        ProcessRuntime::Refused(e) => {
            d.set_item("registry", "refused")?;
            d.set_item("library", e.to_string())?;
        }
        other => {
            d.set_item("registry", format!("{other:?}"))?;
            d.set_item("library", py.None())?;
        }
    }
    d.set_item("extension", this_library())?;
    d.set_item("build", object_core::registry::adopt::BUILD_ID)?;
    Ok(d.unbind())
}

/// Joins the process's runtime (or starts it) before anything of this module touches
/// a type: an import into a process whose runtime another build runs fails here, with
/// an `ImportError` naming both builds, before any object crosses.
pub(crate) fn join_process_runtime() -> PyResult<()> {
    match process_runtime() {
        ProcessRuntime::Refused(e) => Err(PyImportError::new_err(format!(
            "object_python cannot join this process's object runtime: {e}"
        ))),
        _ => Ok(()),
    }
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModuleBase>()?;
    m.add_function(wrap_pyfunction!(load_module, m)?)?;
    m.add_function(wrap_pyfunction!(runtime, m)?)?;
    Ok(())
}
