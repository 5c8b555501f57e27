//! Enum fields as Python enums.
//!
//! A field of a `#[derive(ObjectEnum)]` type reads as a member of an `enum.IntEnum`
//! subclass named after the enum (its key's last part; `__qualname__` the key), made
//! the first time it is needed and kept for the process, one per enum (two copies of
//! one enum's descriptor, a plugin's and the extension's, share it). Its members are
//! the variants, by reflected name, each of the variant's integer value, so a member
//! is the integer the field holds everywhere else (`get_attr`, the C API) and passes
//! as that integer; keyword construction takes a member, a name or a value.
//!
//! `enum_class(key)` finds an enum's class by key among the fields of the registered
//! types; `enum_keys()` lists those keys; a field's descriptor gives its class as
//! `Field.enum`.

use std::sync::Mutex;

use object_core::reflection::EnumInfo;
use object_core::registry;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

/// An enum's class and its members (by value, in declaration order).
struct EnumClass {
    info: &'static EnumInfo,
    class: Py<PyType>,
    members: Vec<(i64, Py<PyAny>)>,
}

/// The classes made so far (few: one per enum met).
static CLASSES: Mutex<Vec<EnumClass>> = Mutex::new(Vec::new());

/// Runs `f` on the kept class of `info` (an equal descriptor's), if there is one.
fn with_kept<R>(info: &EnumInfo, f: impl FnOnce(&EnumClass) -> R) -> Option<R> {
    let classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
    classes.iter().find(|c| *c.info == *info).map(f)
}

/// The Python class of the enum `info` describes, made on first use.
pub(crate) fn enum_class<'py>(
    py: Python<'py>,
    info: &'static EnumInfo,
) -> PyResult<Bound<'py, PyType>> {
    if let Some(c) = with_kept(info, |c| c.class.clone_ref(py)) {
        return Ok(c.into_bound(py));
    }
    // Made without the lock held (making a class runs Python code, which may let the
    // GIL go): the first one kept wins.
    let made = make_class(py, info)?;
    let mut classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = classes.iter().find(|c| *c.info == *info) {
        return Ok(c.class.clone_ref(py).into_bound(py));
    }
    let class = made.class.clone_ref(py).into_bound(py);
    classes.push(made);
    Ok(class)
}

fn make_class(py: Python<'_>, info: &'static EnumInfo) -> PyResult<EnumClass> {
    let names = PyList::empty(py);
    for v in info.variants() {
        names.append(PyTuple::new(
            py,
            [
                v.name().into_pyobject(py)?.into_any(),
                v.value().into_pyobject(py)?.into_any(),
            ],
        )?)?;
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("module", "object_python.types")?;
    kwargs.set_item("qualname", info.key())?;
    let class = py
        .import("enum")?
        .getattr("IntEnum")?
        .call((info.name(), names), Some(&kwargs))?
        .cast_into::<PyType>()?;
    class.setattr("_enum_key", info.key())?;
    class.setattr(
        "__doc__",
        format!(
            "The enum `{}` (an `ObjectEnum`): its variants by name, each of its integer value.",
            info.key()
        ),
    )?;
    let mut members = Vec::with_capacity(info.variants().len());
    for v in info.variants() {
        members.push((v.value(), class.getattr(v.name())?.unbind()));
    }
    Ok(EnumClass {
        info,
        class: class.unbind(),
        members,
    })
}

/// The member of value `value` of `info`'s class (the plain integer if no variant has
/// it, which a Rust enum cannot hold).
pub(crate) fn member(py: Python<'_>, info: &'static EnumInfo, value: i64) -> PyResult<Py<PyAny>> {
    let find = |c: &EnumClass| {
        c.members
            .iter()
            .find(|(v, _)| *v == value)
            .map(|(_, m)| m.clone_ref(py))
    };
    if let Some(found) = with_kept(info, find) {
        return Ok(found.unwrap_or_else(|| int(py, value)));
    }
    enum_class(py, info)?;
    Ok(with_kept(info, find)
        .flatten()
        .unwrap_or_else(|| int(py, value)))
}

fn int(py: Python<'_>, value: i64) -> Py<PyAny> {
    value
        .into_pyobject(py)
        .map_or_else(|_| py.None(), |v| v.into_any().unbind())
}

/// The descriptors of the enums of every registered type's fields, one per key (the
/// first met), in the order of the keys.
pub(crate) fn known_enums() -> Vec<&'static EnumInfo> {
    let mut found: Vec<&'static EnumInfo> = Vec::new();
    for t in registry::types() {
        for f in t.reflection().fields() {
            if let Some(e) = f.enum_info() {
                if !found.iter().any(|k| k.key() == e.key()) {
                    found.push(e);
                }
            }
        }
    }
    found.sort_by_key(|e| e.key());
    found
}

/// The `IntEnum` class of the enum `key` (an enum some registered type has a field of).
#[pyfunction(name = "enum_class")]
fn py_enum_class<'py>(py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyType>> {
    let info = known_enums()
        .into_iter()
        .find(|e| e.key() == key)
        .ok_or_else(|| {
            PyKeyError::new_err(format!(
                "no enum `{key}`: no registered type has a field of it"
            ))
        })?;
    enum_class(py, info)
}

/// The keys of the enums the fields of the registered types hold, sorted.
#[pyfunction]
fn enum_keys() -> Vec<&'static str> {
    known_enums().into_iter().map(EnumInfo::key).collect()
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_enum_class, m)?)?;
    m.add_function(wrap_pyfunction!(enum_keys, m)?)?;
    Ok(())
}
