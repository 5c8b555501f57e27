//! A Rust type's cache is filled when the registry is built from the link-time
//! registrations, not on the type's first use. `is::<T>()` never fills a cache (it reads
//! an unfilled one as "not a `T`"), so an object that C makes of a type registered under
//! a Rust type — which never runs that Rust type's code — must still check as an
//! instance of it. This binary holds only this test, so nothing uses `Shape` before it.

use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use object_capi::{obj_object_init, obj_type_register, ObjObjectHeader};
use object_core::{Object, ObjectRef};

/// A Rust base type that no Rust code of this test makes, asks the index of, or
/// checks before C makes an object below it.
#[derive(Object)]
#[repr(C)]
#[object(key = "cachetest.Shape")]
struct Shape {
    base: Object,
}

/// A final Rust type that is never used at all, but for the negative check.
#[derive(Object)]
#[repr(C)]
#[object(key = "cachetest.Other", final)]
struct Other {
    base: Object,
}

static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn free_header(obj: *mut ObjObjectHeader) {
    // SAFETY: `obj` is the `Box<ObjObjectHeader>` made below, freed once, by its last
    // reference.
    drop(unsafe { Box::from_raw(obj) });
    FREED.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn an_object_c_makes_below_a_link_time_type_is_an_instance_of_it() {
    const KEY: &CStr = c"cachetest.CCircle";
    const PARENT: &CStr = c"cachetest.Shape";
    let mut index = 0u32;
    // SAFETY: NUL-terminated strings; `index` is writable.
    let rc = unsafe { obj_type_register(KEY.as_ptr(), PARENT.as_ptr(), 0, 1, 0, &mut index) };
    assert_eq!(rc, 0);

    // `Shape` has only the header: a bare header is the child's whole layout.
    let raw = Box::into_raw(Box::new(ObjObjectHeader {
        type_index: 0,
        ref_count: 0,
        deleter: None,
    }));
    // SAFETY: `raw` is a fresh, unshared header.
    let rc =
        unsafe { obj_object_init(raw, size_of::<ObjObjectHeader>(), index, Some(free_header)) };
    assert_eq!(rc, 0);
    // SAFETY: `obj_object_init` made a live object with one reference, which we take.
    let obj = unsafe { ObjectRef::from_raw(raw.cast::<Object>()) };

    assert_eq!(obj.type_key(), "cachetest.CCircle");
    assert!(
        obj.is::<Shape>(),
        "the registry's build filled `Shape`'s cache"
    );
    assert!(obj.downcast_ref::<Shape>().is_some());
    assert!(!obj.is::<Other>());
    drop(obj);
    assert_eq!(FREED.load(Ordering::Relaxed), 1);
}
