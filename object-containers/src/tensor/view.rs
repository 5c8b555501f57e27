//! [`TensorView`]: a borrowed, checked, read-only view of an NDArray or of a raw
//! `DLTensor*` a caller passed.

use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use object_core::{AnyView, DataType, Device, ObjectPtr, TypeError};

use super::dlpack::DLTensor;
use super::error::NDArrayError;
use super::layout::{self, compact_strides, is_compact};
use super::object::{check_dl_tensor, object_address, typed_slice, Element, NDArrayObj};
use super::NDArray;

/// A borrowed, checked, read-only tensor: either an [`NDArray`] or a raw `DLTensor*`
/// that a caller passed (the RFC's calling convention: an argument may be either).
///
/// This is how a function accepts both kinds. A packed function converts its argument
/// with `TensorView::try_from(args[i])`; the view borrows the argument for the call.
/// A typed function (`Function::from_typed`) cannot take a borrowed type — its
/// arguments are owned values with no lifetime tied to the call — so there an
/// [`NDArray`] parameter accepts NDArray objects only (a raw `DLTensor*` is refused with
/// a `TypeError`: making an owning NDArray from it would mean copying, or trusting that
/// the pointer outlives the NDArray), and a `*mut DLTensor` parameter accepts both, as a
/// raw pointer valid during the call.
///
/// ```
/// use object_containers::{Function, NDArray, TensorView};
/// use object_core::Any;
///
/// let sum = Function::from_packed(|args| {
///     let t = TensorView::try_from(args[0])?;
///     Ok(Any::from(t.as_slice::<f64>()?.iter().sum::<f64>()))
/// });
/// let a = NDArray::from_slice(&[3], &[1.0f64, 2.0, 3.5]).unwrap();
/// assert_eq!(sum.call_with([&a]).unwrap(), Any::from(6.5)); // as an object
/// assert_eq!(sum.call(&[a.as_raw_view().unwrap()]).unwrap(), Any::from(6.5)); // as a DLTensor*
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    tensor: &'a DLTensor,
    /// The NDArray object, when the view is of one.
    obj: Option<NonNull<NDArrayObj>>,
    numel: usize,
    _borrow: PhantomData<&'a NDArrayObj>,
}

// SAFETY: a view only reads a DLTensor that nobody writes while it is borrowed (the
// contracts of its constructors); the object, if any, is `Sync`.
unsafe impl Send for TensorView<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorView<'_> {}

impl<'a> From<&'a NDArray> for TensorView<'a> {
    fn from(a: &'a NDArray) -> Self {
        TensorView {
            tensor: a.as_dl_tensor(),
            obj: Some(object_address(a.as_object_ptr())),
            numel: a.numel(),
            _borrow: PhantomData,
        }
    }
}

