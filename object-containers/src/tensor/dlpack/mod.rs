//! DLPack: the C structs of `dlpack.h` (v1.1) and zero-copy export and import of
//! [`NDArray`]s, both the legacy `DLManagedTensor` and `DLManagedTensorVersioned`.
//!
//! The structs are written out here (`ffi.rs`), `#[repr(C)]`, with their sizes and
//! field offsets asserted at compile time against the header's layout on 64-bit
//! targets. (The DLPack crates on crates.io either predate the versioned struct or bring
//! dependencies this crate does not otherwise need.) `DLDevice` and `DLDataType` are
//! this project's [`Device`](object_core::Device) and [`DataType`](object_core::DataType),
//! which already use DLPack's encoding.
//!
//! # Ownership
//!
//! - **Export** ([`NDArray::to_dlpack_versioned`], [`NDArray::into_dlpack_versioned`],
//!   [`NDArray::into_dlpack`]) allocates one small block holding the managed struct and
//!   a handle to the NDArray: the NDArray stays alive, and its memory shared, until the
//!   consumer calls the deleter (once, from any thread). Nothing is copied; `shape` and
//!   `strides` point into the NDArray's object.
//! - **Import** ([`NDArray::from_dlpack_versioned`], [`NDArray::from_dlpack`]) takes
//!   ownership of the managed tensor **only when it succeeds**: then the producer's
//!   deleter is called exactly once, when the last handle to the NDArray (and to every
//!   view of it) goes. A refused import (any error: a null pointer, another major
//!   version, a description that fails a check) calls nothing and keeps nothing: the
//!   managed tensor is still the caller's, to release (call its deleter) or hand to
//!   someone else. The data is not copied (shape and strides are, into the NDArray's
//!   object, so the NDArray keeps no pointer into the managed struct but the data's). A
//!   tensor this module exported comes back as the very NDArray it was exported from
//!   (same object; a read-only export of a writable NDArray as a read-only view of it),
//!   as long as the consumer left it unchanged.
//!
//!   Why this rule, and not "the import owns it whatever happens": it is the one that
//!   composes with the other holders of a managed tensor. In the Python protocol the
//!   tensor sits in a capsule whose destructor calls the deleter unless a consumer
//!   renamed it `used_dltensor…`; a consumer that fails leaves the capsule as it was,
//!   and the producer's destructor frees the tensor, once. tvm-ffi's
//!   `TVMFFITensorFromDLPack(Versioned)` refuses the same way (its checks throw before
//!   the tensor object that owns the managed tensor is made), and its Python layer
//!   renames the capsule only after a successful import. A caller that owns the tensor
//!   in C frees it on the error path as it would any resource a failed call did not
//!   take. For another major version dlpack.h says the consumer must call the deleter
//!   and read nothing else: the caller is still that consumer, and the deleter is the
//!   one thing it may do with the tensor.
//! - A versioned tensor whose `DLPACK_FLAG_BITMASK_READ_ONLY` flag is set imports as a
//!   read-only NDArray (no `as_slice_mut`, no `copy_from`).
//! - **Exports are read-only unless they take the only handle.** Rust code may borrow
//!   an NDArray's data through any handle (`as_slice` gives a `&[T]`), so a consumer
//!   must not write memory a handle still reaches: [`NDArray::to_dlpack_versioned`]
//!   (`&self`) sets the read-only flag, and only [`NDArray::into_dlpack_versioned`] of
//!   the only handle to writable memory exports it writable. The legacy struct has no
//!   flags, so [`NDArray::into_dlpack`] exports only that (and refuses otherwise). The
//!   same rule as for every other way a tensor reaches foreign code: see
//!   [`NDArray::lend_mut`].
//!
//! Import goes through one function of the NDArray object's module (`object::import`,
//! which checks the description and keeps a `ForeignOwner` that calls the producer's
//! deleter); export needs only the NDArray's public API.
//!
//! ```
//! use object_containers::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY;
//! use object_containers::NDArray;
//!
//! let a = NDArray::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! let managed = a.to_dlpack_versioned();
//! // SAFETY: `managed` is a live export, read before it is handed over.
//! assert_ne!(unsafe { (*managed).flags } & DLPACK_FLAG_BITMASK_READ_ONLY, 0, "shared");
//! // A consumer (here: ourselves) takes it; no copy either way.
//! // SAFETY: a valid managed tensor, owned by nobody else.
//! let b = unsafe { NDArray::from_dlpack_versioned(managed) }.unwrap();
//! assert_eq!(b.data_ptr(), a.data_ptr());
//! assert_eq!(b.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
//! ```

