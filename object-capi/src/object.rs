//! Counting, the type registry and reflection from C.

use core::ffi::c_char;
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use object_core::reflection::{get_attr, EnumInfo, EnumRepr, FieldFlags, FieldKind};
use object_core::registry::{
    self, register_type, type_index_of, ForeignMaker, LayoutOwner, TypeLayout, TypeSpec,
};
use object_core::{Error, ErrorKind, Object, ObjectRef};

use crate::fence::{any_to_c, borrow, c_str, guard, interned, null, out};
use crate::types::*;

/// Adds one strong reference to `obj`.
///
/// # Safety
///
/// `obj` is null (an error) or a live object.
#[no_mangle]
pub unsafe extern "C" fn obj_inc_ref(obj: ObjHandle) -> i32 {
    guard(|| {
        if obj.is_null() {
            return Err(null("obj"));
        }
        // SAFETY: a live object (the caller's guarantee); the new reference is C's.
        let h = unsafe { ObjectRef::clone_from_raw(obj.cast::<Object>()) };
        core::mem::forget(h);
        Ok(())
    })
}

/// Drops one strong reference to `obj`; the last one runs its deleter.
///
/// # Safety
///
/// `obj` is null (an error) or a live object on which the caller owns a reference.
#[no_mangle]
pub unsafe extern "C" fn obj_dec_ref(obj: ObjHandle) -> i32 {
    guard(|| {
        if obj.is_null() {
            return Err(null("obj"));
        }
        // SAFETY: the caller gives up one reference to a live object.
        drop(unsafe { ObjectRef::from_raw(obj.cast::<Object>()) });
        Ok(())
    })
}

/// Initializes the header of a fresh object that C allocated: `size` bytes at `obj`,
/// of type `type_index`, count 1, and `deleter`, which frees it when the count drops to
/// zero.
///
/// **The layout rule.** Every type's layout is sealed once, by its first owner, and
/// checked against every later claim:
///
/// - A type whose layout a Rust struct owns (every built-in such as `OBJ_TYPE_ARRAY`
///   or `OBJ_TYPE_STRING`, `ffi.Object` itself, and every `#[derive(Object)]` type)
///   cannot be initialized from C: register a type of your own (`obj_type_register`)
///   under it instead.
/// - The type's nearest ancestor that a Rust struct owns must be one C can lay out:
///   every field of its table is `OBJ_FIELD_C_READABLE` (see `obj_type_fields`). The
///   object must start with that ancestor's layout (its header first, then its fields,
///   which C initializes) and be at least its size and aligned to it (`obj_type_layout`
///   gives both); C's own fields follow.
/// - The first object made seals the type's size: every later object of the type must
///   have the same `size`, and no Rust struct (in the host or a plugin) that adds
///   fields to that ancestor can ever claim the type — a plugin whose struct claims it
///   is refused when it loads.
///
/// On failure nothing is written: the memory is left as it was, still the caller's to
/// free.
///
/// # Safety
///
/// `obj` is null (an error) or `size` bytes of writable memory that nobody else uses.
#[no_mangle]
pub unsafe extern "C" fn obj_object_init(
    obj: *mut ObjObjectHeader,
    size: usize,
    type_index: u32,
    deleter: ObjDeleter,
) -> i32 {
    guard(|| {
        if obj.is_null() {
            return Err(null("obj"));
        }
        check_c_layout(obj as usize, size, type_index)?;
        let header = out(obj, "obj")?;
        header.type_index = type_index;
        header.ref_count = 1;
        header.deleter = deleter;
        Ok(())
    })
}

