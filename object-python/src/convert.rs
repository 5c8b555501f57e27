//! Python values ↔ `Any`.
//!
//! | Python | `Any` |
//! | --- | --- |
//! | `None`, `bool`, `int` (64-bit), `float` | None, Bool, Int, Float |
//! | `int` beyond 64 bits | `ffi.BigInt` (and back: a `BigInt` is a Python `int`) |
//! | NumPy scalars (`np.int64`, `np.float32`, `np.bool_`, …) | their values (by type name and `__index__`, NumPy never imported) |
//! | tvm-ffi's `Device` and `dtype` | Device, DataType |
//! | `str` | a string (inline when short, else `ffi.String`) |
//! | `bytes` | `ffi.Bytes` |
//! | `DataType`, `Device` | DataType, Device |
//! | an `Object` (any generated class) | the object itself |
//! | `list`, `tuple` | a new `ffi.Array` (typed parameters check the items) |
//! | `dict` | a new `ffi.Map` |
//! | anything with `__dlpack__` (NumPy arrays, …) | an `ffi.Tensor` sharing the memory |
//! | any other callable | an `ffi.Function` calling it |
//!
//! Lists, tuples and dicts nest to any depth: they are walked with a stack, not by
//! recursion, and one that contains itself is refused (`ValueError`). Back, strings
//! and bytes become `str` and `bytes`, and objects their class's instances (an `Array`
//! or `Map` is wrapped, not copied, so nothing nested is walked).

use std::collections::HashSet;

