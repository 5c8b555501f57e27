//! Types defined in Python (`@object_python.py_class`) and methods.
//!
//! The decorator (`python/object_python/_pytypes.py`) reads an annotated class body and
//! calls [`_register_py_type`] with its fields, each with a declared type (nested
//! tuples: `("int",)`, `("object", key)`, `("array", item)`, `("map", key, value)`,
//! `("optional", inner)`, `("enum", key)`, …), default and flags: the type is
//! registered in the process's registry with a run-time field table
//! (`object_core::reflection::RuntimeFields`), so its objects hold their fields in the
//! object and every pass (reflection, the printer, structural equality, the JSON graph,
//! `transform`, C's field table) reads them as a derive type's. Then
//! [`_install_class`] makes the class body the type's class: the body's methods and
//! properties, the field descriptors, the parent's class as base, kept as the class of
//! the type, so that every object of the type (made here, loaded from JSON, returned by
//! Rust) is an instance of it.
//!
//! Methods: the process's method table (`object_containers::register_method_at`),
//! shared by every language. The class body's public functions are registered there
//! (static methods as static), so Rust and C call them; a method registered elsewhere
//! (Rust, C, or `register_method` here, also after the class was made) is found by
//! `Object.__getattr__` ([`method_attribute`]) on instances, bound, and by the
//! metaclass's `__getattr__` on classes. A Python method called from Rust takes the
//! GIL itself (the callable's `Function`), from any thread.

use object_containers::{
    call_method as rust_call_method, find_method, register_method_at, remove_method, type_methods,
    MethodKind,
};
use object_core::reflection::{
    create_from_source, get_field, EnumInfo, FieldSource, FieldSpec, FieldType,
};
use object_core::registry::{self, TypeSpec};
use object_core::{Any, AnyView, ObjectRef, TypeInfo};
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use crate::convert::{any_to_py, py_to_any};
use crate::error::error_to_pyerr;
use crate::function::function_from_callable;
use crate::object::{class_of, class_type_index, keep_class, kept_class, make_class, wrap, PyObj};

/// How deeply a field type description may nest (the registry's own limit is checked
/// when the type is registered; this one only bounds the walk of the description).
const MAX_DESCRIPTION_DEPTH: usize = 32;

/// A field type from its Python description (see the module docs).
fn field_type(desc: &Bound<'_, PyAny>, depth: usize) -> PyResult<FieldType> {
    if depth > MAX_DESCRIPTION_DEPTH {
        return Err(PyTypeError::new_err(format!(
            "a field type nests deeper than {MAX_DESCRIPTION_DEPTH} levels"
        )));
    }
    let t = desc.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err(
            "a field type is described by a tuple (\"int\",), (\"object\", key), …",
        )
    })?;
    let tag: String = t.get_item(0)?.extract()?;
    let arg = |i: usize| t.get_item(i);
    Ok(match (tag.as_str(), t.len()) {
        ("bool", 1) => FieldType::Bool,
        ("int", 1) => FieldType::Int,
        ("float", 1) => FieldType::Float,
        ("str", 1) => FieldType::Str,
        ("DataType", 1) => FieldType::DataType,
        ("Device", 1) => FieldType::Device,
        ("Any", 1) => FieldType::Any,
        ("object", 2) => FieldType::Object(arg(1)?.extract()?),
        ("array", 2) => FieldType::Array(Box::new(field_type(&arg(1)?, depth + 1)?)),
        ("map", 3) => FieldType::Map(
            Box::new(field_type(&arg(1)?, depth + 1)?),
            Box::new(field_type(&arg(2)?, depth + 1)?),
        ),
        ("optional", 2) => FieldType::Optional(Box::new(field_type(&arg(1)?, depth + 1)?)),
        ("enum", 2) => {
            let key: String = arg(1)?.extract()?;
            FieldType::Enum(enum_info(&key)?)
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "not a field type description: {}",
                desc.repr()?
            )))
        }
    })
}

/// The descriptor of the registered enum `key` (one some registered type has a field
/// of: `#[derive(ObjectEnum)]` enums reach the registry only through fields).
fn enum_info(key: &str) -> PyResult<&'static EnumInfo> {
    crate::enums::known_enums()
        .into_iter()
        .find(|e| e.key() == key)
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "no enum `{key}` is known: an enum field takes an `IntEnum` made for a Rust \
                 `#[derive(ObjectEnum)]` enum (`object_python.enum_class(key)`)"
            ))
        })
}

