//! Objects as Python objects.
//!
//! `Object` (a pyo3 class holding one `ObjectRef`) is the class of `ffi.Object`. Every
//! other registered type gets its Python class the first time one of its objects (or
//! the class itself) is asked for: `ObjectMeta(name, (parent_class,), namespace)`,
//! whose namespace holds one [`FieldDescr`] per reflected field, so attribute reads are
//! one descriptor call, `dir()` lists the fields, and writes fail. The classes of the
//! built-ins with behaviour (`ffi.Array`, `ffi.Map`, `ffi.Function`, `ffi.Tensor`) take
//! the pyo3 class with that behaviour as their base. Types registered later (plugins,
//! `register_type`) get theirs the same way, lazily, so the Python hierarchy always
//! follows the registry and `isinstance` is the registry's `is` (the metaclass's
//! `__instancecheck__` also asks the registry). It stays so: `Object`'s own `__class__`
//! descriptor refuses an assignment, which CPython would otherwise allow between
//! classes of one layout (a `tour.Var` made a `tour.IntImm`).
//!
//! Wrapping an object into its class goes through the class's `__new__` with the
//! object waiting in a thread-local slot; keyword construction (`Add(lhs=x, rhs=y)`)
//! goes through reflection's `create_from_source`, with its error messages.

use std::cell::RefCell;
use std::sync::{OnceLock, RwLock};

use object_core::reflection::{
    create_from_source, get_field, FieldFlags, FieldInfo, FieldReader, FieldSource, ValueRef,
};
use object_core::registry::{self, TypeSpec};
use object_core::{type_index, Any, Error, ObjectRef, TypeInfo};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::convert::{any_to_py, py_to_any, view_to_py};
use crate::error::error_to_pyerr;
use crate::function::PyFunction;

/// The base of every object class: one strong reference to the object.
#[pyclass(frozen, subclass, weakref, module = "object_python", name = "Object")]
pub(crate) struct PyObj {
    pub(crate) obj: ObjectRef,
}

thread_local! {
    /// The object being wrapped, between `wrap` and the class's `__new__`.
    static PENDING_WRAP: RefCell<Option<ObjectRef>> = const { RefCell::new(None) };
}

/// The object `wrap` is handing to a `__new__`, if any.
pub(crate) fn take_pending() -> Option<ObjectRef> {
    PENDING_WRAP.with(|p| p.borrow_mut().take())
}

/// Hands `obj` to the next `__new__` of an object class on this thread.
pub(crate) fn set_pending(obj: ObjectRef) {
    PENDING_WRAP.with(|p| *p.borrow_mut() = Some(obj));
}

/// The classes, by type index.
static CLASSES: RwLock<Vec<Option<Py<PyType>>>> = RwLock::new(Vec::new());
/// `object_python.ObjectMeta`, the metaclass of the generated classes.
static METACLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `_native.load_json_graph`, what pickles call to load.
static LOADER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn err(py: Python<'_>, e: impl Into<Error>) -> PyErr {
    error_to_pyerr(py, e.into())
}

/// Keyword arguments converted on the stack up to this many (more go to the heap).
const INLINE_KWARGS: usize = 8;

/// What calling an object class builds: `cls(**kwargs)` for the registered type
/// `index`, with `n` keywords, `kw(i)` giving the i-th name and value; positional
/// values (`pos(i)`, `positional` of them) only for a type with a run-time field table
/// (a `@py_class`), in table order, as a dataclass takes them. Its `__new__` (the
/// `tp_call` path) and its vectorcall entry (`crate::vectorcall`) both come here.
pub(crate) fn construct<'a, 'py>(
    py: Python<'py>,
    index: u32,
    positional: usize,
    pos: impl Fn(usize) -> PyResult<Borrowed<'a, 'py, PyAny>>,
    n: usize,
    kw: impl Fn(usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)>,
) -> PyResult<ObjectRef> {
    if positional != 0 {
        return crate::pytype::create_positional(py, index, positional, pos, n, kw);
    }
    create_by_keyword(py, index, n, kw)
}

