//! [`NDArray`], the handle: construction (allocated, copied, adopted), the description,
//! checked typed access to the data, views of the same memory (`reshape`, `slice`), and
//! the call traits. Copies are in [`copy`](super::copy), DLPack in
//! [`dlpack`](super::dlpack).

use core::ffi::c_void;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::{Bound, RangeBounds};
use core::ptr;

use object_core::{AnyView, DataType, Device, ObjectPtr, TypeError};

use super::dlpack::DLTensor;
use super::error::NDArrayError;
use super::layout::{self, check_compact, is_compact, numel_of};
use super::object::{
    allocate_data, bytes_of, new_object, object_address, typed_slice, Element, NDArrayObj, Parts,
    Storage, ALIGNMENT,
};
use super::view::TensorView;
use crate::function::{FromArg, FromRet, IntoRet};

/// An n-dimensional array, `ffi.Tensor`: an object whose description is a DLPack
/// `DLTensor`, so it can sit in an `Array`, a `Map`, an object field or an `Any`, pass
/// through a [`Function`](crate::Function), and cross to NumPy, PyTorch and friends
/// through DLPack without a copy ([`dlpack`](crate::dlpack)).
///
/// Cloning shares the NDArray (a count increment); equality and hashing are by
/// identity, as for object handles. Data is read through checked typed slices (data
/// type, contiguity, host device) and written only when this handle reaches the memory
/// alone (see [`NDArray::as_slice_mut`]).
///
/// ```
/// use object_containers::NDArray;
/// use object_core::{DataType, Device};
///
/// let mut a = NDArray::empty(&[2, 3], DataType::float(32), Device::cpu()).unwrap();
/// assert_eq!(a.data_ptr() as usize % 64, 0);
/// a.as_slice_mut::<f32>().unwrap().copy_from_slice(&[1., 2., 3., 4., 5., 6.]);
///
/// let row = a.slice(1..2).unwrap(); // a view: same memory, keeps `a` alive
/// assert_eq!(row.shape(), &[1, 3]);
/// assert_eq!(row.as_slice::<f32>().unwrap(), &[4., 5., 6.]);
/// assert!(a.as_slice_mut::<f32>().is_err(), "shared with the view");
/// drop(row);
/// assert_eq!(a.reshape(&[3, 2]).unwrap().strides(), &[2, 1]);
/// assert_eq!(format!("{a:?}"), "NDArray { shape: [2, 3], dtype: float32, device: cpu:0 }");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct NDArray(ObjectPtr<NDArrayObj>);

