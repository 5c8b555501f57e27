//! tvm-ffi's own C API, resolved from a kernel library's handle (its `libtvm_ffi`), and
//! the foreign objects it hands out: owned references released with
//! `TVMFFIObjectDecRef`, read only through tvm-ffi's 24-byte header and the cells its
//! `c_api.h` places right after it.

use core::ffi::{c_char, c_void};
use core::mem::{offset_of, size_of};
use core::ptr::NonNull;
use std::sync::{Mutex, OnceLock};

use object_containers::dlpack::DLManagedTensorVersioned;
use object_core::{type_index as ti, Error, ErrorKind};

use crate::types::ObjAny;

/// tvm-ffi's object header (`TVMFFIObject`): a combined strong/weak count, the type
/// index, padding and the deleter: 24 bytes, where ours has 16. Only `type_index` is
/// read here; counting goes through `TVMFFIObjectIncRef`/`DecRef`.
#[repr(C)]
pub(super) struct FfiObject {
    combined_ref_count: u64,
    pub(super) type_index: i32,
    padding: u32,
    deleter: *mut c_void,
}

/// The size of tvm-ffi's header: every cell (`TVMFFIErrorCell`, the string and bytes
/// `TVMFFIByteArray`, `TVMFFIShapeCell`, a tensor's `DLTensor`) starts there.
pub(super) const FFI_HEADER_SIZE: usize = 24;
const _: () = assert!(size_of::<FfiObject>() == FFI_HEADER_SIZE);
const _: () = assert!(offset_of!(FfiObject, type_index) == 8);

/// `TVMFFIByteArray`: a pointer and a length.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct ByteArray {
    pub(super) data: *const c_char,
    pub(super) size: usize,
}

impl ByteArray {
    /// A byte array over `b` (valid while `b` is).
    pub(super) fn of(b: &[u8]) -> ByteArray {
        ByteArray {
            data: b.as_ptr().cast(),
            size: b.len(),
        }
    }

    /// The bytes.
    ///
    /// # Safety
    ///
    /// `data` points to `size` readable bytes (or `size` is 0) that outlive `'a`.
    pub(super) unsafe fn bytes<'a>(self) -> &'a [u8] {
        if self.size == 0 || self.data.is_null() {
            return &[];
        }
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts(self.data.cast(), self.size) }
    }
}

/// The first three fields of `TVMFFIErrorCell` (kind, message, backtrace), after the
/// header of an `ffi.Error`.
#[repr(C)]
struct ErrorCell {
    kind: ByteArray,
    message: ByteArray,
    backtrace: ByteArray,
}

/// `TVMFFIShapeCell`, after the header of an `ffi.Shape`.
#[repr(C)]
struct ShapeCell {
    data: *const i64,
    size: usize,
}

/// The prefix of `TVMFFITypeInfo` read here (the index, the depth, the key).
#[repr(C)]
pub(super) struct TypeInfo {
    type_index: i32,
    type_depth: i32,
    type_key: ByteArray,
}

/// At most this many frames of a foreign backtrace are kept (a backtrace without the
/// library's entry in it is the whole stack).
const MAX_FOREIGN_FRAMES: usize = 64;

/// `TVMFFISafeCallType`: the packed-call signature of exported symbols and of the
/// `safe_call` of a function made with `TVMFFIFunctionCreate`.
pub(super) type SafeCall =
    unsafe extern "C" fn(*mut c_void, *const ObjAny, i32, *mut ObjAny) -> i32;

/// The functions of tvm-ffi's C API used here, resolved from one kernel library.
/// One per `libtvm_ffi` loaded (libraries sharing one share it), kept for the process
/// (libraries are never unloaded).
pub(super) struct Runtime {
    pub(super) error_move_from_raised: unsafe extern "C" fn(*mut *mut c_void),
    pub(super) error_set_raised_from_cstr: unsafe extern "C" fn(*const c_char, *const c_char),
    pub(super) inc_ref: unsafe extern "C" fn(*mut c_void) -> i32,
    pub(super) dec_ref: unsafe extern "C" fn(*mut c_void) -> i32,
    pub(super) get_type_info: unsafe extern "C" fn(i32) -> *const TypeInfo,
    pub(super) tensor_to_dlpack_versioned:
        unsafe extern "C" fn(*mut c_void, *mut *mut DLManagedTensorVersioned) -> i32,
    pub(super) tensor_from_dlpack_versioned:
        unsafe extern "C" fn(*mut DLManagedTensorVersioned, i32, i32, *mut *mut c_void) -> i32,
    pub(super) string_from_byte_array: unsafe extern "C" fn(*const ByteArray, *mut ObjAny) -> i32,
    pub(super) bytes_from_byte_array: unsafe extern "C" fn(*const ByteArray, *mut ObjAny) -> i32,
    pub(super) function_create: unsafe extern "C" fn(
        *mut c_void,
        SafeCall,
        Option<unsafe extern "C" fn(*mut c_void)>,
        *mut *mut c_void,
    ) -> i32,
    pub(super) function_call:
        unsafe extern "C" fn(*mut c_void, *mut ObjAny, i32, *mut ObjAny) -> i32,
    pub(super) function_get_global: unsafe extern "C" fn(*const ByteArray, *mut *mut c_void) -> i32,
    /// The global `ffi.Shape` (tvm-ffi's Shape constructor), looked up on first use.
    shape_constructor: OnceLock<Option<Foreign>>,
}

