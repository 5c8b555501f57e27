//! The C-visible structs: the object header, `ObjAny`, the function cell, strings,
//! type and field records, and the DLPack structs, each `#[repr(C)]` and asserted
//! against the Rust types whose memory they describe.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, offset_of, size_of};

use object_containers::dlpack;
use object_core::{Any, AnyView, Object};

/// The 16-byte header that starts every object (`object_core::Object`).
///
/// C reads `type_index` directly; it must not write a live object's header except
/// through [`obj_object_init`](crate::obj_object_init) on fresh memory.
#[repr(C)]
#[derive(Debug)]
pub struct ObjObjectHeader {
    /// The run-time type index.
    pub type_index: u32,
    /// The atomic strong count (use `obj_inc_ref` / `obj_dec_ref`).
    pub ref_count: u32,
    /// Called once with the object's address when the last reference goes.
    pub deleter: ObjDeleter,
}

/// An object's deleter: frees the object at the given address (drops what it holds
/// first). Null means "never freed" (static objects).
pub type ObjDeleter = Option<unsafe extern "C" fn(obj: *mut ObjObjectHeader)>;

/// A handle to any object: a pointer to its header. Functions that return one give the
/// caller one strong reference, which it releases with `obj_dec_ref`.
pub type ObjHandle = *mut ObjObjectHeader;

/// A DLPack data type (`DLDataType`): `{ code, bits, lanes }`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjDataType {
    /// `kDLInt` 0, `kDLUInt` 1, `kDLFloat` 2, `kDLBfloat` 4, `kDLBool` 6, …
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

/// A DLPack device (`DLDevice`): `{ device_type, device_id }`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjDevice {
    /// `kDLCPU` 1, `kDLCUDA` 2, …
    pub device_type: i32,
    /// The device ordinal.
    pub device_id: i32,
}

/// The payload of an [`ObjAny`]: which member is meaningful depends on `type_index`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ObjAnyPayload {
    /// `OBJ_KIND_INT`, `OBJ_KIND_BOOL` (0 or 1).
    pub v_int64: i64,
    /// `OBJ_KIND_FLOAT`.
    pub v_float64: f64,
    /// `OBJ_KIND_OPAQUE_PTR`, `OBJ_KIND_DL_TENSOR_PTR` (a `ObjDLTensor*`).
    pub v_ptr: *mut c_void,
    /// Object kinds (type index 64 and up).
    pub v_obj: *mut ObjObjectHeader,
    /// `OBJ_KIND_RAW_STR`: UTF-8 text, `small` bytes long, or NUL-terminated when
    /// `small` is 0.
    pub v_c_str: *const c_char,
    /// `OBJ_KIND_SMALL_STR` / `OBJ_KIND_SMALL_BYTES`: up to 7 bytes inline (`small` long).
    pub v_bytes: [u8; 8],
    /// `OBJ_KIND_DATA_TYPE`.
    pub v_dtype: ObjDataType,
    /// `OBJ_KIND_DEVICE`.
    pub v_device: ObjDevice,
}

/// A dynamically typed value: 16 bytes, the layout of Rust's `Any` (and of tvm-ffi's
/// `TVMFFIAny` for the plain kinds). An *owned* `ObjAny` holding an object owns one
/// reference (release it with `obj_any_release`); an argument array is borrowed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ObjAny {
    /// A value kind (`OBJ_KIND_*`, below 64) or the object's type index.
    pub type_index: u32,
    /// Length of an inline or raw string; 0 otherwise.
    pub small: u32,
    /// The value.
    pub v: ObjAnyPayload,
}

impl core::fmt::Debug for ObjAnyPayload {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: every member is plain data of at most 8 bytes; `v_bytes` reads them all.
        write!(f, "ObjAnyPayload({:?})", unsafe { self.v_bytes })
    }
}

impl core::fmt::Debug for ObjAny {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ObjAny({}, {})", self.type_index, self.small)
    }
}

impl ObjAny {
    /// `None`.
    pub const NONE: ObjAny = ObjAny {
        type_index: 0,
        small: 0,
        v: ObjAnyPayload { v_int64: 0 },
    };
}