impl NDArray {
    /// A zero-filled NDArray on the CPU, its data aligned to 64 bytes.
    ///
    /// The data is zeroed rather than left uninitialized, because Rust code may read it
    /// (through [`NDArray::as_slice`]); for large NDArrays the zeroing is the operating
    /// system's fresh pages (`calloc`), which cost nothing until touched.
    ///
    /// # Errors
    ///
    /// A negative extent, more than [`MAX_NDIM`](crate::MAX_NDIM) dimensions, a size
    /// that overflows, an unsupported data type (elements must be whole bytes), or a
    /// device other than `cpu:0`; [`NDArrayError::AllocationFailed`] if the memory cannot
    /// be had (never an abort).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{NDArray, NDArrayError};
    /// use object_core::{DataType, Device};
    /// let a = NDArray::empty(&[2, 2], DataType::int(32), Device::cpu()).unwrap();
    /// assert_eq!(a.as_slice::<i32>().unwrap(), &[0; 4]);
    /// let e = NDArray::empty(&[-1], DataType::int(32), Device::cpu()).unwrap_err();
    /// assert_eq!(e, NDArrayError::NegativeDim { axis: 0, dim: -1 });
    /// ```
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<NDArray, NDArrayError> {
        let (numel, nbytes) = Self::check_new(shape, dtype, device)?;
        let (data, storage) = if numel == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            let (data, storage) = allocate_data(nbytes, true)?;
            (data as *mut c_void, storage)
        };
        // SAFETY: checked by `check_new`; `nbytes` zeroed bytes at `data`, owned by
        // `storage`.
        Ok(unsafe {
            new_object(Parts {
                shape,
                strides: None,
                data,
                byte_offset: 0,
                dtype,
                device,
                storage,
                read_only: false,
            })
        })
    }

    /// The element count and byte size of a new CPU NDArray, after every check.
    fn check_new(
        shape: &[i64],
        dtype: DataType,
        device: Device,
    ) -> Result<(usize, usize), NDArrayError> {
        let numel = numel_of(shape)?;
        let elem = layout::element_bytes(dtype)?;
        if device != Device::cpu() {
            return Err(NDArrayError::UnsupportedDevice(device));
        }
        let nbytes = numel.checked_mul(elem).ok_or(NDArrayError::TooLarge)?;
        if nbytes > isize::MAX as usize - ALIGNMENT {
            return Err(NDArrayError::TooLarge);
        }
        check_compact(shape)?;
        Ok((numel, nbytes))
    }

    /// A new CPU NDArray holding a copy of `bytes` (native byte order, compact
    /// row-major), 64-byte aligned. The inverse of [`NDArray::to_bytes`].
    ///
    /// # Errors
    ///
    /// As for [`NDArray::empty`], and [`NDArrayError::LengthMismatch`] (in bytes) if
    /// `bytes` does not hold exactly the NDArray.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// use object_core::{DataType, Device};
    /// let a = NDArray::from_slice(&[2], &[1.5f64, -2.0]).unwrap();
    /// let b = NDArray::from_bytes(a.shape(), a.dtype(), a.device(), &a.to_bytes().unwrap()).unwrap();
    /// assert_eq!(b.as_slice::<f64>().unwrap(), &[1.5, -2.0]);
    /// assert!(NDArray::from_bytes(&[3], DataType::float(64), Device::cpu(), &[0; 16]).is_err());
    /// ```
    pub fn from_bytes(
        shape: &[i64],
        dtype: DataType,
        device: Device,
        bytes: &[u8],
    ) -> Result<NDArray, NDArrayError> {
        let (_, nbytes) = Self::check_new(shape, dtype, device)?;
        if bytes.len() != nbytes {
            return Err(NDArrayError::LengthMismatch {
                expected: nbytes,
                actual: bytes.len(),
            });
        }
        Self::copied(shape, dtype, bytes)
    }

    /// A new CPU NDArray holding a copy of `data`, 64-byte aligned.
    ///
    /// # Errors
    ///
    /// As for [`NDArray::empty`], and [`NDArrayError::LengthMismatch`] (in elements) if
    /// `data` does not have as many elements as the shape.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2, 2], &[1u8, 2, 3, 4]).unwrap();
    /// assert_eq!(a.as_slice::<u8>().unwrap(), &[1, 2, 3, 4]);
    /// assert!(NDArray::from_slice(&[3], &[1u8, 2]).is_err());
    /// ```
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<NDArray, NDArrayError> {
        let (numel, _) = Self::check_new(shape, T::DTYPE, Device::cpu())?;
        if data.len() != numel {
            return Err(NDArrayError::LengthMismatch {
                expected: numel,
                actual: data.len(),
            });
        }
        Self::copied(shape, T::DTYPE, bytes_of(data))
    }

    /// A new 64-aligned CPU NDArray holding `bytes` (checked against the shape by
    /// `check_new` and the caller).
    fn copied(shape: &[i64], dtype: DataType, bytes: &[u8]) -> Result<NDArray, NDArrayError> {
        check_compact(shape)?;
        let (data, storage) = if bytes.is_empty() {
            (ptr::null_mut(), Storage::None)
        } else {
            let (data, storage) = allocate_data(bytes.len(), false)?;
            // SAFETY: a fresh block of `bytes.len()` bytes at `data`; every byte is written.
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
            (data as *mut c_void, storage)
        };
        // SAFETY: the shape and the byte count were checked (`check_new`, the length
        // checks); the bytes at `data` are owned by `storage`.
        Ok(unsafe {
            new_object(Parts {
                shape,
                strides: None,
                data,
                byte_offset: 0,
                dtype,
                device: Device::cpu(),
                storage,
                read_only: false,
            })
        })
    }

    /// A CPU NDArray that takes over `data`'s buffer, without copying (its alignment is
    /// `T`'s, not 64 bytes). The buffer is freed as a `Vec<T>` when the NDArray goes.
    ///
    /// # Errors
    ///
    /// As for [`NDArray::from_slice`] (the vector is dropped).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let v = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let p = v.as_ptr();
    /// let a = NDArray::from_vec(&[3, 2], v).unwrap();
    /// assert_eq!(a.data_ptr() as *const f32, p);
    /// assert_eq!(a.as_slice::<f32>().unwrap()[5], 6.0);
    /// ```
    pub fn from_vec<T: Element>(shape: &[i64], data: Vec<T>) -> Result<NDArray, NDArrayError> {
        let (numel, _) = Self::check_new(shape, T::DTYPE, Device::cpu())?;
        if data.len() != numel {
            return Err(NDArrayError::LengthMismatch {
                expected: numel,
                actual: data.len(),
            });
        }
        let (data, storage) = if numel == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            Storage::adopt_vec(data)
        };
        // SAFETY: checked by `check_new` and the length check; `numel` elements of `T`
        // at `data`, owned by `storage`.
        Ok(unsafe {
            new_object(Parts {
                shape,
                strides: None,
                data,
                byte_offset: 0,
                dtype: T::DTYPE,
                device: Device::cpu(),
                storage,
                read_only: false,
            })
        })
    }

    #[inline]
    pub(super) fn obj(&self) -> &NDArrayObj {
        &self.0
    }

    /// The embedded DLPack description.
    #[inline]
    pub fn as_dl_tensor(&self) -> &DLTensor {
        self.obj().dl_tensor()
    }

    /// The address of the embedded `DLTensor`: what the RFC's calling convention passes
    /// for an NDArray, and what C code expecting a `DLTensor*` reads. Valid while this
    /// handle (or another to the same object) lives. The description itself must never
    /// be changed through it; C code may write the data only where Rust could
    /// ([`NDArray::as_slice_mut`]'s conditions).
    #[inline]
    pub fn as_dl_tensor_ptr(&self) -> *mut DLTensor {
        dl_tensor_of(&self.0)
    }

    /// The NDArray whose embedded DLTensor `p` is: the inverse of
    /// [`NDArray::as_dl_tensor_ptr`] (the object is at `p - DL_TENSOR_OFFSET`), taking
    /// a new reference.
    ///
    /// # Safety
    ///
    /// `p` must come from [`NDArray::as_dl_tensor_ptr`] (or be the same address with the
    /// same provenance) of an NDArray that is alive during this call: a `DLTensor` that
    /// is not embedded in an `NDArrayObj` makes this read and count foreign memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[1], &[7u32]).unwrap();
    /// let p = a.as_dl_tensor_ptr();
    /// // SAFETY: `p` is `a`'s DLTensor and `a` is alive.
    /// let b = unsafe { NDArray::from_dl_tensor_ptr(p) };
    /// assert!(NDArray::ptr_eq(&a, &b));
    /// ```
    pub unsafe fn from_dl_tensor_ptr(p: *const DLTensor) -> NDArray {
        let obj = (p as *const u8).wrapping_sub(NDArrayObj::DL_TENSOR_OFFSET) as *const NDArrayObj;
        // SAFETY: the caller's contract: `obj` is a live `NDArrayObj` (a final type, so
        // its dynamic type is exactly that).
        NDArray(unsafe { ObjectPtr::clone_from_raw(obj) })
    }

    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[i64] {
        self.obj().shape()
    }

    /// The strides, in elements (always present, whatever the producer gave).
    #[inline]
    pub fn strides(&self) -> &[i64] {
        self.obj().strides()
    }

    /// The number of dimensions.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.as_dl_tensor().ndim as usize
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DataType {
        self.as_dl_tensor().dtype
    }

    /// Where the data lives.
    #[inline]
    pub fn device(&self) -> Device {
        self.as_dl_tensor().device
    }

    /// Bytes from the data pointer to the first element (0 for NDArrays made here; an
    /// import keeps the producer's).
    #[inline]
    pub fn byte_offset(&self) -> u64 {
        self.as_dl_tensor().byte_offset
    }

    /// The address of the first element (`data + byte_offset`).
    #[inline]
    pub fn data_ptr(&self) -> *mut c_void {
        layout::first_element(self.as_dl_tensor()) as *mut c_void
    }

    /// The number of elements: 0 if any extent is 0, whatever the others are.
    pub fn numel(&self) -> usize {
        let shape = self.shape();
        if shape.contains(&0) {
            return 0;
        }
        // Without a zero extent the product was checked to fit at construction.
        shape.iter().map(|&d| d as usize).product()
    }

    /// The size of the elements in bytes (`numel × element size`).
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype().bytes()
    }

    /// Whether the layout is compact row-major (what typed slices need).
    pub fn is_contiguous(&self) -> bool {
        is_compact(self.shape(), self.strides())
    }

    /// Whether the NDArray is read-only (imported with DLPack's read-only flag, or a
    /// view of such an NDArray).
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.obj().read_only()
    }

    /// Whether this NDArray is a view of another's memory ([`NDArray::reshape`],
    /// [`NDArray::slice`]).
    pub fn is_view(&self) -> bool {
        self.obj().view_base().is_some()
    }

    /// This NDArray as an argument in the RFC's raw form: a borrowed `DLTensor*` (type
    /// index 7) rather than an object, for callees that take a `DLTensor*` (and for C
    /// code that knows only DLPack). [`AnyView::from`] passes the object instead. The
    /// data behind it is read-only to the callee (see [`NDArray::lend_mut`]).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::Lent`] while the NDArray is lent writable to foreign code.
    pub fn as_raw_view(&self) -> Result<AnyView<'_>, NDArrayError> {
        self.obj().check_not_lent()?;
        // SAFETY: the embedded DLTensor, its shape and strides and its data are valid for
        // as long as `self` is borrowed; nobody writes the data while it is shared (not
        // lent: checked just now, and a lease needs the only handle).
        Ok(unsafe { AnyView::from_dl_tensor_ptr(self.as_dl_tensor_ptr() as *mut c_void) })
    }

    /// Lends the NDArray *writable* to foreign code for as long as the returned lease
    /// lives: the one way a callee outside Rust (a tvm-ffi kernel, a C callback, a
    /// plugin in C) may write its data. Pass [`TensorLease::arg`] where the callee takes
    /// the tensor.
    ///
    /// The rule it keeps: an NDArray's data is either *shared* — Rust code may borrow it
    /// (`as_slice`, views, copies) and no foreign code writes it — or *lent*: foreign
    /// code may write it and no Rust code can borrow it (those calls return
    /// [`NDArrayError::Lent`] until the lease ends), never both. A lease needs unique
    /// access, so no borrow of the data can be alive when it starts.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::ReadOnly`] (read-only memory is never lent writable) or
    /// [`NDArrayError::Shared`] (another handle, view or export reaches the memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{NDArray, NDArrayError};
    /// let mut out = NDArray::from_slice(&[2], &[0.0f32, 0.0]).unwrap();
    /// {
    ///     let lease = out.lend_mut().unwrap();
    ///     let arg = lease.arg(); // what a foreign kernel's output parameter takes
    ///     assert!(arg.as_object().is_some());
    ///     // While lent, a copy of the handle cannot read the data.
    ///     let other: NDArray = NDArray::try_from(arg.to_any()).unwrap();
    ///     assert_eq!(other.as_slice::<f32>().unwrap_err(), NDArrayError::Lent);
    /// }
    /// assert_eq!(out.as_slice::<f32>().unwrap(), &[0.0, 0.0]);
    /// let shared = out.clone();
    /// assert_eq!(out.lend_mut().unwrap_err(), NDArrayError::Shared);
    /// # drop(shared);
    /// ```
    pub fn lend_mut(&mut self) -> Result<TensorLease<'_>, NDArrayError> {
        self.start_lease()?;
        Ok(TensorLease { array: self })
    }

    /// [`NDArray::lend_mut`] without a guard, for front-ends that pair it with
    /// [`NDArray::end_lease`] themselves (the C API's `obj_ndarray_lend`). A lease never
    /// ended only keeps Rust from reading the data.
    ///
    /// # Errors
    ///
    /// As [`NDArray::lend_mut`].
    pub fn start_lease(&mut self) -> Result<(), NDArrayError> {
        self.check_writable()?;
        self.obj().start_lease();
        Ok(())
    }

    /// Ends a lease (see [`NDArray::start_lease`]); a no-op if the NDArray is not lent.
    /// Any handle may end it: from then on no new foreign call may write the data, and
    /// Rust may read it once the foreign calls writing it have returned.
    pub fn end_lease(&self) {
        self.obj().end_lease();
    }

    /// Whether the NDArray is lent writable right now: whether a foreign callee given
    /// it may write its data (see [`NDArray::lend_mut`]).
    #[inline]
    pub fn is_lent_writable(&self) -> bool {
        self.obj().is_lent_writable()
    }

    /// Whether the NDArray's data is unreadable from Rust right now: lent writable to
    /// foreign code (see [`NDArray::lend_mut`]), or written by a foreign call that
    /// started during a lease.
    #[inline]
    pub fn is_lent(&self) -> bool {
        self.obj().is_lent()
    }

    /// For the wrapper of a foreign function that may write its tensor arguments:
    /// records that a foreign call is about to write this NDArray's data, until the
    /// returned guard is dropped (after the call). `None` unless the NDArray is lent
    /// writable ([`NDArray::lend_mut`]) right now: then hand the callee the tensor
    /// read-only, or refuse the call. While the guard lives, Rust reads refuse even if
    /// the lease ends meanwhile.
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let mut a = NDArray::from_slice(&[1], &[1u8]).unwrap();
    /// assert!(a.foreign_write().is_none(), "not lent");
    /// let lease = a.lend_mut().unwrap();
    /// let view = lease.arg();
    /// let arg = view.as_object_of::<object_containers::NDArrayObj>().unwrap();
    /// let b = NDArray::from_object_ptr(arg.clone());
    /// let write = b.foreign_write().expect("lent");
    /// drop(lease);
    /// assert!(b.as_slice::<u8>().is_err(), "a foreign call is still writing");
    /// drop(write);
    /// assert_eq!(b.as_slice::<u8>().unwrap(), &[1]);
    /// ```
    pub fn foreign_write(&self) -> Option<ForeignWrite> {
        self.obj().begin_foreign_write().then(|| ForeignWrite {
            array: self.clone(),
        })
    }

    /// A borrowed view of this NDArray (see [`TensorView`]).
    pub fn view(&self) -> TensorView<'_> {
        TensorView::from(self)
    }

    /// The data as a slice of `T`.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::DataTypeMismatch`] unless `T` is the NDArray's data type,
    /// [`NDArrayError::NotHostAccessible`] for device memory,
    /// [`NDArrayError::NotContiguous`] for a strided layout (copy it first:
    /// [`NDArray::deep_copy`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{NDArray, NDArrayError};
    /// let a = NDArray::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
    /// assert_eq!(a.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
    /// assert!(matches!(a.as_slice::<f64>(), Err(NDArrayError::DataTypeMismatch { .. })));
    /// ```
    pub fn as_slice<T: Element>(&self) -> Result<&[T], NDArrayError> {
        self.obj().check_not_lent()?;
        if !self.is_contiguous() {
            layout::readable(self.as_dl_tensor(), T::DTYPE)?;
            return Err(NDArrayError::NotContiguous);
        }
        // No lease now (checked above), and none can start while `self` is borrowed:
        // a lease needs the only handle borrowed mutably.
        // SAFETY: checked at construction, data alive while the handle is borrowed;
        // writes need `&mut` to the only handle, or a lease (none, as above).
        unsafe { typed_slice(self.as_dl_tensor(), self.numel()) }
    }

    /// Whether this handle alone reaches the memory: no other handle to the object, and
    /// for a view, no other handle to (or view of) its base. (An export holds a handle.)
    fn is_unique(&mut self) -> bool {
        if ObjectPtr::strong_count(&self.0) != 1 {
            return false;
        }
        match self.obj().view_base() {
            // The base is never a view itself, so every view of it holds it: a count of
            // one means this view is the only way to it.
            Some(base) => ObjectPtr::strong_count(&base.0) == 1,
            None => true,
        }
    }

    /// Checks that this handle may write the memory: not read-only, reached alone.
    pub(super) fn check_writable(&mut self) -> Result<(), NDArrayError> {
        if self.is_read_only() {
            return Err(NDArrayError::ReadOnly);
        }
        if !self.is_unique() {
            return Err(NDArrayError::Shared);
        }
        Ok(())
    }

    /// The data as a mutable slice of `T`, when this handle alone reaches the memory.
    ///
    /// # Errors
    ///
    /// As for [`NDArray::as_slice`], and [`NDArrayError::ReadOnly`] or
    /// [`NDArrayError::Shared`] (another handle, view or export shares the memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{NDArray, NDArrayError};
    /// let mut a = NDArray::from_slice(&[2], &[1i64, 2]).unwrap();
    /// a.as_slice_mut::<i64>().unwrap()[0] = 10;
    /// assert_eq!(a.as_slice::<i64>().unwrap(), &[10, 2]);
    /// let shared = a.clone();
    /// assert_eq!(a.as_slice_mut::<i64>().unwrap_err(), NDArrayError::Shared);
    /// # drop(shared);
    /// ```
    pub fn as_slice_mut<T: Element>(&mut self) -> Result<&mut [T], NDArrayError> {
        let n = self.as_slice::<T>()?.len();
        self.check_writable()?;
        if n == 0 {
            return Ok(&mut []);
        }
        // The data's own pointer (provenance from its allocation or producer), not one
        // derived from the shared slice above.
        let p = layout::first_element(self.as_dl_tensor()) as *mut T;
        // SAFETY: `as_slice`'s checks passed for this pointer and length (data type,
        // host, contiguity, alignment); the memory is reachable through `self` only
        // (`check_writable`), which stays borrowed mutably for the slice's lifetime.
        Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
    }

    /// The data's bytes (native byte order), for a contiguous NDArray on a host device.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`], [`NDArrayError::NotContiguous`].
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2], &[1u16, 2]).unwrap();
    /// assert_eq!(a.as_bytes().unwrap(), &[1u16.to_ne_bytes(), 2u16.to_ne_bytes()].concat());
    /// ```
    pub fn as_bytes(&self) -> Result<&[u8], NDArrayError> {
        self.obj().check_not_lent()?;
        let t = self.as_dl_tensor();
        if !t.device.is_host_accessible() {
            return Err(NDArrayError::NotHostAccessible(t.device));
        }
        if !self.is_contiguous() {
            return Err(NDArrayError::NotContiguous);
        }
        let n = self.nbytes();
        if n == 0 {
            return Ok(&[]);
        }
        // SAFETY: a compact layout of `n` bytes on the host (checked at construction),
        // alive and unwritten while `self` is borrowed.
        Ok(unsafe { core::slice::from_raw_parts(layout::first_element(t), n) })
    }

    /// The root NDArray whose memory this one uses (itself unless a view).
    fn root(&self) -> NDArray {
        match self.obj().view_base() {
            Some(base) => base.clone(),
            None => self.clone(),
        }
    }

    /// A view of this NDArray's memory.
    ///
    /// # Safety
    ///
    /// The description (`shape`, `strides`, `data`, `byte_offset`, with this NDArray's
    /// data type and device) is checked and reaches only elements of this NDArray's
    /// memory.
    unsafe fn view_of(
        &self,
        shape: &[i64],
        strides: Option<&[i64]>,
        data: *mut c_void,
        byte_offset: u64,
    ) -> NDArray {
        // SAFETY: the caller's contract; the root keeps the memory alive, and the view
        // is read-only if this NDArray is.
        unsafe {
            new_object(Parts {
                shape,
                strides,
                data,
                byte_offset,
                dtype: self.dtype(),
                device: self.device(),
                storage: Storage::View(self.root()),
                read_only: self.is_read_only(),
            })
        }
    }

    /// A read-only view of all of this NDArray's memory (what our own read-only export
    /// of a writable NDArray comes back as).
    pub(super) fn read_only_view(&self) -> NDArray {
        let t = self.as_dl_tensor();
        // SAFETY: this NDArray's own, checked description; the root keeps the memory
        // alive, and the view only reads it.
        unsafe {
            new_object(Parts {
                shape: self.shape(),
                strides: Some(self.strides()),
                data: t.data,
                byte_offset: t.byte_offset,
                dtype: self.dtype(),
                device: self.device(),
                storage: Storage::View(self.root()),
                read_only: true,
            })
        }
    }

    /// A view with another shape of the same elements (same memory, compact strides).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotContiguous`] for a strided NDArray,
    /// [`NDArrayError::ShapeMismatch`] if the element counts differ, and the shape
    /// checks of [`NDArray::empty`].
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2, 3], &[0u8; 6]).unwrap();
    /// let b = a.reshape(&[3, 2]).unwrap();
    /// assert_eq!((b.shape(), b.data_ptr()), (&[3, 2][..], a.data_ptr()));
    /// assert!(a.reshape(&[4]).is_err());
    /// ```
    pub fn reshape(&self, shape: &[i64]) -> Result<NDArray, NDArrayError> {
        self.obj().check_not_lent()?;
        let numel = numel_of(shape)?;
        if numel != self.numel() {
            return Err(NDArrayError::ShapeMismatch {
                expected: self.shape().to_vec(),
                actual: shape.to_vec(),
            });
        }
        if !self.is_contiguous() {
            return Err(NDArrayError::NotContiguous);
        }
        check_compact(shape)?;
        let t = self.as_dl_tensor();
        // SAFETY: the same elements, compact, at the same place (checked just now).
        Ok(unsafe { self.view_of(shape, None, t.data, t.byte_offset) })
    }

    /// A view of the rows `range` along the first axis (same memory, same strides).
    ///
    /// On host devices the view's data pointer is its first element (byte offset 0, the
    /// form every DLPack consumer reads); elsewhere the byte offset grows instead, unless
    /// the first element is before the data pointer (a negative first stride) or the
    /// offset would pass `isize::MAX`: then the pointer moves, as on the host.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::BadNdim`] for a 0-dimensional NDArray,
    /// [`NDArrayError::OutOfRange`] for rows outside the first axis.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[3, 2], &[1i32, 2, 3, 4, 5, 6]).unwrap();
    /// let rows = a.slice(1..).unwrap();
    /// assert_eq!(rows.as_slice::<i32>().unwrap(), &[3, 4, 5, 6]);
    /// assert!(rows.is_view());
    /// assert!(a.slice(2..4).is_err());
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<NDArray, NDArrayError> {
        self.obj().check_not_lent()?;
        if self.ndim() == 0 {
            return Err(NDArrayError::BadNdim { ndim: 0 });
        }
        let len = self.shape()[0] as usize;
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => len,
        };
        if start > end || end > len {
            return Err(NDArrayError::OutOfRange { start, end, len });
        }
        let mut shape = self.shape().to_vec();
        shape[0] = (end - start) as i64;
        let t = self.as_dl_tensor();
        if shape.contains(&0) {
            // SAFETY: no elements: nothing is reached.
            return Ok(unsafe {
                self.view_of(&shape, Some(self.strides()), t.data, t.byte_offset)
            });
        }
        // The view has elements, so `start` is a row of a non-empty NDArray: the offset
        // is inside the NDArray's span, which fits in `isize` (checked at construction).
        let delta = start as i128 * self.strides()[0] as i128 * self.dtype().bytes() as i128;
        let (data, byte_offset) = if delta == 0 {
            (t.data, t.byte_offset)
        } else if t.device.is_host_accessible() {
            let first = layout::first_element(t).wrapping_offset(delta as isize);
            (first as *mut c_void, 0)
        } else {
            // `|byte_offset| <= isize::MAX` (checked at import) and `|delta| <= isize::MAX`.
            let off = t.byte_offset as i128 + delta;
            if (0..=isize::MAX as i128).contains(&off) {
                (t.data, off as u64)
            } else {
                // The first element is before `data` (a negative first stride: the
                // layout already reaches below the pointer, so it is an address, not an
                // opaque handle), or past the offsets an import accepts: move the
                // pointer instead, as on the host (wrapping; never dereferenced here).
                let first = if off < 0 {
                    (t.data as *mut u8).wrapping_sub(off.unsigned_abs() as usize)
                } else {
                    (t.data as *mut u8).wrapping_add(off as usize)
                };
                (first as *mut c_void, 0)
            }
        };
        // SAFETY: rows `start..end` of this NDArray, same strides: a part of its span,
        // whose first element is `delta` bytes after this one's.
        Ok(unsafe { self.view_of(&shape, Some(self.strides()), data, byte_offset) })
    }
}