/// What `obj_object_init` checks before it writes: a registered object type whose
/// nearest Rust ancestor C can lay out, an object at least that large and aligned for
/// it, then the seal (the type's layout is foreign, of this size, from now on).
fn check_c_layout(addr: usize, size: usize, type_index: u32) -> Result<(), Error> {
    let info = match registry::type_info(type_index) {
        Some(t) if t.is_object() => t,
        _ => {
            return Err(Error::value_error(format!(
                "type index {type_index} is not a registered object type"
            )))
        }
    };
    if let LayoutOwner::Rust { rust_name, layout } = info.layout_owner() {
        return Err(Error::new(
            ErrorKind::TypeError,
            format!(
                "C cannot initialize an object of type `{}`: its layout is the Rust struct                  `{rust_name}`'s ({layout}); register a type of your own under it",
                info.key()
            ),
        ));
    }
    let (ancestor, layout) = ancestor_layout(info)?;
    if let Some(f) = field_table(ancestor.index())?
        .iter()
        .find(|f| f.flags & OBJ_FIELD_C_READABLE == 0)
    {
        return Err(Error::new(
            ErrorKind::TypeError,
            format!(
                "C cannot initialize an object of type `{}`: its Rust ancestor `{}` holds                  field `{}` (`{}`), which C cannot lay out",
                info.key(),
                ancestor.key(),
                str_of(f.name),
                str_of(f.rust_type),
            ),
        ));
    }
    if ancestor.reflection().is_opaque() {
        return Err(Error::new(
            ErrorKind::TypeError,
            format!(
                "C cannot initialize an object of type `{}`: its Rust ancestor `{}` is a                  built-in with contents of its own",
                info.key(),
                ancestor.key()
            ),
        ));
    }
    let align = layout
        .align()
        .max(core::mem::align_of::<ObjObjectHeader>() as u32) as usize;
    if addr % align != 0 {
        return Err(Error::value_error(format!(
            "an object of type `{}` must be aligned to {align} bytes (its Rust ancestor              `{}`'s alignment); {addr:#x} is not",
            info.key(),
            ancestor.key()
        )));
    }
    registry::seal_foreign_layout(type_index, size, ForeignMaker::C)
        .map_err(|e| Error::new(ErrorKind::TypeError, e.to_string()))?;
    Ok(())
}

/// The nearest ancestor whose layout a Rust struct owns, and its layout.
fn ancestor_layout(
    info: &'static registry::TypeInfo,
) -> Result<(&'static registry::TypeInfo, TypeLayout), Error> {
    let mut t = info;
    loop {
        if let LayoutOwner::Rust { layout, .. } = t.layout_owner() {
            return Ok((t, layout));
        }
        t = t.parent().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeError,
                format!("type `{}` has no Rust ancestor", info.key()),
            )
        })?;
    }
}

fn str_of(s: ObjStr) -> &'static str {
    // SAFETY: every `ObjStr` of a field table is an interned, leaked UTF-8 string.
    let bytes = unsafe { core::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    core::str::from_utf8(bytes).unwrap_or("?")
}

/// The layout of the type at `index`, as `obj_object_init` checks it (see
/// [`ObjTypeLayout`]).
///
/// # Safety
///
/// `out_layout` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_layout(index: u32, out_layout: *mut ObjTypeLayout) -> i32 {
    guard(|| {
        let o = out(out_layout, "out_layout")?;
        let info = registry::type_info(index)
            .filter(|t| t.is_object())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::KeyError,
                    format!("no object type has index {index}"),
                )
            })?;
        let owner = info.layout_owner();
        let (ancestor, layout) = ancestor_layout(info)?;
        *o = ObjTypeLayout {
            size: u64::from(layout.size()),
            align: layout.align(),
            owner: match owner {
                LayoutOwner::Rust { .. } => OBJ_LAYOUT_RUST,
                LayoutOwner::Foreign { .. } => OBJ_LAYOUT_FOREIGN,
                LayoutOwner::Fields { .. } => OBJ_LAYOUT_FIELDS,
                _ => OBJ_LAYOUT_OPEN,
            },
            fields_fingerprint: layout.fields_fingerprint(),
            object_size: match owner {
                LayoutOwner::Foreign {
                    object_size: Some(n),
                    ..
                } => u64::from(n),
                LayoutOwner::Fields { layout, .. } => u64::from(layout.size()),
                _ => 0,
            },
            rust_index: ancestor.index(),
            reserved: 0,
        };
        Ok(())
    })
}

