//! Types with fields defined from C (`obj_type_register_fields`), objects made by key
//! through reflection (`obj_object_create`), and the per-type method table
//! (`obj_method_set`, `obj_method_get`, `obj_object_call_method`). ABI 2.3.

use core::ffi::c_char;

use object_containers::{find_method, register_method_at, Function, FunctionObj, MethodKind};
use object_core::reflection::{create_from_source, FieldSource, FieldSpec, FieldType};
use object_core::registry::{self, register_type, TypeSpec};
use object_core::{Any, Error, ErrorKind, ObjectPtr};

use crate::fence::{borrow, c_str, give, guard, null, out, slot_from_c, view_to_c};
use crate::function::obj_function_call;
use crate::types::*;
use crate::values::{owned, typed};

/// The declared type of one field spec from C.
fn field_type(spec: &ObjFieldSpec, name: &str) -> Result<FieldType, Error> {
    let ty = match spec.kind {
        OBJ_FIELD_KIND_BOOL => FieldType::Bool,
        OBJ_FIELD_KIND_INT => FieldType::Int,
        OBJ_FIELD_KIND_FLOAT => FieldType::Float,
        OBJ_FIELD_KIND_STR => FieldType::Str,
        OBJ_FIELD_KIND_DATA_TYPE => FieldType::DataType,
        OBJ_FIELD_KIND_DEVICE => FieldType::Device,
        OBJ_FIELD_KIND_ANY => FieldType::Any,
        OBJ_FIELD_KIND_OBJECT => {
            let key = if spec.type_key.is_null() {
                object_core::type_index::OBJECT_KEY
            } else {
                // SAFETY: non-null, NUL-terminated (the caller's guarantee).
                unsafe { c_str(spec.type_key, "type_key") }?
            };
            FieldType::Object(key.to_owned())
        }
        other => {
            return Err(Error::type_error(format!(
                "field `{name}`: kind {other} cannot be declared from C (bool, int, float, \
                 str, data type, device, object or any)"
            )))
        }
    };
    Ok(
        if spec.flags & OBJ_FIELD_OPTIONAL != 0 && ty != FieldType::Any {
            FieldType::Optional(Box::new(ty))
        } else {
            ty
        },
    )
}

/// Registers the type `key` under `parent_key` with a run-time field table: these
/// `num_fields` fields after its parent's (ABI 2.3). Its objects hold their fields in
/// the object, after the nearest Rust ancestor's struct, and are made through
/// reflection (`obj_object_create`, a JSON graph, Python's class), never by
/// `obj_object_init`; `obj_type_fields` lists the fields with their offsets, which C
/// reads in place as it reads a Rust struct's (`OBJ_FIELD_C_READABLE`).
///
/// Each field: a name; a kind (`OBJ_FIELD_KIND_BOOL`, `_INT`, `_FLOAT`, `_STR`,
/// `_DATA_TYPE`, `_DEVICE`, `_OBJECT`, `_ANY`); `type_key` for an object field (its
/// values must be objects of that type or a subtype; null: any object); `flags`
/// (`OBJ_FIELD_OPTIONAL`: it may be None; `OBJ_FIELD_NO_EQUALITY`; `OBJ_FIELD_DEFINITION`;
/// `OBJ_FIELD_HAS_DEFAULT`: `default_value`, borrowed and checked against the type, is
/// taken when a value is left out). `type_flags`: `OBJ_TYPE_FINAL`, `OBJ_TYPE_ABSTRACT`.
/// Registering the same key again with the same fields returns the same index;
/// anything else is a `RegistryError` naming both.
///
/// # Safety
///
/// `key` and `parent_key` are NUL-terminated; `fields` points to `num_fields` specs
/// (null when 0) whose strings are NUL-terminated and whose defaults follow the
/// header's rules for borrowed values; `out_index` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_type_register_fields(
    key: *const c_char,
    parent_key: *const c_char,
    fields: *const ObjFieldSpec,
    num_fields: usize,
    type_flags: u32,
    slots: u32,
    out_index: *mut u32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let key = unsafe { c_str(key, "key") }?;
        // SAFETY: the caller's guarantee.
        let parent = unsafe { c_str(parent_key, "parent_key") }?;
        let o = out(out_index, "out_index")?;
        let specs: &[ObjFieldSpec] = if num_fields == 0 {
            &[]
        } else if fields.is_null() {
            return Err(null("fields"));
        } else {
            // SAFETY: `num_fields` specs at `fields` (the caller's guarantee).
            unsafe { core::slice::from_raw_parts(fields, num_fields) }
        };
        let mut own = Vec::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            // SAFETY: the caller's guarantee.
            let name = unsafe { c_str(s.name, "field name") }
                .map_err(|e| e.with_frame(format!("field {i}")))?;
            let mut spec = FieldSpec::new(name, field_type(s, name)?)
                .no_eq(s.flags & OBJ_FIELD_NO_EQUALITY != 0)
                .def(s.flags & OBJ_FIELD_DEFINITION != 0);
            if s.flags & OBJ_FIELD_HAS_DEFAULT != 0 {
                // SAFETY: a borrowed value following the header's rules (the caller's
                // guarantee), copied here.
                let value = owned(unsafe { slot_from_c(&s.default_value) }?)?;
                spec = spec.default(value);
            }
            own.push(spec);
        }
        let spec = TypeSpec::new(key, parent)
            .slots(slots)
            .final_type(type_flags & OBJ_TYPE_FINAL != 0)
            .abstract_type(type_flags & OBJ_TYPE_ABSTRACT != 0)
            .fields(own);
        let info = register_type(&spec)
            .map_err(|e| Error::new(ErrorKind::RegistryError, e.to_string()))?;
        *o = info.index();
        Ok(())
    })
}

