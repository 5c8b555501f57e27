//! Vectorcall entries: `Function` objects and object classes called without an
//! argument tuple.
//!
//! pyo3 gives a class's `__call__` only the `tp_call` slot: CPython packs the arguments
//! into a new tuple (and the keywords into a new dict) for each call, pyo3 unpacks them,
//! and both are freed again: about a third of a two-argument call. CPython's vectorcall
//! protocol (PEP 590) instead hands the callee the caller's own argument array, keyword
//! values included, with their names in a tuple. A type takes part by naming, in
//! `tp_vectorcall_offset`, where in each of its instances the entry point lives, and by
//! setting `Py_TPFLAGS_HAVE_VECTORCALL`.
//!
//! Two kinds of objects are called this way:
//!
//! - **`Function` objects.** Every `PyFunction` holds [`ENTRY`] in a field. [`install`]
//!   finds that field's offset in a probe instance (the layout is pyo3's, the same for
//!   every instance of the class and of its subclasses, which extend it) and sets the
//!   offset and the flag on `FunctionBase` and on each generated subclass
//!   (`ffi.Function` and the classes of types derived from it: CPython 3.11 does not
//!   pass the flag down to heap subclasses). `tp_call` (pyo3's `__call__`) stays, for
//!   callers that use it.
//! - **Object classes**, called to construct (`Add(lhs=x, rhs=y)`). A class's own
//!   `tp_vectorcall` field is what CPython calls for `cls(...)` when the metaclass takes
//!   part: [`install_metaclass`] sets the flag on `ObjectMeta`, [`install_constructor`]
//!   the entry on each generated class whose `__new__` is `Object`'s. A class whose
//!   `__new__` or `__init__` a user replaced is constructed as `type.__call__` would
//!   (it is called). Subclasses written in Python never inherit the entry
//!   (`tp_vectorcall` is not inherited), so `type.__call__` serves them as before.
//!
//! The `abi3` build, which has no access to type objects' fields, leaves this module
//! out: there every call takes `tp_call`.
//!
//! The `Function` entry runs inside pyo3's own trampoline
//! (`fastcall_cfunction_with_keywords`, the one its `#[pyfunction]`s use): it marks the
//! thread attached for pyo3, releases references deferred while it was not, turns a
//! panic into `PanicException` and a `PyErr` into a raised exception. That trampoline
//! is pyo3's doc-hidden `impl_` API, pinned by `Cargo.lock`; a pyo3 upgrade that
//! changes it fails to compile here. The construction entry runs without it
//! (`crate::attached_entry`), and finds the class's registered type in a table kept
//! by class address ([`CONSTRUCTED`]) instead of reading `cls._type_index`.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::PyClassInitializer;
use std::sync::atomic::{AtomicIsize, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use object_core::ObjectRef;

use crate::attached_entry::run_attached;
use crate::function::PyFunction;
use crate::object::{class_type_index, construct, PyObj};

/// The entry point each `PyFunction` holds at the class's `tp_vectorcall_offset`.
pub(crate) const ENTRY: ffi::vectorcallfunc = entry;

/// The offset of a `PyFunction`'s entry field in its Python object; 0 until `install`.
static OFFSET: AtomicIsize = AtomicIsize::new(0);

/// What CPython calls for a `Function` object: [`call`], inside pyo3's trampoline.
unsafe extern "C" fn entry(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    const TRAMPOLINE: unsafe extern "C" fn(
        *mut ffi::PyObject,
        *const *mut ffi::PyObject,
        ffi::Py_ssize_t,
        *mut ffi::PyObject,
    ) -> *mut ffi::PyObject =
        pyo3::impl_::trampoline::get_trampoline_function!(fastcall_cfunction_with_keywords, call);
    // CPython calls a vectorcall entry attached to the interpreter, with `callable` the
    // object whose field held it, `args` its argument array and `kwnames` a tuple or
    // null. `nargsf` is passed on bit for bit (the offset flag is its top bit; the
    // body strips it).
    // SAFETY: that contract is what the trampoline and the body require.
    unsafe { TRAMPOLINE(callable, args, nargsf as ffi::Py_ssize_t, kwnames) }
}

/// What CPython calls for a generated class: [`construct_call`], without pyo3's
/// trampoline (`crate::attached_entry`).
unsafe extern "C" fn construct_entry(
    cls: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let body = move |py: Python<'_>| {
        // SAFETY: CPython calls a vectorcall entry with `cls` the class whose field
        // held it, `args` its argument array and `kwnames` a tuple or null: the body's
        // contract.
        unsafe { construct_call(py, cls, args, nargsf as ffi::Py_ssize_t, kwnames) }
    };
    // SAFETY: CPython calls a vectorcall entry attached to the interpreter.
    unsafe { run_attached(body) }
}

