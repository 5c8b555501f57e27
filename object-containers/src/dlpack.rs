//! DLPack: the C structs of `dlpack.h` (v1.1) and zero-copy export and import of
//! [`NDArray`]s, both the legacy `DLManagedTensor` and `DLManagedTensorVersioned`.
//!
//! The structs are written out here, `#[repr(C)]`, with their sizes and field offsets
//! asserted at compile time against the header's layout on 64-bit targets. (The DLPack
//! crates on crates.io either predate the versioned struct or bring dependencies this
//! crate does not otherwise need.) `DLDevice` and `DLDataType` are this project's
//! [`Device`] and [`DataType`], which already use DLPack's encoding.
//!
//! # Ownership
//!
//! - **Export** ([`NDArray::to_dlpack_versioned`], [`NDArray::to_dlpack`]) allocates one
//!   small block holding the managed struct and a handle to the array: the array stays
//!   alive, and its memory shared, until the consumer calls the deleter (once, from any
//!   thread). Nothing is copied; `shape` and `strides` point into the array's object.
//! - **Import** ([`NDArray::from_dlpack_versioned`], [`NDArray::from_dlpack`]) takes
//!   ownership of the managed tensor in every case: the producer's deleter is called
//!   exactly once, when the last handle to the array (and to every view of it) goes, or
//!   at once if the import fails. The data is not copied (shape and strides are, into
//!   the array's object, so the array keeps no pointer into the managed struct but the
//!   data's). A tensor this module exported comes back as the very array it was
//!   exported from (same object), as long as the consumer left it unchanged.
//! - A versioned tensor whose `DLPACK_FLAG_BITMASK_READ_ONLY` flag is set imports as a
//!   read-only array (no `as_slice_mut`, no `copy_from`), and a read-only array exports
//!   with the flag set. The legacy struct has no flags, so a read-only array refuses to
//!   export through it.
//!
//! This module and [`ndarray`](crate::NDArray)'s are the FFI entry points of tensors,
//! hence their `unsafe` blocks.
//!
//! ```
//! use object_containers::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY;
//! use object_containers::NDArray;
//!
//! let a = NDArray::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! let managed = a.to_dlpack_versioned();
//! // SAFETY: `managed` is a live export, read before it is handed over.
//! assert_eq!(unsafe { (*managed).flags } & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
//! // A consumer (here: ourselves) takes it; no copy either way.
//! // SAFETY: a valid managed tensor, owned by nobody else.
//! let b = unsafe { NDArray::from_dlpack_versioned(managed) }.unwrap();
//! assert_eq!(b.data_ptr(), a.data_ptr());
//! assert_eq!(b.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
//! ```

use core::ffi::c_void;
use core::fmt;
use core::mem::{align_of, offset_of, size_of};
use core::ptr::{self, NonNull};

use object_core::{DataType, Device, ObjectPtr};

use crate::ndarray::{check_dl_tensor, NDArray, NDArrayError, Parts, Storage};

/// The DLPack major version this crate reads and writes.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version this crate writes (it reads every 1.x).
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// `flags` bit: the consumer must not write the tensor.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `flags` bit: the producer made a copy for this export, which the consumer solely owns.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// `flags` bit (v1.1): a sub-byte data type is padded rather than packed.
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// `DLDevice`: this project's [`Device`] (`{ int32 device_type; int32 device_id; }`).
pub type DLDevice = Device;
/// `DLDataType`: this project's [`DataType`] (`{ uint8 code; uint8 bits; uint16 lanes; }`).
pub type DLDataType = DataType;

/// `DLPackVersion`: the ABI version at the start of a versioned managed tensor.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    /// A different major version means a different layout.
    pub major: u32,
    /// Minor versions add enumeration values only.
    pub minor: u32,
}

