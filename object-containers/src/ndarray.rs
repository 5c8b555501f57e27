//! `NDArray` (`ffi.Tensor`, static index 70): an n-dimensional array that is an object
//! and whose description is a DLPack `DLTensor`, embedded at a fixed offset.
//!
//! # Layout
//!
//! `NDArrayObj` is `#[repr(C)] { header, DLTensor, storage, read_only }`, followed in the
//! same allocation by the shape and the strides (`2 * ndim` `i64`s, which the tensor's
//! `shape` and `strides` point at). The `DLTensor` sits at
//! [`NDArrayObj::DL_TENSOR_OFFSET`] (16, right after the header) in every array, so an
//! object address and its tensor's address convert into each other by that offset: the
//! calling convention of the TVM RFC's "option 2", in which a tensor argument may be an
//! object or a raw `DLTensor*` ([`NDArray::as_dl_tensor_ptr`],
//! [`NDArray::from_dl_tensor_ptr`]).
//!
//! The data lives elsewhere, owned by the storage: a 64-byte-aligned CPU buffer
//! ([`NDArray::empty`], [`NDArray::from_slice`], [`NDArray::from_bytes`]), an adopted
//! `Vec` ([`NDArray::from_vec`]), the array a view was made from ([`NDArray::reshape`],
//! [`NDArray::slice`]), or a DLPack producer's managed tensor (imports, in
//! [`dlpack`](crate::dlpack)).
//!
//! # Sharing and mutation
//!
//! Cloning shares the array, as every handle does. Reading is always allowed
//! ([`NDArray::as_slice`]); writing ([`NDArray::as_slice_mut`], [`NDArray::copy_from`])
//! needs the array to be writable and its memory reachable through this handle only:
//! no other handle to the object, no other view of the same memory, no export alive.
//!
//! This module holds FFI entry points (the tensor is read through C pointers), hence its
//! `unsafe` blocks.

use core::alloc::Layout;
use core::ffi::c_void;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::mem::{offset_of, size_of, ManuallyDrop};
use core::ops::{Bound, RangeBounds};
use core::ptr::{self, NonNull};
use std::alloc::{alloc, alloc_zeroed, dealloc, handle_alloc_error};

use object_core::{Allocator, AnyView, DataType, Deleter, Device, Object, ObjectPtr, TypeError};

use crate::dlpack::{DLManagedTensor, DLManagedTensorVersioned, DLTensor};
use crate::Error;

/// The most dimensions an array may have (as in NumPy 2); imports with more are refused.
pub const MAX_NDIM: usize = 64;

/// The alignment of the data of arrays this crate allocates.
pub const ALIGNMENT: usize = 64;

/// `kDLROCMHost`: ROCm pinned host memory.
const ROCM_HOST: i32 = 11;

/// The highest `DLDataTypeCode` with whole-byte elements (`kDLFloat8_e8m0fnu`); codes
/// above it are the sub-byte float6/float4 types.
const MAX_BYTE_TYPE_CODE: u8 = 14;

// ---------------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------------

/// Why an array could not be made, imported, read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NDArrayError {
    /// A null pointer where one is required (`"managed tensor"`, `"shape"`, …).
    NullPointer(&'static str),
    /// `data` is null but the tensor has elements.
    NullData {
        /// The number of elements.
        numel: usize,
    },
    /// `ndim` is negative or above [`MAX_NDIM`].
    BadNdim {
        /// The number of dimensions given.
        ndim: i64,
    },
    /// A negative extent.
    NegativeDim {
        /// The axis.
        axis: usize,
        /// Its extent.
        dim: i64,
    },
    /// The element count, the byte size or the memory span overflows.
    TooLarge,
    /// A data type without whole-byte elements, or with an unknown code.
    UnsupportedDataType(DataType),
    /// A device DLPack does not define, one this operation cannot use, or a negative id.
    UnsupportedDevice(Device),
    /// The first element is not aligned for the data type.
    Misaligned {
        /// The address of the first element.
        address: usize,
        /// The alignment required.
        align: usize,
    },
    /// A versioned managed tensor of another major version.
    UnsupportedVersion {
        /// Its major version.
        major: u32,
        /// Its minor version.
        minor: u32,
    },
    /// The array's data type is not the one asked for.
    DataTypeMismatch {
        /// The data type asked for.
        expected: DataType,
        /// The array's.
        actual: DataType,
    },
    /// The operation needs a compact row-major layout.
    NotContiguous,
    /// The data is on a device the host cannot read.
    NotHostAccessible(Device),
    /// The array is read-only.
    ReadOnly,
    /// The memory is reachable through another handle, view or export.
    Shared,
    /// Two shapes (or element counts) that must agree do not.
    ShapeMismatch {
        /// The shape required.
        expected: Vec<i64>,
        /// The shape given.
        actual: Vec<i64>,
    },
    /// A buffer of the wrong length for the shape and data type.
    LengthMismatch {
        /// The length required (elements or bytes, as the operation says).
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A slice outside the first axis.
    OutOfRange {
        /// The start asked for.
        start: usize,
        /// The end asked for.
        end: usize,
        /// The extent of the first axis.
        len: usize,
    },
    /// The allocator refused the memory for a new array or a copy: a size that is valid
    /// but more than the machine has (a broadcast array, stride 0, copied out to
    /// [`NDArray::to_bytes`] or [`NDArray::deep_copy`], or a huge [`NDArray::empty`]).
    /// Converts into an [`Error`] of kind `MemoryError`.
    AllocationFailed {
        /// The bytes asked for (the data's size).
        bytes: usize,
    },
    /// A value of another type where a tensor was expected.
    WrongType(TypeError),
}

impl fmt::Display for NDArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NDArrayError::NullPointer(what) => write!(f, "the {what} pointer is null"),
            NDArrayError::NullData { numel } => {
                write!(f, "the data pointer is null but the tensor has {numel} elements")
            }
            NDArrayError::BadNdim { ndim } => {
                write!(f, "ndim {ndim} is outside 0..={MAX_NDIM}")
            }
            NDArrayError::NegativeDim { axis, dim } => {
                write!(f, "axis {axis} has a negative extent ({dim})")
            }
            NDArrayError::TooLarge => f.write_str("the tensor's size overflows"),
            NDArrayError::UnsupportedDataType(t) => write!(
                f,
                "unsupported data type {t} (code {}, {} bits, {} lanes): elements must be whole bytes of a DLPack type",
                t.code, t.bits, t.lanes
            ),
            NDArrayError::UnsupportedDevice(d) => write!(f, "unsupported device {d}"),
            NDArrayError::Misaligned { address, align } => write!(
                f,
                "the first element at {address:#x} is not aligned to {align} bytes"
            ),
            NDArrayError::UnsupportedVersion { major, minor } => write!(
                f,
                "DLPack version {major}.{minor} is not supported (major version {} expected)",
                crate::dlpack::DLPACK_MAJOR_VERSION
            ),
            NDArrayError::DataTypeMismatch { expected, actual } => {
                write!(f, "expected data type {expected}, the array holds {actual}")
            }
            NDArrayError::NotContiguous => {
                f.write_str("the array is not contiguous (compact row-major)")
            }
            NDArrayError::NotHostAccessible(d) => {
                write!(f, "the data is on {d}, which the host cannot read")
            }
            NDArrayError::ReadOnly => f.write_str("the array is read-only"),
            NDArrayError::Shared => f.write_str(
                "the array's memory is shared with another handle, view or export",
            ),
            NDArrayError::ShapeMismatch { expected, actual } => {
                write!(f, "expected shape {expected:?}, got {actual:?}")
            }
            NDArrayError::LengthMismatch { expected, actual } => {
                write!(f, "expected a buffer of length {expected}, got {actual}")
            }
            NDArrayError::OutOfRange { start, end, len } => write!(
                f,
                "slice {start}..{end} is out of range for a first axis of extent {len}"
            ),
            NDArrayError::AllocationFailed { bytes } => {
                write!(f, "cannot allocate {bytes} bytes for the array")
            }
            NDArrayError::WrongType(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for NDArrayError {}

impl From<TypeError> for NDArrayError {
    fn from(e: TypeError) -> Self {
        NDArrayError::WrongType(e)
    }
}

/// Type errors (a wrong data type or value kind) become `TypeError`s, a refused
/// allocation a `MemoryError`, the rest `ValueError`s.
impl From<NDArrayError> for Error {
    fn from(e: NDArrayError) -> Self {
        match e {
            NDArrayError::WrongType(t) => Error::from(t),
            NDArrayError::DataTypeMismatch { .. } => Error::type_error(e.to_string()),
            NDArrayError::AllocationFailed { .. } => Error::new("MemoryError", e.to_string()),
            _ => Error::value_error(e.to_string()),
        }
    }
}

// ---------------------------------------------------------------------------------
// Element types.
// ---------------------------------------------------------------------------------

/// A Rust type that is an array element of one DLPack data type, for typed slices
/// ([`NDArray::as_slice`]) and construction ([`NDArray::from_slice`]).
///
/// Implemented for `i8`…`i64`, `u8`…`u64`, `f32` and `f64`. (Not for `bool`: DLPack's
/// 8-bit booleans may hold bytes other than 0 and 1, which a Rust `bool` may not.)
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, the type has no
/// padding, and `size_of::<Self>() == DTYPE.bytes()`.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The data type of arrays of `Self`.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dt:expr),*) => {$(
        // SAFETY: a primitive number: every bit pattern valid, no padding, and its size
        // is the data type's (checked below).
        unsafe impl Element for $t {
            const DTYPE: DataType = $dt;
        }
        const _: () = assert!(size_of::<$t>() == <$t as Element>::DTYPE.bytes());
    )*};
}
element!(
    i8 => DataType::int(8), i16 => DataType::int(16), i32 => DataType::int(32), i64 => DataType::int(64),
    u8 => DataType::uint(8), u16 => DataType::uint(16), u32 => DataType::uint(32), u64 => DataType::uint(64),
    f32 => DataType::float(32), f64 => DataType::float(64)
);