/// Registers the type `key` under the type `parent` with a run-time field table:
/// `fields` is a list of `(name, type description, has_default, default, no_eq)`.
/// Returns the type's index. Registering the same key again with the same fields is the
/// same type; anything else is an error naming both.
#[pyfunction]
#[pyo3(signature = (key, parent, fields, final_type = false, abstract_type = false, slots = 0))]
fn _register_py_type(
    key: &str,
    parent: u32,
    fields: &Bound<'_, PyList>,
    final_type: bool,
    abstract_type: bool,
    slots: u32,
) -> PyResult<u32> {
    let parent = registry::type_info(parent)
        .filter(|t| t.is_object())
        .ok_or_else(|| PyTypeError::new_err(format!("no object type has index {parent}")))?;
    let mut specs = Vec::with_capacity(fields.len());
    for f in fields.iter() {
        let (name, desc, has_default, default, no_eq): (
            String,
            Bound<'_, PyAny>,
            bool,
            Bound<'_, PyAny>,
            bool,
        ) = f.extract()?;
        let ty = field_type(&desc, 0)
            .map_err(|e| PyTypeError::new_err(format!("field `{name}` of `{key}`: {e}")))?;
        let mut spec = FieldSpec::new(name, ty).no_eq(no_eq);
        if has_default {
            spec = spec.default(py_to_any(&default)?);
        }
        specs.push(spec);
    }
    let spec = TypeSpec::new(key, parent.key())
        .slots(slots)
        .final_type(final_type)
        .abstract_type(abstract_type)
        .fields(specs);
    match registry::register_type(&spec) {
        Ok(info) => Ok(info.index()),
        Err(e @ object_core::RegistryError::BadField { .. }) => {
            Err(PyTypeError::new_err(e.to_string()))
        }
        Err(e) => Err(PyValueError::new_err(e.to_string())),
    }
}

/// Makes `namespace` (a class body: methods, properties, docs) the class of the type
/// `index`, named `name`, deriving from its parent's class, with the field descriptors
/// added; kept as the type's class for the process. If the type has a class already (a
/// class body run again, or a type whose objects Python met before), that class is
/// returned, with the body's attributes set on it.
#[pyfunction]
fn _install_class<'py>(
    py: Python<'py>,
    index: u32,
    name: &str,
    namespace: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyType>> {
    let info = registry::type_info(index)
        .filter(|t| t.is_object())
        .ok_or_else(|| PyTypeError::new_err(format!("no object type has index {index}")))?;
    if let Some(existing) = kept_class(py, index) {
        for (k, v) in namespace.iter() {
            let k: String = k.extract()?;
            if !k.starts_with("__") {
                existing.setattr(k.as_str(), v)?;
            }
        }
        return Ok(existing);
    }
    let parent = match info.parent_index() {
        Some(p) => Some(class_of(py, p)?),
        None => None,
    };
    let made = make_class(py, index, parent.as_ref(), Some((name, namespace)))?;
    keep_class(py, index, made)
}

/// The type index a method target names: an index, a key, or a class.
fn target_index(target: &Bound<'_, PyAny>) -> PyResult<u32> {
    if let Ok(i) = target.extract::<u32>() {
        return Ok(i);
    }
    if let Ok(key) = target.cast::<PyString>() {
        let key = key.to_str()?;
        return registry::type_index_of(key)
            .map_err(|e| PyKeyError::new_err(format!("no registered type `{key}`: {e}")));
    }
    if let Ok(cls) = target.cast::<PyType>() {
        if cls.is_subclass_of::<PyObj>()? {
            return class_type_index(cls);
        }
    }
    Err(PyTypeError::new_err(format!(
        "a method's type is an object class, a type key or a type index, not {}",
        target.repr()?
    )))
}

/// Registers `f` (any callable) as the method `name` of the type `target` (a class, a
/// key or an index) in the process's method table: an instance method (called with the
/// object first) or, with `static`, a static one. A name the type already has is an
/// error unless `override`.
#[pyfunction]
#[pyo3(signature = (target, name, f, r#static = false, r#override = false))]
fn _register_method(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    name: &str,
    f: &Bound<'_, PyAny>,
    r#static: bool,
    r#override: bool,
) -> PyResult<()> {
    if !f.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "method `{name}` must be callable"
        )));
    }
    let index = target_index(target)?;
    let kind = if r#static {
        MethodKind::Static
    } else {
        MethodKind::Instance
    };
    register_method_at(index, name, function_from_callable(f), kind, r#override)
        .map(drop)
        .map_err(|e| error_to_pyerr(py, e))
}