use object_containers::{Array, BigInt, Map};
use object_core::builtin::{BuiltinHooks, Contents};
use object_core::{type_index, Any, AnyView, Bytes, ObjectRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::function::function_from_callable;
use crate::object::{wrap, PyObj};
use crate::tensor::ndarray_from_dlpack;
use crate::values::{PyDataType, PyDevice};

/// From this nesting on, a conversion keeps the set of the lists, tuples and dicts it
/// is inside of, to refuse one that contains itself (which nests without end); a
/// shallower one only keeps its stack.
const CHECK_CYCLES_FROM: usize = 256;

/// The first type whose values were converted through `__dlpack__` (NumPy's
/// `ndarray`, usually), checked right after ints and floats: a call taking an array
/// skips the other checks and the `__dlpack__` look-up. Held for the process.
static DLPACK_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A Python value as an `Any`. Lists, tuples and dicts nest as deep as they like: they
/// are walked with a stack of their own, not by recursion.
#[inline]
pub(crate) fn py_to_any(obj: &Bound<'_, PyAny>) -> PyResult<Any> {
    match one_to_any(obj)? {
        One::Value(v) => Ok(v),
        One::Container => containers_to_any(obj),
    }
}

/// What [`one_to_any`] made of a value.
enum One {
    Value(Any),
    /// A list, tuple or dict, whose items are converted first.
    Container,
}

/// A Python value as an `Any`, but for lists, tuples and dicts.
#[inline]
fn one_to_any(obj: &Bound<'_, PyAny>) -> PyResult<One> {
    let value = |v: Any| Ok(One::Value(v));
    // The commonest arguments first, by exact type (one pointer compare each).
    if obj.is_exact_instance_of::<PyInt>() {
        return value(int_to_any(obj)?);
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return value(Any::from(obj.extract::<f64>()?));
    }
    if let Some(t) = DLPACK_TYPE.get(obj.py()) {
        if obj.get_type().is(t.bind(obj.py())) {
            return value(Any::from(ndarray_from_dlpack(obj)?));
        }
    }
    if let Ok(o) = obj.cast::<PyObj>() {
        return value(Any::from(o.get().obj.clone()));
    }
    if obj.is_none() {
        return value(Any::default());
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return value(Any::from(obj.is_truthy()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return value(int_to_any(obj)?);
    }
    if obj.is_instance_of::<PyFloat>() {
        return value(Any::from(obj.extract::<f64>()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // (tvm-ffi's `dtype` is a `str` subclass.)
        if !obj.is_exact_instance_of::<PyString>() {
            if let Some(v) = foreign_value(obj)? {
                return value(v);
            }
        }
        return value(Any::from(&*s.to_cow()?));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return value(Any::from(Bytes::new(b.as_bytes())));
    }
    if let Ok(d) = obj.cast::<PyDataType>() {
        return value(Any::from(d.get().0));
    }
    if let Ok(d) = obj.cast::<PyDevice>() {
        return value(Any::from(d.get().0));
    }
    if obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PyDict>()
    {
        return Ok(One::Container);
    }
    if let Some(v) = foreign_value(obj)? {
        return value(v);
    }
    let py = obj.py();
    if obj.hasattr(pyo3::intern!(py, "__dlpack__"))? {
        let nd = ndarray_from_dlpack(obj)?;
        // Its type takes this branch whatever the value (every check above looks at
        // the type only): the next one of that type comes here first.
        let _ = DLPACK_TYPE.set(py, obj.get_type().unbind());
        return value(Any::from(nd));
    }
    if obj.is_callable() {
        return value(Any::from(function_from_callable(obj)));
    }
    Err(PyTypeError::new_err(format!(
        "cannot pass a `{}` as an object value",
        obj.get_type().name()?
    )))
}

/// A Python `int` (or subclass): an int if it fits in 64 bits, else an `ffi.BigInt`.
#[inline]
fn int_to_any(obj: &Bound<'_, PyAny>) -> PyResult<Any> {
    match obj.extract::<i64>() {
        Ok(i) => Ok(Any::from(i)),
        Err(_) => big_int_from_py(obj),
    }
}

/// An integer beyond 64 bits (anything with `__index__`) as an `ffi.BigInt`, through
/// its bytes (no decimal text, so no limit on its digits).
#[cold]
fn big_int_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Any> {
    let py = obj.py();
    let int = obj.call_method0(pyo3::intern!(py, "__index__"))?;
    let negative = int.lt(0)?;
    let magnitude = if negative { int.neg()? } else { int };
    let bits: usize = magnitude
        .call_method0(pyo3::intern!(py, "bit_length"))?
        .extract()?;
    let bytes = magnitude.call_method1(
        pyo3::intern!(py, "to_bytes"),
        (bits.div_ceil(8), pyo3::intern!(py, "little")),
    )?;
    let bytes = bytes.cast::<PyBytes>()?;
    Ok(Any::from(BigInt::from_le_bytes(negative, bytes.as_bytes())))
}

/// A `BigInt` as a Python `int`.
fn big_int_to_py(py: Python<'_>, b: &BigInt) -> PyResult<Py<PyAny>> {
    let (negative, bytes) = b.to_le_bytes();
    let int = py.get_type::<PyInt>().call_method1(
        pyo3::intern!(py, "from_bytes"),
        (PyBytes::new(py, &bytes), pyo3::intern!(py, "little")),
    )?;
    Ok(if negative { int.neg()? } else { int }.unbind())
}

/// Values of other libraries' types, told by their type's module and name (neither
/// library is imported): NumPy's scalars (`np.int64(5)`, `np.float32(1.5)`,
/// `np.bool_(True)`, …) as their values, and tvm-ffi's `Device` and `dtype` as ours.
/// `None` for anything else.
fn foreign_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<Any>> {
    let py = obj.py();
    let ty = obj.get_type();
    let Ok(module) = ty.module() else {
        return Ok(None);
    };
    let module = module.to_cow()?;
    if module == "numpy" {
        if obj.hasattr(pyo3::intern!(py, "__dlpack__"))? {
            return Ok(None); // an array (`__index__` too, but not a scalar)
        }
        let name = ty.name()?;
        let name = name.to_cow()?;
        if name == "bool" || name == "bool_" {
            return Ok(Some(Any::from(obj.is_truthy()?)));
        }
        if obj.hasattr(pyo3::intern!(py, "__index__"))? {
            // Every NumPy integer, to 64 bits; a `uint64` beyond `i64::MAX` a BigInt.
            return Ok(Some(match obj.extract::<i64>() {
                Ok(i) => Any::from(i),
                Err(_) => big_int_from_py(obj)?,
            }));
        }
        let floating = ["float", "half", "single", "double", "longdouble"]
            .iter()
            .any(|f| name.starts_with(f));
        if floating {
            return Ok(Some(Any::from(obj.extract::<f64>()?)));
        }
        return Ok(None);
    }
    if module.starts_with("tvm_ffi") {
        let name = ty.name()?;
        match &*name.to_cow()? {
            "Device" => {
                let kind: i32 = obj
                    .call_method0(pyo3::intern!(py, "dlpack_device_type"))?
                    .extract()?;
                let id: i32 = obj.getattr(pyo3::intern!(py, "index"))?.extract()?;
                return Ok(Some(Any::from(object_core::Device::new(kind, id))));
            }
            "dtype" => {
                let text = obj.str()?;
                let dt: object_core::DataType =
                    text.to_cow()?
                        .parse()
                        .map_err(|e: object_core::ParseDataTypeError| {
                            PyValueError::new_err(e.to_string())
                        })?;
                return Ok(Some(Any::from(dt)));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// A list, tuple or dict being converted.
struct Open<'py> {
    /// Its address (what the cycle check compares).
    id: usize,
    items: Items<'py>,
    /// The items converted so far, in order (a dict's as key, value, key, …).
    done: Vec<Any>,
}

/// The items of an [`Open`] container still to convert.
enum Items<'py> {
    /// A list, read by index (as it is when each item is read), from the next one.
    List(Bound<'py, PyList>, usize),
    Tuple(Bound<'py, PyTuple>, usize),
    /// A dict's keys and values as they were when it was opened, so that a change to
    /// the dict meanwhile cannot end the walk (key, value, key, …).
    Dict(std::vec::IntoIter<Bound<'py, PyAny>>),
}

impl<'py> Items<'py> {
    fn next(&mut self) -> Option<Bound<'py, PyAny>> {
        match self {
            // (The length checked first: reading past the end would make an
            // IndexError, only to drop it.)
            Items::List(l, i) if *i < l.len() => {
                *i += 1;
                l.get_item(*i - 1).ok()
            }
            Items::Tuple(t, i) if *i < t.len() => {
                *i += 1;
                t.get_item(*i - 1).ok()
            }
            Items::List(..) | Items::Tuple(..) => None,
            Items::Dict(items) => items.next(),
        }
    }
}

impl<'py> Open<'py> {
    fn new(obj: &Bound<'py, PyAny>) -> Self {
        let (items, n) = if let Ok(l) = obj.cast::<PyList>() {
            (Items::List(l.clone(), 0), l.len())
        } else if let Ok(t) = obj.cast::<PyTuple>() {
            (Items::Tuple(t.clone(), 0), t.len())
        } else if let Ok(d) = obj.cast::<PyDict>() {
            let flat: Vec<_> = d.iter().flat_map(|(k, v)| [k, v]).collect();
            (Items::Dict(flat.into_iter()), 2 * d.len())
        } else {
            // (Only lists, tuples and dicts are opened.)
            (Items::Tuple(PyTuple::empty(obj.py()), 0), 0)
        };
        Open {
            id: obj.as_ptr() as usize,
            items,
            done: Vec::with_capacity(n),
        }
    }

    /// Converts the items up to the next list, tuple or dict among them, which it
    /// returns (converted next, then [`Open::done`] takes its value), or `None` once
    /// every item is converted.
    fn next_container(&mut self) -> PyResult<Option<Bound<'py, PyAny>>> {
        while let Some(item) = self.items.next() {
            match one_to_any(&item)? {
                One::Value(v) => self.done.push(v),
                One::Container => return Ok(Some(item)),
            }
        }
        Ok(None)
    }

    /// The `ffi.Array` or `ffi.Map` of the converted items.
    fn finish(&mut self) -> Any {
        let done = std::mem::take(&mut self.done);
        if !matches!(self.items, Items::Dict(_)) {
            return Any::from(Array::<Any>::from(done));
        }
        let mut m: Map<Any, Any> = Map::with_capacity(done.len() / 2);
        let mut done = done.into_iter();
        while let (Some(k), Some(v)) = (done.next(), done.next()) {
            m.insert(k, v);
        }
        Any::from(m)
    }
}

/// The addresses of the containers a conversion is inside of, kept once it nests
/// [`CHECK_CYCLES_FROM`] deep (a container that contains itself always gets there).
#[derive(Default)]
struct Path(Option<HashSet<usize>>);

impl Path {
    /// Records entering `id` inside `top`, itself inside `outer` (outermost first);
    /// refuses a container that one of them is.
    fn enter(&mut self, id: usize, outer: &[Open<'_>], top: &Open<'_>) -> PyResult<()> {
        let cycle = || {
            PyValueError::new_err("a list, tuple or dict that contains itself has no object value")
        };
        let set = match &mut self.0 {
            Some(set) => set,
            // (`id` would be at nesting `outer.len() + 2`, the root's being 1.)
            None if outer.len() + 2 < CHECK_CYCLES_FROM => return Ok(()),
            None => {
                let mut set = HashSet::with_capacity(2 * CHECK_CYCLES_FROM);
                for o in outer.iter().chain([top]) {
                    if !set.insert(o.id) {
                        return Err(cycle());
                    }
                }
                self.0.insert(set)
            }
        };
        if set.insert(id) {
            Ok(())
        } else {
            Err(cycle())
        }
    }

    fn leave(&mut self, id: usize) {
        if let Some(set) = &mut self.0 {
            set.remove(&id);
        }
    }
}

/// A list, tuple or dict as a new `ffi.Array` or `ffi.Map`, its items converted, the
/// nested ones depth first with a stack (no recursion).
#[cold]
fn containers_to_any(root: &Bound<'_, PyAny>) -> PyResult<Any> {
    let mut outer: Vec<Open<'_>> = Vec::new();
    let mut path = Path::default();
    let mut top = Open::new(root);
    loop {
        if let Some(inner) = top.next_container()? {
            path.enter(inner.as_ptr() as usize, &outer, &top)?;
            outer.push(std::mem::replace(&mut top, Open::new(&inner)));
            continue;
        }
        path.leave(top.id);
        let value = top.finish();
        match outer.pop() {
            Some(parent) => {
                top = parent;
                top.done.push(value);
            }
            None => return Ok(value),
        }
    }
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
#[inline]
pub(crate) fn any_to_py(py: Python<'_>, v: Any) -> PyResult<Py<PyAny>> {
    // The commonest results in the caller (a call's `None`, an integer); the rest in a
    // function of its own, whose frame such calls do not set up.
    match v.type_index() {
        type_index::NONE => Ok(py.None()),
        type_index::INT => match v.as_int() {
            Some(i) => Ok(i.into_pyobject(py)?.into_any().unbind()),
            None => any_to_py_other(py, v),
        },
        _ => any_to_py_other(py, v),
    }
}

/// [`any_to_py`] for every kind but `None` and integers.
#[inline(never)]
fn any_to_py_other(py: Python<'_>, v: Any) -> PyResult<Py<PyAny>> {
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
        _ => {}
    }
    if let Some(s) = v.as_str() {
        return Ok(PyString::new(py, s).into_any().unbind());
    }
    if index == type_index::BIG_INT {
        if let Ok(b) = BigInt::try_from(v.clone()) {
            return big_int_to_py(py, &b);
        }
    }
    if v.is_object() {
        let obj = ObjectRef::try_from(v).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        // A built-in that holds text or bytes is a Python value (`str`, `bytes`);
        // any other object is wrapped in its class.
        if let Some(hooks) = BuiltinHooks::of_object(&obj).filter(|h| h.is_value()) {
            match (hooks.contents)(&obj) {
                Contents::Bytes(b) => return Ok(PyBytes::new(py, b).into_any().unbind()),
                Contents::Text(t) => return Ok(PyString::new(py, t).into_any().unbind()),
                _ => {}
            }
        }
        return wrap(py, obj);
    }
    Err(PyTypeError::new_err(format!(
        "a `{}` value has no Python form",
        v.type_key()
    )))
}