// ---------------------------------------------------------------------------------
// Checks shared by construction, import and views.
// ---------------------------------------------------------------------------------

/// Bytes per element, if the data type is one arrays hold.
#[inline]
pub(crate) fn element_bytes(dtype: DataType) -> Result<usize, NDArrayError> {
    let ok = dtype.code <= MAX_BYTE_TYPE_CODE
        && dtype.bits > 0
        && dtype.bits % 8 == 0
        && dtype.lanes > 0
        && (dtype.code != DataType::COMPLEX || dtype.bits % 16 == 0);
    if ok {
        Ok(dtype.bytes())
    } else {
        Err(NDArrayError::UnsupportedDataType(dtype))
    }
}

/// The alignment the first element needs on the host: the scalar's (a complex number's
/// part's) size, as a power of two, at most 8.
fn element_align(dtype: DataType) -> usize {
    let mut scalar = dtype.bits as usize / 8;
    if dtype.code == DataType::COMPLEX {
        scalar /= 2;
    }
    let pow2 = scalar & scalar.wrapping_neg();
    pow2.clamp(1, 8)
}

/// Accepts the device types of `DLDeviceType` (v1.1: 1 to 4 and 7 to 18) with a
/// non-negative id.
#[inline]
fn check_device(device: Device) -> Result<(), NDArrayError> {
    if matches!(device.device_type, 1..=4 | 7..=18) && device.device_id >= 0 {
        Ok(())
    } else {
        Err(NDArrayError::UnsupportedDevice(device))
    }
}

/// Whether the host reads the device's memory directly: CPU, CUDA pinned host memory,
/// ROCm pinned host memory. Only these are read or written from Rust.
#[inline]
pub(crate) fn host_accessible(device: Device) -> bool {
    matches!(
        device.device_type,
        Device::CPU | Device::CUDA_HOST | ROCM_HOST
    )
}

/// The element count of a shape; checks the rank and each extent. A shape with a zero
/// extent has no elements, whatever the product of the others (`[1 << 62, 4, 0]` is
/// empty, not an overflow).
pub(crate) fn numel_of(shape: &[i64]) -> Result<usize, NDArrayError> {
    if shape.len() > MAX_NDIM {
        return Err(NDArrayError::BadNdim {
            ndim: shape.len() as i64,
        });
    }
    if let Some((axis, &dim)) = shape.iter().enumerate().find(|(_, &d)| d < 0) {
        return Err(NDArrayError::NegativeDim { axis, dim });
    }
    if shape.contains(&0) {
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d as usize))
        .ok_or(NDArrayError::TooLarge)
}

/// Checks that compact row-major strides for `shape` fit in `i64` (rank already
/// checked). Axes of extent 0 or 1 count as 1, as in PyTorch. An empty array always
/// passes: no element is ever addressed through its strides, so where the product
/// overflows [`write_compact_strides`] saturates instead.
fn check_compact(shape: &[i64]) -> Result<(), NDArrayError> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut acc: i64 = 1;
    for &d in shape.iter().skip(1).rev() {
        acc = acc.checked_mul(d.max(1)).ok_or(NDArrayError::TooLarge)?;
    }
    Ok(())
}

/// Writes compact row-major strides for `shape` into `out` (as long as the shape),
/// after [`check_compact`] passed. The products saturate at `i64::MAX`, which only an
/// empty array's strides can reach (`[0, i64::MAX, 7]` gets `[i64::MAX, 7, 1]`).
fn write_compact_strides(shape: &[i64], out: &mut [i64]) {
    let mut acc: i64 = 1;
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        *o = acc;
        acc = acc.saturating_mul(d.max(1));
    }
}

/// Compact row-major strides for `shape`, allocated (for the copying paths).
fn compact_strides(shape: &[i64]) -> Result<Vec<i64>, NDArrayError> {
    check_compact(shape)?;
    let mut out = vec![0; shape.len()];
    write_compact_strides(shape, &mut out);
    Ok(out)
}

/// Whether `strides` describe a compact row-major layout of `shape` (axes of extent 1
/// may have any stride; an empty array is contiguous).
fn is_compact(shape: &[i64], strides: &[i64]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected: i64 = 1;
    for (&dim, &stride) in shape.iter().zip(strides).rev() {
        if dim != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(dim);
    }
    true
}

/// A tensor description that passed [`check_dl_tensor`].
pub(crate) struct Checked<'a> {
    pub(crate) shape: &'a [i64],
    /// `None`: compact row-major.
    pub(crate) strides: Option<&'a [i64]>,
}

