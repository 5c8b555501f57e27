//! Copies: the strided copy every copying path uses, an NDArray's data out
//! ([`NDArray::to_bytes`], [`NDArray::deep_copy`]), a view's into a new NDArray
//! ([`TensorView::to_ndarray`]), and elements from any view into a writable NDArray
//! ([`NDArray::copy_from`]).

use core::ffi::c_void;
use core::ptr;

use object_core::Device;

use super::error::NDArrayError;
use super::layout::{compact_strides, first_element, is_compact, readable, MAX_NDIM};
use super::object::{allocate_data, new_object, Parts, Storage};
use super::{NDArray, TensorView};

/// A `Vec` with room for exactly `n` bytes, or [`NDArrayError::AllocationFailed`].
fn try_byte_vec(n: usize) -> Result<Vec<u8>, NDArrayError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| NDArrayError::AllocationFailed { bytes: n })?;
    Ok(v)
}

/// Copies the elements of a `shape`-shaped layout (`elem` bytes each, strides in
/// elements) from `src` to `dst`, in row-major order. Element by element along the last
/// axis, with `ptr::copy` (so overlapping memory gives wrong values at worst, never UB).
///
/// # Safety
///
/// Both layouts, from their first elements, stay inside memory readable (`src`) and
/// writable (`dst`) for every element; no reference to the `dst` bytes is alive.
unsafe fn copy_strided(
    shape: &[i64],
    elem: usize,
    src: *const u8,
    src_strides: &[i64],
    dst: *mut u8,
    dst_strides: &[i64],
) {
    if shape.contains(&0) {
        return;
    }
    let ndim = shape.len();
    if is_compact(shape, src_strides) && is_compact(shape, dst_strides) {
        let n = shape.iter().product::<i64>() as usize * elem;
        // SAFETY: both compact: `n` bytes from each start (the caller's contract).
        unsafe { ptr::copy(src, dst, n) };
        return;
    }
    if ndim == 0 {
        // SAFETY: one element on each side.
        unsafe { ptr::copy(src, dst, elem) };
        return;
    }
    let last = ndim - 1;
    let (inner, s_in, d_in) = (
        shape[last],
        src_strides[last] as isize,
        dst_strides[last] as isize,
    );
    let e = elem as isize;
    let mut index = [0i64; MAX_NDIM];
    loop {
        let (mut s_off, mut d_off) = (0isize, 0isize);
        for axis in 0..last {
            s_off += index[axis] as isize * src_strides[axis] as isize;
            d_off += index[axis] as isize * dst_strides[axis] as isize;
        }
        for j in 0..inner as isize {
            // SAFETY: the element at this index is inside both layouts (the caller's
            // contract); offsets were checked to fit when the layouts were made.
            unsafe {
                ptr::copy(
                    src.offset((s_off + j * s_in) * e),
                    dst.offset((d_off + j * d_in) * e),
                    elem,
                )
            };
        }
        // Next index over the outer axes (an odometer).
        let mut axis = last;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

impl NDArray {
    /// The data's bytes in compact row-major order (native byte order), copied, whatever
    /// the layout: what [`NDArray::from_bytes`] takes back.
    ///
    /// The copy has [`NDArray::nbytes`] bytes, which for a broadcast layout (a stride of
    /// 0) can be far more than the memory the NDArray spans.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`]; [`NDArrayError::AllocationFailed`] if the
    /// memory for the copy cannot be had (never an abort).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2, 2], &[1u8, 2, 3, 4]).unwrap();
    /// let column = a.reshape(&[4]).unwrap();
    /// assert_eq!(column.to_bytes().unwrap(), [1, 2, 3, 4]);
    /// ```
    pub fn to_bytes(&self) -> Result<Vec<u8>, NDArrayError> {
        if let Ok(b) = self.as_bytes() {
            let mut v = try_byte_vec(b.len())?;
            v.extend_from_slice(b);
            return Ok(v);
        }
        self.view().gather()
    }

    /// A compact, 64-byte-aligned, writable CPU copy (of [`NDArray::nbytes`] bytes; see
    /// [`NDArray::to_bytes`]).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`]; [`NDArrayError::AllocationFailed`] if the
    /// memory for the copy cannot be had (never an abort).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
    /// let mut b = a.deep_copy().unwrap();
    /// b.as_slice_mut::<f32>().unwrap()[0] = 9.0;
    /// assert_eq!(a.as_slice::<f32>().unwrap(), &[1.0, 2.0], "a copy, not a view");
    /// ```
    pub fn deep_copy(&self) -> Result<NDArray, NDArrayError> {
        self.view().to_ndarray()
    }

    /// Copies `src`'s elements into this NDArray (same shape and data type, any
    /// layouts).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::ReadOnly`], [`NDArrayError::Shared`] (as for
    /// [`NDArray::as_slice_mut`]), [`NDArrayError::ShapeMismatch`],
    /// [`NDArrayError::DataTypeMismatch`], [`NDArrayError::NotHostAccessible`].
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let src = NDArray::from_slice(&[2, 2], &[1i64, 2, 3, 4]).unwrap();
    /// let mut dst = NDArray::from_slice(&[2, 2], &[0i64; 4]).unwrap();
    /// dst.copy_from(&src).unwrap();
    /// assert_eq!(dst.as_slice::<i64>().unwrap(), &[1, 2, 3, 4]);
    /// ```
    pub fn copy_from<'b>(&mut self, src: impl Into<TensorView<'b>>) -> Result<(), NDArrayError> {
        let src = src.into();
        self.check_writable()?;
        src.check_not_lent()?;
        if src.shape() != self.shape() {
            return Err(NDArrayError::ShapeMismatch {
                expected: self.shape().to_vec(),
                actual: src.shape().to_vec(),
            });
        }
        readable(src.as_dl_tensor(), self.dtype())?;
        readable(self.as_dl_tensor(), self.dtype())?;
        let src_strides = src.strides_or_compact()?;
        // SAFETY: both descriptions are checked and on the host; the destination's memory is
        // reachable only through `self` (borrowed mutably), so no reference to it is
        // alive; the source is alive for `'b`.
        unsafe {
            copy_strided(
                self.shape(),
                self.dtype().bytes(),
                first_element(src.as_dl_tensor()),
                &src_strides,
                first_element(self.as_dl_tensor()),
                self.strides(),
            )
        };
        Ok(())
    }
}

impl<'a> TensorView<'a> {
    /// The size of a compact copy, and the layouts of the copy (compact strides) and of
    /// the source, after checking that the host reads the data.
    #[allow(clippy::type_complexity)]
    fn copy_plan(&self) -> Result<(usize, Vec<i64>, std::borrow::Cow<'a, [i64]>), NDArrayError> {
        self.check_not_lent()?;
        if !self.device().is_host_accessible() {
            return Err(NDArrayError::NotHostAccessible(self.device()));
        }
        // Checked at construction to fit; checked again, as it sizes an allocation.
        let n = self
            .numel()
            .checked_mul(self.dtype().bytes())
            .ok_or(NDArrayError::TooLarge)?;
        Ok((
            n,
            compact_strides(self.shape())?,
            self.strides_or_compact()?,
        ))
    }

    /// Copies the elements, compact row-major, to `dst`.
    ///
    /// # Safety
    ///
    /// `dst` is writable for the copy's size (from [`TensorView::copy_plan`], which gave
    /// `compact` and `src_strides`), and no reference to those bytes is alive.
    unsafe fn copy_to(&self, dst: *mut u8, compact: &[i64], src_strides: &[i64]) {
        // SAFETY: the source is checked, on the host (`copy_plan`), readable for `'a`;
        // the destination is the caller's contract.
        unsafe {
            copy_strided(
                self.shape(),
                self.dtype().bytes(),
                first_element(self.as_dl_tensor()),
                src_strides,
                dst,
                compact,
            )
        }
    }

    /// The elements' bytes, compact row-major, copied.
    fn gather(&self) -> Result<Vec<u8>, NDArrayError> {
        let (n, compact, src_strides) = self.copy_plan()?;
        let mut out = try_byte_vec(n)?;
        // SAFETY: `n` bytes of fresh capacity, all written by a compact copy of `numel`
        // elements before the length is set.
        unsafe {
            self.copy_to(out.as_mut_ptr(), &compact, &src_strides);
            out.set_len(n);
        }
        Ok(out)
    }

    /// A compact, 64-byte-aligned, writable CPU copy (for keeping a borrowed view), of
    /// `numel × element size` bytes (see [`NDArray::to_bytes`]).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`] for device memory;
    /// [`NDArrayError::AllocationFailed`] if the memory for the copy cannot be had (never
    /// an abort).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2], &[5u32, 6]).unwrap();
    /// let kept = a.view().to_ndarray().unwrap();
    /// assert!(!NDArray::ptr_eq(&kept, &a));
    /// assert_eq!(kept.as_slice::<u32>().unwrap(), &[5, 6]);
    /// ```
    pub fn to_ndarray(&self) -> Result<NDArray, NDArrayError> {
        let (n, compact, src_strides) = self.copy_plan()?;
        let (data, storage) = if n == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            let (data, storage) = allocate_data(n, false)?;
            // SAFETY: a fresh block of `n` bytes at `data`, every byte written by the
            // compact copy of `numel` elements before the NDArray is made.
            unsafe { self.copy_to(data, &compact, &src_strides) };
            (data as *mut c_void, storage)
        };
        // SAFETY: the view's shape was checked (compact strides fit: `copy_plan`); `n`
        // bytes at `data`, owned by `storage`, hold its elements.
        Ok(unsafe {
            new_object(Parts {
                shape: self.shape(),
                strides: None,
                data,
                byte_offset: 0,
                dtype: self.dtype(),
                device: Device::cpu(),
                storage,
                read_only: false,
            })
        })
    }
}