/// The method `name` of the type `target` (its own or its nearest ancestor's):
/// `(function, static, owner index)`, or `None`.
#[pyfunction]
fn _find_method(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Option<(Py<PyAny>, bool, u32)>> {
    let index = target_index(target)?;
    find_method(index, name)
        .map(|m| {
            let f = wrap(py, m.function().as_object_ptr().clone().into_object_ref())?;
            Ok((f, m.kind() == MethodKind::Static, m.owner()))
        })
        .transpose()
}

/// The methods registered on the type `target` itself: `{name: (function, static)}`.
#[pyfunction]
fn _type_methods<'py>(py: Python<'py>, target: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, m) in type_methods(target_index(target)?) {
        let f = wrap(py, m.function().as_object_ptr().clone().into_object_ref())?;
        out.set_item(name, (f, m.kind() == MethodKind::Static))?;
    }
    Ok(out)
}

/// Removes the method `name` registered on the type `target` itself; whether there was
/// one.
#[pyfunction]
fn _remove_method(target: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    Ok(remove_method(target_index(target)?, name).is_some())
}

/// Calls the method `name` on `obj` through the method table, as Rust and C do (the
/// GIL released while it runs; a Python method takes it back).
#[pyfunction]
#[pyo3(signature = (obj, name, *args))]
fn call_method(
    py: Python<'_>,
    obj: &Bound<'_, PyObj>,
    name: &str,
    args: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    let values = args
        .iter()
        .map(|a| py_to_any(&a))
        .collect::<PyResult<Vec<Any>>>()?;
    let this = obj.get().obj.clone();
    let result = py.detach(|| {
        let views: Vec<AnyView<'_>> = values.iter().map(AnyView::from).collect();
        rust_call_method(&this, name, &views)
    });
    match result {
        Ok(v) => any_to_py(py, v),
        Err(e) => Err(error_to_pyerr(py, e)),
    }
}

/// The method `name` of `slf`'s type from the method table, bound to `slf` (a static
/// method as it is), or `None`: what an attribute read that found nothing else falls
/// back to (`crate::field_slot`'s `tp_getattro`; a `__getattr__` in the `abi3` build).
/// Names starting with `_` are never looked up there.
pub(crate) fn bound_method(slf: &Bound<'_, PyObj>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    if name.starts_with('_') {
        return Ok(None);
    }
    let py = slf.py();
    let Some(m) = find_method(slf.get().obj.type_index(), name) else {
        return Ok(None);
    };
    let f = wrap(py, m.function().as_object_ptr().clone().into_object_ref())?;
    Ok(Some(match m.kind() {
        MethodKind::Static => f,
        _ => py
            .import(pyo3::intern!(py, "types"))?
            .getattr(pyo3::intern!(py, "MethodType"))?
            .call1((f, slf))?
            .unbind(),
    }))
}

/// [`bound_method`] for the `abi3` build's `__getattr__` (set by `ObjectMeta` when
/// [`_install_getattr`] cannot put the slot in place): the method, or `AttributeError`.
#[pyfunction]
fn _bound_method(obj: &Bound<'_, PyObj>, name: &str) -> PyResult<Py<PyAny>> {
    bound_method(obj, name)?.ok_or_else(|| {
        let cls = obj
            .get_type()
            .qualname()
            .map_or_else(|_| "?".to_owned(), |q| q.to_string());
        PyAttributeError::new_err(format!("'{cls}' object has no attribute '{name}'"))
    })
}

/// Gives `cls`, a class deriving from `Object` whose attribute reads are the generic
/// ones, the attribute read that falls back to the method table
/// (`crate::field_slot::install_getattro`). `ObjectMeta.__init__` calls it for every
/// class it makes (the generated ones and their Python subclasses, whose slot CPython
/// would otherwise reset to the generic read). `False` in the `abi3` build, which
/// cannot reach the slot: the metaclass then gives the class a `__getattr__`.
#[pyfunction]
fn _install_getattr(cls: &Bound<'_, PyType>) -> PyResult<bool> {
    #[cfg(not(feature = "abi3"))]
    {
        if cls.is_subclass_of::<PyObj>()? {
            crate::field_slot::install_getattro(cls);
        }
        Ok(true)
    }
    #[cfg(feature = "abi3")]
    {
        let _ = cls;
        Ok(false)
    }
}