/// `DLTensor`: a plain C tensor description, owning nothing.
///
/// The data starts at `data + byte_offset`; `shape` has `ndim` entries; `strides` (in
/// elements, not bytes) has `ndim` entries, or is null in older producers' tensors for
/// a compact row-major layout.
///
/// All fields are public, as in C, so holding a `DLTensor` proves nothing about what it
/// points to: reading through one is `unsafe` ([`TensorView::from_raw`](crate::TensorView::from_raw)),
/// and only [`NDArray`]s and checked views hand out its data safely.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    /// The data pointer (opaque on some devices).
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// The number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor`: the legacy (unversioned) managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done; frees `self` too. May be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`: the managed tensor of DLPack 1.x, with a version and
/// flags.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The ABI version; a consumer must check `major` before reading anything else.
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done; frees `self` too. May be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

// The layout of dlpack.h on 64-bit targets (x86_64, aarch64): checked field by field.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<DLDevice>() == 8 && align_of::<DLDevice>() == 4);
    assert!(size_of::<DLDataType>() == 4 && align_of::<DLDataType>() == 2);
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(offset_of!(DLPackVersion, minor) == 4);

    assert!(size_of::<DLTensor>() == 48 && align_of::<DLTensor>() == 8);
    assert!(offset_of!(DLTensor, data) == 0);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);

    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(offset_of!(DLManagedTensor, dl_tensor) == 0);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);

    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, version) == 0);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);

    // A nullable C function pointer is one pointer.
    assert!(size_of::<Option<unsafe extern "C" fn(*mut DLManagedTensor)>>() == 8);
};

impl fmt::Display for DLPackVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

// ---------------------------------------------------------------------------------
// Export.
// ---------------------------------------------------------------------------------

/// What an export allocates: the managed struct first (so its address is the block's),
/// then the handle that keeps the array alive.
#[repr(C)]
struct Exported<M> {
    managed: M,
    array: NDArray,
}

/// The deleter of legacy exports. Not generic and not inlined, so it has one address,
/// which import compares against to recognize its own exports.
#[inline(never)]
unsafe extern "C" fn delete_exported(p: *mut DLManagedTensor) {
    if !p.is_null() {
        // SAFETY: installed only by `to_dlpack`, whose block is a boxed
        // `Exported<DLManagedTensor>` at this address; the consumer calls it once.
        drop(unsafe { Box::from_raw(p as *mut Exported<DLManagedTensor>) });
    }
}

/// The deleter of versioned exports (see [`delete_exported`]).
#[inline(never)]
unsafe extern "C" fn delete_exported_versioned(p: *mut DLManagedTensorVersioned) {
    if !p.is_null() {
        // SAFETY: installed only by `to_dlpack_versioned`, whose block is a boxed
        // `Exported<DLManagedTensorVersioned>` at this address; called once.
        drop(unsafe { Box::from_raw(p as *mut Exported<DLManagedTensorVersioned>) });
    }
}

/// Whether `d` is exactly `ours` (compared by address: the lint's caveat, that one
/// function may have several addresses, can only make us miss our own export and take
/// the general path, which is also correct).
fn is_deleter<M>(
    d: Option<unsafe extern "C" fn(*mut M)>,
    ours: unsafe extern "C" fn(*mut M),
) -> bool {
    d.is_some_and(|d| d as usize == ours as usize)
}

/// Whether two tensor descriptions are field for field the same.
fn same_tensor(a: &DLTensor, b: &DLTensor) -> bool {
    a.data == b.data
        && a.device == b.device
        && a.ndim == b.ndim
        && a.dtype == b.dtype
        && a.shape == b.shape
        && a.strides == b.strides
        && a.byte_offset == b.byte_offset
}

