//! Libraries of tvm-ffi packed functions: kernels exported as `__tvm_ffi_<name>` with
//! the signature `int f(void *self, const TVMFFIAny *args, int32_t num_args,
//! TVMFFIAny *ret)`, as tvm-ffi's `TVM_FFI_DLL_EXPORT_TYPED_FUNC` makes them.
//!
//! For the plain kinds (None, int, bool, float, opaque pointer, data type, device,
//! `DLTensor*`, strings) tvm-ffi's 16-byte `TVMFFIAny` is ours, bit for bit, with the
//! same type indices. Objects are not interchangeable (tvm-ffi's object header is 24
//! bytes, ours 16): no object of ours is handed over as if it were tvm-ffi's, and no
//! foreign object is read through our header. What crosses is converted, through
//! tvm-ffi's own C API, resolved from the library's handle (`dlsym` on a library
//! handle searches its dependencies, so a library built with tvm-ffi finds the
//! `libtvm_ffi.so` it links):
//!
//! | what | into a kernel | out of a kernel |
//! | --- | --- | --- |
//! | int, float, bool, None, data type, device, opaque pointer | as they are | as they are |
//! | string | `const char*` (borrowed from our string object, copied from a borrowed `&str`); with a NUL inside, a tvm-ffi `String` made for the call | inline strings, and `ffi.String` objects copied into ours |
//! | bytes | `TVMFFIByteArray*`, borrowed | inline bytes and `ffi.Bytes` copied into our `Bytes` |
//! | tensor | an NDArray's `DLTensor*` (the writing rule below) | an `ffi.Tensor` imported without copying (`TVMFFITensorToDLPackVersioned`, then [`NDArray::from_dlpack_versioned`](object_containers::NDArray::from_dlpack_versioned)) |
//! | shape | a tvm-ffi `Shape` made by its global `ffi.Shape` | our [`Shape`](object_containers::Shape) |
//! | function | ours wrapped by `TVMFFIFunctionCreate`: its `safe_call` converts both ways and raises our error (kind, message, frames) with `TVMFFIErrorSetRaisedFromCStr` | a [`Function`] calling it with `TVMFFIFunctionCall` |
//! | other objects | refused, naming the type | released, and an error naming its type key (`TVMFFIGetTypeInfo`) |
//!
//! Every foreign reference taken is released with `TVMFFIObjectDecRef` (a result at
//! once, or when the value that holds it goes; what a call made for its arguments
//! after the call). A failed call's error is tvm-ffi's own, moved out of its slot with
//! `TVMFFIErrorMoveFromRaised`: its kind ([`ErrorKind::from_name`], so a `ValueError`
//! stays a [`ErrorKind::ValueError`], and C's `obj_error_kind` and Python's exception
//! class follow), its message, and the foreign backtrace as frames.
//!
//! A library written to the convention without tvm-ffi (no `TVMFFIErrorMoveFromRaised`
//! among its symbols and their dependencies) is called with plain values only: a
//! nonzero return is an error naming the function and the code; an object it returns
//! cannot be released, and is an error that says it is leaked.
//!
//! # Discovery
//!
//! [`TvmFfiLibrary::function_names`] lists the functions from the library's ELF dynamic
//! symbol table (every `__tvm_ffi_<name>`, without tvm-ffi's own `__tvm_ffi__…`);
//! [`TvmFfiLibrary::module_all`] makes a [`Module`] of all of them, which is what
//! [`load_module`](crate::load_module) (`Module::load`, C's `obj_module_load`) returns
//! for such a library. A library built with `TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1`
//! also says each function's signature ([`TvmFfiLibrary::metadata`], tvm-ffi's JSON
//! `{"type_schema": …}`) and, where given, its documentation ([`TvmFfiLibrary::doc`]).
//!
//! # Tensors: who may write
//!
//! tvm-ffi kernels write their output arguments (destination-passing style), and the
//! convention cannot say which parameters those are. So a tensor parameter is assumed
//! written unless declared read-only, and the rule of [`NDArray::lend_mut`](object_containers::NDArray::lend_mut) decides
//! what may be passed there:
//!
//! - where the function may write, only an NDArray lent writable
//!   ([`NDArray::lend_mut`](object_containers::NDArray::lend_mut): the only handle, writable memory; while lent, Rust cannot
//!   read it) — never a shared NDArray that Rust code may be reading through a slice,
//!   never read-only memory, never a borrowed `DLTensor*`;
//! - where [`TvmFfiLibrary::function_reading`] declares the parameter read-only (an
//!   `unsafe` promise about the foreign code), any tensor.
//!
//! An NDArray a callback returns to a kernel becomes a tvm-ffi `Tensor`, which cannot
//! be read-only: only the only handle to writable memory is handed over.
//!
//! The library is never unloaded (tensors and functions it made may outlive every
//! handle to it).
//!
//! (Not compiled here: this crate's doctests would link a second build of its
//! dependencies that the tests' nested plugin builds leave in the target directory.
//! `tests/tvm_ffi.rs` runs exactly this against a destination-passing kernel.)
//!
//! ```ignore
//! use object_capi::tvm::TvmFfiLibrary;
//! use object_containers::{AnyView, NDArray};
//!
//! let lib = TvmFfiLibrary::open("libkernels.so").unwrap();
//! // SAFETY: the kernel reads its first argument and writes only its second.
//! let add_one = unsafe { lib.function_reading("add_one", &[0]) }.unwrap();
//! let x = NDArray::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
//! let mut y = NDArray::from_slice(&[3], &[0.0f32; 3]).unwrap();
//! {
//!     let out = y.lend_mut().unwrap();
//!     add_one.call(&[AnyView::from(&x), out.arg()]).unwrap();
//! }
//! assert_eq!(y.as_slice::<f32>().unwrap(), &[2.0, 3.0, 4.0]);
//! ```