/// The registered type a class stands for: for a generated class holding the
/// construction entry, the type it was made for (kept by the class's address,
/// `crate::vectorcall`); for any other (a Python subclass, or any class in the `abi3`
/// build), its `_type_index`.
#[inline]
pub(crate) fn class_type_index(cls: &Bound<'_, PyType>) -> PyResult<u32> {
    #[cfg(not(feature = "abi3"))]
    if let Some(index) = crate::vectorcall::constructed_type(cls.as_type_ptr()) {
        return Ok(index);
    }
    type_index_attribute(cls)
}

/// `cls._type_index`.
#[cold]
fn type_index_attribute(cls: &Bound<'_, PyType>) -> PyResult<u32> {
    cls.getattr(intern!(cls.py(), "_type_index"))?.extract()
}

/// Builds an object of the type `index` from `n` keyword arguments, `kw(i)` giving the
/// i-th name and value, through reflection.
pub(crate) fn create_by_keyword<'a, 'py>(
    py: Python<'py>,
    index: u32,
    n: usize,
    kw: impl Fn(usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)>,
) -> PyResult<ObjectRef> {
    let info = registry::type_info(index)
        .ok_or_else(|| PyTypeError::new_err(format!("no type has index {index}")))?;
    // On the stack, in arrays sized to the call (each slot is set up and dropped).
    match n {
        0..=2 => create_inline::<2, _>(py, info, n, kw),
        3..=4 => create_inline::<4, _>(py, info, n, kw),
        5..=INLINE_KWARGS => create_inline::<INLINE_KWARGS, _>(py, info, n, kw),
        _ => create_by_keyword_heap(py, info, n, kw),
    }
}

/// [`create_by_keyword`] for `n <= N` keywords, in arrays of `N`.
#[inline]
fn create_inline<'a, 'py, const N: usize, F>(
    py: Python<'py>,
    info: &'static TypeInfo,
    n: usize,
    kw: F,
) -> PyResult<ObjectRef>
where
    F: Fn(usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)>,
{
    // The names (which the entries borrow their text from), then the entries.
    let mut names: [Option<Borrowed<'a, 'py, PyString>>; N] = [None; N];
    for (i, name) in names.iter_mut().take(n).enumerate() {
        *name = Some(kw(i)?.0.cast::<PyString>()?);
    }
    let mut entries: [(&str, Option<Any>); N] = std::array::from_fn(|_| ("", None));
    for (i, (e, name)) in entries.iter_mut().zip(&names).take(n).enumerate() {
        if let Some(name) = name {
            *e = (name.to_str()?, Some(py_to_any(&kw(i)?.1)?));
        }
    }
    create_from_source(info, &mut FieldSource::new(info.key(), &mut entries[..n]))
        .map_err(|e| err(py, e))
}

/// [`create_by_keyword`] for more than [`INLINE_KWARGS`] keywords.
#[cold]
fn create_by_keyword_heap<'a, 'py>(
    py: Python<'py>,
    info: &'static TypeInfo,
    n: usize,
    kw: impl Fn(usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)>,
) -> PyResult<ObjectRef> {
    let mut names = Vec::with_capacity(n);
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let (k, v) = kw(i)?;
        names.push(k.cast::<PyString>()?);
        values.push(py_to_any(&v)?);
    }
    let mut entries: Vec<(&str, Option<Any>)> = Vec::with_capacity(n);
    for (k, v) in names.iter().zip(values) {
        entries.push((k.to_str()?, Some(v)));
    }
    create_from_source(info, &mut FieldSource::new(info.key(), &mut entries))
        .map_err(|e| err(py, e))
}