impl NDArray {
    /// Exports the array as a `DLManagedTensorVersioned` (DLPack 1.1), without copying.
    ///
    /// The array stays alive until the consumer calls the returned struct's deleter,
    /// exactly once (from any thread); until then its memory is shared, so
    /// [`NDArray::as_slice_mut`] on this array refuses. `shape` and `strides` (always
    /// present) point into the array's object. A read-only array exports with
    /// [`DLPACK_FLAG_BITMASK_READ_ONLY`]; no export sets `IS_COPIED`.
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[3], &[1i32, 2, 3]).unwrap();
    /// let m = a.to_dlpack_versioned();
    /// // SAFETY: `m` is a live export; its deleter is called exactly once.
    /// unsafe {
    ///     assert_eq!((*m).version.major, 1);
    ///     assert_eq!(*(*m).dl_tensor.shape, 3);
    ///     ((*m).deleter.unwrap())(m);
    /// }
    /// ```
    pub fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        let flags = if self.is_read_only() {
            DLPACK_FLAG_BITMASK_READ_ONLY
        } else {
            0
        };
        let block = Box::new(Exported {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: ObjectPtr::as_ptr(self.as_object_ptr()) as *mut c_void,
                deleter: Some(delete_exported_versioned),
                flags,
                dl_tensor: *self.as_dl_tensor(),
            },
            array: self.clone(),
        });
        Box::into_raw(block) as *mut DLManagedTensorVersioned
    }

    /// Exports the array as a legacy `DLManagedTensor`, without copying (see
    /// [`NDArray::to_dlpack_versioned`], which consumers should prefer).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::ReadOnly`] for a read-only array: the legacy struct cannot say
    /// so, and a consumer would be free to write.
    pub fn to_dlpack(&self) -> Result<*mut DLManagedTensor, NDArrayError> {
        if self.is_read_only() {
            return Err(NDArrayError::ReadOnly);
        }
        let block = Box::new(Exported {
            managed: DLManagedTensor {
                dl_tensor: *self.as_dl_tensor(),
                manager_ctx: ObjectPtr::as_ptr(self.as_object_ptr()) as *mut c_void,
                deleter: Some(delete_exported),
            },
            array: self.clone(),
        });
        Ok(Box::into_raw(block) as *mut DLManagedTensor)
    }

    /// Imports a `DLManagedTensorVersioned` without copying the data, taking ownership
    /// of it: its deleter (if not null) is called exactly once, when the last handle to
    /// the array and its views goes — or before this returns, if the import fails.
    ///
    /// The tensor is checked first (see [`NDArrayError`]): version, `ndim`, shape,
    /// strides, sizes (no overflow), data type, device, a null `data` with elements, and
    /// on host devices the alignment of the first element. The read-only flag makes a
    /// read-only array; other flags are informational and unknown bits are ignored.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NullPointer`] for a null `managed` (nothing is called);
    /// [`NDArrayError::UnsupportedVersion`] for another major version (the deleter is
    /// called, as DLPack requires, and nothing else is read); any check above.
    ///
    /// # Safety
    ///
    /// `managed` must be null or a valid DLPack managed tensor that the caller owns and
    /// gives up: everything it points to (its shape and strides, and its data as
    /// described) stays valid until its deleter is called. Rust code will read the data
    /// through the array (and write it, unless read-only, when it holds the only
    /// handle), so while any borrow from the array or its views is alive, nobody else —
    /// the producer included, and a second import of the same memory — may write the
    /// data, nor read it while Rust writes.
    pub unsafe fn from_dlpack_versioned(
        managed: *mut DLManagedTensorVersioned,
    ) -> Result<NDArray, NDArrayError> {
        let Some(m) = NonNull::new(managed) else {
            return Err(NDArrayError::NullPointer("managed tensor"));
        };
        // SAFETY: a valid managed tensor (the caller's contract); the version and the
        // deleter are where every 1.x and later layout keeps them.
        let (version, deleter) = unsafe { ((*managed).version, (*managed).deleter) };
        if version.major != DLPACK_MAJOR_VERSION {
            if let Some(d) = deleter {
                // SAFETY: DLPack: on a major version mismatch the consumer calls the
                // deleter, which is safe to do, and reads nothing else.
                unsafe { d(managed) };
            }
            return Err(NDArrayError::UnsupportedVersion {
                major: version.major,
                minor: version.minor,
            });
        }
        // SAFETY: a valid 1.x managed tensor.
        let (tensor, flags) = unsafe { ((*managed).dl_tensor, (*managed).flags) };
        let read_only = flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
        if is_deleter(deleter, delete_exported_versioned) {
            // SAFETY: only our exports carry this deleter, and they are boxed
            // `Exported<DLManagedTensorVersioned>`s, alive until the deleter runs.
            let ours = unsafe { &(*(managed as *const Exported<DLManagedTensorVersioned>)).array };
            if same_tensor(&tensor, ours.as_dl_tensor()) && read_only == ours.is_read_only() {
                let array = ours.clone();
                // SAFETY: our deleter, called once; the clone keeps the array alive.
                unsafe { delete_exported_versioned(managed) };
                return Ok(array);
            }
        }
        // From here on, dropping `storage` calls the deleter, on every path.
        let storage = Storage::ManagedVersioned(m);
        // SAFETY: the caller's contract covers the tensor and what it points to.
        unsafe { import(&tensor, read_only, storage) }
    }

    /// Imports a legacy `DLManagedTensor` without copying the data, taking ownership of
    /// it (see [`NDArray::from_dlpack_versioned`]; the legacy struct has no flags, so the
    /// array is writable).
    ///
    /// # Errors
    ///
    /// As for [`NDArray::from_dlpack_versioned`], without the version check.
    ///
    /// # Safety
    ///
    /// As for [`NDArray::from_dlpack_versioned`].
    pub unsafe fn from_dlpack(managed: *mut DLManagedTensor) -> Result<NDArray, NDArrayError> {
        let Some(m) = NonNull::new(managed) else {
            return Err(NDArrayError::NullPointer("managed tensor"));
        };
        // SAFETY: a valid managed tensor (the caller's contract).
        let (tensor, deleter) = unsafe { ((*managed).dl_tensor, (*managed).deleter) };
        if is_deleter(deleter, delete_exported) {
            // SAFETY: only our exports carry this deleter (see `from_dlpack_versioned`).
            let ours = unsafe { &(*(managed as *const Exported<DLManagedTensor>)).array };
            if same_tensor(&tensor, ours.as_dl_tensor()) && !ours.is_read_only() {
                let array = ours.clone();
                // SAFETY: our deleter, called once; the clone keeps the array alive.
                unsafe { delete_exported(managed) };
                return Ok(array);
            }
        }
        let storage = Storage::Managed(m);
        // SAFETY: the caller's contract.
        unsafe { import(&tensor, false, storage) }
    }
}

