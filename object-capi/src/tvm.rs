//! Libraries written to the tvm-ffi convention: packed functions exported as
//! `__tvm_ffi_<name>` with the signature
//! `int f(void *self, const TVMFFIAny *args, int32_t num_args, TVMFFIAny *ret)`.
//!
//! For the plain kinds (None, int, bool, float, opaque pointer, data type, device,
//! `DLTensor*`, C string) tvm-ffi's 16-byte `TVMFFIAny` is ours, bit for bit, with the
//! same type indices, so these calls need no tvm-ffi runtime. Objects are not
//! interchangeable (tvm-ffi's object header is 24 bytes): an `NDArray` argument is
//! passed as its embedded `DLTensor*` (the RFC's convention), any other object is
//! refused, and a foreign function that returns an object is an error that says so
//! (its reference cannot be released here, so it is leaked). A nonzero return is an
//! error naming the function. The library is never unloaded.
//!
//! # Tensors: who may write
//!
//! tvm-ffi kernels write their output arguments (destination-passing style), and the
//! convention cannot say which parameters those are. So a tensor parameter is assumed
//! written unless declared read-only, and the rule of [`NDArray::lend_mut`] decides
//! what may be passed there:
//!
//! - where the function may write, only an NDArray lent writable
//!   ([`NDArray::lend_mut`]: the only handle, writable memory; while lent, Rust cannot
//!   read it) — never a shared NDArray that Rust code may be reading through a slice,
//!   never read-only memory, never a borrowed `DLTensor*`;
//! - where [`TvmFfiLibrary::function_reading`] declares the parameter read-only (an
//!   `unsafe` promise about the foreign code), any tensor.
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

use core::ffi::{c_char, c_void};
use std::ffi::CString;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use object_containers::{ForeignWrite, Function, Module, NDArray, NDArrayObj};
use object_core::{type_index as ti, Any, AnyView, DataType, Device, Error, ErrorKind};

use crate::fence::view_to_c;
use crate::types::ObjAny;

/// A tvm-ffi packed function: `(self, args, num_args, ret) -> int`.
type TvmFfiFunction = unsafe extern "C" fn(*mut c_void, *const ObjAny, i32, *mut ObjAny) -> i32;

/// An opened tvm-ffi-convention library (never unloaded).
#[derive(Debug)]
pub struct TvmFfiLibrary {
    /// Never closed (`ManuallyDrop`): the functions made from it may outlive this value.
    lib: core::mem::ManuallyDrop<libloading::Library>,
    path: PathBuf,
}

fn tvm_error(message: impl Into<std::string::String>) -> Error {
    Error::new(ErrorKind::TvmFfiError, message)
}

