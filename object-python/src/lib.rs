//! # object-python
//!
//! The Python extension of the unified object protocol: a pyo3 module, `object_python._native`,
//! wrapped by the pure-Python package `object_python` (`python/object_python/`), built
//! with maturin (`pip install ./object-python`).
//!
//! | module | holds |
//! | --- | --- |
//! | `object` | the `Object` base class, one Python class per registered type (created lazily, bases = the parent's class), reflected fields as descriptors, keyword construction, identity `==`, pickling, a `__class__` that cannot be assigned |
//! | `containers` | `Array` and `Shape` (read-only sequences) and `Map` (a mapping) |
//! | `pytype` | types defined in Python (`@py_class`): registered with a run-time field table, the class body made the type's class; methods (the process's method table: registration, look-up, `Object.__getattr__`), `replace`, positional construction of such types |
//! | `enums` | enum fields (`#[derive(ObjectEnum)]`) as members of an `enum.IntEnum` class per enum, made once; `enum_class(key)`, `enum_keys()` |
//! | `structural` | `structural_equal`, `structural_hash`, `first_mismatch` |
//! | `function` | `Function` called from Python, Python callables as `Function`s, the global registry |
//! | `signature` | keyword calls (bound by the function's signature), `inspect.signature(f)`, a Python callable's signature |
//! | `module` | `load_module` (plugins and tvm-ffi libraries), `ModuleBase` (functions by attribute, by name, listing, imports), `runtime()`; joining the process's runtime at import |
//! | `vectorcall` | the vectorcall entries of `Function` objects and of object classes: arguments read from CPython's array, no tuple, no keyword dict |
//! | `field_slot` | `Field`'s `tp_descr_get`: a field read without pyo3's trampoline; the object classes' `tp_getattro`: the generic read, then (only when it finds nothing) the method table |
//! | `attached_entry` | how the construction entry runs without pyo3's trampoline (the `Python` token assumed, panics caught), as `field_slot` does |
//! | `convert` | Python values ↔ `Any` (nested lists, tuples and dicts walked with a stack, not by recursion) |
//! | `error` | `Error` ↔ Python exceptions, both ways, the original exception carried by the `Error` itself (its payload) |
//! | `tensor`, `dlpack` | `NDArray`: `__dlpack__`, `__dlpack_device__`, `from_dlpack` (zero-copy both ways) |
//! | `numpy_struct` | the fast import of an exact `numpy.ndarray`: its C struct read in place, no `__dlpack__` call |
//! | `values` | `DataType`, `Device` |
//! | `pytype_testing` | only with the `testing` feature: the Rust methods, pass and globals `tests/test_pytypes.py` and `tests/test_methods.py` call |
//! | `testing` | only with the `testing` feature (off in the wheel a user installs, on in `scripts/python.sh`): the globals the tests and benchmarks call (`testing.*`, `tour.eval`, `tour.print`), the plain pyo3 functions measured beside ours; `_native._testing` tells whether it is in |
//!
//! Nothing in the workspace links this crate: it is a `cdylib` only, built with pyo3's
//! `extension-module` feature, so `cargo build`/`cargo test --workspace` never link
//! libpython.
//!
//! # Unsafe code
//!
//! `unsafe_code` is denied here and allowed only in `dlpack`, which hands DLPack
//! managed tensors to and from `PyCapsule`s through the C API, in `numpy_struct`,
//! which reads a NumPy array's C struct, and in `vectorcall`, `field_slot` and
//! `attached_entry`, the C entry points CPython calls a `Function`, a class and a field
//! descriptor through (all three left out of the `abi3` build).

#![deny(unsafe_code)]

#[cfg(not(feature = "abi3"))]
#[allow(
    unsafe_code,
    reason = "entry points CPython calls attached, run without pyo3's trampoline"
)]
mod attached_entry;
mod containers;
mod convert;
#[allow(
    unsafe_code,
    reason = "DLPack capsules: raw PyCapsule C API calls, the managed tensors they carry"
)]
mod dlpack;
mod enums;
mod error;
#[cfg(not(feature = "abi3"))]
#[allow(
    unsafe_code,
    reason = "the field descriptor's `tp_descr_get` and the object classes' `tp_getattro`: C slots CPython calls attached, without pyo3's trampoline"
)]
mod field_slot;
mod function;
mod module;
#[allow(
    unsafe_code,
    reason = "NumPy arrays: reading the C struct of an exact `numpy.ndarray` in place"
)]
mod numpy_struct;
mod object;
mod pytype;
#[cfg(feature = "testing")]
mod pytype_testing;
mod signature;
mod structural;
mod tensor;
#[cfg(feature = "testing")]
mod testing;
mod values;
#[cfg(not(feature = "abi3"))]
#[allow(
    unsafe_code,
    reason = "vectorcall: a C entry point reading CPython's argument array, and the two fields of a type object that name it"
)]
mod vectorcall;

// The tour's types (`tour.Var`, `tour.Add`, …) ship with the extension: linking the
// crate is what registers them (nothing here names them).
use object_examples as _;
use pyo3::prelude::*;

/// The native module, `object_python._native`.
///
/// `gil_used = true`: on a free-threaded CPython (3.13t, 3.14t) importing it turns the
/// GIL back on. The module has not been audited or tested without the GIL (its
/// vectorcall entries write type objects, its caches assume one thread at a time in
/// Python code), so it does not claim to run without it.
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // First: the process's one runtime (this copy's registry, or the one another copy
    // in the process runs), decided before any type is touched.
    module::join_process_runtime()?;
    object::add_to_module(m)?;
    containers::add_to_module(m)?;
    function::add_to_module(m)?;
    module::add_to_module(m)?;
    tensor::add_to_module(m)?;
    values::add_to_module(m)?;
    error::add_to_module(m)?;
    structural::add_to_module(m)?;
    enums::add_to_module(m)?;
    pytype::add_to_module(m)?;
    #[cfg(feature = "testing")]
    testing::add_to_module(m)?;
    #[cfg(feature = "testing")]
    pytype_testing::register().map_err(|e| error::error_to_pyerr(m.py(), e))?;
    m.add("_testing", cfg!(feature = "testing"))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