/// `Object.__replace__` / `object_python.replace`: a new object of `obj`'s type with its
/// reflected fields, some replaced by `changes`.
pub(crate) fn replace_object(
    slf: &Bound<'_, PyObj>,
    changes: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    let obj = &slf.get().obj;
    let info = obj.type_info();
    let err = |e: object_core::Error| error_to_pyerr(py, e);
    // The changes first (their names are checked by the construction: an unknown one is
    // an extra field), then every field not changed, from the object.
    let mut names: Vec<Bound<'_, PyString>> = Vec::new();
    let mut values: Vec<Any> = Vec::new();
    if let Some(c) = changes {
        for (k, v) in c.iter() {
            names.push(k.cast_into::<PyString>()?);
            values.push(py_to_any(&v)?);
        }
    }
    let mut entries: Vec<(&str, Option<Any>)> = Vec::new();
    for (k, v) in names.iter().zip(values) {
        entries.push((k.to_str()?, Some(v)));
    }
    let changed = entries.len();
    for f in info.reflection().reflected_fields() {
        if entries[..changed].iter().any(|(n, _)| *n == f.name()) {
            continue;
        }
        let v = get_field(obj, f).map_err(|e| err(e.into()))?;
        entries.push((f.name(), Some(v)));
    }
    let made = create_from_source(info, &mut FieldSource::new(info.key(), &mut entries))
        .map_err(|e| err(e.into()))?;
    wrap(py, made)
}

/// `object_python.replace(obj, **changes)`.
#[pyfunction]
#[pyo3(signature = (obj, **changes))]
fn replace(obj: &Bound<'_, PyObj>, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
    replace_object(obj, changes)
}

/// Builds an object of a type with a run-time field table from `npos` positional
/// values (in table order, the parents' fields first, as a dataclass takes them) and
/// `nkw` keywords.
pub(crate) fn create_positional<'a, 'py>(
    py: Python<'py>,
    index: u32,
    npos: usize,
    pos: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    nkw: usize,
    kw: impl Fn(usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)>,
) -> PyResult<ObjectRef> {
    let info: &'static TypeInfo = registry::type_info(index)
        .ok_or_else(|| PyTypeError::new_err(format!("no type has index {index}")))?;
    let key = info.key();
    if info.runtime_fields().is_none() {
        return Err(PyTypeError::new_err(format!(
            "`{key}` is built by keyword: {key}(field=value, ...)"
        )));
    }
    let order: Vec<&'static str> = info
        .reflection()
        .reflected_fields()
        .map(|f| f.name())
        .collect();
    if npos > order.len() {
        return Err(PyTypeError::new_err(format!(
            "`{key}` takes at most {} positional values ({}), got {npos}",
            order.len(),
            order.join(", ")
        )));
    }
    let mut names: Vec<Bound<'_, PyString>> = Vec::with_capacity(nkw);
    let mut values: Vec<Any> = Vec::with_capacity(npos + nkw);
    for i in 0..npos {
        values.push(py_to_any(&*pos(i)?)?);
    }
    for i in 0..nkw {
        let (k, v) = kw(i)?;
        names.push(k.cast::<PyString>()?.to_owned());
        values.push(py_to_any(&v)?);
    }
    let mut entries: Vec<(&str, Option<Any>)> = Vec::with_capacity(npos + nkw);
    let mut values = values.into_iter();
    for name in &order[..npos] {
        entries.push((name, values.next()));
    }
    for k in &names {
        entries.push((k.to_str()?, values.next()));
    }
    create_from_source(info, &mut FieldSource::new(key, &mut entries))
        .map_err(|e| error_to_pyerr(py, e.into()))
}

/// The declared field types of a type with a run-time field table, by field name, as
/// text (`{"xs": "Array[int]"}`); `None` for a type without one.
#[pyfunction]
fn _field_types<'py>(py: Python<'py>, index: u32) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(table) = registry::type_info(index).and_then(TypeInfo::runtime_fields) else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    for f in table.reflection().reflected_fields() {
        if let Some(t) = table.field_type(f.name()) {
            out.set_item(f.name(), t.to_string())?;
        }
    }
    Ok(Some(out))
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_register_py_type, m)?)?;
    m.add_function(wrap_pyfunction!(_install_class, m)?)?;
    m.add_function(wrap_pyfunction!(_register_method, m)?)?;
    m.add_function(wrap_pyfunction!(_find_method, m)?)?;
    m.add_function(wrap_pyfunction!(_type_methods, m)?)?;
    m.add_function(wrap_pyfunction!(_remove_method, m)?)?;
    m.add_function(wrap_pyfunction!(_field_types, m)?)?;
    m.add_function(wrap_pyfunction!(call_method, m)?)?;
    m.add_function(wrap_pyfunction!(replace, m)?)?;
    m.add_function(wrap_pyfunction!(_install_getattr, m)?)?;
    m.add_function(wrap_pyfunction!(_bound_method, m)?)?;
    Ok(())
}