/// The lowest and highest element offsets (in elements) a layout reaches: `Ok(None)`
/// for an empty array, `Err` if they overflow `i128` (strides from a foreign producer
/// can be anything).
fn element_span(shape: &[i64], strides: &[i64]) -> Result<Option<(i128, i128)>, NDArrayError> {
    if shape.contains(&0) {
        return Ok(None);
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&dim, &stride) in shape.iter().zip(strides) {
        let reach = (dim as i128 - 1)
            .checked_mul(stride as i128)
            .ok_or(NDArrayError::TooLarge)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or(NDArrayError::TooLarge)?;
        } else {
            hi = hi.checked_add(reach).ok_or(NDArrayError::TooLarge)?;
        }
    }
    Ok(Some((lo, hi)))
}

/// Checks a foreign tensor description: rank, shape, strides, sizes, data type, device,
/// null data, host alignment. Never reads the data.
///
/// # Safety
///
/// If `t.ndim` is in `1..=MAX_NDIM` and `t.shape` (resp. `t.strides`) is not null, it
/// must point to `ndim` readable `i64`s that stay unchanged for `'a`.
#[inline]
pub(crate) unsafe fn check_dl_tensor<'a>(t: &'a DLTensor) -> Result<Checked<'a>, NDArrayError> {
    let ndim = usize::try_from(t.ndim)
        .ok()
        .filter(|&n| n <= MAX_NDIM)
        .ok_or(NDArrayError::BadNdim {
            ndim: t.ndim as i64,
        })?;
    let shape: &[i64] = if ndim == 0 {
        &[]
    } else if t.shape.is_null() {
        return Err(NDArrayError::NullPointer("shape"));
    } else {
        // SAFETY: the caller's contract: `ndim` readable extents.
        unsafe { core::slice::from_raw_parts(t.shape, ndim) }
    };
    let numel = numel_of(shape)?;
    let elem = element_bytes(t.dtype)?;
    check_device(t.device)?;
    let nbytes = numel.checked_mul(elem).ok_or(NDArrayError::TooLarge)?;
    if nbytes > isize::MAX as usize {
        return Err(NDArrayError::TooLarge);
    }
    let strides = if ndim == 0 || t.strides.is_null() {
        check_compact(shape)?;
        None
    } else {
        // SAFETY: the caller's contract: `ndim` readable strides.
        Some(unsafe { core::slice::from_raw_parts(t.strides, ndim) })
    };
    let span = match strides {
        Some(st) => element_span(shape, st)?,
        None if numel == 0 => None,
        None => Some((0, numel as i128 - 1)),
    };
    let Some((lo, hi)) = span else {
        return Ok(Checked { shape, strides });
    };
    // The bytes from the lowest to past the highest element must fit in `isize`; then
    // every offset below is bounded by it.
    let elem_i = elem as i128;
    let span = (hi - lo + 1)
        .checked_mul(elem_i)
        .ok_or(NDArrayError::TooLarge)?;
    if span > isize::MAX as i128 || t.byte_offset > isize::MAX as u64 {
        return Err(NDArrayError::TooLarge);
    }
    if t.data.is_null() {
        return Err(NDArrayError::NullData { numel });
    }
    if host_accessible(t.device) {
        // Every element's address must be a real address (no wrap-around).
        let first = t.data as usize as i128 + t.byte_offset as i128;
        if first + lo * elem_i < 0 || first + (hi + 1) * elem_i > usize::MAX as i128 {
            return Err(NDArrayError::TooLarge);
        }
        let align = element_align(t.dtype);
        if first as usize % align != 0 {
            return Err(NDArrayError::Misaligned {
                address: first as usize,
                align,
            });
        }
    }
    Ok(Checked { shape, strides })
}

/// Copies the elements of a `shape`-shaped array (`elem` bytes each, strides in
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

/// A typed slice of a tensor's data, after every check.
///
/// # Safety
///
/// `t` is a checked tensor whose data (if on a host device) is readable for `'a` and
/// not written while the slice lives.
unsafe fn typed_slice<'a, T: Element>(t: &DLTensor, numel: usize) -> Result<&'a [T], NDArrayError> {
    readable(t, T::DTYPE)?;
    if numel == 0 {
        return Ok(&[]);
    }
    let p = first_element(t) as *const T;
    if (p as usize) % align_of_t::<T>() != 0 {
        return Err(NDArrayError::Misaligned {
            address: p as usize,
            align: align_of_t::<T>(),
        });
    }
    // SAFETY: a compact layout of `numel` elements of `T` (checked: data type and
    // contiguity) at an aligned, non-null address; readability is the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(p, numel) })
}

fn align_of_t<T>() -> usize {
    core::mem::align_of::<T>()
}

/// The common checks before reading a tensor's data as `dtype` elements.
fn readable(t: &DLTensor, dtype: DataType) -> Result<(), NDArrayError> {
    if t.dtype != dtype {
        return Err(NDArrayError::DataTypeMismatch {
            expected: dtype,
            actual: t.dtype,
        });
    }
    if !host_accessible(t.device) {
        return Err(NDArrayError::NotHostAccessible(t.device));
    }
    Ok(())
}

/// `data + byte_offset`, with wrapping arithmetic (only dereferenced after checks).
fn first_element(t: &DLTensor) -> *mut u8 {
    (t.data as *mut u8).wrapping_add(t.byte_offset as usize)
}

/// A shape and strides as slices of a tensor (ours are never null).
///
/// # Safety
///
/// `t`'s `shape` and `strides` point to `ndim` `i64`s each, valid for `'a`.
unsafe fn dims_of<'a>(t: &DLTensor) -> (&'a [i64], &'a [i64]) {
    let n = t.ndim as usize;
    if n == 0 {
        return (&[], &[]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        (
            core::slice::from_raw_parts(t.shape, n),
            core::slice::from_raw_parts(t.strides, n),
        )
    }
}

// ---------------------------------------------------------------------------------
// The object.
// ---------------------------------------------------------------------------------

/// What keeps an array's data alive.
pub(crate) enum Storage {
    /// No data (no elements).
    None,
    /// A buffer from the global allocator (`block` with `layout`; the data may start
    /// after `block`, at the first 64-byte boundary).
    Aligned { block: NonNull<u8>, layout: Layout },
    /// An adopted `Vec<T>`'s buffer, freed by `free(ptr, capacity)`.
    Vec {
        ptr: NonNull<u8>,
        capacity: usize,
        free: unsafe fn(NonNull<u8>, usize),
    },
    /// A view: the array whose memory it shares (never itself a view).
    View(NDArray),
    /// An imported legacy managed tensor; dropping calls its deleter.
    Managed(NonNull<DLManagedTensor>),
    /// An imported versioned managed tensor; dropping calls its deleter.
    ManagedVersioned(NonNull<DLManagedTensorVersioned>),
}

impl Drop for Storage {
    fn drop(&mut self) {
        match *self {
            Storage::None | Storage::View(_) => {}
            // SAFETY: the block was allocated with this layout and is freed once, here.
            Storage::Aligned { block, layout } => unsafe { dealloc(block.as_ptr(), layout) },
            Storage::Vec {
                ptr,
                capacity,
                free,
            } => {
                // SAFETY: `free` is `free_vec::<T>` for the `Vec<T>` this buffer came from.
                unsafe { free(ptr, capacity) }
            }
            // SAFETY: an imported tensor this storage owns; dropped once.
            Storage::Managed(m) => unsafe { crate::dlpack::release(m) },
            // SAFETY: as above.
            Storage::ManagedVersioned(m) => unsafe { crate::dlpack::release_versioned(m) },
        }
    }
}