/// Makes an object of the type `type_index` from named field values through reflection
/// (any order; a field left out takes its default, an optional one None), as Rust's
/// `reflection::create` does (ABI 2.3): for derive types and types with a run-time
/// field table alike. The values are borrowed; `*out_obj` gets one reference.
///
/// # Errors
///
/// `KeyError` for an unknown type; the reflection errors naming the field: a missing,
/// unknown or repeated field (`KeyError`/`ValueError`), a value of the wrong type
/// (`TypeError`), an abstract or opaque type.
///
/// # Safety
///
/// `names` and `values` point to `num_fields` NUL-terminated names and values following
/// the header's rules (null when 0); `out_obj` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_object_create(
    type_index: u32,
    names: *const *const c_char,
    values: *const ObjAny,
    num_fields: usize,
    out_obj: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_obj, "out_obj")?;
        let info = registry::type_info(type_index)
            .filter(|t| t.is_object())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::KeyError,
                    format!("no object type has index {type_index}"),
                )
            })?;
        let mut entries: Vec<(&str, Option<Any>)> = Vec::with_capacity(num_fields);
        if num_fields > 0 {
            if names.is_null() {
                return Err(null("names"));
            }
            if values.is_null() {
                return Err(null("values"));
            }
            for i in 0..num_fields {
                // SAFETY: `num_fields` names and values (the caller's guarantee).
                let (n, v) = unsafe { (*names.add(i), &*values.add(i)) };
                // SAFETY: the caller's guarantee.
                let n = unsafe { c_str(n, "field name") }?;
                // SAFETY: a borrowed value following the header's rules, copied.
                let v = owned(unsafe { slot_from_c(v) }?)?;
                entries.push((n, Some(v)));
            }
        }
        let obj = create_from_source(info, &mut FieldSource::new(info.key(), &mut entries))
            .map_err(Error::from)?;
        *o = give(obj);
        Ok(())
    })
}

/// Registers the function `func` (borrowed; the table takes its own reference) as the
/// method `name` of the type `type_index` (ABI 2.3): found for the type and its
/// descendants that have no method of that name themselves, from every language in the
/// process. `kind`: `OBJ_METHOD_INSTANCE` (called with the object first) or
/// `OBJ_METHOD_STATIC`. A name the type already has is a `KeyError` unless
/// `override_existing` is nonzero.
///
/// # Safety
///
/// `name` NUL-terminated; `func` a live object.
#[no_mangle]
pub unsafe extern "C" fn obj_method_set(
    type_index: u32,
    name: *const c_char,
    func: ObjHandle,
    kind: i32,
    override_existing: i32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(func, "func") }?;
        let f = Function::from_object_ptr(typed::<FunctionObj>(&b, "func")?);
        let kind = MethodKind::from_code(kind).ok_or_else(|| {
            Error::value_error(format!(
                "method kind {kind} (OBJ_METHOD_INSTANCE or OBJ_METHOD_STATIC)"
            ))
        })?;
        register_method_at(type_index, name, f, kind, override_existing != 0).map(drop)
    })
}