/// The index of the type called `key`.
///
/// # Safety
///
/// `key` is null (an error) or a NUL-terminated string; `out_index` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_index_of(key: *const c_char, out_index: *mut u32) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let key = unsafe { c_str(key, "key") }?;
        let o = out(out_index, "out_index")?;
        *o = type_index_of(key).map_err(|e| Error::new(ErrorKind::KeyError, e.to_string()))?;
        Ok(())
    })
}

/// `obj_runtime_info`'s state: this copy runs the process's registry.
pub const OBJ_RUNTIME_OWN: i32 = 0;
/// `obj_runtime_info`'s state: another copy in the process runs it (the Python
/// extension, another `libobject_capi`, …), and this one uses it.
pub const OBJ_RUNTIME_JOINED: i32 = 1;
/// `obj_runtime_info`'s state: a host handed its registry over (a plugin's handshake).
pub const OBJ_RUNTIME_HOST: i32 = 2;
/// `obj_runtime_info`'s state: another build runs the process's registry, so this copy
/// runs none (every registration fails, naming both builds).
pub const OBJ_RUNTIME_REFUSED: i32 = 3;

/// Which runtime this copy of the library uses: the process has one registry, one set
/// of globals and one error slot per thread, whichever language loaded first. The
/// first call into the library that needs the registry decides (this call does, if
/// none did): a copy of the same build already running in the process (the Python
/// extension `object_python`, which exports this C API too, or another
/// `libobject_capi`) is joined; a copy of another build is refused. `*out_state` is an
/// `OBJ_RUNTIME_*` value; `*out_library` (may be null) is the file of the copy whose
/// registry is used (this library's own when `OBJ_RUNTIME_OWN`; the conflict's message
/// when `OBJ_RUNTIME_REFUSED`; empty when a host's), NUL-terminated, valid for the
/// process.
///
/// # Safety
///
/// `out_state` is writable; `out_library` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn obj_runtime_info(out_state: *mut i32, out_library: *mut ObjStr) -> i32 {
    use object_core::registry::adopt::{process_runtime, ProcessRuntime};
    guard(|| {
        let o = out(out_state, "out_state")?;
        static LIBRARY: std::sync::OnceLock<(i32, String)> = std::sync::OnceLock::new();
        let (state, library) = LIBRARY.get_or_init(|| match process_runtime() {
            ProcessRuntime::Own => (
                OBJ_RUNTIME_OWN,
                object_core::registry::process::this_library().unwrap_or_default(),
            ),
            ProcessRuntime::Joined { library } => (OBJ_RUNTIME_JOINED, library),
            ProcessRuntime::Refused(e) => (OBJ_RUNTIME_REFUSED, e.to_string()),
            _ => (OBJ_RUNTIME_HOST, String::new()),
        });
        *o = *state;
        if !out_library.is_null() {
            // SAFETY: non-null, and the caller promises it is writable.
            unsafe { *out_library = interned(library) };
        }
        Ok(())
    })
}

/// The key of the type at `index` (NUL-terminated, valid for the process).
///
/// # Safety
///
/// `out_key` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_key_of(index: u32, out_key: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_key, "out_key")?;
        let info = registry::type_info(index)
            .ok_or_else(|| Error::new(ErrorKind::KeyError, format!("no type has index {index}")))?;
        *o = interned(info.key());
        Ok(())
    })
}

/// Everything the registry knows about the type at `index`.
///
/// # Safety
///
/// `out_info` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_info(index: u32, out_info: *mut ObjTypeInfo) -> i32 {
    guard(|| {
        let o = out(out_info, "out_info")?;
        let t = registry::type_info(index)
            .ok_or_else(|| Error::new(ErrorKind::KeyError, format!("no type has index {index}")))?;
        let range = t.range();
        *o = ObjTypeInfo {
            index: t.index(),
            parent_index: t.parent_index().unwrap_or(u32::MAX),
            depth: t.depth(),
            range_begin: range.start,
            range_end: range.end,
            slots: t.slots(),
            is_final: t.is_final().into(),
            allows_overflow: t.allows_overflow().into(),
            is_object: t.is_object().into(),
            reserved: 0,
            num_ancestors: t.ancestors().len() as u32,
            ancestors: t.ancestors().as_ptr(),
            key: interned(t.key()),
        };
        Ok(())
    })
}

