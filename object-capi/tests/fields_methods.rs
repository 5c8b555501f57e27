//! The C entry points of run-time field tables and methods (ABI 2.3), called from Rust
//! as C calls them (so that Miri checks them; `tests/c/fields_methods.c` runs the same
//! from C): `obj_type_register_fields`, `obj_object_create`, `obj_method_set`,
//! `obj_method_get`, `obj_object_call_method`, and the cells read in place at the
//! offsets `obj_type_fields` gives.

use std::ffi::{c_char, c_void, CStr};

use object_capi::{
    obj_any_float, obj_any_int, obj_any_release, obj_any_str, obj_dec_ref, obj_error_take,
    obj_function_create, obj_method_get, obj_method_set, obj_object_call_method, obj_object_create,
    obj_object_get_attr, obj_type_fields, obj_type_register_fields, ObjAny, ObjFieldInfo,
    ObjFieldSpec, ObjHandle, ObjStr, OBJ_FIELD_HAS_DEFAULT, OBJ_FIELD_KIND_FLOAT,
    OBJ_FIELD_KIND_INT, OBJ_FIELD_KIND_OBJECT, OBJ_FIELD_KIND_STR, OBJ_FIELD_OPTIONAL,
    OBJ_KIND_INT, OBJ_METHOD_INSTANCE, OBJ_METHOD_STATIC,
};
use object_core::{Object, ObjectRef};

fn spec(name: &'static CStr, kind: u32, flags: u32, default: ObjAny) -> ObjFieldSpec {
    ObjFieldSpec {
        name: name.as_ptr(),
        kind,
        flags,
        type_key: core::ptr::null(),
        default_value: default,
    }
}

/// The kind and message of the error waiting in the slot.
fn take_error() -> (String, String) {
    let mut e: ObjHandle = core::ptr::null_mut();
    // SAFETY: `e` is writable.
    assert_eq!(unsafe { obj_error_take(&mut e) }, 0);
    assert!(!e.is_null(), "an error is waiting");
    // SAFETY: `e` is a live error object (one reference, taken here).
    let err = unsafe { ObjectRef::from_raw(e.cast::<Object>()) };
    let err = err.downcast::<object_core::ErrorObj>().ok().unwrap();
    let e = object_core::Error::from_object_ptr(err);
    (e.kind().to_string(), e.message().to_owned())
}