/// The method `name` of the type `type_index`: its own or its nearest ancestor's (a new
/// reference in `*out_func`), or null if none has one (ABI 2.3). `*out_kind` (may be
/// null) gets `OBJ_METHOD_INSTANCE` or `OBJ_METHOD_STATIC`.
///
/// # Safety
///
/// `name` NUL-terminated; `out_func` writable; `out_kind` null or writable.
#[no_mangle]
pub unsafe extern "C" fn obj_method_get(
    type_index: u32,
    name: *const c_char,
    out_func: *mut ObjHandle,
    out_kind: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let o = out(out_func, "out_func")?;
        match find_method(type_index, name) {
            Some(m) => {
                // SAFETY: null or writable (the caller's guarantee).
                if let Some(k) = unsafe { out_kind.as_mut() } {
                    *k = m.kind().code();
                }
                *o = give(m.function().clone().into_object_ptr());
            }
            None => *o = core::ptr::null_mut(),
        }
        Ok(())
    })
}

/// Calls the method `name` of `obj`'s type (or of its nearest ancestor with one) on
/// `obj` (ABI 2.3): an instance method with `obj` first and then the `num_args`
/// arguments, a static one with the arguments only. As `obj_function_call` otherwise
/// (`*ret` gets the owned result; None once the method ran and failed). No method of
/// that name is an `AttributeError` naming the type.
///
/// # Safety
///
/// `obj` a live object; `name` NUL-terminated; `args` points to `num_args` values
/// following the header's rules; `ret` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_object_call_method(
    obj: ObjHandle,
    name: *const c_char,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> i32 {
    let mut found: Option<(Function, MethodKind)> = None;
    let mut this = ObjAny {
        type_index: 0,
        small: 0,
        v: ObjAnyPayload { v_int64: 0 },
    };
    let rc = guard(|| {
        // SAFETY: the caller's guarantee.
        let o = unsafe { borrow(obj, "obj") }?;
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        if num_args < 0 {
            return Err(Error::value_error(format!("negative count {num_args}")));
        }
        let m = find_method(o.type_index(), name).ok_or_else(|| {
            Error::new(
                ErrorKind::AttributeError,
                format!("`{}` has no method `{name}`", o.type_key()),
            )
        })?;
        this = view_to_c(object_core::AnyView::from(&*o));
        found = Some((m.function().clone(), m.kind()));
        Ok(())
    });
    let Some((f, kind)) = found.filter(|_| rc == 0) else {
        return rc;
    };
    let handle = ObjectPtr::as_ptr(f.as_object_ptr()).cast_mut().cast();
    let rc = match kind {
        // SAFETY: a live function (held by `f`); the rest is the caller's guarantee.
        MethodKind::Static => unsafe { obj_function_call(handle, args, num_args, ret) },
        _ => {
            // The object first (borrowed, as the caller lends it), then the arguments.
            let n = num_args as usize;
            let mut all = Vec::with_capacity(n + 1);
            all.push(this);
            if n > 0 {
                if args.is_null() {
                    return guard(|| Err(null("args")));
                }
                // SAFETY: `n` values at `args` (the caller's guarantee), copied bitwise:
                // borrowed values stay borrowed for the call.
                all.extend_from_slice(unsafe { core::slice::from_raw_parts(args, n) });
            }
            // SAFETY: a live function (held by `f`); `all` holds `n + 1` values: the
            // caller's object, live for the call, and the caller's values.
            unsafe { obj_function_call(handle, all.as_ptr(), (n + 1) as i32, ret) }
        }
    };
    drop(f);
    rc
}