/// The address of an NDArray object's embedded DLTensor, with the handle's provenance.
#[inline]
fn dl_tensor_of(o: &ObjectPtr<NDArrayObj>) -> *mut DLTensor {
    (object_address(o).as_ptr() as *mut u8).wrapping_add(NDArrayObj::DL_TENSOR_OFFSET)
        as *mut DLTensor
}

/// An NDArray lent writable to foreign code (see [`NDArray::lend_mut`]): the lease ends
/// when this is dropped, and Rust may read the data again.
pub struct TensorLease<'a> {
    array: &'a mut NDArray,
}

impl TensorLease<'_> {
    /// The tensor as an argument for a callee that may write it (the NDArray object;
    /// its embedded `DLTensor*` for a tvm-ffi kernel).
    pub fn arg(&self) -> AnyView<'_> {
        AnyView::from(&*self.array)
    }

    /// The NDArray's description (shape, strides, data type): readable while lent; its
    /// data is not.
    pub fn as_dl_tensor(&self) -> &DLTensor {
        self.array.as_dl_tensor()
    }
}

impl Drop for TensorLease<'_> {
    fn drop(&mut self) {
        self.array.end_lease();
    }
}

/// A foreign call writing a lent NDArray (see [`NDArray::foreign_write`]); dropped when
/// the call returns.
pub struct ForeignWrite {
    array: NDArray,
}