/// Whether `obj` is an instance of the type at `target` (or of a subtype): 1 or 0 in
/// `out_result`. O(1), the same check as Rust's `is::<T>()`.
///
/// # Safety
///
/// `obj` is null (an error) or a live object; `out_result` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_is_instance(obj: ObjHandle, target: u32, out_result: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let o = unsafe { borrow(obj, "obj") }?;
        let r = out(out_result, "out_result")?;
        *r = registry::is_instance_of_index(o.type_index(), target).into();
        Ok(())
    })
}

/// Registers a type at run time under `parent_key` (idempotent for an identical
/// registration) and writes its index.
///
/// # Safety
///
/// `key` and `parent_key` are null (an error) or NUL-terminated; `out_index` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_register(
    key: *const c_char,
    parent_key: *const c_char,
    slots: u32,
    is_final: i32,
    allow_overflow: i32,
    out_index: *mut u32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let key = unsafe { c_str(key, "key") }?;
        // SAFETY: the caller's guarantee.
        let parent = unsafe { c_str(parent_key, "parent_key") }?;
        let o = out(out_index, "out_index")?;
        let spec = TypeSpec::new(key, parent)
            .slots(slots)
            .final_type(is_final != 0)
            .overflow(allow_overflow != 0);
        let info = register_type(&spec)
            .map_err(|e| Error::new(ErrorKind::RegistryError, e.to_string()))?;
        *o = info.index();
        Ok(())
    })
}

/// The type key of `obj`.
///
/// # Safety
///
/// `obj` is null (an error) or a live object; `out_key` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_object_type_key(obj: ObjHandle, out_key: *mut ObjStr) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let o = unsafe { borrow(obj, "obj") }?;
        *out(out_key, "out_key")? = interned(o.type_key());
        Ok(())
    })
}

// ---------------------------------------------------------------------------------
// Reflection: the field table as C data.
// ---------------------------------------------------------------------------------

fn field_kind(k: FieldKind) -> u32 {
    match k {
        FieldKind::Bool => OBJ_FIELD_KIND_BOOL,
        FieldKind::Int => OBJ_FIELD_KIND_INT,
        FieldKind::Float => OBJ_FIELD_KIND_FLOAT,
        FieldKind::Str => OBJ_FIELD_KIND_STR,
        FieldKind::DataType => OBJ_FIELD_KIND_DATA_TYPE,
        FieldKind::Device => OBJ_FIELD_KIND_DEVICE,
        FieldKind::Object => OBJ_FIELD_KIND_OBJECT,
        FieldKind::Any => OBJ_FIELD_KIND_ANY,
        FieldKind::Enum => OBJ_FIELD_KIND_ENUM,
        _ => OBJ_FIELD_KIND_OPAQUE,
    }
}

/// How many bytes C may read at an enum field's offset: its integer `#[repr]`'s size,
/// for a field that is not optional (`Option` of an enum keeps `None` in a value no
/// variant has); 0 otherwise.
fn enum_c_size(f: &object_core::reflection::FieldInfo) -> u32 {
    match f.enum_info().map(EnumInfo::repr) {
        Some(EnumRepr::Int { size, .. }) if !f.flags().contains(FieldFlags::OPTIONAL) => {
            u32::from(size)
        }
        _ => 0,
    }
}