/// Checks `tensor` and builds the array around `storage` (which owns the producer's
/// tensor: dropping it, on an error too, calls the deleter).
///
/// # Safety
///
/// `tensor` and what it points to are valid as `from_dlpack_versioned` requires.
unsafe fn import(
    tensor: &DLTensor,
    read_only: bool,
    storage: Storage,
) -> Result<NDArray, NDArrayError> {
    // SAFETY: the caller's contract.
    let checked = unsafe { check_dl_tensor(tensor) };
    match checked {
        Ok(c) => Ok(NDArray::from_parts(Parts {
            shape: c.shape,
            strides: c.strides,
            data: tensor.data,
            byte_offset: tensor.byte_offset,
            dtype: tensor.dtype,
            device: tensor.device,
            storage,
            read_only,
        })),
        Err(e) => {
            drop(storage);
            Err(e)
        }
    }
}

/// Calls a legacy managed tensor's deleter (the end of an imported array's storage).
///
/// # Safety
///
/// `m` is a managed tensor this crate imported and owns; called once.
pub(crate) unsafe fn release(m: NonNull<DLManagedTensor>) {
    // SAFETY: the caller's contract; the deleter may be null.
    unsafe {
        if let Some(d) = ptr::addr_of!((*m.as_ptr()).deleter).read() {
            d(m.as_ptr());
        }
    }
}

/// Calls a versioned managed tensor's deleter.
///
/// # Safety
///
/// As for [`release`].
pub(crate) unsafe fn release_versioned(m: NonNull<DLManagedTensorVersioned>) {
    // SAFETY: the caller's contract; the deleter may be null.
    unsafe {
        if let Some(d) = ptr::addr_of!((*m.as_ptr()).deleter).read() {
            d(m.as_ptr());
        }
    }
}