/// A string slice handed to C: `len` bytes of UTF-8 at `data`, valid as long as the
/// object (or type) it came from. `data` is NUL-terminated where the function says so.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjStr {
    /// The bytes.
    pub data: *const c_char,
    /// Their number (without a terminator).
    pub len: usize,
}

/// A C callback behind a function object: `ctx` as given at creation, `num_args`
/// borrowed arguments, and the return slot (initialized to None; write an owned value).
/// Return 0, or nonzero after `obj_error_raise` (or without: a generic error is made).
/// Whatever the callback wrote to the slot is the caller's from then on, even when it
/// fails or the value breaks the header's rules (then it is released).
pub type ObjCFunction = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        args: *const ObjAny,
        num_args: i32,
        ret: *mut ObjAny,
    ) -> i32,
>;

/// Frees a C callback's context when the function object dies.
pub type ObjCContextDeleter = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// The start of every function object (`ffi.Function`): the header, then the packed
/// entry point `call(self, args, num_args, ret)`. Calling `call` directly is allowed
/// when the arguments are values Rust made or that follow its rules exactly (raw
/// strings with their length in `small`); `obj_function_call` checks C-built values.
#[repr(C)]
#[derive(Debug)]
pub struct ObjFunctionCell {
    /// The header.
    pub header: ObjObjectHeader,
    /// The packed entry point.
    pub call: Option<
        unsafe extern "C" fn(
            func: *const ObjFunctionCell,
            args: *const ObjAny,
            num_args: i32,
            ret: *mut ObjAny,
        ) -> i32,
    >,
}

/// What the registry knows about one type (see `obj_type_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjTypeInfo {
    /// The type index.
    pub index: u32,
    /// The parent's index, or `UINT32_MAX` for the root and for value kinds.
    pub parent_index: u32,
    /// Distance from `ffi.Object` (0 for the root).
    pub depth: u32,
    /// The first index of the type's range (its own index).
    pub range_begin: u32,
    /// One past the last index of the range (subtree plus reserved slots).
    pub range_end: u32,
    /// Indices reserved for run-time descendants.
    pub slots: u32,
    /// 1 if final.
    pub is_final: u8,
    /// 1 if descendants may be placed outside the range.
    pub allows_overflow: u8,
    /// 1 for object types, 0 for value kinds.
    pub is_object: u8,
    /// Padding; 0.
    pub reserved: u8,
    /// The number of entries in `ancestors` (depth + 1 for objects).
    pub num_ancestors: u32,
    /// The ancestors' indices from the root down to the type itself.
    pub ancestors: *const u32,
    /// The type key, NUL-terminated.
    pub key: ObjStr,
}

/// The layout of a type's objects (see `obj_type_layout` and `obj_object_init`'s layout
/// rule).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjTypeLayout {
    /// The size in bytes of the layout Rust reads: the type's own struct for
    /// `OBJ_LAYOUT_RUST`; otherwise its nearest Rust ancestor's struct, which every
    /// object of the type starts with (the least `obj_object_init` accepts).
    pub size: u64,
    /// That struct's alignment (objects must be aligned to at least this and 8).
    pub align: u32,
    /// `OBJ_LAYOUT_OPEN`, `OBJ_LAYOUT_RUST`, `OBJ_LAYOUT_FOREIGN` or `OBJ_LAYOUT_FIELDS`.
    pub owner: u32,
    /// A fingerprint of that struct's field table (names, offsets, kinds, flags, Rust
    /// types): two builds of one struct agree.
    pub fields_fingerprint: u64,
    /// For `OBJ_LAYOUT_FOREIGN`: the size sealed by the first object made of the type
    /// itself (every object of it has this size), or 0 if none was made yet; for
    /// `OBJ_LAYOUT_FIELDS`, the size of the type's objects.
    pub object_size: u64,
    /// The index of the type whose struct `size` describes (the type itself for
    /// `OBJ_LAYOUT_RUST`).
    pub rust_index: u32,
    /// Padding; 0.
    pub reserved: u32,
}