fn text(s: ObjStr) -> String {
    // SAFETY: an interned, NUL-terminated string of `len` bytes.
    let bytes = unsafe { core::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A C callback: `self.count + arg` (an instance method).
unsafe extern "C" fn count_plus(
    _: *mut c_void,
    args: *const ObjAny,
    n: i32,
    ret: *mut ObjAny,
) -> i32 {
    assert_eq!(n, 2);
    // SAFETY: two values (checked), the first an object, as the method is called.
    let (this, arg) = unsafe { (*args, *args.add(1)) };
    let mut count = obj_any_int(0);
    // SAFETY: a live object (the caller lends it); `count` writable.
    let rc = unsafe { obj_object_get_attr(this.v.v_obj, c"count".as_ptr(), &mut count) };
    assert_eq!(rc, 0);
    // SAFETY: ints hold `v_int64`; `ret` writable.
    unsafe { *ret = obj_any_int(count.v.v_int64 + arg.v.v_int64) };
    0
}

/// A C callback: a static method returning its argument times two.
unsafe extern "C" fn twice(_: *mut c_void, args: *const ObjAny, n: i32, ret: *mut ObjAny) -> i32 {
    assert_eq!(n, 1);
    // SAFETY: one int (the test passes one); `ret` writable.
    unsafe { *ret = obj_any_int(2 * (*args).v.v_int64) };
    0
}

#[test]
fn a_type_with_fields_from_c_and_its_methods() {
    let fields = [
        spec(c"label", OBJ_FIELD_KIND_STR, 0, obj_any_int(0)),
        spec(
            c"count",
            OBJ_FIELD_KIND_INT,
            OBJ_FIELD_HAS_DEFAULT,
            obj_any_int(3),
        ),
        spec(
            c"weight",
            OBJ_FIELD_KIND_FLOAT,
            OBJ_FIELD_OPTIONAL,
            obj_any_int(0),
        ),
        ObjFieldSpec {
            type_key: c"capitest.Note".as_ptr(),
            ..spec(
                c"next",
                OBJ_FIELD_KIND_OBJECT,
                OBJ_FIELD_OPTIONAL,
                obj_any_int(0),
            )
        },
    ];
    let (mut note, mut again) = (0u32, 0u32);
    // SAFETY: NUL-terminated strings, 4 specs, writable out parameters.
    unsafe {
        let key = c"capitest.Note".as_ptr();
        let parent = c"ffi.Object".as_ptr();
        assert_eq!(
            obj_type_register_fields(key, parent, fields.as_ptr(), 4, 0, 0, &mut note),
            0
        );
        assert_eq!(
            obj_type_register_fields(key, parent, fields.as_ptr(), 4, 0, 0, &mut again),
            0
        );
    }
    assert_eq!(note, again);

    // The table: offsets C reads the cells at.
    let mut rows: *const ObjFieldInfo = core::ptr::null();
    let mut n = 0usize;
    // SAFETY: writable out parameters.
    assert_eq!(unsafe { obj_type_fields(note, &mut rows, &mut n) }, 0);
    // SAFETY: `n` rows, valid for the process.
    let rows = unsafe { core::slice::from_raw_parts(rows, n) };
    let names: Vec<String> = rows.iter().map(|r| text(r.name)).collect();
    assert_eq!(names, ["label", "count", "weight", "next"]);
    let count_at = rows[1].offset as usize;

    // Objects by key (the values borrowed), one pointing at the other.
    let names = [c"label".as_ptr(), c"weight".as_ptr()];
    let values = [
        obj_any_str(c"a label long enough to be an object".as_ptr()),
        obj_any_float(0.5),
    ];
    let mut a: ObjHandle = core::ptr::null_mut();
    // SAFETY: two names and values; `a` writable.
    let rc = unsafe { obj_object_create(note, names.as_ptr(), values.as_ptr(), 2, &mut a) };
    assert_eq!(rc, 0);
    // SAFETY: `a` is a live object of the type, whose `count` cell is an i64 there.
    assert_eq!(unsafe { *(a.cast::<u8>().add(count_at).cast::<i64>()) }, 3);
    let names: [*const c_char; 3] = [c"label".as_ptr(), c"next".as_ptr(), c"count".as_ptr()];
    // SAFETY: `a` is live.
    let a_value = unsafe { object_any(a) };
    let values = [obj_any_str(c"b".as_ptr()), a_value, obj_any_int(9)];
    let mut b: ObjHandle = core::ptr::null_mut();
    // SAFETY: as above.
    let rc = unsafe { obj_object_create(note, names.as_ptr(), values.as_ptr(), 3, &mut b) };
    assert_eq!(rc, 0);
    // SAFETY: `b` is live: the `next` cell is the pointer to `a`.
    let next = unsafe {
        *(b.cast::<u8>()
            .add(rows[3].offset as usize)
            .cast::<ObjHandle>())
    };
    assert_eq!(next, a);
    // A wrong value: nothing made.
    let mut none: ObjHandle = core::ptr::null_mut();
    let bad = [obj_any_int(1)];
    // SAFETY: as above.
    let rc = unsafe { obj_object_create(note, names.as_ptr(), bad.as_ptr(), 1, &mut none) };
    assert_ne!(rc, 0);
    assert!(none.is_null());
    let (kind, msg) = take_error();
    assert_eq!(kind, "TypeError");
    assert!(msg.contains("field `label` of `capitest.Note`"), "{msg}");

    // Methods from C callbacks: an instance one and a static one.
    let (mut plus, mut dbl): (ObjHandle, ObjHandle) =
        (core::ptr::null_mut(), core::ptr::null_mut());
    // SAFETY: callbacks without contexts, names NUL-terminated, writable out parameters;
    // the table takes its own references.
    unsafe {
        assert_eq!(
            obj_function_create(
                Some(count_plus),
                core::ptr::null_mut(),
                None,
                c"plus".as_ptr(),
                &mut plus
            ),
            0
        );
        assert_eq!(
            obj_function_create(
                Some(twice),
                core::ptr::null_mut(),
                None,
                c"twice".as_ptr(),
                &mut dbl
            ),
            0
        );
        assert_eq!(
            obj_method_set(note, c"plus".as_ptr(), plus, OBJ_METHOD_INSTANCE, 0),
            0
        );
        assert_eq!(
            obj_method_set(note, c"twice".as_ptr(), dbl, OBJ_METHOD_STATIC, 0),
            0
        );
        assert_ne!(
            obj_method_set(note, c"plus".as_ptr(), plus, OBJ_METHOD_INSTANCE, 0),
            0
        );
        assert_eq!(take_error().0, "KeyError");
        assert_eq!(obj_dec_ref(plus), 0);
        assert_eq!(obj_dec_ref(dbl), 0);
    }
    let arg = obj_any_int(10);
    let mut ret = obj_any_int(0);
    // SAFETY: `b` is live; one argument; `ret` writable.
    let rc = unsafe { obj_object_call_method(b, c"plus".as_ptr(), &arg, 1, &mut ret) };
    assert_eq!(rc, 0);
    // SAFETY: an int result.
    let value = unsafe { ret.v.v_int64 };
    assert_eq!((ret.type_index, value), (OBJ_KIND_INT, 19));
    // SAFETY: as above; a static method takes no object.
    let rc = unsafe { obj_object_call_method(b, c"twice".as_ptr(), &arg, 1, &mut ret) };
    assert_eq!(rc, 0);
    // SAFETY: an int result.
    assert_eq!(unsafe { ret.v.v_int64 }, 20);
    let mut f: ObjHandle = core::ptr::null_mut();
    let mut kind = -1;
    // SAFETY: NUL-terminated name; writable out parameters.
    let rc = unsafe { obj_method_get(note, c"twice".as_ptr(), &mut f, &mut kind) };
    assert_eq!(rc, 0);
    assert!(!f.is_null() && kind == OBJ_METHOD_STATIC);
    // SAFETY: our reference.
    assert_eq!(unsafe { obj_dec_ref(f) }, 0);
    // SAFETY: as above.
    let rc = unsafe { obj_method_get(note, c"nope".as_ptr(), &mut f, core::ptr::null_mut()) };
    assert_eq!(rc, 0);
    assert!(f.is_null());
    // SAFETY: as above.
    let rc = unsafe { obj_object_call_method(b, c"nope".as_ptr(), core::ptr::null(), 0, &mut ret) };
    assert_ne!(rc, 0);
    let (kind, msg) = take_error();
    assert_eq!(
        (kind.as_str(), msg.as_str()),
        ("AttributeError", "`capitest.Note` has no method `nope`")
    );

    // SAFETY: the `plus` and `twice` Functions held by the table are removed, and our
    // two objects released.
    unsafe {
        assert!(object_containers::remove_method(note, "plus").is_some());
        assert!(object_containers::remove_method(note, "twice").is_some());
        let mut released = object_any(b);
        assert_eq!(obj_any_release(&mut released), 0);
        assert_eq!(obj_dec_ref(a), 0);
    }
}

/// A value holding the live object `h` (borrowed).
///
/// # Safety
///
/// `h` is a live object.
unsafe fn object_any(h: ObjHandle) -> ObjAny {
    // SAFETY: a live object's header (the caller's guarantee).
    let index = unsafe { (*h).type_index };
    ObjAny {
        type_index: index,
        small: 0,
        v: object_capi::ObjAnyPayload { v_obj: h },
    }
}