/// Frees an adopted `Vec<T>` buffer.
///
/// # Safety
///
/// `ptr` and `capacity` are those of a `Vec<T>` whose ownership was given up; called
/// once.
unsafe fn free_vec<T>(ptr: NonNull<u8>, capacity: usize) {
    // SAFETY: the caller's contract; length 0, as `Element`s need no drop.
    drop(unsafe { Vec::from_raw_parts(ptr.as_ptr() as *mut T, 0, capacity) });
}

/// Allocates the data of a new CPU array: `nbytes` (nonzero) bytes starting at a
/// 64-byte boundary, owned by the returned storage. Zeroed memory comes from a
/// 16-aligned block with room to skip to the boundary (the system allocator's `calloc`
/// path: fresh pages, free until touched); otherwise the block is 64-aligned and
/// uninitialized, for the caller to write in full before anyone reads it.
///
/// Never aborts: the sizes come from shapes and strides a caller or a producer chose,
/// so a refusal is [`NDArrayError::AllocationFailed`].
fn allocate_data(nbytes: usize, zeroed: bool) -> Result<(*mut u8, Storage), NDArrayError> {
    debug_assert!(nbytes > 0);
    let (size, align) = if zeroed {
        (nbytes.checked_add(ALIGNMENT), 16)
    } else {
        (Some(nbytes), ALIGNMENT)
    };
    let layout = size
        .and_then(|size| Layout::from_size_align(size, align).ok())
        .ok_or(NDArrayError::TooLarge)?;
    // SAFETY: a nonzero size.
    let block = unsafe {
        if zeroed {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    };
    let block = NonNull::new(block).ok_or(NDArrayError::AllocationFailed { bytes: nbytes })?;
    let skip = (ALIGNMENT - block.as_ptr() as usize % ALIGNMENT) % ALIGNMENT;
    debug_assert!(zeroed || skip == 0);
    // SAFETY: `skip < ALIGNMENT`, and a skip is only needed in a zeroed block, which has
    // `ALIGNMENT` bytes beyond `nbytes`: the data is inside the block.
    let data = unsafe { block.as_ptr().add(skip) };
    Ok((data, Storage::Aligned { block, layout }))
}

/// A `Vec` with room for exactly `n` bytes, or [`NDArrayError::AllocationFailed`].
fn try_byte_vec(n: usize) -> Result<Vec<u8>, NDArrayError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| NDArrayError::AllocationFailed { bytes: n })?;
    Ok(v)
}

/// The object behind [`NDArray`]: the header, the DLPack description, what owns the
/// data, and whether the array is read-only; shape and strides follow in the same
/// allocation.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Tensor", index = 70, final, opaque)]
pub struct NDArrayObj {
    base: Object,
    tensor: DLTensor,
    storage: Storage,
    read_only: bool,
}

// SAFETY: the object owns its data (or shares it with a view base, or holds a DLPack
// producer's tensor, whose deleter DLPack allows on any thread); shared access only
// reads, and writing needs unique access to the memory (`NDArray::is_unique`). The raw
// pointers point into the object's own block or at that data.
unsafe impl Send for NDArrayObj {}
// SAFETY: as above.
unsafe impl Sync for NDArrayObj {}

/// The DLTensor is right after the header: the fixed offset of the calling convention.
const _: () = assert!(offset_of!(NDArrayObj, tensor) == size_of::<Object>());

impl NDArrayObj {
    /// The offset of the embedded `DLTensor` from the object's address (16).
    pub const DL_TENSOR_OFFSET: usize = offset_of!(NDArrayObj, tensor);

    /// The embedded DLPack description.
    pub fn dl_tensor(&self) -> &DLTensor {
        &self.tensor
    }
}

impl fmt::Debug for NDArrayObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NDArrayObj")
            .field("ndim", &self.tensor.ndim)
            .field("dtype", &format_args!("{}", self.tensor.dtype))
            .field("device", &format_args!("{}", self.tensor.device))
            .finish()
    }
}

/// Where the shape and strides start, from the object's address.
const DIMS_OFFSET: usize = size_of::<NDArrayObj>();
const _: () = assert!(DIMS_OFFSET % core::mem::align_of::<i64>() == 0);

/// The block of an array object with `ndim` dimensions.
fn block_layout(ndim: usize) -> Layout {
    // `ndim <= MAX_NDIM`, so the size is a few hundred bytes.
    match Layout::from_size_align(
        DIMS_OFFSET + 2 * ndim * size_of::<i64>(),
        core::mem::align_of::<NDArrayObj>(),
    ) {
        Ok(l) => l,
        Err(_) => unreachable!("the block of an array with at most {MAX_NDIM} dimensions"),
    }
}

/// Allocates array objects with room for their shape and strides.
struct TensorAlloc {
    ndim: usize,
}

unsafe extern "C" fn tensor_deleter(obj: *mut Object) {
    let p = obj as *mut NDArrayObj;
    // SAFETY: called once, on the last release, with the address `TensorAlloc` returned
    // (full provenance over the block); the value's `ndim` is the allocator's (see
    // `NDArray::from_parts`), so the layout is the one allocated.
    unsafe {
        let ndim = ptr::addr_of!((*p).tensor.ndim).read() as usize;
        object_core::drop_object_in_place(p);
        dealloc(p as *mut u8, block_layout(ndim));
    }
}

// SAFETY: a fresh block of `block_layout(ndim)`, aligned for `NDArrayObj` and at least
// its size; `tensor_deleter` drops the value once and frees that block, reading only the
// value's `ndim`, which `from_parts` sets to this allocator's `ndim`.
unsafe impl Allocator<NDArrayObj> for TensorAlloc {
    fn allocate(&self) -> (NonNull<NDArrayObj>, Deleter) {
        let layout = block_layout(self.ndim);
        // SAFETY: nonzero size (the object's).
        let p = unsafe { alloc(layout) } as *mut NDArrayObj;
        match NonNull::new(p) {
            Some(p) => (p, tensor_deleter),
            None => handle_alloc_error(layout),
        }
    }
}

// ---------------------------------------------------------------------------------
// The handle.
// ---------------------------------------------------------------------------------

/// An n-dimensional array, `ffi.Tensor`: an object whose description is a DLPack
/// `DLTensor`, so it can sit in an `Array`, a `Map`, an object field or an `Any`, pass
/// through a [`Function`](crate::Function), and cross to NumPy, PyTorch and friends
/// through DLPack without a copy ([`dlpack`](crate::dlpack)).
///
/// Cloning shares the array (a count increment); equality and hashing are by identity,
/// as for object handles. Data is read through checked typed slices (data type,
/// contiguity, host device) and written only when this handle reaches the memory alone
/// (see [`NDArray::as_slice_mut`]).
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

/// What [`NDArray::from_parts`] assembles.
pub(crate) struct Parts<'s> {
    pub(crate) shape: &'s [i64],
    /// `None`: compact row-major (checked with `check_compact`), written in place.
    pub(crate) strides: Option<&'s [i64]>,
    pub(crate) data: *mut c_void,
    pub(crate) byte_offset: u64,
    pub(crate) dtype: DataType,
    pub(crate) device: Device,
    pub(crate) storage: Storage,
    pub(crate) read_only: bool,
}