impl Drop for ForeignWrite {
    fn drop(&mut self) {
        self.array.obj().end_foreign_write();
    }
}

impl fmt::Debug for ForeignWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForeignWrite").finish_non_exhaustive()
    }
}

impl fmt::Debug for TensorLease<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorLease")
            .field("shape", &self.array.shape())
            .field("dtype", &self.array.dtype())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for NDArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("NDArray");
        d.field("shape", &self.shape());
        if !self.is_contiguous() {
            d.field("strides", &self.strides());
        }
        d.field("dtype", &format_args!("{}", self.dtype()))
            .field("device", &format_args!("{}", self.device()));
        if self.is_read_only() {
            d.field("read_only", &true);
        }
        d.finish()
    }
}

/// By identity, as for object handles.
impl PartialEq for NDArray {
    fn eq(&self, other: &Self) -> bool {
        NDArray::ptr_eq(self, other)
    }
}
impl Eq for NDArray {}

/// By identity.
impl Hash for NDArray {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

crate::handle::object_handle!(NDArray, NDArrayObj, "ffi.Tensor");

// ---------------------------------------------------------------------------------
// The call traits.
// ---------------------------------------------------------------------------------

/// NDArray objects only: a raw `DLTensor*` argument is refused (an owning NDArray
/// cannot be made from a borrowed pointer without copying; take a [`TensorView`] in a
/// packed function, or a `*mut DLTensor`, to accept both).
impl FromArg for NDArray {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        ObjectPtr::<NDArrayObj>::try_from(v).map(NDArray)
    }
    #[inline]
    fn from_arg_quick(v: AnyView<'_>) -> Option<Self> {
        v.as_object_of::<NDArrayObj>().map(|o| NDArray(o.clone()))
    }
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ffi.Tensor")
    }
}
impl IntoRet for NDArray {
    fn into_ret(self) -> Result<object_core::Any, object_core::Error> {
        Ok(object_core::Any::from(self))
    }
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ffi.Tensor")
    }
}
impl FromRet for NDArray {
    fn from_ret(v: object_core::Any) -> Result<Self, TypeError> {
        NDArray::try_from(v)
    }
}