#[pymethods]
impl PyObj {
    #[new]
    #[classmethod]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        if args.is_empty() && kwargs.is_none_or(|k| k.is_empty()) {
            if let Some(obj) = take_pending() {
                return Ok(PyObj { obj });
            }
        }
        let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
            kwargs.map(|kw| kw.iter().collect()).unwrap_or_default();
        let index = class_type_index(cls)?;
        let obj = construct(
            cls.py(),
            index,
            args.len(),
            |i| args.get_borrowed_item(i),
            items.len(),
            |i| Ok((items[i].0.as_borrowed(), items[i].1.as_borrowed())),
        )?;
        Ok(PyObj { obj })
    }

    /// The registry index of `ffi.Object`, the type of this class.
    #[classattr]
    #[pyo3(name = "_type_index")]
    fn type_index_attr() -> u32 {
        type_index::OBJECT
    }

    #[classattr]
    #[pyo3(name = "_type_key")]
    fn type_key_attr() -> &'static str {
        type_index::OBJECT_KEY
    }

    /// The object's class, what `type(o)` gives. `Object` has this data descriptor of
    /// its own so that an assignment (`o.__class__ = C`, and `object.__setattr__`, which
    /// finds it first along the class's MRO as well) reaches [`PyObj::set_class`]
    /// instead of `object`'s, which would re-class the object. (Attribute reads other
    /// than `__class__` never look at it.)
    #[getter(__class__)]
    fn class<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyType> {
        slf.get_type()
    }

    /// Refuses to re-class the object: its class stands for its registered type (a
    /// generated class, or a Python subclass of one), so that `isinstance` is the
    /// registry's `is`.
    #[setter(__class__)]
    fn set_class(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let to = match value.cast::<PyType>() {
            Ok(t) => format!("`{}`", qualname(t)),
            Err(_) => format!("a `{}` value", qualname(&value.get_type())),
        };
        Err(PyTypeError::new_err(format!(
            "cannot change the class of a {} to {to}: an object's class is its registered \
             type's, which `isinstance` checks",
            Self::described(slf)
        )))
    }

    #[deleter(__class__)]
    fn delete_class(slf: &Bound<'_, Self>) -> PyResult<()> {
        Err(PyTypeError::new_err(format!(
            "cannot delete the class of a {}",
            Self::described(slf)
        )))
    }

    /// The object's type key (`"tour.Add"`).
    #[getter]
    fn type_key(&self) -> &'static str {
        self.obj.type_key()
    }

    /// The object's type index in the registry.
    #[getter]
    fn type_index(&self) -> u32 {
        self.obj.type_index()
    }

    /// The object's address (the identity `==` and `hash` use).
    #[getter]
    fn address(&self) -> usize {
        ObjectRef::as_ptr(&self.obj) as usize
    }

    /// Whether `other` is the same object (identity).
    fn same_as(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyObj>()
            .is_ok_and(|o| ObjectRef::ptr_eq(&self.obj, &o.get().obj))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.obj)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let Ok(other) = other.cast::<PyObj>() else {
            return py.NotImplemented();
        };
        let same = ObjectRef::ptr_eq(&self.obj, &other.get().obj);
        let answer = match op {
            CompareOp::Eq => same,
            CompareOp::Ne => !same,
            _ => return py.NotImplemented(),
        };
        pyo3::types::PyBool::new(py, answer)
            .to_owned()
            .into_any()
            .unbind()
    }

    fn __hash__(&self) -> u64 {
        (ObjectRef::as_ptr(&self.obj) as usize as u64).rotate_right(4)
    }

    /// A copy with some fields changed (`copy.replace(obj, **changes)`; also
    /// `object_python.replace`): built through reflection from the object's fields and
    /// `changes`, checked as any construction is. Objects are immutable once shared,
    /// so this is how one is "modified".
    #[pyo3(signature = (**changes))]
    fn __replace__(
        slf: &Bound<'_, Self>,
        changes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        crate::pytype::replace_object(slf, changes)
    }

    /// Pickling goes through the JSON graph (iterative, sharing preserved).
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        let text = py
            .detach(|| object_json::to_json_graph(&Any::from(self.obj.clone())))
            .map_err(|e| err(py, e))?;
        let loader = LOADER.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py
                .import("object_python._native")?
                .getattr("load_json_graph")?
                .unbind())
        })?;
        Ok((loader.clone_ref(py), (text,)))
    }
}