impl NDArray {
    /// Assembles an array object. The description must be checked (rank at most
    /// `MAX_NDIM`, strides as long as the shape, the data valid as described).
    #[inline]
    pub(crate) fn from_parts(parts: Parts<'_>) -> NDArray {
        let ndim = parts.shape.len();
        debug_assert!(ndim <= MAX_NDIM && parts.strides.is_none_or(|s| s.len() == ndim));
        let value = NDArrayObj {
            base: Object::new(),
            tensor: DLTensor {
                data: parts.data,
                device: parts.device,
                ndim: ndim as i32,
                dtype: parts.dtype,
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: parts.byte_offset,
            },
            storage: parts.storage,
            read_only: parts.read_only,
        };
        let obj = TensorAlloc { ndim }.make(value);
        let raw = ObjectPtr::as_ptr(&obj) as *mut NDArrayObj;
        // SAFETY: a fresh object we alone hold, in a block with room for `2 * ndim`
        // `i64`s at `DIMS_OFFSET`; `raw` has the block's provenance (from the allocator)
        // and no reference to the object is alive while we write.
        unsafe {
            let dims = (raw as *mut u8).add(DIMS_OFFSET) as *mut i64;
            ptr::copy_nonoverlapping(parts.shape.as_ptr(), dims, ndim);
            match parts.strides {
                Some(st) => ptr::copy_nonoverlapping(st.as_ptr(), dims.add(ndim), ndim),
                None => write_compact_strides(
                    parts.shape,
                    core::slice::from_raw_parts_mut(dims.add(ndim), ndim),
                ),
            }
            ptr::addr_of_mut!((*raw).tensor.shape).write(dims);
            ptr::addr_of_mut!((*raw).tensor.strides).write(dims.add(ndim));
        }
        NDArray(obj)
    }