use core::ffi::c_void;
use core::ptr::{self, NonNull};

use object_core::ObjectPtr;

use super::error::NDArrayError;
use super::object::{self, ForeignOwner, OwnerSlot};
use super::NDArray;

mod ffi;

pub use ffi::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};

// ---------------------------------------------------------------------------------
// Export.
// ---------------------------------------------------------------------------------

/// What an export allocates: the managed struct first (so its address is the block's),
/// then the handle that keeps the NDArray alive.
#[repr(C)]
struct Exported<M> {
    managed: M,
    ndarray: NDArray,
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

/// Whether two DLTensor descriptions are field for field the same.
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
    /// Exports the NDArray as a `DLManagedTensorVersioned` (DLPack 1.1), without copying,
    /// **read-only** for the consumer ([`DLPACK_FLAG_BITMASK_READ_ONLY`] set).
    ///
    /// The export shares the memory with this handle (and every other): Rust code may
    /// be borrowing the data, so the consumer must not write it. To hand a consumer
    /// writable memory, give the handle up: [`NDArray::into_dlpack_versioned`].
    ///
    /// The NDArray stays alive until the consumer calls the returned struct's deleter,
    /// exactly once (from any thread); until then its memory is shared, so
    /// [`NDArray::as_slice_mut`] on this NDArray refuses. `shape` and `strides` (always
    /// present) point into the NDArray's object. No export sets `IS_COPIED`.
    ///
    /// ```
    /// use object_containers::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY;
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[3], &[1i32, 2, 3]).unwrap();
    /// let m = a.to_dlpack_versioned();
    /// // SAFETY: `m` is a live export; its deleter is called exactly once.
    /// unsafe {
    ///     assert_eq!((*m).version.major, 1);
    ///     assert_eq!(*(*m).dl_tensor.shape, 3);
    ///     assert_ne!((*m).flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0, "shared: read-only");
    ///     ((*m).deleter.unwrap())(m);
    /// }
    /// ```
    pub fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        export_versioned(self.clone(), DLPACK_FLAG_BITMASK_READ_ONLY)
    }

    /// Exports the NDArray as a `DLManagedTensorVersioned`, giving the handle up:
    /// **writable** for the consumer when this was the only handle to the memory, the
    /// NDArray is not read-only and not lent (see [`NDArray::lend_mut`]); read-only
    /// otherwise, as [`NDArray::to_dlpack_versioned`].
    ///
    /// ```
    /// use object_containers::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY;
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2], &[1u8, 2]).unwrap();
    /// let m = a.into_dlpack_versioned();
    /// // SAFETY: `m` is a live export; its deleter is called exactly once.
    /// unsafe {
    ///     assert_eq!((*m).flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0, "the only handle: writable");
    ///     ((*m).deleter.unwrap())(m);
    /// }
    /// ```
    pub fn into_dlpack_versioned(mut self) -> *mut DLManagedTensorVersioned {
        let flags = if self.check_writable().is_ok() && !self.is_lent() {
            0
        } else {
            DLPACK_FLAG_BITMASK_READ_ONLY
        };
        export_versioned(self, flags)
    }

    /// Exports the NDArray as a legacy `DLManagedTensor`, without copying, giving the
    /// handle up. The legacy struct cannot say "read-only", so a consumer may write:
    /// only the only handle to writable memory can be exported this way (prefer
    /// [`NDArray::to_dlpack_versioned`]).
    ///
    /// # Errors
    ///
    /// The NDArray back, with [`NDArrayError::ReadOnly`] (read-only memory),
    /// [`NDArrayError::Shared`] (another handle, view or export reaches the memory) or
    /// [`NDArrayError::Lent`].
    ///
    /// ```
    /// use object_containers::{NDArray, NDArrayError};
    /// let a = NDArray::from_slice(&[2], &[1u8, 2]).unwrap();
    /// let other = a.clone();
    /// let (a, e) = a.into_dlpack().unwrap_err();
    /// assert_eq!(e, NDArrayError::Shared);
    /// drop(other);
    /// let m = a.into_dlpack().unwrap();
    /// // SAFETY: `m` is a live export; its deleter is called exactly once.
    /// unsafe { ((*m).deleter.unwrap())(m) };
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn into_dlpack(mut self) -> Result<*mut DLManagedTensor, (NDArray, NDArrayError)> {
        if let Err(e) = self.check_writable() {
            return Err((self, e));
        }
        if self.is_lent() {
            return Err((self, NDArrayError::Lent));
        }
        let block = Box::new(Exported {
            managed: DLManagedTensor {
                dl_tensor: *self.as_dl_tensor(),
                manager_ctx: ObjectPtr::as_ptr(self.as_object_ptr()) as *mut c_void,
                deleter: Some(delete_exported),
            },
            ndarray: self,
        });
        Ok(Box::into_raw(block) as *mut DLManagedTensor)
    }

    /// Imports a `DLManagedTensorVersioned` without copying the data, taking ownership
    /// of it if (and only if) the import succeeds: its deleter (if not null) is then
    /// called exactly once, when the last handle to the NDArray and its views goes. On
    /// an error nothing is called and nothing is kept: the tensor is still the caller's
    /// (see the [module docs](self) for why).
    ///
    /// The tensor is checked first (see [`NDArrayError`]): version, `ndim`, shape,
    /// strides, sizes (no overflow), data type, device, a null `data` with elements, and
    /// on host devices the alignment of the first element. The read-only flag makes a
    /// read-only NDArray; other flags are informational and unknown bits are ignored.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NullPointer`] for a null `managed`;
    /// [`NDArrayError::UnsupportedVersion`] for another major version (nothing but the
    /// version is read; dlpack.h then wants the caller, still the owner, to call the
    /// deleter); any check above. In every case the caller still owns `managed`.
    ///
    /// ```
    /// use object_containers::dlpack::DLPackVersion;
    /// use object_containers::{NDArray, NDArrayError};
    ///
    /// let a = NDArray::from_slice(&[2], &[1.0f64, 2.0]).unwrap();
    /// let m = a.to_dlpack_versioned();
    /// // SAFETY: `m` is a live export; it is changed to look like a DLPack 2 tensor,
    /// // refused, and then released by its owner (still us), once.
    /// unsafe {
    ///     (*m).version = DLPackVersion { major: 2, minor: 0 };
    ///     let err = NDArray::from_dlpack_versioned(m).unwrap_err();
    ///     assert_eq!(err, NDArrayError::UnsupportedVersion { major: 2, minor: 0 });
    ///     ((*m).deleter.unwrap())(m);
    /// }
    /// ```
    ///
    /// # Safety
    ///
    /// `managed` must be null or a valid DLPack managed tensor that the caller owns (and
    /// gives up if the import succeeds): everything it points to (its shape and strides,
    /// and its data as described) stays valid until its deleter is called. Rust code
    /// will read the data through the NDArray (and write it, unless read-only, when it
    /// holds the only handle), so while any borrow from the NDArray or its views is
    /// alive, nobody else — the producer included, and a second import of the same
    /// memory — may write the data, nor read it while Rust writes.
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
            // Nothing else is read (the layout may differ); the tensor stays the
            // caller's, who calls its deleter as dlpack.h asks.
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
            let ours =
                unsafe { &(*(managed as *const Exported<DLManagedTensorVersioned>)).ndarray };
            if same_tensor(&tensor, ours.as_dl_tensor()) && (read_only || !ours.is_read_only()) {
                // As exported: the same NDArray, or (exported read-only from a writable
                // one) a read-only view of it, whose reads follow its lease.
                let ndarray = if read_only == ours.is_read_only() {
                    ours.clone()
                } else {
                    ours.read_only_view()
                };
                // SAFETY: our deleter, called once; the clone keeps the NDArray alive.
                unsafe { delete_exported_versioned(managed) };
                return Ok(ndarray);
            }
        }
        // The owner (which calls the deleter when dropped) is made only once the
        // tensor passed every check: a refused one stays the caller's.
        // SAFETY: the caller's contract covers the tensor and what it points to; on
        // success it gives the managed tensor up, whose deleter may run on any thread
        // (DLPack), once.
        unsafe {
            object::import(&tensor, read_only, || {
                ForeignOwner::new(m.cast(), release_versioned)
            })
        }
    }

    /// Imports the memory `tensor` describes without copying it, kept alive by `owner`:
    /// for a producer that is not a DLPack managed tensor (a Python buffer, a memory
    /// map, a `Vec` someone else allocated). `owner` is dropped exactly once, from
    /// whichever thread drops the last handle to the NDArray and its views — or before
    /// this returns, if the import fails. (A Rust value moved in cannot stay with the
    /// caller the way a raw managed tensor does; dropping it is its release, once either
    /// way.)
    ///
    /// The description is checked as in [`NDArray::from_dlpack_versioned`], and its
    /// shape and strides are copied: they need to live only for this call.
    ///
    /// ```
    /// use object_containers::dlpack::DLTensor;
    /// use object_containers::NDArray;
    /// use object_core::{DataType, Device};
    ///
    /// let data: Box<[f32]> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0].into();
    /// let mut shape = [2i64, 3];
    /// let tensor = DLTensor {
    ///     data: data.as_ptr() as *mut _,
    ///     device: Device::cpu(),
    ///     ndim: 2,
    ///     dtype: DataType::float(32),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: `data` (moved into the NDArray as its owner) holds the six floats the
    /// // tensor describes, and nothing else reads or writes them.
    /// let a = unsafe { NDArray::from_dl_tensor_owned_by(&tensor, true, data) }.unwrap();
    /// assert_eq!(a.shape(), &[2, 3]);
    /// assert!(a.is_read_only());
    /// assert_eq!(a.as_slice::<f32>().unwrap()[5], 6.0);
    /// ```
    ///
    /// # Errors
    ///
    /// Any check of [`NDArray::from_dlpack_versioned`] but the version.
    ///
    /// # Safety
    ///
    /// `tensor` is a valid description (its shape and strides readable for the call)
    /// of data that stays valid while `owner` lives, with the same rule for writers as
    /// [`NDArray::from_dlpack_versioned`]: while any borrow from the NDArray or its views
    /// is alive, nobody else may write the data, nor read it while Rust writes (and Rust
    /// writes only when `read_only` is false).
    pub unsafe fn from_dl_tensor_owned_by<O: Send + 'static>(
        tensor: &DLTensor,
        read_only: bool,
        owner: O,
    ) -> Result<NDArray, NDArrayError> {
        // (`O: Send`: dropped on whichever thread lets the NDArray go; on a refusal,
        // with the closure, here.)
        // SAFETY: the caller's contract covers the tensor and its data; the owner keeps
        // the data alive until it is dropped.
        unsafe { object::import(tensor, read_only, move || ForeignOwner::of(owner)) }
    }

    /// Imports a legacy `DLManagedTensor` without copying the data, taking ownership of
    /// it if the import succeeds (see [`NDArray::from_dlpack_versioned`]: on an error the
    /// tensor is still the caller's; the legacy struct has no flags, so the NDArray is
    /// writable).
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
            let ours = unsafe { &(*(managed as *const Exported<DLManagedTensor>)).ndarray };
            if same_tensor(&tensor, ours.as_dl_tensor()) && !ours.is_read_only() {
                let ndarray = ours.clone();
                // SAFETY: our deleter, called once; the clone keeps the NDArray alive.
                unsafe { delete_exported(managed) };
                return Ok(ndarray);
            }
        }
        // SAFETY: as in `from_dlpack_versioned`: the owner is made only on success.
        unsafe { object::import(&tensor, false, || ForeignOwner::new(m.cast(), release)) }
    }
}