impl PyObj {
    /// "`tour.Var` (a `tour.Var` object)", "`MyVar` (a `tour.Var` object)".
    fn described(slf: &Bound<'_, Self>) -> String {
        format!(
            "`{}` (a `{}` object)",
            qualname(&slf.get_type()),
            slf.get().obj.type_key()
        )
    }
}

/// A class's `__qualname__` (`tour.Var` for a generated class).
fn qualname(t: &Bound<'_, PyType>) -> String {
    t.qualname()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A reflected field, as a read-only data descriptor on its type's class.
#[pyclass(frozen, module = "object_python", name = "Field")]
pub(crate) struct FieldDescr {
    info: &'static FieldInfo,
    owner: &'static str,
    /// Reads objects of exactly the class's type in place (`info` is entry `at` of its
    /// table); other objects (none in practice), and errors, take `get_field`.
    reader: FieldReader,
    at: usize,
    /// The class whose namespace holds this descriptor, once made: an instance of
    /// exactly that class needs no subtype check (`crate::field_slot`). A strong
    /// reference: the classes live for the process anyway (`CLASSES`).
    pub(crate) class: OnceLock<Py<PyType>>,
}

#[pymethods]
impl FieldDescr {
    /// (The wheel's build reads through `crate::field_slot` instead: this method is
    /// what `Field.__get__(descr, obj)` calls, and every read in the `abi3` build.)
    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match obj.filter(|o| !o.is_none()) {
            Some(obj) => slf.get().read(obj.cast::<PyObj>()?),
            None => Ok(slf.clone().into_any().unbind()),
        }
    }

    fn __set__(&self, _obj: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(self.read_only())
    }

    fn __delete__(&self, _obj: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(self.read_only())
    }

    /// The field's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.info.name()
    }

    /// The field's static type key (`"ffi.String"`, `"int"`, `"tour.Expr"`, …).
    #[getter]
    fn type_key(&self) -> &'static str {
        self.info.static_type_key()
    }

    /// The `IntEnum` class of an enum field's enum (whose members the field reads as),
    /// else `None`.
    #[getter(r#enum)]
    fn enum_class<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyType>>> {
        self.info
            .enum_info()
            .map(|e| crate::enums::enum_class(py, e))
            .transpose()
    }

    /// The field's value kind as the table records it (`"Int"`, `"Str"`, `"Object"`,
    /// `"Enum"`, `"Any"`, …).
    #[getter]
    fn kind(&self) -> String {
        format!("{:?}", self.info.kind())
    }

    /// Whether the field may hold `None` (an `Option<…>` field, an `Optional[…]` one):
    /// construction may leave it out.
    #[getter]
    fn optional(&self) -> bool {
        self.info.flags().contains(FieldFlags::OPTIONAL)
    }

    /// Whether the field has a declared default: construction may leave it out.
    #[getter]
    fn has_default(&self) -> bool {
        self.info.has_default()
    }

    /// The Rust type as written in the struct (`"Array<ObjectPtr<Var>>"`), `""` for a
    /// field of a run-time field table.
    #[getter]
    fn rust_type(&self) -> &'static str {
        self.info.rust_type()
    }

    fn __repr__(&self) -> String {
        format!(
            "<field `{}` ({}) of `{}`>",
            self.info.name(),
            self.info.static_type_key(),
            self.owner
        )
    }
}

impl FieldDescr {
    /// The field of `this`, as a Python value.
    #[inline]
    pub(crate) fn read(&self, this: &Bound<'_, PyObj>) -> PyResult<Py<PyAny>> {
        let py = this.py();
        let o = &this.get().obj;
        match self.reader.read(o).and_then(|f| f.get(self.at)) {
            Some(ValueRef::Object(child)) => return any_to_py(py, Any::from(child.clone())),
            Some(ValueRef::Str(s)) => return Ok(PyString::new(py, s).into_any().unbind()),
            Some(ValueRef::Value(v)) => {
                // An enum field: the member of its value.
                if let (Some(e), Some(i)) = (self.info.enum_info(), v.as_int()) {
                    return crate::enums::member(py, e, i);
                }
                return view_to_py(py, v);
            }
            // (An error is raised as `get_field` words it.)
            _ => {}
        }
        let value = get_field(o, self.info).map_err(|e| err(py, e))?;
        if let (Some(e), Some(i)) = (self.info.enum_info(), value.as_int()) {
            return crate::enums::member(py, e, i);
        }
        any_to_py(py, value)
    }