    /// A zero-filled array on the CPU, its data aligned to 64 bytes.
    ///
    /// The data is zeroed rather than left uninitialized, because Rust code may read it
    /// (through [`NDArray::as_slice`]); for large arrays the zeroing is the operating
    /// system's fresh pages (`calloc`), which cost nothing until touched.
    ///
    /// # Errors
    ///
    /// A negative extent, more than [`MAX_NDIM`] dimensions, a size that overflows, an
    /// unsupported data type (elements must be whole bytes), or a device other than
    /// `cpu:0`; [`NDArrayError::AllocationFailed`] if the memory cannot be had (never an
    /// abort).
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<NDArray, NDArrayError> {
        let (numel, nbytes) = Self::check_new(shape, dtype, device)?;
        let (data, storage) = if numel == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            let (data, storage) = allocate_data(nbytes, true)?;
            (data as *mut c_void, storage)
        };
        Ok(Self::from_parts(Parts {
            shape,
            strides: None,
            data,
            byte_offset: 0,
            dtype,
            device,
            storage,
            read_only: false,
        }))
    }

    /// The element count and byte size of a new CPU array, after every check.
    fn check_new(
        shape: &[i64],
        dtype: DataType,
        device: Device,
    ) -> Result<(usize, usize), NDArrayError> {
        let numel = numel_of(shape)?;
        let elem = element_bytes(dtype)?;
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

    /// A new CPU array holding a copy of `bytes` (native byte order, compact row-major),
    /// 64-byte aligned. The inverse of [`NDArray::to_bytes`].
    ///
    /// ```
    /// use object_containers::NDArray;
    /// use object_core::{DataType, Device};
    /// let a = NDArray::from_slice(&[2], &[1.5f64, -2.0]).unwrap();
    /// let b = NDArray::from_bytes(a.shape(), a.dtype(), a.device(), &a.to_bytes().unwrap()).unwrap();
    /// assert_eq!(b.as_slice::<f64>().unwrap(), &[1.5, -2.0]);
    /// assert!(NDArray::from_bytes(&[3], DataType::float(64), Device::cpu(), &[0; 16]).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`NDArray::empty`], and [`NDArrayError::LengthMismatch`] (in bytes) if
    /// `bytes` does not hold exactly the array.
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

    /// A new CPU array holding a copy of `data`, 64-byte aligned.
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[2, 2], &[1u8, 2, 3, 4]).unwrap();
    /// assert_eq!(a.as_slice::<u8>().unwrap(), &[1, 2, 3, 4]);
    /// assert!(NDArray::from_slice(&[3], &[1u8, 2]).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`NDArray::empty`], and [`NDArrayError::LengthMismatch`] (in elements) if
    /// `data` does not have as many elements as the shape.
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<NDArray, NDArrayError> {
        let (numel, _) = Self::check_new(shape, T::DTYPE, Device::cpu())?;
        if data.len() != numel {
            return Err(NDArrayError::LengthMismatch {
                expected: numel,
                actual: data.len(),
            });
        }
        // SAFETY: `Element`s have no padding, so their bytes are initialized.
        let bytes = unsafe {
            core::slice::from_raw_parts(data.as_ptr() as *const u8, core::mem::size_of_val(data))
        };
        Self::copied(shape, T::DTYPE, bytes)
    }

    /// A new 64-aligned CPU array holding `bytes` (already checked against the shape).
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
        Ok(Self::from_parts(Parts {
            shape,
            strides: None,
            data,
            byte_offset: 0,
            dtype,
            device: Device::cpu(),
            storage,
            read_only: false,
        }))
    }

    /// A CPU array that takes over `data`'s buffer, without copying (its alignment is
    /// `T`'s, not 64 bytes). The buffer is freed as a `Vec<T>` when the array goes.
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let v = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let p = v.as_ptr();
    /// let a = NDArray::from_vec(&[3, 2], v).unwrap();
    /// assert_eq!(a.data_ptr() as *const f32, p);
    /// assert_eq!(a.as_slice::<f32>().unwrap()[5], 6.0);
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`NDArray::from_slice`] (the vector is dropped).
    pub fn from_vec<T: Element>(shape: &[i64], data: Vec<T>) -> Result<NDArray, NDArrayError> {
        let (numel, _) = Self::check_new(shape, T::DTYPE, Device::cpu())?;
        if data.len() != numel {
            return Err(NDArrayError::LengthMismatch {
                expected: numel,
                actual: data.len(),
            });
        }
        let (ptr, storage) = if numel == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            let mut v = ManuallyDrop::new(data);
            let p = v.as_mut_ptr() as *mut u8;
            // SAFETY: a vector with elements has a non-null buffer.
            let nn = unsafe { NonNull::new_unchecked(p) };
            (
                p as *mut c_void,
                Storage::Vec {
                    ptr: nn,
                    capacity: v.capacity(),
                    free: free_vec::<T>,
                },
            )
        };
        Ok(Self::from_parts(Parts {
            shape,
            strides: None,
            data: ptr,
            byte_offset: 0,
            dtype: T::DTYPE,
            device: Device::cpu(),
            storage,
            read_only: false,
        }))
    }

    #[inline]
    fn obj(&self) -> &NDArrayObj {
        &self.0
    }

    /// The embedded DLPack description.
    #[inline]
    pub fn as_dl_tensor(&self) -> &DLTensor {
        &self.obj().tensor
    }

    /// The address of the embedded `DLTensor`: what the RFC's calling convention passes
    /// for an array, and what C code expecting a `DLTensor*` reads. Valid while this
    /// handle (or another to the same object) lives. The description itself must never
    /// be changed through it; C code may write the data only where Rust could
    /// ([`NDArray::as_slice_mut`]'s conditions).
    #[inline]
    pub fn as_dl_tensor_ptr(&self) -> *mut DLTensor {
        (object_address(&self.0).as_ptr() as *mut u8).wrapping_add(NDArrayObj::DL_TENSOR_OFFSET)
            as *mut DLTensor
    }

    /// The array whose embedded tensor `p` is: the inverse of
    /// [`NDArray::as_dl_tensor_ptr`] (the object is at `p - DL_TENSOR_OFFSET`), taking
    /// a new reference.
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let a = NDArray::from_slice(&[1], &[7u32]).unwrap();
    /// let p = a.as_dl_tensor_ptr();
    /// // SAFETY: `p` is `a`'s tensor and `a` is alive.
    /// let b = unsafe { NDArray::from_dl_tensor_ptr(p) };
    /// assert!(a.ptr_eq(&b));
    /// ```
    ///
    /// # Safety
    ///
    /// `p` must come from [`NDArray::as_dl_tensor_ptr`] (or be the same address with the
    /// same provenance) of an array that is alive during this call: a `DLTensor` that is
    /// not embedded in an `NDArrayObj` makes this read and count foreign memory.
    pub unsafe fn from_dl_tensor_ptr(p: *const DLTensor) -> NDArray {
        let obj = (p as *const u8).wrapping_sub(NDArrayObj::DL_TENSOR_OFFSET) as *const NDArrayObj;
        // SAFETY: the caller's contract: `obj` is a live `NDArrayObj` (a final type, so
        // its dynamic type is exactly that).
        NDArray(unsafe { ObjectPtr::clone_from_raw(obj) })
    }

    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[i64] {
        // SAFETY: our objects' shape and strides point at `ndim` `i64`s in their own
        // block, unchanged after construction.
        unsafe { dims_of(self.as_dl_tensor()).0 }
    }

    /// The strides, in elements (always present, whatever the producer gave).
    #[inline]
    pub fn strides(&self) -> &[i64] {
        // SAFETY: as in `shape`.
        unsafe { dims_of(self.as_dl_tensor()).1 }
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

    /// Bytes from the data pointer to the first element (0 for arrays made here; an
    /// import keeps the producer's).
    #[inline]
    pub fn byte_offset(&self) -> u64 {
        self.as_dl_tensor().byte_offset
    }

    /// The address of the first element (`data + byte_offset`).
    #[inline]
    pub fn data_ptr(&self) -> *mut c_void {
        first_element(self.as_dl_tensor()) as *mut c_void
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

    /// Whether the array is read-only (imported with DLPack's read-only flag, or a view
    /// of such an array).
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.obj().read_only
    }

    /// Whether this array is a view of another's memory ([`NDArray::reshape`],
    /// [`NDArray::slice`]).
    pub fn is_view(&self) -> bool {
        matches!(self.obj().storage, Storage::View(_))
    }

    /// Whether two handles share one array object.
    #[inline]
    pub fn ptr_eq(&self, other: &NDArray) -> bool {
        ObjectPtr::ptr_eq(&self.0, &other.0)
    }

    /// The underlying object.
    #[inline]
    pub fn as_object_ptr(&self) -> &ObjectPtr<NDArrayObj> {
        &self.0
    }

    /// The array of an object handle.
    pub fn from_object_ptr(obj: ObjectPtr<NDArrayObj>) -> NDArray {
        NDArray(obj)
    }

    /// This array as an argument in the RFC's raw form: a borrowed `DLTensor*` (type
    /// index 7) rather than an object, for callees that take a `DLTensor*` (and for C
    /// code that knows only DLPack). [`AnyView::from`] passes the object instead.
    pub fn as_raw_view(&self) -> AnyView<'_> {
        // SAFETY: the embedded tensor, its shape and strides and its data are valid for
        // as long as `self` is borrowed; nobody writes the data while it is shared.
        unsafe { AnyView::from_dl_tensor_ptr(self.as_dl_tensor_ptr() as *mut c_void) }
    }

    /// A borrowed view of this array (see [`TensorView`]).
    pub fn view(&self) -> TensorView<'_> {
        TensorView::from(self)
    }

    /// The data as a slice of `T`.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::DataTypeMismatch`] unless `T` is the array's data type,
    /// [`NDArrayError::NotHostAccessible`] for device memory,
    /// [`NDArrayError::NotContiguous`] for a strided layout (copy it first:
    /// [`NDArray::deep_copy`]).
    pub fn as_slice<T: Element>(&self) -> Result<&[T], NDArrayError> {
        if !self.is_contiguous() {
            readable(self.as_dl_tensor(), T::DTYPE)?;
            return Err(NDArrayError::NotContiguous);
        }
        // SAFETY: our tensors are checked at construction and keep their data alive
        // while the handle is borrowed; writes need `&mut` to the only handle.
        unsafe { typed_slice(self.as_dl_tensor(), self.numel()) }
    }

    /// Whether this handle alone reaches the memory: no other handle to the object, and
    /// for a view, no other handle to (or view of) its base. (An export holds a handle.)
    fn is_unique(&mut self) -> bool {
        if ObjectPtr::strong_count(&self.0) != 1 {
            return false;
        }
        match &self.obj().storage {
            // The base is never a view itself, so every view of it holds it: a count of
            // one means this view is the only way to it.
            Storage::View(base) => ObjectPtr::strong_count(&base.0) == 1,
            _ => true,
        }
    }

    fn check_writable(&mut self) -> Result<(), NDArrayError> {
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
    pub fn as_slice_mut<T: Element>(&mut self) -> Result<&mut [T], NDArrayError> {
        let n = self.as_slice::<T>()?.len();
        self.check_writable()?;
        if n == 0 {
            return Ok(&mut []);
        }
        // The data's own pointer (provenance from its allocation or producer), not one
        // derived from the shared slice above.
        let p = first_element(self.as_dl_tensor()) as *mut T;
        // SAFETY: `as_slice`'s checks passed for this pointer and length (data type,
        // host, contiguity, alignment); the memory is reachable through `self` only
        // (`check_writable`), which stays borrowed mutably for the slice's lifetime.
        Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
    }

    /// The data's bytes (native byte order), for a contiguous array on a host device.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`], [`NDArrayError::NotContiguous`].
    pub fn as_bytes(&self) -> Result<&[u8], NDArrayError> {
        let t = self.as_dl_tensor();
        if !host_accessible(t.device) {
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
        Ok(unsafe { core::slice::from_raw_parts(first_element(t), n) })
    }

    /// The data's bytes in compact row-major order (native byte order), copied, whatever
    /// the layout: what [`NDArray::from_bytes`] takes back.
    ///
    /// The copy has [`NDArray::nbytes`] bytes, which for a broadcast layout (a stride of
    /// 0) can be far more than the memory the array spans.
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`]; [`NDArrayError::AllocationFailed`] if the
    /// memory for the copy cannot be had (never an abort).
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
    pub fn deep_copy(&self) -> Result<NDArray, NDArrayError> {
        self.view().to_ndarray()
    }

    /// Copies `src`'s elements into this array (same shape and data type, any layouts).
    ///
    /// ```
    /// use object_containers::NDArray;
    /// let src = NDArray::from_slice(&[2, 2], &[1i64, 2, 3, 4]).unwrap();
    /// let mut dst = NDArray::from_slice(&[2, 2], &[0i64; 4]).unwrap();
    /// dst.copy_from(&src).unwrap();
    /// assert_eq!(dst.as_slice::<i64>().unwrap(), &[1, 2, 3, 4]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`NDArrayError::ReadOnly`], [`NDArrayError::Shared`] (as for
    /// [`NDArray::as_slice_mut`]), [`NDArrayError::ShapeMismatch`],
    /// [`NDArrayError::DataTypeMismatch`], [`NDArrayError::NotHostAccessible`].
    pub fn copy_from<'b>(&mut self, src: impl Into<TensorView<'b>>) -> Result<(), NDArrayError> {
        let src = src.into();
        self.check_writable()?;
        if src.shape() != self.shape() {
            return Err(NDArrayError::ShapeMismatch {
                expected: self.shape().to_vec(),
                actual: src.shape().to_vec(),
            });
        }
        readable(src.tensor, self.dtype())?;
        readable(self.as_dl_tensor(), self.dtype())?;
        let src_strides = src.strides_or_compact()?;
        // SAFETY: both tensors are checked and on the host; the destination's memory is
        // reachable only through `self` (borrowed mutably), so no reference to it is
        // alive; the source is alive for `'b`.
        unsafe {
            copy_strided(
                self.shape(),
                self.dtype().bytes(),
                first_element(src.tensor),
                &src_strides,
                first_element(self.as_dl_tensor()),
                self.strides(),
            )
        };
        Ok(())
    }

    /// The root array whose memory this one uses (itself unless a view).
    fn root(&self) -> NDArray {
        match &self.obj().storage {
            Storage::View(base) => base.clone(),
            _ => self.clone(),
        }
    }

    fn view_of(
        &self,
        shape: &[i64],
        strides: Option<&[i64]>,
        data: *mut c_void,
        byte_offset: u64,
    ) -> NDArray {
        Self::from_parts(Parts {
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

    /// A view with another shape of the same elements (same memory, compact strides).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotContiguous`] for a strided array, [`NDArrayError::ShapeMismatch`]
    /// if the element counts differ, and the shape checks of [`NDArray::empty`].
    pub fn reshape(&self, shape: &[i64]) -> Result<NDArray, NDArrayError> {
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
        Ok(self.view_of(shape, None, t.data, t.byte_offset))
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
    /// [`NDArrayError::BadNdim`] for a 0-dimensional array,
    /// [`NDArrayError::OutOfRange`] for rows outside the first axis.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<NDArray, NDArrayError> {
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
            return Ok(self.view_of(&shape, Some(self.strides()), t.data, t.byte_offset));
        }
        // The view has elements, so `start` is a row of a non-empty array: the offset is
        // inside the array's span, which fits in `isize` (checked at construction).
        let delta = start as i128 * self.strides()[0] as i128 * self.dtype().bytes() as i128;
        let (data, byte_offset) = if delta == 0 {
            (t.data, t.byte_offset)
        } else if host_accessible(t.device) {
            let first = first_element(t).wrapping_offset(delta as isize);
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
        Ok(self.view_of(&shape, Some(self.strides()), data, byte_offset))
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
        self.ptr_eq(other)
    }
}
impl Eq for NDArray {}

/// By identity.
impl Hash for NDArray {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

crate::handle::object_handle!(@values NDArray, NDArrayObj, "ffi.Tensor");

// ---------------------------------------------------------------------------------
// Borrowed views: an NDArray object or a raw DLTensor*.
// ---------------------------------------------------------------------------------

/// A borrowed, checked, read-only tensor: either an [`NDArray`] or a raw `DLTensor*`
/// that a caller passed (the RFC's calling convention: an argument may be either).
///
/// This is how a function accepts both kinds. A packed function converts its argument
/// with `TensorView::try_from(args[i])`; the view borrows the argument for the call.
/// A typed function (`Function::from_typed`) cannot take a borrowed type — its
/// arguments are owned values with no lifetime tied to the call — so there an
/// [`NDArray`] parameter accepts array objects only (a raw `DLTensor*` is refused with a
/// `TypeError`: making an owning array from it would mean copying, or trusting that
/// the pointer outlives the array), and a `*mut DLTensor` parameter accepts both, as a
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
/// assert_eq!(sum.call(&[a.as_raw_view()]).unwrap(), Any::from(6.5)); // as a DLTensor*
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    tensor: &'a DLTensor,
    /// The array object, when the view is of one.
    obj: Option<NonNull<NDArrayObj>>,
    numel: usize,
    _borrow: PhantomData<&'a NDArrayObj>,
}

// SAFETY: a view only reads a tensor that nobody writes while it is borrowed (the
// contracts of its constructors); the object, if any, is `Sync`.
unsafe impl Send for TensorView<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorView<'_> {}

impl<'a> From<&'a NDArray> for TensorView<'a> {
    fn from(a: &'a NDArray) -> Self {
        TensorView {
            tensor: a.as_dl_tensor(),
            obj: Some(object_address(&a.0)),
            numel: a.numel(),
            _borrow: PhantomData,
        }
    }
}

/// A handle's object address, with the handle's provenance (over the whole block).
fn object_address(o: &ObjectPtr<NDArrayObj>) -> NonNull<NDArrayObj> {
    // SAFETY: a handle's pointer is never null.
    unsafe { NonNull::new_unchecked(ObjectPtr::as_ptr(o) as *mut NDArrayObj) }
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
    pub unsafe fn from_raw(p: *const DLTensor) -> Result<TensorView<'a>, NDArrayError> {
        if p.is_null() {
            return Err(NDArrayError::NullPointer("DLTensor"));
        }
        // SAFETY: the caller's contract.
        let tensor: &'a DLTensor = unsafe { &*p };
        // SAFETY: the caller's contract covers the shape and strides.
        let checked = unsafe { check_dl_tensor(tensor) }?;
        let numel = numel_of(checked.shape)?;
        Ok(TensorView {
            tensor,
            obj: None,
            numel,
            _borrow: PhantomData,
        })
    }

    /// The tensor description.
    pub fn as_dl_tensor(&self) -> &'a DLTensor {
        self.tensor
    }

    /// The array, if this is a view of an [`NDArray`] object (a new handle).
    pub fn ndarray(&self) -> Option<NDArray> {
        // SAFETY: the object is alive for `'a` (the view borrows it) and its pointer has
        // the handle's provenance.
        self.obj
            .map(|p| NDArray(unsafe { ObjectPtr::clone_from_raw(p.as_ptr()) }))
    }

    /// The view as a `DLTensor*` argument (type index 7), valid for `'a`.
    pub fn as_raw_view(&self) -> AnyView<'a> {
        // SAFETY: the tensor and what it describes are valid and unwritten for `'a`
        // (this view's own invariant).
        unsafe { AnyView::from_dl_tensor_ptr(self.tensor as *const DLTensor as *mut c_void) }
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

    /// The strides in elements, or `None` for a raw tensor without them (compact
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

    fn strides_or_compact(&self) -> Result<std::borrow::Cow<'a, [i64]>, NDArrayError> {
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
        first_element(self.tensor) as *const c_void
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
        if !self.is_contiguous() {
            readable(self.tensor, T::DTYPE)?;
            return Err(NDArrayError::NotContiguous);
        }
        // SAFETY: checked at construction; readable and unwritten for `'a`.
        unsafe { typed_slice(self.tensor, self.numel) }
    }

    /// The size of a compact copy, and the layouts of the copy (compact strides) and of
    /// the source, after checking that the host reads the data.
    #[allow(clippy::type_complexity)]
    fn copy_plan(&self) -> Result<(usize, Vec<i64>, std::borrow::Cow<'a, [i64]>), NDArrayError> {
        if !host_accessible(self.device()) {
            return Err(NDArrayError::NotHostAccessible(self.device()));
        }
        // Checked at construction to fit; checked again, as it sizes an allocation.
        let n = self
            .numel
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
                first_element(self.tensor),
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

    /// A compact, 64-byte-aligned, writable CPU copy (for keeping a borrowed tensor), of
    /// `numel × element size` bytes (see [`NDArray::to_bytes`]).
    ///
    /// # Errors
    ///
    /// [`NDArrayError::NotHostAccessible`] for device memory;
    /// [`NDArrayError::AllocationFailed`] if the memory for the copy cannot be had (never
    /// an abort).
    pub fn to_ndarray(&self) -> Result<NDArray, NDArrayError> {
        let (n, compact, src_strides) = self.copy_plan()?;
        let (data, storage) = if n == 0 {
            (ptr::null_mut(), Storage::None)
        } else {
            let (data, storage) = allocate_data(n, false)?;
            // SAFETY: a fresh block of `n` bytes at `data`, every byte written by the
            // compact copy of `numel` elements before the array is made.
            unsafe { self.copy_to(data, &compact, &src_strides) };
            (data as *mut c_void, storage)
        };
        Ok(NDArray::from_parts(Parts {
            shape: self.shape(),
            strides: None,
            data,
            byte_offset: 0,
            dtype: self.dtype(),
            device: Device::cpu(),
            storage,
            read_only: false,
        }))
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
            let tensor: &'a DLTensor = unsafe { &(*p.as_ptr()).tensor };
            // SAFETY: our objects' dims are valid while the object lives.
            let numel = numel_of(unsafe { dims_of(tensor).0 })?;
            return Ok(TensorView {
                tensor,
                obj: Some(p),
                numel,
                _borrow: PhantomData,
            });
        }
        if let Some(p) = v.as_dl_tensor_ptr() {
            // SAFETY: views of this kind point to a tensor valid for `'a`
            // (`AnyView::from_dl_tensor_ptr`'s contract).
            return unsafe { TensorView::from_raw(p as *const DLTensor) };
        }
        Err(NDArrayError::WrongType(TypeError::new(
            "ffi.Tensor or DLTensor*",
            v.type_key(),
        )))
    }
}