/// An export of `ndarray` (the block holds the handle) with `flags`.
fn export_versioned(ndarray: NDArray, flags: u64) -> *mut DLManagedTensorVersioned {
    let flags = if ndarray.is_read_only() {
        flags | DLPACK_FLAG_BITMASK_READ_ONLY
    } else {
        flags
    };
    let block = Box::new(Exported {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion {
                major: DLPACK_MAJOR_VERSION,
                minor: DLPACK_MINOR_VERSION,
            },
            manager_ctx: ObjectPtr::as_ptr(ndarray.as_object_ptr()) as *mut c_void,
            deleter: Some(delete_exported_versioned),
            flags,
            dl_tensor: *ndarray.as_dl_tensor(),
        },
        ndarray,
    });
    Box::into_raw(block) as *mut DLManagedTensorVersioned
}

/// Calls a legacy managed tensor's deleter (the end of an imported NDArray's data).
///
/// # Safety
///
/// `slot` holds a `DLManagedTensor` pointer this crate imported and owns; called once.
unsafe fn release(slot: *mut OwnerSlot) {
    // SAFETY: the caller's contract; the deleter may be null.
    unsafe {
        let m = (*slot).assume_init() as *mut DLManagedTensor;
        if let Some(d) = ptr::addr_of!((*m).deleter).read() {
            d(m);
        }
    }
}

/// Calls a versioned managed tensor's deleter.
///
/// # Safety
///
/// As for [`release`], for a `DLManagedTensorVersioned`.
unsafe fn release_versioned(slot: *mut OwnerSlot) {
    // SAFETY: the caller's contract; the deleter may be null.
    unsafe {
        let m = (*slot).assume_init() as *mut DLManagedTensorVersioned;
        if let Some(d) = ptr::addr_of!((*m).deleter).read() {
            d(m);
        }
    }
}