    fn read_only(&self) -> PyErr {
        PyAttributeError::new_err(format!(
            "field `{}` of `{}` is read-only (objects are immutable once shared)",
            self.info.name(),
            self.owner
        ))
    }
}

fn cached(py: Python<'_>, index: u32) -> Option<Bound<'_, PyType>> {
    let classes = CLASSES.read().unwrap_or_else(|e| e.into_inner());
    classes
        .get(index as usize)
        .and_then(Option::as_ref)
        .map(|c| c.bind(py).clone())
}

/// The Python class of the registered type `index`, made (with its ancestors') on first
/// use.
pub(crate) fn class_of(py: Python<'_>, index: u32) -> PyResult<Bound<'_, PyType>> {
    if let Some(c) = cached(py, index) {
        return Ok(c);
    }
    let info = registry::type_info(index)
        .filter(|i| i.is_object())
        .ok_or_else(|| PyTypeError::new_err(format!("no object type has index {index}")))?;
    // From the root down (the ancestor list is bounded by the registry's depth, not by
    // any graph), each class made from its parent's.
    let mut parent: Option<Bound<'_, PyType>> = None;
    for &idx in info.ancestors() {
        let cls = match cached(py, idx) {
            Some(c) => c,
            None => keep_class(py, idx, make_class(py, idx, parent.as_ref(), None)?)?,
        };
        parent = Some(cls);
    }
    parent.ok_or_else(|| PyTypeError::new_err(format!("type {index} has no ancestry")))
}

/// Keeps `made` as the class of the type `index` for the process, unless another
/// thread kept one meanwhile (class creation runs Python code, which may let the GIL
/// go): the first one wins, and is returned.
pub(crate) fn keep_class<'py>(
    py: Python<'py>,
    index: u32,
    made: Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyType>> {
    let mut classes = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    if classes.len() <= index as usize {
        classes.resize_with(index as usize + 1, || None);
    }
    let won = match &classes[index as usize] {
        Some(c) => Err(c.bind(py).clone()),
        None => {
            classes[index as usize] = Some(made.clone().unbind());
            Ok(made)
        }
    };
    drop(classes);
    match won {
        Err(existing) => Ok(existing),
        Ok(made) => {
            // Kept for the process now: the class may take the construction entry,
            // which is keyed by its address.
            #[cfg(not(feature = "abi3"))]
            if !made.is_subclass_of::<PyFunction>()? {
                crate::vectorcall::install_constructor(&made, index);
            }
            Ok(made)
        }
    }
}

/// The class kept for the type `index`, if one was made.
pub(crate) fn kept_class(py: Python<'_>, index: u32) -> Option<Bound<'_, PyType>> {
    cached(py, index)
}

/// Makes the class of the registered type `index` (not kept: see [`keep_class`]), whose
/// base is `parent`'s class. `user` is a `@py_class`'s own class body (its name and
/// namespace: methods, properties, docs), made into the type's class with the field
/// descriptors added.
pub(crate) fn make_class<'py>(
    py: Python<'py>,
    index: u32,
    parent: Option<&Bound<'py, PyType>>,
    user: Option<(&str, &Bound<'py, PyDict>)>,
) -> PyResult<Bound<'py, PyType>> {
    let info = registry::type_info(index)
        .ok_or_else(|| PyTypeError::new_err(format!("no type has index {index}")))?;
    // A built-in's class derives from its shape's (a sequence for items, a mapping for
    // entries …); functions' from `Function`, which calls them.
    let base = match (index, info.reflection().builtin()) {
        (type_index::OBJECT, _) => return Ok(py.get_type::<PyObj>()),
        (type_index::FUNCTION, _) => py.get_type::<PyFunction>(),
        (type_index::MODULE, _) => py.get_type::<crate::module::PyModuleBase>(),
        (_, Some(hooks)) => crate::containers::builtin_base(py, hooks)
            .or_else(|| parent.cloned())
            .unwrap_or_else(|| py.get_type::<PyObj>()),
        _ => match parent {
            Some(p) => p.clone(),
            None => py.get_type::<PyObj>(),
        },
    };
    let key = info.key();
    let mut name = key.rsplit('.').next().unwrap_or(key);
    let ns = PyDict::new(py);
    ns.set_item("__module__", "object_python.types")?;
    ns.set_item("__qualname__", key)?;
    ns.set_item(
        "__doc__",
        format!("The registered type `{key}` (index {index})."),
    )?;
    if let Some((user_name, body)) = user {
        name = user_name;
        ns.update(body.as_mapping())?;
    }
    ns.set_item("__slots__", PyTuple::empty(py))?;
    ns.set_item("_type_index", index)?;
    ns.set_item("_type_key", key)?;
    if !info.reflection().is_opaque() {
        let reader = FieldReader::new(info);
        for (at, f) in info.reflection().fields().iter().enumerate() {
            if !f.is_reflected() {
                continue;
            }
            ns.set_item(
                f.name(),
                Bound::new(
                    py,
                    FieldDescr {
                        info: f,
                        owner: key,
                        reader,
                        at,
                        class: OnceLock::new(),
                    },
                )?,
            )?;
        }
    }
    let meta = match METACLASS.get(py) {
        Some(m) => m.bind(py).clone(),
        None => py.get_type::<PyType>(),
    };
    let bases = PyTuple::new(py, [base])?;
    let made = meta
        .call1((name, bases, ns.clone()))?
        .cast_into::<PyType>()?;
    // (Every generated class derives from `Object`; the check keeps the descriptors'
    // exact-class shortcut sound whatever the bases become.)
    if made.is_subclass_of::<PyObj>()? {
        for (_, v) in ns.iter() {
            if let Ok(d) = v.cast::<FieldDescr>() {
                let _ = d.get().class.set(made.clone().unbind());
            }
        }
    }
    // (Other classes get their construction entry in `class_of`, once kept.)
    #[cfg(not(feature = "abi3"))]
    if made.is_subclass_of::<PyFunction>()? {
        crate::vectorcall::install(&made, None);
    }
    Ok(made)
}

/// An object in the Python class of its type.
pub(crate) fn wrap(py: Python<'_>, obj: ObjectRef) -> PyResult<Py<PyAny>> {
    if obj.type_index() == type_index::OBJECT {
        return Ok(Py::new(py, PyObj { obj })?.into_any());
    }
    let cls = class_of(py, obj.type_index())?;
    // A plain object class: its instance made directly (no call of the class).
    #[cfg(not(feature = "abi3"))]
    let obj = match crate::vectorcall::instance_of(&cls, obj) {
        Ok(made) => return made,
        Err(obj) => obj,
    };
    // A built-in's class (an Array's, a Map's, …): the same, through its `__new__`'s
    // value.
    #[cfg(not(feature = "abi3"))]
    let obj = match crate::containers::builtin_instance_of(&cls, obj) {
        Ok(made) => return made,
        Err(obj) => obj,
    };
    set_pending(obj);
    let made = cls.call0();
    take_pending();
    Ok(made?.unbind())
}

/// The class of a registered type, by key.
#[pyfunction]
fn type_class<'py>(py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyType>> {
    let index = registry::type_index_of(key).map_err(|e| {
        pyo3::exceptions::PyKeyError::new_err(format!("no registered type `{key}`: {e}"))
    })?;
    class_of(py, index)
}

/// The keys of every registered object type.
#[pyfunction]
fn type_keys() -> Vec<&'static str> {
    registry::types()
        .into_iter()
        .filter(|i| i.is_object())
        .map(TypeInfo::key)
        .collect()
}