/// A typed-function argument as a raw `DLTensor*`: the embedded tensor of an array
/// object, or a caller's raw pointer; valid for the call only.
pub(crate) fn dl_tensor_arg(v: AnyView<'_>) -> Option<*mut DLTensor> {
    if let Some(p) = v.as_dl_tensor_ptr() {
        return Some(p as *mut DLTensor);
    }
    v.as_object_of::<NDArrayObj>().map(|o| {
        (object_address(o).as_ptr() as *mut u8).wrapping_add(NDArrayObj::DL_TENSOR_OFFSET)
            as *mut DLTensor
    })
}

// The static index is the one the tvm-ffi ecosystem gives `ffi.Tensor`.
const _: () = assert!(object_core::type_index::TENSOR == 70);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_and_contiguity() {
        assert_eq!(compact_strides(&[2, 3, 4]).unwrap(), &[12, 4, 1]);
        assert_eq!(compact_strides(&[]).unwrap(), &[] as &[i64]);
        assert_eq!(compact_strides(&[0, 5]).unwrap(), &[5, 1]);
        assert!(
            compact_strides(&[1 << 40, 1 << 40, 0]).is_ok(),
            "the first extent is never multiplied"
        );
        assert_eq!(
            compact_strides(&[2, 1 << 40, 1 << 40, 0]).unwrap(),
            &[i64::MAX, 1 << 40, 1, 1],
            "an empty array's strides saturate instead of overflowing"
        );
        assert!(compact_strides(&[2, 1 << 40, 1 << 40, 1]).is_err());
        assert_eq!(numel_of(&[1 << 62, 4, 0]), Ok(0));
        assert_eq!(numel_of(&[1 << 62, 4, 1]), Err(NDArrayError::TooLarge));
        assert_eq!(
            numel_of(&[0, -2]),
            Err(NDArrayError::NegativeDim { axis: 1, dim: -2 })
        );
        assert!(is_compact(&[2, 3], &[3, 1]));
        assert!(!is_compact(&[2, 3], &[1, 2]));
        assert!(
            is_compact(&[2, 1, 3], &[3, 99, 1]),
            "extent-1 axes may have any stride"
        );
        assert!(is_compact(&[2, 0], &[7, 7]), "empty arrays are contiguous");
        assert!(is_compact(&[], &[]));
    }

    #[test]
    fn element_sizes_and_alignment() {
        assert_eq!(element_bytes(DataType::float(32)), Ok(4));
        assert_eq!(element_bytes("float32x4".parse().unwrap()), Ok(16));
        assert_eq!(element_bytes(DataType::bool()), Ok(1));
        assert!(element_bytes(DataType::int(4)).is_err(), "sub-byte");
        assert!(element_bytes(DataType::new(15, 6, 1)).is_err(), "float6");
        assert!(
            element_bytes(DataType::new(99, 8, 1)).is_err(),
            "unknown code"
        );
        assert!(
            element_bytes(DataType::new(DataType::FLOAT, 32, 0)).is_err(),
            "no lanes"
        );
        assert_eq!(element_align(DataType::float(64)), 8);
        assert_eq!(element_align(DataType::new(DataType::COMPLEX, 64, 1)), 4);
        assert_eq!(element_align(DataType::new(DataType::INT, 24, 1)), 1);
        assert_eq!(element_align(DataType::new(DataType::INT, 128, 1)), 8);
    }

    #[test]
    fn spans() {
        assert_eq!(element_span(&[2, 3], &[3, 1]), Ok(Some((0, 5))));
        assert_eq!(element_span(&[2, 3], &[-3, 1]), Ok(Some((-3, 2))));
        assert_eq!(element_span(&[2, 0], &[3, 1]), Ok(None));
        assert_eq!(
            element_span(&[i64::MAX, 2], &[i64::MAX, i64::MAX]).map(|s| s.is_some()),
            Ok(true),
            "fits in i128"
        );
        let big = [i64::MAX; 4];
        assert_eq!(element_span(&big, &big), Err(NDArrayError::TooLarge));
    }

    #[test]
    fn layout_of_the_object() {
        assert_eq!(NDArrayObj::DL_TENSOR_OFFSET, 16);
        assert_eq!(block_layout(0).size(), DIMS_OFFSET);
        assert_eq!(block_layout(3).size(), DIMS_OFFSET + 48);
    }
}
object_core::__object_handle_field!(NDArray, "ffi.Tensor");