/// The call: the positional arguments straight from CPython's array.
///
/// # Safety
///
/// The thread is attached; `slf` is a live object; `args` holds
/// `PyVectorcall_NARGS(nargsf)` borrowed references followed by one per name in
/// `kwnames`, which is null or a tuple of strings.
unsafe fn call(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: `slf` is live and borrowed for the call (the caller's contract).
    let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf) };
    // CPython calls this entry for the object that holds it at its type's
    // `tp_vectorcall_offset`. Only `PyFunction`s hold it (`PyFunction::of` writes it),
    // and `install` sets the offset only on `FunctionBase` and the classes made from it,
    // whose instances (and their Python subclasses') are `PyFunction`s.
    // SAFETY: so `slf` is a `PyFunction`.
    let f = unsafe { slf.cast_unchecked::<PyFunction>() };
    // SAFETY: `PyVectorcall_NARGS` strips `PY_VECTORCALL_ARGUMENTS_OFFSET` from the
    // count it is given; it reads nothing else.
    let n = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
    if !kwnames.is_null() {
        // SAFETY: a non-null `kwnames` is a live tuple (the caller's contract).
        let names = unsafe { pyo3::Borrowed::from_ptr(py, kwnames) }.cast::<PyTuple>()?;
        if !names.is_empty() {
            let nk = names.len();
            // SAFETY: `args` holds `n` positional values, then one per keyword name,
            // live for the call.
            let all = unsafe { std::slice::from_raw_parts(args, n + nk) };
            let out = f.get().call_python_kw(
                py,
                n,
                // SAFETY: each item of `all` is a live object borrowed for the call.
                |i| Ok(unsafe { pyo3::Borrowed::from_ptr(py, all[i]) }),
                nk,
                |i| names.get_borrowed_item(i),
                // SAFETY: as above.
                |i| Ok(unsafe { pyo3::Borrowed::from_ptr(py, all[n + i]) }),
            )?;
            return Ok(out.into_ptr());
        }
    }
    let args: &[*mut ffi::PyObject] = if n == 0 {
        &[]
    } else {
        // SAFETY: `args` holds at least `n` pointers, live for the call.
        unsafe { std::slice::from_raw_parts(args, n) }
    };
    let out = f.get().call_python(py, n, |i| {
        // SAFETY: each item of `args` is a live object borrowed for the call.
        Ok(unsafe { pyo3::Borrowed::from_ptr(py, args[i]) })
    })?;
    Ok(out.into_ptr())
}

/// Makes the instances of `cls` (`FunctionBase` or a subclass of it) callable through
/// their vectorcall entry. `probe`, any `PyFunction` instance, shows where the entry
/// lies; it is needed only on the first call (for `FunctionBase` itself).
pub(crate) fn install(cls: &Bound<'_, PyType>, probe: Option<&Bound<'_, PyFunction>>) {
    if let Some(p) = probe {
        let field = std::ptr::from_ref(&p.get().entry) as isize;
        OFFSET.store(field - p.as_ptr() as isize, Ordering::Relaxed);
    }
    let offset = OFFSET.load(Ordering::Relaxed);
    if offset <= 0 {
        return; // not installed: calls take `tp_call`
    }
    let tp = cls.as_type_ptr();
    // `tp` is a live type object of ours (FunctionBase, or a heap class made from it
    // by `make_class`), changed while attached and before any instance is called
    // through it. Its instances are `PyFunction`s, whose entry field lies `offset`
    // bytes in (measured on an instance above; subclasses extend the layout, and none
    // adds a field before it) and is always set. `tp_flags` is the plain integer it is
    // on GIL builds (an atomic of the same layout on free-threaded ones);
    // `PyType_Modified` drops what CPython cached of the type.
    // SAFETY: as just said: the fields written are the type's own, and truthful.
    unsafe {
        (*tp).tp_vectorcall_offset = offset;
        let flags = std::ptr::addr_of_mut!((*tp).tp_flags).cast::<std::ffi::c_ulong>();
        *flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
        ffi::PyType_Modified(tp);
    }
}