mod callback;
mod convert;
mod runtime;
pub(crate) mod symbols;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use object_containers::{Function, Module};
use object_core::{Any, AnyView, Error, ErrorKind};

use self::convert::Held;
use self::runtime::{Foreign, Runtime, SafeCall};
use crate::types::ObjAny;

/// An opened library of tvm-ffi packed functions (never unloaded).
#[derive(Debug)]
pub struct TvmFfiLibrary {
    /// Never closed (`ManuallyDrop`): the functions made from it may outlive this value.
    lib: core::mem::ManuallyDrop<libloading::Library>,
    path: PathBuf,
    /// tvm-ffi's C API as the library sees it, if it links tvm-ffi.
    runtime: Option<&'static Runtime>,
    /// The discovered function names, read on first use.
    names: OnceLock<Result<Vec<std::string::String>, std::string::String>>,
}

fn tvm_error(message: impl Into<std::string::String>) -> Error {
    Error::new(ErrorKind::TvmFfiError, message)
}

impl TvmFfiLibrary {
    /// Opens the library and resolves tvm-ffi's C API from it (if it links tvm-ffi).
    ///
    /// # Errors
    ///
    /// A `TvmFfiError` if it cannot be opened.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        // SAFETY: loading a library runs its initializers; the caller trusts its code.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|e| tvm_error(format!("cannot open `{}`: {e}", path.display())))?;
        Ok(Self::from_library(lib, path))
    }

    /// A library already opened (by [`load_module`](crate::load_module)).
    pub(crate) fn from_library(lib: libloading::Library, path: PathBuf) -> Self {
        let runtime = Runtime::resolve(&lib);
        TvmFfiLibrary {
            lib: core::mem::ManuallyDrop::new(lib),
            path,
            runtime,
            names: OnceLock::new(),
        }
    }

    /// A library already opened, whose function names were already read.
    pub(crate) fn from_library_with_names(
        lib: libloading::Library,
        path: PathBuf,
        names: Vec<std::string::String>,
    ) -> Self {
        let this = Self::from_library(lib, path);
        let _ = this.names.set(Ok(names));
        this
    }

    /// The library's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the library links tvm-ffi (its C API was found through the library's
    /// handle): errors arrive with their kind, message and backtrace, and objects
    /// cross both ways. Without it only plain values do.
    pub fn has_tvm_ffi_runtime(&self) -> bool {
        self.runtime.is_some()
    }

    /// The names of the functions the library exports (`__tvm_ffi_<name>` in its
    /// dynamic symbol table, without tvm-ffi's own `__tvm_ffi__…` symbols), sorted.
    ///
    /// # Errors
    ///
    /// A `TvmFfiError` if the file cannot be read or its symbols cannot be parsed (it
    /// is not an ELF shared library).
    pub fn function_names(&self) -> Result<&[std::string::String], Error> {
        self.names
            .get_or_init(|| symbols::function_names(&self.path))
            .as_deref()
            .map_err(|e| tvm_error(e.clone()))
    }

    /// The packed function exported as `__tvm_ffi_<name>`, as a [`Function`]. Every
    /// tensor parameter is assumed written (see the module docs): pass tensors lent
    /// writable ([`NDArray::lend_mut`](object_containers::NDArray::lend_mut)), or declare the read-only ones with
    /// [`TvmFfiLibrary::function_reading`].
    ///
    /// # Errors
    ///
    /// A `TvmFfiError` if the library has no such symbol.
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        self.make_function(name, Arc::from([]))
    }

    /// [`TvmFfiLibrary::function`], with the tensor parameters at the positions
    /// `read_only` (0-based) declared read-only: any tensor may be passed there,
    /// shared or read-only ones included.
    ///
    /// # Errors
    ///
    /// A `TvmFfiError` if the library has no such symbol.
    ///
    /// # Safety
    ///
    /// The foreign function never writes the data of a tensor passed at one of these
    /// positions, nor keeps it after it returns: Rust code may be reading that memory
    /// through a shared borrow, or it may be read-only.
    pub unsafe fn function_reading(
        &self,
        name: &str,
        read_only: &[usize],
    ) -> Result<Function, Error> {
        self.make_function(name, Arc::from(read_only))
    }

    /// The symbol `<prefix><name>`, as a packed function.
    fn symbol(&self, prefix: &str, name: &str) -> Result<SafeCall, Error> {
        let symbol = format!("{prefix}{name}\0");
        // SAFETY: the symbol's type is the tvm-ffi convention's (the caller names a
        // function of that convention; nothing can check it).
        let f: SafeCall = *unsafe { self.lib.get::<SafeCall>(symbol.as_bytes()) }.map_err(|e| {
            tvm_error(format!(
                "`{}` has no `{prefix}{name}`: {e}",
                self.path.display()
            ))
        })?;
        Ok(f)
    }

    fn make_function(&self, name: &str, read_only: Arc<[usize]>) -> Result<Function, Error> {
        let f = self.symbol(symbols::PREFIX, name)?;
        let owned = name.to_owned();
        let rt = self.runtime;
        Ok(Function::from_packed_named(
            Some(name),
            move |args: &[AnyView<'_>]| {
                call_foreign(rt, Callee::Symbol(f), &owned, &read_only, args)
            },
        ))
    }

    /// What tvm-ffi's `__tvm_ffi__<kind>_<name>` getter returns, if the library has one.
    fn getter(&self, kind: &str, name: &str) -> Result<Option<std::string::String>, Error> {
        let prefix = format!("__tvm_ffi__{kind}_");
        let Ok(f) = self.symbol(&prefix, name) else {
            return Ok(None);
        };
        let label = format!("{prefix}{name}");
        let a = call_foreign(self.runtime, Callee::Symbol(f), &label, &[], &[])?;
        a.as_str().map(|s| Some(s.to_owned())).ok_or_else(|| {
            tvm_error(format!(
                "`{label}` returned a `{}`, not a string",
                a.type_key()
            ))
        })
    }

    /// The metadata tvm-ffi exports for the function `name` (`__tvm_ffi__metadata_<name>`,
    /// present when the library was built with `TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1`):
    /// a JSON object whose `type_schema` gives the signature. `None` if absent.
    ///
    /// # Errors
    ///
    /// The getter's error, or a `TvmFfiError` if it returns something other than a
    /// string.
    pub fn metadata(&self, name: &str) -> Result<Option<std::string::String>, Error> {
        self.getter("metadata", name)
    }

    /// The documentation of the function `name` (`__tvm_ffi__doc_<name>`, exported by
    /// `TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC` with metadata on). `None` if absent.
    ///
    /// # Errors
    ///
    /// As [`TvmFfiLibrary::metadata`].
    pub fn doc(&self, name: &str) -> Result<Option<std::string::String>, Error> {
        self.getter("doc", name)
    }

    /// A module of the named functions.
    ///
    /// # Errors
    ///
    /// As [`TvmFfiLibrary::function`].
    pub fn module(&self, module_name: &str, names: &[&str]) -> Result<Module, Error> {
        let mut b = Module::builder(module_name);
        for n in names {
            b = b.function(n, self.function(n)?);
        }
        Ok(b.build())
    }

    /// A module of every function the library exports ([`TvmFfiLibrary::function_names`]).
    ///
    /// # Errors
    ///
    /// As [`TvmFfiLibrary::function_names`] and [`TvmFfiLibrary::function`].
    pub fn module_all(&self, module_name: &str) -> Result<Module, Error> {
        let mut b = Module::builder(module_name);
        for n in self.function_names()? {
            b = b.function(n, self.function(n)?);
        }
        Ok(b.build())
    }
}

