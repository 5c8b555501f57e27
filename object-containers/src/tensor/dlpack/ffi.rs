//! The C structs of `dlpack.h` (v1.1), written out `#[repr(C)]` with their sizes and
//! field offsets asserted at compile time against the header's layout on 64-bit
//! targets, and its constants. Plain data: nothing here reads through a pointer.

use core::ffi::c_void;
use core::fmt;
use core::mem::{align_of, offset_of, size_of};

use object_core::{DataType, Device};

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
/// and only [`NDArray`](crate::NDArray)s and checked views hand out its data safely.
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