impl core::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Runtime")
            .field("dec_ref", &(self.dec_ref as *const c_void))
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// tvm-ffi's C API as the library `lib` sees it (`dlsym` on a library handle
    /// searches the library and then its dependencies, so a kernel library linking
    /// `libtvm_ffi.so` finds it there), or `None` when any function is missing: a
    /// library written to the convention without tvm-ffi (today's plain calls).
    pub(super) fn resolve(lib: &libloading::Library) -> Option<&'static Runtime> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: each symbol is declared with the type `c_api.h` gives the
                // function of that name.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.ok()?
            };
        }
        let rt = Runtime {
            error_move_from_raised: sym!("TVMFFIErrorMoveFromRaised"),
            error_set_raised_from_cstr: sym!("TVMFFIErrorSetRaisedFromCStr"),
            inc_ref: sym!("TVMFFIObjectIncRef"),
            dec_ref: sym!("TVMFFIObjectDecRef"),
            get_type_info: sym!("TVMFFIGetTypeInfo"),
            tensor_to_dlpack_versioned: sym!("TVMFFITensorToDLPackVersioned"),
            tensor_from_dlpack_versioned: sym!("TVMFFITensorFromDLPackVersioned"),
            string_from_byte_array: sym!("TVMFFIStringFromByteArray"),
            bytes_from_byte_array: sym!("TVMFFIBytesFromByteArray"),
            function_create: sym!("TVMFFIFunctionCreate"),
            function_call: sym!("TVMFFIFunctionCall"),
            function_get_global: sym!("TVMFFIFunctionGetGlobal"),
            shape_constructor: OnceLock::new(),
        };
        // One per libtvm_ffi: a second library of the same runtime reuses the first's.
        static KNOWN: Mutex<Vec<&'static Runtime>> = Mutex::new(Vec::new());
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = known
            .iter()
            .find(|r| core::ptr::fn_addr_eq(r.dec_ref, rt.dec_ref))
        {
            return Some(r);
        }
        let rt: &'static Runtime = Box::leak(Box::new(rt));
        known.push(rt);
        Some(rt)
    }

    /// The error the last failed tvm-ffi call raised on this thread, moved out of
    /// tvm-ffi's slot (`TVMFFIErrorMoveFromRaised`) as our [`Error`]: its kind (a
    /// well-known name becomes its [`ErrorKind`] variant), its message, and the foreign
    /// backtrace as frames (innermost first, up to the library's entry). The foreign error is released. `None`
    /// when nothing was raised.
    pub(super) fn take_raised(&'static self) -> Option<Error> {
        let mut h: *mut c_void = core::ptr::null_mut();
        // SAFETY: `c_api.h`: writes the raised error (one reference, or null) to `h`.
        unsafe { (self.error_move_from_raised)(&mut h) };
        // SAFETY: an owned reference to a live object, or null.
        let err = unsafe { Foreign::from_owned(self, h) }?;
        if err.type_index() != ti::ERROR as i32 {
            return Some(Error::new(
                ErrorKind::TvmFfiError,
                format!("tvm-ffi raised a `{}`, not an error object", err.type_key()),
            ));
        }
        // SAFETY: an `ffi.Error` has a `TVMFFIErrorCell` after its header; its byte
        // arrays point into the object, alive while `err` holds it.
        let (kind, message, backtrace) = unsafe {
            let cell = &*err.cell::<ErrorCell>();
            (
                std::string::String::from_utf8_lossy(cell.kind.bytes()).into_owned(),
                std::string::String::from_utf8_lossy(cell.message.bytes()).into_owned(),
                std::string::String::from_utf8_lossy(cell.backtrace.bytes()).into_owned(),
            )
        };
        drop(err);
        let kind = if kind.is_empty() {
            ErrorKind::TvmFfiError
        } else {
            ErrorKind::from_name(&kind)
        };
        let mut e = Error::new(kind, message);
        // tvm-ffi writes its backtrace innermost call first, one frame per line
        // (`File "…", line N, in f`), through the whole stack of the thread: the frames
        // up to the library's exported entry (`__tvm_ffi_<name>`) are the kernel's, the
        // rest are the caller's own, which its frames already name.
        let mut kernel_frames = 0usize;
        for frame in backtrace
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Traceback"))
        {
            e = e.with_frame(format!("tvm-ffi: {frame}"));
            kernel_frames += 1;
            if frame.contains(", in __tvm_ffi_") || kernel_frames == MAX_FOREIGN_FRAMES {
                break;
            }
        }
        Some(e)
    }

    /// Raises `e` in tvm-ffi's slot (`TVMFFIErrorSetRaisedFromCStr`) with its kind and
    /// its message, the frames it crossed appended to the message.
    pub(super) fn raise(&self, e: &Error) {
        let mut message = e.message().to_owned();
        for frame in e.frames() {
            message.push_str("\n  in ");
            message.push_str(frame);
        }
        let c = |s: &str| std::ffi::CString::new(s.replace('\0', "\\0")).unwrap_or_default();
        let (kind, message) = (c(e.kind().as_str()), c(&message));
        // SAFETY: two NUL-terminated strings, copied by tvm-ffi.
        unsafe { (self.error_set_raised_from_cstr)(kind.as_ptr(), message.as_ptr()) };
    }

    /// The error of a failed call of tvm-ffi's C API: the one it raised, or one naming
    /// the call.
    pub(super) fn failure(&'static self, what: &str, rc: i32) -> Error {
        self.take_raised().unwrap_or_else(|| {
            Error::new(
                ErrorKind::TvmFfiError,
                format!("{what} failed (returned {rc}) without raising an error"),
            )
        })
    }

    /// A tvm-ffi `Shape` of `dims`, made by tvm-ffi's global `ffi.Shape`.
    pub(super) fn make_shape(&'static self, dims: &[i64]) -> Result<Foreign, Error> {
        let ctor = self.shape_constructor.get_or_init(|| {
            let name = ByteArray::of(b"ffi.Shape");
            let mut f: *mut c_void = core::ptr::null_mut();
            // SAFETY: `c_api.h`: a name, a slot for one reference (null if absent).
            let rc = unsafe { (self.function_get_global)(&name, &mut f) };
            if rc != 0 {
                drop(self.take_raised());
                return None;
            }
            // SAFETY: an owned reference to the function, or null.
            unsafe { Foreign::from_owned(self, f) }
        });
        let Some(ctor) = ctor else {
            return Err(Error::new(
                ErrorKind::TvmFfiError,
                "this tvm-ffi has no global `ffi.Shape` to make a Shape with",
            ));
        };
        let mut args: Vec<ObjAny> = dims
            .iter()
            .map(|&d| {
                let mut v = ObjAny::NONE;
                v.type_index = ti::INT;
                v.v.v_int64 = d;
                v
            })
            .collect();
        let n = i32::try_from(args.len())
            .map_err(|_| Error::value_error("a shape with too many dimensions"))?;
        let mut ret = ObjAny::NONE;
        // SAFETY: a live function, `n` plain arguments, a None result slot.
        let rc = unsafe { (self.function_call)(ctor.as_ptr(), args.as_mut_ptr(), n, &mut ret) };
        if rc != 0 {
            return Err(self.failure("`ffi.Shape`", rc));
        }
        // SAFETY: the result is owned; an object kind carries one reference.
        let obj = unsafe { self.owned_object(ret) };
        match obj {
            Some(o) if o.type_index() == ti::SHAPE as i32 => Ok(o),
            other => Err(Error::new(
                ErrorKind::TvmFfiError,
                format!(
                    "`ffi.Shape` returned {} instead of a Shape",
                    other.map_or_else(|| format!("kind {}", ret.type_index), |o| o.type_key())
                ),
            )),
        }
    }

    /// The object in an owned tvm-ffi value, if it holds one.
    ///
    /// # Safety
    ///
    /// `v` is an owned tvm-ffi `Any`: an object kind carries one reference, given up.
    pub(super) unsafe fn owned_object(&'static self, v: ObjAny) -> Option<Foreign> {
        if v.type_index < ti::STATIC_OBJECT_BEGIN {
            return None;
        }
        // SAFETY: the caller's guarantee.
        unsafe { Foreign::from_owned(self, v.v.v_ptr) }
    }
}

