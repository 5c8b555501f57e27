//! Fixed type indices: the value kinds carried by `Any` (below 64) and the static
//! object types (64..128), numbered as the tvm-ffi ecosystem numbers them, so values
//! and files interoperate.

/// `None` / null.
pub const NONE: u32 = 0;
/// A 64-bit signed integer.
pub const INT: u32 = 1;
/// A boolean.
pub const BOOL: u32 = 2;
/// A 64-bit float.
pub const FLOAT: u32 = 3;
/// An opaque pointer.
pub const OPAQUE_PTR: u32 = 4;
/// A DLPack data type.
pub const DATA_TYPE: u32 = 5;
/// A DLPack device.
pub const DEVICE: u32 = 6;
/// A borrowed `DLTensor*`.
pub const DL_TENSOR_PTR: u32 = 7;
/// A borrowed C string (views only).
pub const RAW_STR: u32 = 8;
/// A borrowed byte array (views only).
pub const BYTE_ARRAY_PTR: u32 = 9;
/// An object moved into a call.
pub const OBJECT_RVALUE_REF: u32 = 10;
/// A short string stored inline in the value.
pub const SMALL_STR: u32 = 11;
/// Short bytes stored inline in the value.
pub const SMALL_BYTES: u32 = 12;

/// First static object index.
pub const STATIC_OBJECT_BEGIN: u32 = 64;
/// `ffi.Object`, the root.
pub const OBJECT: u32 = 64;
/// `ffi.String`.
pub const STRING: u32 = 65;
/// `ffi.Bytes`.
pub const BYTES: u32 = 66;
/// `ffi.Error`.
pub const ERROR: u32 = 67;
/// `ffi.Function`.
pub const FUNCTION: u32 = 68;
/// `ffi.Shape`.
pub const SHAPE: u32 = 69;
/// `ffi.Tensor` (our NDArray).
pub const TENSOR: u32 = 70;
/// `ffi.Array`.
pub const ARRAY: u32 = 71;
/// `ffi.Map`.
pub const MAP: u32 = 72;
/// `ffi.Module`.
pub const MODULE: u32 = 73;
/// `ffi.List`, the mutable counterpart of `ffi.Array`.
pub const LIST: u32 = 75;
/// `ffi.Dict`, the mutable counterpart of `ffi.Map`.
pub const DICT: u32 = 76;
/// `ffi.BigInt`, an integer of any size.
pub const BIG_INT: u32 = 78;
/// First dynamically allocated index.
pub const DYNAMIC_OBJECT_BEGIN: u32 = 128;

/// The root's key.
pub const OBJECT_KEY: &str = "ffi.Object";

/// The type a value kind stands for in messages and files: inline short strings are
/// `ffi.String`, inline short bytes `ffi.Bytes`; every other key is itself.
pub fn canonical_key(key: &'static str) -> &'static str {
    match key {
        "ffi.SmallStr" => "ffi.String",
        "ffi.SmallBytes" => "ffi.Bytes",
        other => other,
    }
}

/// The value kinds and their keys, registered so that `type_key` names them.
pub(crate) const VALUE_KINDS: &[(u32, &str)] = &[
    (NONE, "None"),
    (INT, "int"),
    (BOOL, "bool"),
    (FLOAT, "float"),
    (OPAQUE_PTR, "void*"),
    (DATA_TYPE, "DataType"),
    (DEVICE, "Device"),
    (DL_TENSOR_PTR, "DLTensor*"),
    (RAW_STR, "const char*"),
    (BYTE_ARRAY_PTR, "TVMFFIByteArray*"),
    (OBJECT_RVALUE_REF, "ObjectRValueRef"),
    (SMALL_STR, "ffi.SmallStr"),
    (SMALL_BYTES, "ffi.SmallBytes"),
];