/// Lets the instances of `meta` (a metaclass deriving from `type`: its instances are
/// classes) be called through their `tp_vectorcall` field.
pub(crate) fn install_metaclass(meta: &Bound<'_, PyType>) {
    debug_assert!(meta.is_subclass_of::<PyType>().unwrap_or(false));
    let tp = meta.as_type_ptr();
    // `tp` is a live type object (the metaclass), changed while attached and before
    // any class made from it is called. Its instances are type objects (it derives
    // from `type`, checked by the caller), whose `tp_vectorcall` field lies at that
    // offset and is null (then `tp_call`, `type.__call__`, serves) or an entry.
    // SAFETY: as just said: the fields written are the metaclass's own, and truthful.
    unsafe {
        (*tp).tp_vectorcall_offset =
            std::mem::offset_of!(ffi::PyTypeObject, tp_vectorcall) as ffi::Py_ssize_t;
        let flags = std::ptr::addr_of_mut!((*tp).tp_flags).cast::<std::ffi::c_ulong>();
        *flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
        ffi::PyType_Modified(tp);
    }
}

/// The registered type each class holding [`CONSTRUCT`] stands for, by the class's
/// address: what [`construct_call`] builds, found without an attribute look-up
/// (reading `cls._type_index` took a ninth of a construction).
///
/// An open-addressed table, written under [`CONSTRUCTED_WRITE`] and read without a
/// lock: an entry's type is stored before its address (release), and a reader that
/// finds the address (acquire) reads the type stored with it. Entries are never
/// changed or removed. An address is recorded only for a class that
/// `object::class_of` keeps for the process (a class object is never freed once
/// there), so it always names the class it was recorded for, never a later class at a
/// reused address. A class that finds the table full is constructed through the
/// attribute look-up instead.
static CONSTRUCTED: [ConstructedSlot; CONSTRUCTED_SLOTS] = [const {
    ConstructedSlot {
        class: AtomicUsize::new(0),
        index: AtomicU32::new(0),
    }
}; CONSTRUCTED_SLOTS];

/// The number of entries of [`CONSTRUCTED`] (a power of two).
const CONSTRUCTED_SLOTS: usize = 1 << 10;

/// Serializes the writers of [`CONSTRUCTED`].
static CONSTRUCTED_WRITE: Mutex<()> = Mutex::new(());

/// An entry of [`CONSTRUCTED`]: a class's address (0: free) and its registered type.
struct ConstructedSlot {
    class: AtomicUsize,
    index: AtomicU32,
}

/// The entries of [`CONSTRUCTED`] to probe for the class at `addr`, in order.
fn probe(addr: usize) -> impl Iterator<Item = &'static ConstructedSlot> {
    // Fibonacci hashing of the address (type objects are 16-aligned): the top bits of
    // the product, as many as index the table.
    const SHIFT: u32 = u64::BITS - CONSTRUCTED_SLOTS.trailing_zeros();
    let home = ((addr as u64 >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> SHIFT) as usize;
    (0..CONSTRUCTED_SLOTS).map(move |i| &CONSTRUCTED[(home + i) & (CONSTRUCTED_SLOTS - 1)])
}