/// What the registry says of the object type `index` beyond its class (for
/// `object_python.stubgen`): `{"key", "parent", "final", "abstract", "rust_name"}`
/// (`parent` the parent's key, `None` for the root; `rust_name` the Rust type that
/// registered it through the derive, else `None`).
#[pyfunction]
fn _type_facts(py: Python<'_>, index: u32) -> PyResult<Bound<'_, PyDict>> {
    let info = registry::type_info(index)
        .filter(|i| i.is_object())
        .ok_or_else(|| PyTypeError::new_err(format!("no object type has index {index}")))?;
    let out = PyDict::new(py);
    out.set_item("key", info.key())?;
    out.set_item("parent", info.parent().map(TypeInfo::key))?;
    out.set_item("final", info.is_final())?;
    out.set_item("abstract", info.is_abstract())?;
    out.set_item("rust_name", info.rust_name())?;
    Ok(out)
}

/// Registers a type at run time (as a plugin would); returns its class.
#[pyfunction]
#[pyo3(signature = (key, parent = "ffi.Object", slots = 0, final_type = false))]
fn register_type<'py>(
    py: Python<'py>,
    key: &str,
    parent: &str,
    slots: u32,
    final_type: bool,
) -> PyResult<Bound<'py, PyType>> {
    let spec = TypeSpec::new(key, parent)
        .slots(slots)
        .final_type(final_type);
    let info = registry::register_type(&spec)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    class_of(py, info.index())
}