impl TvmFfiLibrary {
    /// Opens the library.
    ///
    /// # Errors
    ///
    /// A `TvmFfiError` if it cannot be opened.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        // SAFETY: loading a library runs its initializers; the caller trusts its code.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|e| tvm_error(format!("cannot open `{}`: {e}", path.display())))?;
        Ok(TvmFfiLibrary {
            lib: core::mem::ManuallyDrop::new(lib),
            path,
        })
    }

    /// The packed function exported as `__tvm_ffi_<name>`, as a [`Function`]. Every
    /// tensor parameter is assumed written (see the module docs): pass tensors lent
    /// writable ([`NDArray::lend_mut`]), or declare the read-only ones with
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

    fn make_function(&self, name: &str, read_only: Arc<[usize]>) -> Result<Function, Error> {
        let symbol = format!("__tvm_ffi_{name}\0");
        // SAFETY: the symbol's type is the tvm-ffi convention's (the caller names a
        // function of that convention; nothing can check it).
        let f: TvmFfiFunction = *unsafe { self.lib.get::<TvmFfiFunction>(symbol.as_bytes()) }
            .map_err(|e| {
                tvm_error(format!(
                    "`{}` has no `__tvm_ffi_{name}`: {e}",
                    self.path.display()
                ))
            })?;
        let owned = name.to_owned();
        Ok(Function::from_packed_named(
            Some(name),
            move |args: &[AnyView<'_>]| call_foreign(f, &owned, &read_only, args),
        ))
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
}

/// Converts the arguments, calls, converts the result.
fn call_foreign(
    f: TvmFfiFunction,
    name: &str,
    read_only: &[usize],
    args: &[AnyView<'_>],
) -> Result<Any, Error> {
    let mut strings: Vec<CString> = Vec::new();
    // The lent tensors the callee may write, recorded as written until it returns.
    let mut writes: Vec<ForeignWrite> = Vec::new();
    let may_write = |i: usize| !read_only.contains(&i);
    let mut c_args: Vec<ObjAny> = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let c = match a.type_index() {
            ti::DL_TENSOR_PTR if may_write(i) => {
                return Err(tvm_error(format!(
                    "argument {i} of `{name}`: a borrowed DLTensor* cannot be lent writable, \
                     and a tvm-ffi function may write its tensor arguments: pass an NDArray \
                     lent with `NDArray::lend_mut`, or declare the parameter read-only \
                     (`TvmFfiLibrary::function_reading`)"
                )))
            }
            ti::NONE
            | ti::INT
            | ti::BOOL
            | ti::FLOAT
            | ti::OPAQUE_PTR
            | ti::DATA_TYPE
            | ti::DEVICE
            | ti::DL_TENSOR_PTR => view_to_c(*a),
            _ if a.as_str().is_some() => {
                let s = a.as_str().unwrap_or_default();
                let c = CString::new(s).map_err(|_| {
                    tvm_error(format!(
                        "argument {i} of `{name}`: a string with a NUL byte"
                    ))
                })?;
                let p: *const c_char = c.as_ptr();
                strings.push(c);
                let mut v = ObjAny::NONE;
                v.type_index = ti::RAW_STR;
                v.v.v_c_str = p;
                v
            }
            _ => match a.as_object_of::<NDArrayObj>() {
                Some(arr) => {
                    let arr = NDArray::from_object_ptr(arr.clone());
                    if may_write(i) {
                        let write = arr.foreign_write().ok_or_else(|| {
                            tvm_error(format!(
                                "argument {i} of `{name}`: a tvm-ffi function may write its \
                                 tensor arguments, and this NDArray is {}: lend it writable \
                                 with `NDArray::lend_mut`, or declare the parameter read-only \
                                 (`TvmFfiLibrary::function_reading`)",
                                if arr.is_read_only() {
                                    "read-only"
                                } else {
                                    "shared (Rust may be reading it)"
                                }
                            ))
                        })?;
                        writes.push(write);
                    }
                    let mut v = ObjAny::NONE;
                    v.type_index = ti::DL_TENSOR_PTR;
                    // The tensor lives in the object, which the caller's argument keeps
                    // alive for the call.
                    v.v.v_ptr = arr.as_dl_tensor_ptr().cast();
                    v
                }
                None => {
                    return Err(tvm_error(format!(
                        "argument {i} of `{name}`: a `{}` cannot be passed to a tvm-ffi function \
                         (only plain values, strings, DLTensor* and NDArray)",
                        a.type_key()
                    )))
                }
            },
        };
        c_args.push(c);
    }
    let n = i32::try_from(c_args.len()).map_err(|_| tvm_error("too many arguments"))?;
    let mut ret = ObjAny::NONE;
    // SAFETY: the convention's contract: `n` arguments valid for the call (the views'
    // objects are kept by the caller, the C strings by `strings`), a None return slot.
    let rc = unsafe { f(core::ptr::null_mut(), c_args.as_ptr(), n, &mut ret) };
    drop(strings);
    drop(writes);
    if rc != 0 {
        return Err(tvm_error(format!(
            "tvm-ffi function `{name}` failed (returned {rc})"
        )));
    }
    from_foreign(name, ret)
}

fn from_foreign(name: &str, r: ObjAny) -> Result<Any, Error> {
    // SAFETY (for the union reads below): each arm reads the member its kind selects;
    // every member is plain data.
    Ok(match r.type_index {
        ti::NONE => Any::NONE,
        // SAFETY: see above.
        ti::INT => Any::from(unsafe { r.v.v_int64 }),
        // SAFETY: see above.
        ti::BOOL => Any::from(unsafe { r.v.v_int64 } != 0),
        // SAFETY: see above.
        ti::FLOAT => Any::from(unsafe { r.v.v_float64 }),
        // SAFETY: see above.
        ti::OPAQUE_PTR => Any::opaque_ptr(unsafe { r.v.v_ptr }),
        ti::DATA_TYPE => {
            // SAFETY: see above.
            let d = unsafe { r.v.v_dtype };
            Any::from(DataType::new(d.code, d.bits, d.lanes))
        }
        ti::DEVICE => {
            // SAFETY: see above.
            let d = unsafe { r.v.v_device };
            Any::from(Device::new(d.device_type, d.device_id))
        }
        ti::SMALL_STR if r.small <= 7 => {
            // SAFETY: see above.
            let b = unsafe { r.v.v_bytes };
            let s = core::str::from_utf8(&b[..r.small as usize]).map_err(|e| {
                tvm_error(format!("`{name}` returned a string that is not UTF-8: {e}"))
            })?;
            Any::from(s)
        }
        index if index >= ti::STATIC_OBJECT_BEGIN => {
            return Err(tvm_error(format!(
                "tvm-ffi function `{name}` returned an object (type index {index}): tvm-ffi \
                 objects cannot cross into this runtime (their header is 24 bytes, ours 16), \
                 and its reference is leaked"
            )))
        }
        other => {
            return Err(tvm_error(format!(
                "tvm-ffi function `{name}` returned a value of kind {other}, which has no \
                 owned form here"
            )))
        }
    })
}