/// The registered type of `tp`, a class holding [`CONSTRUCT`] (see [`CONSTRUCTED`]).
pub(crate) fn constructed_type(tp: *mut ffi::PyTypeObject) -> Option<u32> {
    let addr = tp as usize;
    for slot in probe(addr) {
        match slot.class.load(Ordering::Acquire) {
            0 => return None,
            a if a == addr => return Some(slot.index.load(Ordering::Relaxed)),
            _ => {}
        }
    }
    None
}

/// Records `index` as the registered type of the class at `addr`; false if the table
/// is full.
fn record_constructed(addr: usize, index: u32) -> bool {
    let _writing = CONSTRUCTED_WRITE.lock().unwrap_or_else(|e| e.into_inner());
    for slot in probe(addr) {
        match slot.class.load(Ordering::Relaxed) {
            0 => {
                slot.index.store(index, Ordering::Relaxed);
                slot.class.store(addr, Ordering::Release);
                return true;
            }
            // (A class is recorded once; its type never changes.)
            a if a == addr => return slot.index.load(Ordering::Relaxed) == index,
            _ => {}
        }
    }
    false
}

/// Gives `cls`, the generated class of the registered type `index`, the construction
/// entry, if its `__new__` is `Object`'s (the classes of `ffi.Array`, `ffi.Tensor`, …
/// keep theirs). `cls` must be kept for the process (the class `object::class_of`
/// keeps): the entry finds its type by the class's address.
pub(crate) fn install_constructor(cls: &Bound<'_, PyType>, index: u32) {
    let tp = cls.as_type_ptr();
    let is_object_class = cls.is_subclass_of::<PyObj>().unwrap_or(false);
    // SAFETY: a live type object's field, read while attached.
    if !is_object_class || !same_new(unsafe { (*tp).tp_new }, object_new(cls.py())) {
        return;
    }
    if !record_constructed(tp as usize, index) {
        return; // (the table is full: calls take `type.__call__`)
    }
    // `tp` is a live type object, changed while attached, before anything calls it
    // through the entry. Its `tp_vectorcall` is read by CPython only when the
    // metaclass takes part. The entry goes only to classes deriving from `Object`,
    // whose instances it makes (see `construct_call`), and recorded in `CONSTRUCTED`
    // (above) with their type.
    // SAFETY: as just said.
    unsafe {
        (*tp).tp_vectorcall = Some(CONSTRUCT);
    }
}

/// Whether two `tp_new` slots hold the same function. (Slots are compared as the
/// addresses stored in type objects, copied from one slot to another, never as
/// function items, so equal means the same.)
fn same_new(a: Option<ffi::newfunc>, b: Option<ffi::newfunc>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if std::ptr::fn_addr_eq(a, b))
}

/// [`same_new`] for `tp_init` slots.
fn same_init(a: Option<ffi::initproc>, b: Option<ffi::initproc>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if std::ptr::fn_addr_eq(a, b))
}

/// `Object`'s `tp_new` (pyo3's `PyObj::new`), which generated classes inherit.
fn object_new(py: Python<'_>) -> Option<ffi::newfunc> {
    // SAFETY: a live type object's field, read while attached.
    unsafe { (*py.get_type::<PyObj>().as_type_ptr()).tp_new }
}

/// The construction entry a generated class holds in `tp_vectorcall`.
const CONSTRUCT: ffi::vectorcallfunc = construct_entry;