/// The RFC's `DLTensor*` argument: an NDArray's embedded tensor or a caller's raw
/// `DLTensor*`, as a raw pointer valid for the duration of the call (read it with
/// `unsafe { TensorView::from_raw(p) }`; do not keep it).
impl object_core::PtrArg for DLTensor {
    #[inline]
    fn ptr_from_arg(v: AnyView<'_>) -> Result<*mut Self, TypeError> {
        if let Some(p) = v.as_dl_tensor_ptr() {
            return Ok(p as *mut DLTensor);
        }
        v.as_object_of::<NDArrayObj>()
            .map(dl_tensor_of)
            .ok_or_else(|| TypeError::new("DLTensor* or ffi.Tensor", v.type_key()))
    }
}

/// A tensor is a built-in of shape tensor: its dtype, shape, device and elements,
/// packed in row-major order (borrowed from a contiguous host tensor, gathered from a
/// strided one; unreadable off the host). One is built from packed bytes, on the CPU
/// when the device given is host-accessible (as a deep copy is).
pub(super) static NDARRAY_HOOKS: object_core::builtin::BuiltinHooks =
    object_core::builtin::BuiltinHooks {
        shape: object_core::builtin::BuiltinShape::Tensor,
        mutable: false,
        contents: ndarray_contents,
        build: ndarray_build,
    };