impl<'a> TensorView<'a> {
    /// A view of a raw `DLTensor*`, checked like an import (rank, shape, strides,
    /// sizes, data type, device, null data, alignment on the host).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NullPointer`] for a null `p`, and the import checks.
    ///
    /// # Safety
    ///
    /// `p` must be null or point to a `DLTensor` that, with its shape and strides and its
    /// data as described, stays valid and unchanged for `'a` (nobody writes the data while
    /// the view or a slice from it lives).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::dlpack::DLTensor;
    /// use object_containers::TensorView;
    /// use object_core::{DataType, Device};
    ///
    /// let mut data = [1.0f32, 2.0, 3.0, 4.0];
    /// let mut shape = [2i64, 2];
    /// let t = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: Device::cpu(),
    ///     ndim: 2,
    ///     dtype: DataType::float(32),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // compact row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: `t`, its shape and its data outlive the view and are not written.
    /// let v = unsafe { TensorView::from_raw(&t) }.unwrap();
    /// assert_eq!(v.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub unsafe fn from_raw(p: *const DLTensor) -> Result<TensorView<'a>, NDArrayError> {
        if p.is_null() {
            return Err(NDArrayError::NullPointer("DLTensor"));
        }
        // SAFETY: the caller's contract.
        let tensor: &'a DLTensor = unsafe { &*p };
        // SAFETY: the caller's contract covers the shape and strides.
        let checked = unsafe { check_dl_tensor(tensor) }?;
        Ok(TensorView {
            tensor,
            obj: None,
            numel: checked.numel,
            _borrow: PhantomData,
        })
    }

    /// The DLTensor description.
    pub fn as_dl_tensor(&self) -> &'a DLTensor {
        self.tensor
    }

    /// The NDArray, if this is a view of an [`NDArray`] object (a new handle).
    pub fn ndarray(&self) -> Option<NDArray> {
        self.obj.map(|p| {
            // SAFETY: the object is alive for `'a` (the view borrows it) and its pointer
            // has the handle's provenance.
            let obj = unsafe { ObjectPtr::clone_from_raw(p.as_ptr()) };
            NDArray::from_object_ptr(obj)
        })
    }

    /// The view as a `DLTensor*` argument (type index 7), valid for `'a`.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::Lent`] for a view of an NDArray lent writable to foreign code.
    pub fn as_raw_view(&self) -> Result<AnyView<'a>, NDArrayError> {
        self.check_not_lent()?;
        // SAFETY: the DLTensor and what it describes are valid and unwritten for `'a`
        // (this view's own invariant; not lent: checked just now).
        Ok(unsafe { AnyView::from_dl_tensor_ptr(self.tensor as *const DLTensor as *mut c_void) })
    }

    /// Refuses a view of an NDArray that is lent writable to foreign code (see
    /// [`NDArray::lend_mut`]): its data must not be read while the lease lasts.
    pub(super) fn check_not_lent(&self) -> Result<(), NDArrayError> {
        match self.obj {
            // SAFETY: the view borrows the object for `'a`.
            Some(p) => unsafe { p.as_ref() }.check_not_lent(),
            None => Ok(()),
        }
    }

    /// The extents.
    pub fn shape(&self) -> &'a [i64] {
        let n = self.tensor.ndim as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: checked non-null with `ndim` entries, valid for `'a`.
        unsafe { core::slice::from_raw_parts(self.tensor.shape, n) }
    }

    /// The strides in elements, or `None` for a raw DLTensor without them (compact
    /// row-major).
    pub fn strides(&self) -> Option<&'a [i64]> {
        let n = self.tensor.ndim as usize;
        if n == 0 {
            return Some(&[]);
        }
        if self.tensor.strides.is_null() {
            return None;
        }
        // SAFETY: non-null with `ndim` entries, valid for `'a`.
        Some(unsafe { core::slice::from_raw_parts(self.tensor.strides, n) })
    }

    /// The strides, or compact row-major ones for a raw DLTensor without them.
    pub(super) fn strides_or_compact(&self) -> Result<std::borrow::Cow<'a, [i64]>, NDArrayError> {
        match self.strides() {
            Some(s) => Ok(std::borrow::Cow::Borrowed(s)),
            None => Ok(std::borrow::Cow::Owned(compact_strides(self.shape())?)),
        }
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.tensor.ndim as usize
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.tensor.dtype
    }
    /// Where the data lives.
    pub fn device(&self) -> Device {
        self.tensor.device
    }
    /// Bytes from the data pointer to the first element.
    pub fn byte_offset(&self) -> u64 {
        self.tensor.byte_offset
    }
    /// The address of the first element.
    pub fn data_ptr(&self) -> *const c_void {
        layout::first_element(self.tensor) as *const c_void
    }
    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.numel
    }
    /// Whether the layout is compact row-major.
    pub fn is_contiguous(&self) -> bool {
        self.strides().is_none_or(|s| is_compact(self.shape(), s))
    }

    /// The data as a slice of `T` (see [`NDArray::as_slice`]).
    ///
    /// # Errors
    ///
    /// As for [`NDArray::as_slice`].
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T], NDArrayError> {
        self.check_not_lent()?;
        if !self.is_contiguous() {
            layout::readable(self.tensor, T::DTYPE)?;
            return Err(NDArrayError::NotContiguous);
        }
        // SAFETY: checked at construction; readable and unwritten for `'a`.
        unsafe { typed_slice(self.tensor, self.numel) }
    }
}

impl fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorView")
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("dtype", &format_args!("{}", self.dtype()))
            .field("device", &format_args!("{}", self.device()))
            .field("object", &self.obj.is_some())
            .finish()
    }
}

/// Accepts an `ffi.Tensor` object or a borrowed `DLTensor*` (checked).
impl<'a> TryFrom<AnyView<'a>> for TensorView<'a> {
    type Error = NDArrayError;
    fn try_from(v: AnyView<'a>) -> Result<Self, NDArrayError> {
        if let Some(obj) = v.as_object_of::<NDArrayObj>() {
            let p = object_address(obj);
            // SAFETY: the view borrows the object for `'a`; the pointer is the handle's.
            let obj: &'a NDArrayObj = unsafe { &*p.as_ptr() };
            return Ok(TensorView {
                tensor: obj.dl_tensor(),
                obj: Some(p),
                numel: layout::numel_of(obj.shape())?,
                _borrow: PhantomData,
            });
        }
        if let Some(p) = v.as_dl_tensor_ptr() {
            // SAFETY: views of this kind point to a DLTensor valid for `'a`
            // (`AnyView::from_dl_tensor_ptr`'s contract).
            return unsafe { TensorView::from_raw(p as *const DLTensor) };
        }
        Err(NDArrayError::WrongType(TypeError::new(
            "ffi.Tensor or DLTensor*",
            v.type_key(),
        )))
    }
}