/// `ObjTypeLayout::owner`: no object made and no Rust struct claimed the type yet.
pub const OBJ_LAYOUT_OPEN: u32 = 0;
/// A Rust struct owns the layout: C cannot initialize objects of the type.
pub const OBJ_LAYOUT_RUST: u32 = 1;
/// Objects without a Rust struct of their own (made by C, or by Rust with an ancestor's
/// struct) were made: the size is sealed.
pub const OBJ_LAYOUT_FOREIGN: u32 = 2;
/// A run-time field table (`obj_type_register_fields`, Python's `@py_class`; ABI 2.3):
/// objects start with the Rust ancestor's struct (`size`), then the fields
/// `obj_type_fields` lists; `object_size` is their size (the table's address lies in
/// the word before the object). Objects are made through reflection only
/// (`obj_object_create`), never by `obj_object_init`.
pub const OBJ_LAYOUT_FIELDS: u32 = 3;

/// One reflected field, plain data (see `obj_type_fields`). A C reader finds a field by
/// name and reads `size` bytes at `offset` from the object's header for the kinds that
/// say `OBJ_FIELD_C_READABLE` in `flags`; other kinds go through `obj_object_get_attr`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjFieldInfo {
    /// The reflected name, NUL-terminated.
    pub name: ObjStr,
    /// Byte offset from the object's header.
    pub offset: u64,
    /// The storage size in bytes for C-readable fields (1, 2, 4 or 8; 16 for an
    /// `ObjAny` cell); 0 otherwise.
    pub size: u32,
    /// `OBJ_FIELD_KIND_*`.
    pub kind: u32,
    /// `OBJ_FIELD_*` bits.
    pub flags: u32,
    /// The static type index (value kind or object type), `UINT32_MAX` for Any/opaque.
    pub static_type_index: u32,
    /// The static type key, NUL-terminated (`"int"`, `"ffi.String"`, `"demo.Expr"`, …).
    pub static_type_key: ObjStr,
    /// The Rust type as written (`"i64"`, `"ObjectPtr<Expr>"`), NUL-terminated.
    pub rust_type: ObjStr,
}

/// One variant of an enum field's enum (see `obj_type_field_enum`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjEnumVariant {
    /// The reflected name, NUL-terminated.
    pub name: ObjStr,
    /// The integer value (the discriminant): the field's value.
    pub value: i64,
}

/// A parameter of a signature given to `obj_function_create_with_signature` (read during
/// that call only).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjParamSpec {
    /// The name, NUL-terminated UTF-8.
    pub name: *const c_char,
    /// The type as signatures write it (`"int"`, `"str"`, `"ffi.Array"`), or null.
    pub type_str: *const c_char,
    /// The default value (borrowed; copied), or null for none.
    pub default_value: *const ObjAny,
}

/// A parameter as `obj_function_param` reads it: borrowed from the function, valid while
/// the function lives.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjParamInfo {
    /// The name (not NUL-terminated).
    pub name: ObjStr,
    /// The type (`"int"`, …), not NUL-terminated; `len` 0 when unknown.
    pub type_str: ObjStr,
    /// `OBJ_PARAM_POSITIONAL_OR_KEYWORD` or `OBJ_PARAM_POSITIONAL_ONLY`.
    pub kind: i32,
    /// 1 if the parameter has a default (then `default_value` is it), else 0.
    pub has_default: i32,
    /// The default value, borrowed (None when there is none).
    pub default_value: ObjAny,
}

/// The enum of an `OBJ_FIELD_KIND_ENUM` field (see `obj_type_field_enum`): plain data,
/// valid for the process.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjEnumInfo {
    /// The enum's key (the field's `static_type_key`), NUL-terminated.
    pub key: ObjStr,
    /// The variants, in declaration order.
    pub variants: *const ObjEnumVariant,
    /// How many.
    pub num_variants: usize,
    /// The size of the integer the enum is stored as (its `#[repr]`: 1, 2, 4 or 8), or 0
    /// for an enum without one, which C reads through `obj_object_get_attr`.
    pub size: u32,
    /// 1 if that integer is signed (sign-extend it to compare with `value`), else 0.
    pub is_signed: u32,
}

