//! [`NDArrayError`]: why an NDArray could not be made, imported, read or written, or a
//! DLTensor could not be viewed. A typed enum, so that callers match variants, with
//! messages that follow the naming rule of [`tensor`](super).

use core::fmt;

use object_core::{DataType, Device, Error, ErrorKind, TypeError};

use super::dlpack::DLPACK_MAJOR_VERSION;
use super::layout::MAX_NDIM;

/// Why an NDArray could not be made, imported, read or written, or a DLTensor viewed.
///
/// Converts into an [`Error`]: type errors (a wrong data type or value kind) become
/// `TypeError`s, a refused allocation a `MemoryError`, the rest `ValueError`s.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NDArrayError {
    /// A null pointer where one is required (`"managed tensor"`, `"shape"`, `"DLTensor"`).
    NullPointer(&'static str),
    /// A DLTensor's `data` is null but it describes elements.
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
    /// The data type is not the one asked for.
    DataTypeMismatch {
        /// The data type asked for.
        expected: DataType,
        /// The NDArray's (or the DLTensor's).
        actual: DataType,
    },
    /// The operation needs a compact row-major layout.
    NotContiguous,
    /// The data is on a device the host cannot read.
    NotHostAccessible(Device),
    /// The NDArray is read-only.
    ReadOnly,
    /// The memory is reachable through another handle, view or export.
    Shared,
    /// The NDArray is lent writable to foreign code for a call
    /// ([`NDArray::lend_mut`](crate::NDArray::lend_mut)): Rust cannot read its data
    /// until the lease ends.
    Lent,
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
    /// The allocator refused the memory for a new NDArray or a copy: a size that is valid
    /// but more than the machine has (a broadcast NDArray, stride 0, copied out to
    /// [`NDArray::to_bytes`](crate::NDArray::to_bytes) or
    /// [`NDArray::deep_copy`](crate::NDArray::deep_copy), or a huge
    /// [`NDArray::empty`](crate::NDArray::empty)).
    /// Converts into an [`Error`] of kind `MemoryError`.
    AllocationFailed {
        /// The bytes asked for (the data's size).
        bytes: usize,
    },
    /// A value of another type where an NDArray (or a `DLTensor*`) was expected.
    WrongType(TypeError),
}

impl fmt::Display for NDArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NDArrayError::NullPointer(what) => write!(f, "the {what} pointer is null"),
            NDArrayError::NullData { numel } => {
                write!(f, "the DLTensor's data pointer is null but it has {numel} elements")
            }
            NDArrayError::BadNdim { ndim } => {
                write!(f, "ndim {ndim} is outside 0..={MAX_NDIM}")
            }
            NDArrayError::NegativeDim { axis, dim } => {
                write!(f, "axis {axis} has a negative extent ({dim})")
            }
            NDArrayError::TooLarge => f.write_str("the element count, byte size or memory span overflows"),
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
                DLPACK_MAJOR_VERSION
            ),
            NDArrayError::DataTypeMismatch { expected, actual } => {
                write!(f, "expected data type {expected}, the data is {actual}")
            }
            NDArrayError::NotContiguous => {
                f.write_str("the layout is not contiguous (compact row-major)")
            }
            NDArrayError::NotHostAccessible(d) => {
                write!(f, "the data is on {d}, which the host cannot read")
            }
            NDArrayError::ReadOnly => f.write_str("the NDArray is read-only"),
            NDArrayError::Shared => f.write_str(
                "the NDArray's memory is shared with another handle, view or export",
            ),
            NDArrayError::Lent => f.write_str(
                "the NDArray is lent writable to foreign code: its data cannot be read until the lease ends",
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
                write!(f, "cannot allocate {bytes} bytes of NDArray data")
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
            NDArrayError::AllocationFailed { .. } => {
                Error::new(ErrorKind::MemoryError, e.to_string())
            }
            _ => Error::value_error(e.to_string()),
        }
    }
}