/// One reference to a tvm-ffi object, released with `TVMFFIObjectDecRef` when
/// dropped. Read only through tvm-ffi's header (its type index) and the cell after it.
pub(super) struct Foreign {
    rt: &'static Runtime,
    obj: NonNull<FfiObject>,
}

// SAFETY: tvm-ffi's counts are atomic and its objects may be released on any thread;
// the cells read here are immutable after construction.
unsafe impl Send for Foreign {}
// SAFETY: as above.
unsafe impl Sync for Foreign {}

impl core::fmt::Debug for Foreign {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Foreign({}, {:p})", self.type_index(), self.obj)
    }
}

impl Foreign {
    /// Takes one reference to `p` (null: `None`).
    ///
    /// # Safety
    ///
    /// `p` is null or a live tvm-ffi object of `rt`'s runtime whose reference the
    /// caller gives up.
    pub(super) unsafe fn from_owned(rt: &'static Runtime, p: *mut c_void) -> Option<Foreign> {
        NonNull::new(p.cast::<FfiObject>()).map(|obj| Foreign { rt, obj })
    }

    /// A new reference to `p`.
    ///
    /// # Safety
    ///
    /// `p` is a live tvm-ffi object of `rt`'s runtime (borrowed).
    pub(super) unsafe fn from_borrowed(rt: &'static Runtime, p: *mut c_void) -> Option<Foreign> {
        let obj = NonNull::new(p.cast::<FfiObject>())?;
        // SAFETY: a live object (the caller's guarantee).
        unsafe { (rt.inc_ref)(p) };
        Some(Foreign { rt, obj })
    }