/// How many bytes C may read at the field's offset: only for types whose Rust layout is
/// a plain C scalar or one object pointer; 0 for everything else.
fn c_size(kind: FieldKind, rust_type: &str) -> u32 {
    let t: std::string::String = rust_type.chars().filter(|c| !c.is_whitespace()).collect();
    match kind {
        FieldKind::Bool if t == "bool" => 1,
        FieldKind::Int => match t.as_str() {
            "i8" | "u8" => 1,
            "i16" | "u16" => 2,
            "i32" | "u32" => 4,
            "i64" | "u64" | "isize" | "usize" => 8,
            _ => 0,
        },
        FieldKind::Float => match t.as_str() {
            "f32" => 4,
            "f64" => 8,
            _ => 0,
        },
        FieldKind::DataType => 4,
        FieldKind::Device => 8,
        FieldKind::Object => {
            let inner = t
                .strip_prefix("Option<")
                .and_then(|s| s.strip_suffix('>'))
                .unwrap_or(&t);
            // Handles that are one `repr(transparent)` object pointer.
            let pointer_like = [
                "ObjectPtr<",
                "ObjectRef",
                "Array<",
                "Map<",
                "Function",
                "Module",
                "NDArray",
                "Shape",
                "Error",
            ];
            if pointer_like.iter().any(|p| inner.starts_with(p)) {
                8
            } else {
                0
            }
        }
        _ => 0,
    }
}

// The flag bits C sees are the reflection's own.
const _: () = {
    assert!(OBJ_FIELD_READ_ONLY == FieldFlags::READ_ONLY.bits());
    assert!(OBJ_FIELD_NO_EQUALITY == FieldFlags::NO_EQUALITY.bits());
    assert!(OBJ_FIELD_SKIPPED == FieldFlags::SKIPPED.bits());
    assert!(OBJ_FIELD_OPTIONAL == FieldFlags::OPTIONAL.bits());
    assert!(OBJ_FIELD_DEFINITION == FieldFlags::DEFINITION.bits());
    assert!(OBJ_FIELD_HAS_DEFAULT == FieldFlags::HAS_DEFAULT.bits());
    assert!(OBJ_FIELD_ANY_LAYOUT == FieldFlags::ANY_LAYOUT.bits());
};

/// A leaked field table (its strings are interned, leaked too: shared, never written).
#[derive(Clone, Copy)]
struct Rows(&'static [ObjFieldInfo]);

// SAFETY: the rows and everything they point to are immutable and live for the process.
unsafe impl Send for Rows {}
// SAFETY: as above.
unsafe impl Sync for Rows {}

fn field_table(index: u32) -> Result<&'static [ObjFieldInfo], Error> {
    static TABLES: OnceLock<Mutex<BTreeMap<u32, Rows>>> = OnceLock::new();
    let tables = TABLES.get_or_init(Default::default);
    let mut t = tables.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(done) = t.get(&index) {
        return Ok(done.0);
    }
    let info = registry::type_info(index)
        .ok_or_else(|| Error::new(ErrorKind::KeyError, format!("no type has index {index}")))?;
    let rows: Vec<ObjFieldInfo> = info
        .reflection()
        .fields()
        .iter()
        .map(|f| {
            let size = if f.flags().contains(FieldFlags::ANY_LAYOUT) {
                core::mem::size_of::<object_core::Any>() as u32
            } else if f.kind() == FieldKind::Enum {
                enum_c_size(f)
            } else {
                c_size(f.kind(), f.rust_type())
            };
            let mut flags = f.flags().bits();
            if size != 0 && !f.flags().contains(FieldFlags::SKIPPED) {
                flags |= OBJ_FIELD_C_READABLE;
            }
            ObjFieldInfo {
                name: interned(f.name()),
                offset: f.offset() as u64,
                size,
                kind: field_kind(f.kind()),
                flags,
                static_type_index: f.static_type_index().unwrap_or(u32::MAX),
                static_type_key: interned(f.static_type_key()),
                rust_type: interned(f.rust_type()),
            }
        })
        .collect();
    let rows: &'static [ObjFieldInfo] = Box::leak(rows.into_boxed_slice());
    t.insert(index, Rows(rows));
    Ok(rows)
}