/// Borrows `p` as an NDArray handle (no count change).
fn as_ndarray(p: &ObjectPtr<NDArrayObj>) -> &NDArray {
    // SAFETY: `NDArray` is `repr(transparent)` over `ObjectPtr<NDArrayObj>`.
    unsafe { &*(p as *const ObjectPtr<NDArrayObj> as *const NDArray) }
}

fn ndarray_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    use object_core::builtin::{Contents, TensorContents};
    let Some(p) = obj.downcast_ptr_ref::<NDArrayObj>() else {
        return Contents::Identity;
    };
    let a = as_ndarray(p);
    Contents::Tensor(TensorContents::new(
        obj,
        a.dtype(),
        a.shape(),
        a.device(),
        ndarray_bytes,
    ))
}

/// The packed elements of the tensor `obj`.
fn ndarray_bytes(
    obj: &object_core::ObjectRef,
) -> Result<std::borrow::Cow<'_, [u8]>, object_core::builtin::BuiltinError> {
    use std::borrow::Cow;
    let Some(p) = obj.downcast_ptr_ref::<NDArrayObj>() else {
        return Err(read_error(NDArrayError::NotContiguous));
    };
    let a = as_ndarray(p);
    match a.as_bytes() {
        Ok(b) => Ok(Cow::Borrowed(b)),
        Err(NDArrayError::NotContiguous) => a.to_bytes().map(Cow::Owned).map_err(read_error),
        Err(e) => Err(read_error(e)),
    }
}