/// `cls(*args, **kwargs)` for a class holding [`CONSTRUCT`].
///
/// # Safety
///
/// As [`call`]'s (with `cls` the class called).
unsafe fn construct_call(
    py: Python<'_>,
    cls: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: `cls` is live and borrowed for the call (the caller's contract).
    let cls = unsafe { pyo3::Borrowed::from_ptr(py, cls) }.cast::<PyType>()?;
    let tp = cls.as_type_ptr();
    // SAFETY: as in `call`.
    let n = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
    let names = if kwnames.is_null() {
        None
    } else {
        // SAFETY: a non-null `kwnames` is a live tuple (the caller's contract).
        Some(unsafe { pyo3::Borrowed::from_ptr(py, kwnames) }.cast::<PyTuple>()?)
    };
    let nk = names.as_ref().map_or(0, |t| t.len());
    let all: &[*mut ffi::PyObject] = if n + nk == 0 {
        &[]
    } else {
        // SAFETY: `args` holds `n` positional values and then one per keyword name,
        // live for the call.
        unsafe { std::slice::from_raw_parts(args, n + nk) }
    };
    if !new_and_init_are_objects(&cls) {
        return type_call(py, &cls, all, n, names.as_deref());
    }
    // (`wrap` makes its instances through `instance_of`, never by calling such a
    // class: nothing is pending here.)
    // (Every class holding this entry is in `CONSTRUCTED`: no attribute look-up.)
    let index = class_type_index(&cls)?;
    let name_items: &[Bound<'_, PyAny>] = names.as_ref().map_or(&[], |t| t.as_slice());
    let obj = construct(
        py,
        index,
        n,
        // SAFETY: each of the first `n` items of `args` is a live object borrowed for
        // the call (`construct` asks for `i < n` only).
        |i| Ok(unsafe { pyo3::Borrowed::from_ptr(py, all[i]) }),
        nk,
        |i| {
            let name = name_items
                .get(i)
                .ok_or_else(|| PyTypeError::new_err("a keyword went missing"))?;
            // SAFETY: each item of `args` is a live object borrowed for the call.
            Ok((name.as_borrowed(), unsafe {
                pyo3::Borrowed::from_ptr(py, all[n + i])
            }))
        },
    )?;
    // SAFETY: CPython calls a class's `tp_vectorcall` for that class alone (the field
    // is not inherited), and `install_constructor` put this entry only in classes
    // deriving from `Object`.
    unsafe { new_instance(py, tp, obj) }
}

/// Whether the class `cls` still has `Object`'s `__new__` and `object`'s `__init__`
/// (a user may replace either): then constructing it is making an instance.
#[inline]
fn new_and_init_are_objects(cls: &Bound<'_, PyType>) -> bool {
    let (py, tp) = (cls.py(), cls.as_type_ptr());
    // SAFETY: a live type object's fields, read while attached; `PyBaseObject_Type` is
    // CPython's static `object`.
    unsafe {
        same_new((*tp).tp_new, object_new(py))
            && same_init(
                (*tp).tp_init,
                (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_init,
            )
    }
}

/// The instance of the class `tp` holding `obj`, as `Object`'s `__new__` makes it
/// (`tp_new_impl` is what pyo3's generated `tp_new` calls with the value `#[new]`
/// returned): a new reference.
///
/// # Safety
///
/// `tp` is `Object`'s class or a subclass of it, live; the thread is attached.
unsafe fn new_instance(
    py: Python<'_>,
    tp: *mut ffi::PyTypeObject,
    obj: ObjectRef,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: the caller's contract is `tp_new_impl`'s.
    unsafe { pyo3::impl_::pymethods::tp_new_impl(py, PyClassInitializer::from(PyObj { obj }), tp) }
}

/// The Python object of `obj` in `cls` (its class, from `class_of`), made as
/// `Object.__new__` makes it, without calling the class, when `cls` holds the
/// construction entry and its `__new__`/`__init__` are `Object`'s; else `Err(obj)`
/// back (the caller calls the class).
pub(crate) fn instance_of(
    cls: &Bound<'_, PyType>,
    obj: ObjectRef,
) -> Result<PyResult<Py<PyAny>>, ObjectRef> {
    let py = cls.py();
    let tp = cls.as_type_ptr();
    // SAFETY: a live type object's field, read while attached.
    let has_entry =
        unsafe { matches!((*tp).tp_vectorcall, Some(v) if std::ptr::fn_addr_eq(v, CONSTRUCT)) };
    if !has_entry || !new_and_init_are_objects(cls) {
        return Err(obj);
    }
    // SAFETY: `cls` holds the construction entry, which `install_constructor` puts only
    // in classes deriving from `Object` (and CPython never copies it to another type).
    let made = unsafe { new_instance(py, tp, obj) };
    // SAFETY: `new_instance` returns a new (owned) reference, or fails with the error
    // set.
    Ok(made.map(|p| unsafe { Bound::from_owned_ptr(py, p) }.unbind()))
}

/// The instance of `cls` made from `init(obj)` as `T`'s `__new__` makes it (the value
/// its `#[new]` returned, placed by pyo3's `tp_new_impl`), without calling the class, when
/// `cls` is `T`'s class or a subclass of it whose `__new__` is still `T`'s and whose
/// `__init__` is `object`'s (what `cls()` would then do); else `Err(obj)` back (the
/// caller calls the class). For the built-ins' classes (`ArrayBase`'s, `MapBase`'s, …), whose
/// `__new__` takes the object being wrapped.
pub(crate) fn instance_from_init<T: pyo3::PyClass>(
    cls: &Bound<'_, PyType>,
    obj: ObjectRef,
    init: impl FnOnce(ObjectRef) -> PyClassInitializer<T>,
) -> Result<PyResult<Py<PyAny>>, ObjectRef> {
    let py = cls.py();
    let tp = cls.as_type_ptr();
    let base = py.get_type::<T>();
    // SAFETY: live type objects' fields, read while attached; `PyBaseObject_Type` is
    // CPython's static `object`.
    let plain = unsafe {
        same_new((*tp).tp_new, (*base.as_type_ptr()).tp_new)
            && same_init(
                (*tp).tp_init,
                (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_init,
            )
    };
    // SAFETY: two live type objects, read while attached (`PyType_IsSubtype` walks
    // `tp`'s MRO; it cannot fail).
    if !plain || unsafe { ffi::PyType_IsSubtype(tp, base.as_type_ptr()) } == 0 {
        return Err(obj);
    }
    // SAFETY: `tp` is `T`'s class or a subclass of it (checked just above), live; the
    // thread is attached: `tp_new_impl`'s contract.
    let made = unsafe { pyo3::impl_::pymethods::tp_new_impl(py, init(obj), tp) };
    // SAFETY: `tp_new_impl` returns a new (owned) reference, or fails with the error
    // set.
    Ok(made.map(|p| unsafe { Bound::from_owned_ptr(py, p) }.unbind()))
}

/// `type.__call__(cls, *args, **kwargs)` from the vectorcall arguments: for a class
/// whose `__new__` or `__init__` was replaced.
#[cold]
fn type_call(
    py: Python<'_>,
    cls: &Bound<'_, PyType>,
    all: &[*mut ffi::PyObject],
    n: usize,
    names: Option<&Bound<'_, PyTuple>>,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: each item of `all` is a live object borrowed for the call.
    let item = |p: *mut ffi::PyObject| unsafe { pyo3::Borrowed::from_ptr(py, p) }.to_owned();
    let args = PyTuple::new(py, all[..n].iter().map(|&p| item(p)))?;
    // No keywords: no dict, as CPython passes them (`__new__` tells a call with no
    // arguments at all, `wrap`'s, by that).
    let kwargs = match names {
        Some(names) if !names.is_empty() => {
            let kwargs = pyo3::types::PyDict::new(py);
            for (name, &value) in names.iter().zip(&all[n..]) {
                kwargs.set_item(name, item(value))?;
            }
            Some(kwargs)
        }
        _ => None,
    };
    let kwargs_ptr = kwargs.as_ref().map_or(std::ptr::null_mut(), |k| k.as_ptr());
    // SAFETY: `PyType_Type` is CPython's static `type`; its `tp_call` is
    // `type.__call__`, called attached with a class, a tuple and a dict or null.
    let made = unsafe {
        let call = (*std::ptr::addr_of!(ffi::PyType_Type))
            .tp_call
            .ok_or_else(|| PyTypeError::new_err("type has no __call__"))?;
        call(cls.as_ptr(), args.as_ptr(), kwargs_ptr)
    };
    if made.is_null() {
        Err(PyErr::fetch(py))
    } else {
        Ok(made)
    }
}