/// `DLTensor` (dlpack.h v1.1), the same layout.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjDLTensor {
    /// The data pointer.
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: ObjDevice,
    /// The number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: ObjDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor` (dlpack.h), the same layout.
#[repr(C)]
#[derive(Debug)]
pub struct ObjDLManagedTensor {
    /// The tensor.
    pub dl_tensor: ObjDLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done.
    pub deleter: Option<unsafe extern "C" fn(*mut ObjDLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjDLPackVersion {
    /// Major version (1).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned` (dlpack.h 1.x), the same layout.
#[repr(C)]
#[derive(Debug)]
pub struct ObjDLManagedTensorVersioned {
    /// The ABI version.
    pub version: ObjDLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done.
    pub deleter: Option<unsafe extern "C" fn(*mut ObjDLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: ObjDLTensor,
}

// Every C mirror has the size, alignment and field offsets of the Rust type it
// describes; the C header repeats these as `_Static_assert`s (see `include/`).
const _: () = {
    assert!(OBJ_DLPACK_FLAG_READ_ONLY == dlpack::DLPACK_FLAG_BITMASK_READ_ONLY);
    assert!(size_of::<ObjObjectHeader>() == size_of::<Object>());
    assert!(align_of::<ObjObjectHeader>() == align_of::<Object>());
    assert!(size_of::<ObjObjectHeader>() == 16);
    assert!(offset_of!(ObjObjectHeader, ref_count) == 4);
    assert!(offset_of!(ObjObjectHeader, deleter) == 8);

    assert!(size_of::<ObjAny>() == size_of::<Any>());
    assert!(align_of::<ObjAny>() == align_of::<Any>());
    assert!(size_of::<ObjAny>() == size_of::<AnyView<'static>>());
    assert!(align_of::<ObjAny>() == align_of::<AnyView<'static>>());
    assert!(size_of::<ObjAny>() == 16);
    assert!(offset_of!(ObjAny, small) == 4);
    assert!(offset_of!(ObjAny, v) == 8);

    assert!(size_of::<ObjFunctionCell>() == 24);
    assert!(offset_of!(ObjFunctionCell, call) == 16);
    assert!(offset_of!(ObjFunctionCell, call) == object_containers::FunctionObj::ENTRY_OFFSET);

    assert!(size_of::<ObjDataType>() == size_of::<object_core::DataType>());
    assert!(size_of::<ObjDevice>() == size_of::<object_core::Device>());
    assert!(size_of::<ObjDLTensor>() == size_of::<dlpack::DLTensor>());
    assert!(offset_of!(ObjDLTensor, device) == offset_of!(dlpack::DLTensor, device));
    assert!(offset_of!(ObjDLTensor, ndim) == offset_of!(dlpack::DLTensor, ndim));
    assert!(offset_of!(ObjDLTensor, dtype) == offset_of!(dlpack::DLTensor, dtype));
    assert!(offset_of!(ObjDLTensor, shape) == offset_of!(dlpack::DLTensor, shape));
    assert!(offset_of!(ObjDLTensor, strides) == offset_of!(dlpack::DLTensor, strides));
    assert!(offset_of!(ObjDLTensor, byte_offset) == offset_of!(dlpack::DLTensor, byte_offset));
    assert!(size_of::<ObjDLManagedTensor>() == size_of::<dlpack::DLManagedTensor>());
    assert!(
        offset_of!(ObjDLManagedTensor, deleter) == offset_of!(dlpack::DLManagedTensor, deleter)
    );
    assert!(
        size_of::<ObjDLManagedTensorVersioned>() == size_of::<dlpack::DLManagedTensorVersioned>()
    );
    assert!(
        offset_of!(ObjDLManagedTensorVersioned, dl_tensor)
            == offset_of!(dlpack::DLManagedTensorVersioned, dl_tensor)
    );

    assert!(size_of::<ObjStr>() == 16);
    assert!(size_of::<ObjFieldInfo>() == 72);
    assert!(offset_of!(ObjFieldInfo, offset) == 16);
    assert!(offset_of!(ObjFieldInfo, size) == 24);
    assert!(offset_of!(ObjFieldInfo, kind) == 28);
    assert!(offset_of!(ObjFieldInfo, flags) == 32);
    assert!(offset_of!(ObjFieldInfo, static_type_index) == 36);
    assert!(offset_of!(ObjFieldInfo, static_type_key) == 40);
    assert!(size_of::<ObjTypeInfo>() == 56);
    assert!(size_of::<ObjEnumVariant>() == 24);
    assert!(size_of::<ObjEnumInfo>() == 40);
    assert!(offset_of!(ObjEnumInfo, variants) == 16);
    assert!(offset_of!(ObjEnumInfo, num_variants) == 24);
    assert!(offset_of!(ObjEnumInfo, size) == 32);
    assert!(offset_of!(ObjEnumInfo, is_signed) == 36);
    assert!(size_of::<ObjTypeLayout>() == 40);
};

/// `OBJ_KIND_*`: the value kinds an [`ObjAny`] carries below index 64.
pub const OBJ_KIND_NONE: u32 = 0;
/// An `int64_t`.
pub const OBJ_KIND_INT: u32 = 1;
/// A bool (0 or 1 in `v_int64`).
pub const OBJ_KIND_BOOL: u32 = 2;
/// A `double`.
pub const OBJ_KIND_FLOAT: u32 = 3;
/// A `void*` nobody dereferences.
pub const OBJ_KIND_OPAQUE_PTR: u32 = 4;
/// A `ObjDataType`.
pub const OBJ_KIND_DATA_TYPE: u32 = 5;
/// A `ObjDevice`.
pub const OBJ_KIND_DEVICE: u32 = 6;
/// A borrowed `ObjDLTensor*` (arguments only).
pub const OBJ_KIND_DL_TENSOR_PTR: u32 = 7;
/// A borrowed C string (arguments only).
pub const OBJ_KIND_RAW_STR: u32 = 8;
/// Up to 7 bytes of UTF-8 inline.
pub const OBJ_KIND_SMALL_STR: u32 = 11;
/// Up to 7 bytes inline.
pub const OBJ_KIND_SMALL_BYTES: u32 = 12;
/// The first object type index (`ffi.Object`).
pub const OBJ_TYPE_OBJECT: u32 = 64;
/// `ffi.String`.
pub const OBJ_TYPE_STRING: u32 = 65;
/// `ffi.Bytes`.
pub const OBJ_TYPE_BYTES: u32 = 66;
/// `ffi.Error`.
pub const OBJ_TYPE_ERROR: u32 = 67;
/// `ffi.Function`.
pub const OBJ_TYPE_FUNCTION: u32 = 68;
/// `ffi.Shape`.
pub const OBJ_TYPE_SHAPE: u32 = 69;
/// `ffi.Tensor`.
pub const OBJ_TYPE_TENSOR: u32 = 70;
/// `ffi.Array`.
pub const OBJ_TYPE_ARRAY: u32 = 71;
/// `ffi.Map`.
pub const OBJ_TYPE_MAP: u32 = 72;
/// `ffi.Module`.
pub const OBJ_TYPE_MODULE: u32 = 73;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: in `ObjDLManagedTensorVersioned::flags`, the
/// consumer must not write the data.
pub const OBJ_DLPACK_FLAG_READ_ONLY: u64 = 1;

/// `OBJ_FIELD_KIND_*` (`ObjFieldInfo::kind`).
pub const OBJ_FIELD_KIND_BOOL: u32 = 0;
/// An integer of `size` bytes (signedness in `rust_type`).
pub const OBJ_FIELD_KIND_INT: u32 = 1;
/// A float of `size` bytes.
pub const OBJ_FIELD_KIND_FLOAT: u32 = 2;
/// A string. With `OBJ_FIELD_ANY_LAYOUT` (an `object_core::String` field) it is stored
/// as an `ObjAny`: `OBJ_KIND_SMALL_STR` (up to 7 bytes in the payload, `small` long,
/// NUL-padded) or `OBJ_TYPE_STRING` (an `ffi.String` object); a Rust `std` string is not
/// C-readable.
pub const OBJ_FIELD_KIND_STR: u32 = 3;
/// A data type.
pub const OBJ_FIELD_KIND_DATA_TYPE: u32 = 4;
/// A device.
pub const OBJ_FIELD_KIND_DEVICE: u32 = 5;
/// An object handle (a pointer to the header, null for an absent optional one).
pub const OBJ_FIELD_KIND_OBJECT: u32 = 6;
/// An `Any` (stored as an `ObjAny`, C-readable).
pub const OBJ_FIELD_KIND_ANY: u32 = 7;
/// Not reflected.
pub const OBJ_FIELD_KIND_OPAQUE: u32 = 8;
/// A field-less enum (ABI 2.1): its value is its variant's integer, `static_type_index`
/// is `OBJ_KIND_INT`, `static_type_key` the enum's key, and `obj_type_field_enum` gives
/// the variants' names and values. C-readable (`size` bytes, signed or not as the
/// `ObjEnumInfo` says) when the enum has an integer `#[repr]` and is not optional.
pub const OBJ_FIELD_KIND_ENUM: u32 = 9;

/// `ObjParamInfo::kind`: passed by position or by name.
pub const OBJ_PARAM_POSITIONAL_OR_KEYWORD: i32 = 0;
/// `ObjParamInfo::kind`: passed by position only (a typed Rust closure's parameters
/// when no names were declared).
pub const OBJ_PARAM_POSITIONAL_ONLY: i32 = 1;

/// `ObjFieldInfo::flags` and `ObjFieldSpec::flags`: read-only.
pub const OBJ_FIELD_READ_ONLY: u32 = 1;
/// Excluded from structural equality.
pub const OBJ_FIELD_NO_EQUALITY: u32 = 2;
/// Not reflected.
pub const OBJ_FIELD_SKIPPED: u32 = 4;
/// An optional field.
pub const OBJ_FIELD_OPTIONAL: u32 = 8;
/// A definition site for structural equality (ABI 2.3 names it).
pub const OBJ_FIELD_DEFINITION: u32 = 16;
/// The field has a declared default (ABI 2.3 names it): `obj_object_create` takes it for
/// a value left out; in an `ObjFieldSpec`, `default_value` is it.
pub const OBJ_FIELD_HAS_DEFAULT: u32 = 32;
/// The field is one 16-byte `ObjAny` cell (an `Any` field or an `object_core::String`,
/// and in a run-time field table an optional bool, int, float or string, whatever the
/// kind says); C reads it in place, borrowing (no reference count change).
pub const OBJ_FIELD_ANY_LAYOUT: u32 = 64;
/// C may read `size` bytes at `offset` directly.
pub const OBJ_FIELD_C_READABLE: u32 = 256;

/// One field of a type registered from C with `obj_type_register_fields` (ABI 2.3).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjFieldSpec {
    /// The name, NUL-terminated.
    pub name: *const c_char,
    /// `OBJ_FIELD_KIND_BOOL`, `_INT`, `_FLOAT`, `_STR`, `_DATA_TYPE`, `_DEVICE`,
    /// `_OBJECT` or `_ANY`.
    pub kind: u32,
    /// `OBJ_FIELD_OPTIONAL`, `OBJ_FIELD_NO_EQUALITY`, `OBJ_FIELD_DEFINITION`,
    /// `OBJ_FIELD_HAS_DEFAULT`.
    pub flags: u32,
    /// For `OBJ_FIELD_KIND_OBJECT`: the key of the type its values have (or a subtype),
    /// NUL-terminated; null for any object.
    pub type_key: *const c_char,
    /// With `OBJ_FIELD_HAS_DEFAULT`: the default (borrowed: copied at registration).
    pub default_value: ObjAny,
}

/// `obj_type_register_fields`' `type_flags`: the type is final.
pub const OBJ_TYPE_FINAL: u32 = 1;
/// `obj_type_register_fields`' `type_flags`: the type is abstract (only its subtypes
/// are made).
pub const OBJ_TYPE_ABSTRACT: u32 = 2;

/// `obj_method_set`'s kind: called with the object first.
pub const OBJ_METHOD_INSTANCE: i32 = 0;
/// `obj_method_set`'s kind: called without an object (a named constructor).
pub const OBJ_METHOD_STATIC: i32 = 1;