fn ndarray_build(
    parts: object_core::builtin::Parts<'_>,
) -> Result<object_core::Any, object_core::builtin::BuiltinError> {
    use object_core::builtin::{BuiltinError, BuiltinShape, Parts};
    let t = match parts {
        Parts::Tensor(t) => t,
        other => return Err(BuiltinError::wrong_shape(BuiltinShape::Tensor, &other)),
    };
    let device = if t.device.is_host_accessible() && t.device.device_id >= 0 {
        Device::cpu()
    } else {
        t.device // refused by `from_bytes`, with the device in the message
    };
    NDArray::from_bytes(&t.shape, t.dtype, device, &t.bytes)
        .map(object_core::Any::from)
        .map_err(|e| {
            let kind = match e {
                NDArrayError::AllocationFailed { .. } => {
                    object_core::builtin::BuiltinErrorKind::Memory
                }
                _ => object_core::builtin::BuiltinErrorKind::Data,
            };
            object_core::builtin::BuiltinError::with_cause(kind, e)
        })
}

/// An NDArray's reading error as a built-in's: memory as memory, anything else (a
/// tensor not on the host) as unsupported.
fn read_error(e: NDArrayError) -> object_core::builtin::BuiltinError {
    use object_core::builtin::{BuiltinError, BuiltinErrorKind};
    let kind = match e {
        NDArrayError::AllocationFailed { .. } | NDArrayError::TooLarge => BuiltinErrorKind::Memory,
        _ => BuiltinErrorKind::Unsupported,
    };
    BuiltinError::with_cause(kind, e)
}