/// The registry's `is` check: whether `obj` is an object of type `index` or a subtype.
#[pyfunction]
fn _is_instance(obj: &Bound<'_, PyAny>, index: u32) -> bool {
    obj.cast::<PyObj>()
        .is_ok_and(|o| registry::is_instance_of_index(o.get().obj.type_index(), index))
}

#[pyfunction]
fn _set_metaclass(py: Python<'_>, meta: Bound<'_, PyType>) -> PyResult<()> {
    if !meta.is_subclass_of::<PyType>()? {
        return Err(PyTypeError::new_err(
            "the metaclass must derive from `type`",
        ));
    }
    METACLASS
        .set(py, meta.clone().unbind())
        .map_err(|_| PyTypeError::new_err("the metaclass is set once"))?;
    // (Only the metaclass in use takes part: a second one was refused above.)
    #[cfg(not(feature = "abi3"))]
    crate::vectorcall::install_metaclass(&meta);
    Ok(())
}

/// A value (object, container, number, …) as JSON graph text.
#[pyfunction]
fn save_json_graph(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = py_to_any(value)?;
    py.detach(|| object_json::to_json_graph(&v))
        .map_err(|e| err(py, e))
}

/// The value a JSON graph text holds.
#[pyfunction]
fn load_json_graph(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let v = py
        .detach(|| object_json::from_json_graph(text))
        .map_err(|e| err(py, e))?;
    any_to_py(py, v)
}

/// The library's count of live objects (built with the `live-count` feature), else
/// `None`.
#[pyfunction]
fn _live_objects() -> Option<isize> {
    #[cfg(feature = "live-count")]
    {
        Some(object_core::live_objects())
    }
    #[cfg(not(feature = "live-count"))]
    {
        None
    }
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyObj>()?;
    // Before any class deriving from `Object` is made (pyo3's inherit the slot).
    #[cfg(not(feature = "abi3"))]
    crate::field_slot::install_getattro(&m.py().get_type::<PyObj>());
    m.add_class::<FieldDescr>()?;
    #[cfg(not(feature = "abi3"))]
    crate::field_slot::install(&m.py().get_type::<FieldDescr>());
    m.add_function(wrap_pyfunction!(type_class, m)?)?;
    m.add_function(wrap_pyfunction!(type_keys, m)?)?;
    m.add_function(wrap_pyfunction!(register_type, m)?)?;
    m.add_function(wrap_pyfunction!(_type_facts, m)?)?;
    m.add_function(wrap_pyfunction!(_is_instance, m)?)?;
    m.add_function(wrap_pyfunction!(_set_metaclass, m)?)?;
    m.add_function(wrap_pyfunction!(save_json_graph, m)?)?;
    m.add_function(wrap_pyfunction!(load_json_graph, m)?)?;
    m.add_function(wrap_pyfunction!(_live_objects, m)?)?;
    Ok(())
}