/// The field table of the type at `index`: `*out_count` records (parents' fields
/// first) at `*out_fields`, valid for the process. With it C finds a field by name and,
/// for fields flagged `OBJ_FIELD_C_READABLE`, reads `size` bytes at `offset` from the
/// object's header without calling into Rust.
///
/// # Safety
///
/// `out_fields` and `out_count` are writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_fields(
    index: u32,
    out_fields: *mut *const ObjFieldInfo,
    out_count: *mut usize,
) -> i32 {
    guard(|| {
        let f = out(out_fields, "out_fields")?;
        let n = out(out_count, "out_count")?;
        let rows = field_table(index)?;
        *f = rows.as_ptr();
        *n = rows.len();
        Ok(())
    })
}

/// An enum's descriptor as C data, made once per enum (leaked: shared, never written).
#[derive(Clone, Copy)]
struct EnumRow(&'static ObjEnumInfo);

// SAFETY: the row and everything it points to are immutable and live for the process.
unsafe impl Send for EnumRow {}
// SAFETY: as above.
unsafe impl Sync for EnumRow {}

fn enum_row(e: &'static EnumInfo) -> &'static ObjEnumInfo {
    static ROWS: OnceLock<Mutex<BTreeMap<usize, EnumRow>>> = OnceLock::new();
    let rows = ROWS.get_or_init(Default::default);
    let mut t = rows.lock().unwrap_or_else(|e| e.into_inner());
    let at = e as *const EnumInfo as usize;
    if let Some(done) = t.get(&at) {
        return done.0;
    }
    let variants: Vec<ObjEnumVariant> = e
        .variants()
        .iter()
        .map(|v| ObjEnumVariant {
            name: interned(v.name()),
            value: v.value(),
        })
        .collect();
    let variants: &'static [ObjEnumVariant] = Box::leak(variants.into_boxed_slice());
    let (size, signed) = match e.repr() {
        EnumRepr::Int { size, signed } => (u32::from(size), u32::from(signed)),
        _ => (0, 0),
    };
    let row: &'static ObjEnumInfo = Box::leak(Box::new(ObjEnumInfo {
        key: interned(e.key()),
        variants: variants.as_ptr(),
        num_variants: variants.len(),
        size,
        is_signed: signed,
    }));
    t.insert(at, EnumRow(row));
    row
}

/// The enum of the field at position `field` of type `index`'s field table (as
/// `obj_type_fields` lists it), a field of kind `OBJ_FIELD_KIND_ENUM`: its key, its
/// variants' names and values, and the integer it is stored as. `*out_info` is valid
/// for the process. (ABI 2.1.)
///
/// # Errors
///
/// `KeyError` for an index no type has, `IndexError` for a position past the table,
/// `TypeError` for a field that is not an enum.
///
/// # Safety
///
/// `out_info` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_field_enum(
    index: u32,
    field: usize,
    out_info: *mut *const ObjEnumInfo,
) -> i32 {
    guard(|| {
        let o = out(out_info, "out_info")?;
        let info = registry::type_info(index)
            .ok_or_else(|| Error::new(ErrorKind::KeyError, format!("no type has index {index}")))?;
        let fields = info.reflection().fields();
        let f = fields.get(field).ok_or_else(|| {
            Error::new(
                ErrorKind::IndexError,
                format!(
                    "`{}` has {} fields, not a field at {field}",
                    info.key(),
                    fields.len()
                ),
            )
        })?;
        let e = f.enum_info().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeError,
                format!("field `{}` of `{}` is not an enum", f.name(), info.key()),
            )
        })?;
        *o = enum_row(e);
        Ok(())
    })
}

/// Reads a reflected field by name (any kind), as an owned value.
///
/// # Safety
///
/// `obj` is null (an error) or a live object; `name` NUL-terminated; `out_value`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn obj_object_get_attr(
    obj: ObjHandle,
    name: *const c_char,
    out_value: *mut ObjAny,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let o = unsafe { borrow(obj, "obj") }?;
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let slot = out(out_value, "out_value")?;
        let v =
            get_attr(&o, name).map_err(|e| Error::new(ErrorKind::AttributeError, e.to_string()))?;
        *slot = any_to_c(v);
        Ok(())
    })
}