/// What a call goes to: an exported symbol, or a tvm-ffi function object.
#[derive(Clone, Copy)]
enum Callee<'a> {
    Symbol(SafeCall),
    Object(&'a Foreign),
}

/// How many arguments are converted without allocating.
const INLINE_ARGS: usize = 8;

/// Whether a value crosses as it is: a plain kind, the same 16 bytes on both sides.
#[inline(always)]
fn is_plain(a: &AnyView<'_>) -> bool {
    use object_core::type_index as ti;
    matches!(
        a.type_index(),
        ti::NONE | ti::INT | ti::BOOL | ti::FLOAT | ti::OPAQUE_PTR | ti::DATA_TYPE | ti::DEVICE
    )
}

/// Converts the arguments, calls, takes the error or converts the result; releases
/// what the arguments held.
fn call_foreign(
    rt: Option<&'static Runtime>,
    callee: Callee<'_>,
    name: &str,
    read_only: &[usize],
    args: &[AnyView<'_>],
) -> Result<Any, Error> {
    use object_core::type_index as ti;
    // The common call: a few plain values in, a plain value out. Nothing to convert,
    // hold or release.
    if let Callee::Symbol(f) = callee {
        if args.len() <= INLINE_ARGS && args.iter().all(is_plain) {
            let mut c_args = [ObjAny::NONE; INLINE_ARGS];
            for (a, slot) in args.iter().zip(c_args.iter_mut()) {
                *slot = crate::fence::view_to_c(*a);
                slot.small = 0;
            }
            let mut ret = ObjAny::NONE;
            // SAFETY: the convention's contract: `n` plain arguments, a None slot.
            let rc = unsafe {
                f(
                    core::ptr::null_mut(),
                    c_args.as_ptr(),
                    args.len() as i32,
                    &mut ret,
                )
            };
            if rc == 0 {
                match ret.type_index {
                    // SAFETY: the member the kind selects, plain data.
                    ti::INT => return Ok(Any::from(unsafe { ret.v.v_int64 })),
                    // SAFETY: as above.
                    ti::FLOAT => return Ok(Any::from(unsafe { ret.v.v_float64 })),
                    _ => {}
                }
            }
            return finish(rt, callee, name, rc, ret);
        }
    }
    let mut held = Held::default();
    let mut inline = [ObjAny::NONE; INLINE_ARGS];
    let mut spilled: Vec<ObjAny> = Vec::new();
    let c_args: &mut [ObjAny] = if args.len() <= INLINE_ARGS {
        &mut inline[..args.len()]
    } else {
        spilled.resize(args.len(), ObjAny::NONE);
        &mut spilled
    };
    for (i, (a, slot)) in args.iter().zip(c_args.iter_mut()).enumerate() {
        *slot = convert::argument(rt, name, i, !read_only.contains(&i), *a, &mut held)?;
    }
    let n = i32::try_from(c_args.len()).map_err(|_| tvm_error("too many arguments"))?;
    let mut ret = ObjAny::NONE;
    let rc = match callee {
        // SAFETY: the convention's contract: `n` arguments valid for the call (what
        // they borrow is kept by the caller and `held`), a None return slot.
        Callee::Symbol(f) => unsafe { f(core::ptr::null_mut(), c_args.as_ptr(), n, &mut ret) },
        Callee::Object(obj) => {
            let rt = obj.runtime();
            // SAFETY: `c_api.h`: a live function, `n` arguments as above, a None slot.
            unsafe { (rt.function_call)(obj.as_ptr(), c_args.as_mut_ptr(), n, &mut ret) }
        }
    };
    drop(held);
    finish(rt, callee, name, rc, ret)
}

/// After the call: the error it raised, or its result converted (and released).
fn finish(
    rt: Option<&'static Runtime>,
    callee: Callee<'_>,
    name: &str,
    rc: i32,
    ret: ObjAny,
) -> Result<Any, Error> {
    let rt = match callee {
        Callee::Object(obj) => Some(obj.runtime()),
        Callee::Symbol(_) => rt,
    };
    if rc != 0 {
        return Err(match rt.and_then(Runtime::take_raised) {
            Some(e) => e.with_frame(format!("tvm-ffi function `{name}`")),
            None => tvm_error(format!("tvm-ffi function `{name}` failed (returned {rc})")),
        });
    }
    convert::result(rt, name, ret)
}