    /// The runtime the object belongs to.
    pub(super) fn runtime(&self) -> &'static Runtime {
        self.rt
    }

    /// The object's address (tvm-ffi's `TVMFFIObjectHandle`).
    pub(super) fn as_ptr(&self) -> *mut c_void {
        self.obj.as_ptr().cast()
    }

    /// Gives the reference up (to a tvm-ffi `Any` handed over, say).
    pub(super) fn into_raw(self) -> *mut c_void {
        let p = self.as_ptr();
        core::mem::forget(self);
        p
    }

    /// tvm-ffi's type index of the object.
    pub(super) fn type_index(&self) -> i32 {
        // SAFETY: a live object; its header's type index is immutable.
        unsafe { (*self.obj.as_ptr()).type_index }
    }

    /// The type key tvm-ffi registered for the object's type (`TVMFFIGetTypeInfo`).
    pub(super) fn type_key(&self) -> std::string::String {
        let index = self.type_index();
        // SAFETY: `c_api.h`: the type's static info, or null for an unknown index.
        let info = unsafe { (self.rt.get_type_info)(index) };
        if info.is_null() {
            return format!("<tvm-ffi type index {index}>");
        }
        // SAFETY: a type info of the runtime, alive for the process; its key is a byte
        // array it owns.
        let key = unsafe { (*info).type_key.bytes() };
        std::string::String::from_utf8_lossy(key).into_owned()
    }

    /// The cell after the header (`TVMFFIErrorCell`, `TVMFFIByteArray`, …).
    pub(super) fn cell<T>(&self) -> *const T {
        // SAFETY: every tvm-ffi object is at least its header; the cell's type is the
        // caller's to match against the type index.
        unsafe { self.obj.as_ptr().cast::<u8>().add(FFI_HEADER_SIZE).cast() }
    }

    /// The bytes of an `ffi.String` or `ffi.Bytes` (a `TVMFFIByteArray` after the
    /// header), borrowed from the object.
    pub(super) fn byte_cell(&self) -> &[u8] {
        debug_assert!(matches!(self.type_index() as u32, ti::STRING | ti::BYTES));
        // SAFETY: a string or bytes object has a byte array after its header, whose
        // bytes live (immutable) as long as the object, which `self` holds.
        unsafe { (*self.cell::<ByteArray>()).bytes() }
    }

    /// The dimensions of an `ffi.Shape`, borrowed from the object.
    pub(super) fn shape_cell(&self) -> &[i64] {
        debug_assert_eq!(self.type_index() as u32, ti::SHAPE);
        // SAFETY: a shape has a `TVMFFIShapeCell` after its header, whose dimensions
        // live (immutable) as long as the object.
        unsafe {
            let cell = &*self.cell::<ShapeCell>();
            if cell.size == 0 || cell.data.is_null() {
                &[]
            } else {
                core::slice::from_raw_parts(cell.data, cell.size)
            }
        }
    }

    /// A tvm-ffi `Any` view of the object (borrowed from `self`).
    pub(super) fn view(&self) -> ObjAny {
        let mut v = ObjAny::NONE;
        v.type_index = self.type_index() as u32;
        v.v.v_ptr = self.as_ptr();
        v
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        // SAFETY: the reference this value holds, given back once.
        unsafe { (self.rt.dec_ref)(self.as_ptr()) };
    }
}
