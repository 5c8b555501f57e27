//! The layout rule at the plugin boundary: every type's layout is sealed by its first
//! owner, and a plugin whose Rust structs disagree with what the host sealed is refused
//! when it loads, before any of its code can down-cast a host object.
//!
//! - C registers `plugin.CNode` and makes 16-byte objects of it; the demo plugin's
//!   `CNode` (the same key, 144 bytes) would read 128 bytes past them.
//! - The demo plugin built against another version of the shared fixtures crate
//!   (`skew-layout`: `fixtures.Versioned` with 256 more bytes, same key, parent, flags
//!   and Rust path) would read 256 bytes past the host's objects.
//!
//! This binary holds only this test: the order matters (C seals `plugin.CNode` before
//! any copy of the plugin registers it), and each load is of a fresh copy of the library.

mod support;

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use object_capi::obj_type_register;
use object_capi::ModuleLoad;
use object_capi_fixtures::Versioned;
use object_containers::Module;
use object_core::registry::LayoutOwner;
use object_core::{make_object, ObjectPtr, ObjectRef, ObjectType};

use support::{build_library, build_library_with, copy_plugin, header_object, HEADERS_FREED};

/// The demo plugin as built normally, and against the skewed fixtures.
fn plugins() -> (PathBuf, PathBuf) {
    // One after the other: both builds write the same file, copied at once.
    let skewed = copy_plugin(
        &build_library_with(
            "object-capi-plugin-demo",
            &["--features", "skew-layout"],
            &[],
        ),
        "plugin_layout_skewed.so",
    );
    let normal = copy_plugin(
        &build_library("object-capi-plugin-demo"),
        "plugin_layout.so",
    );
    (normal, skewed)
}

/// A 16-byte C object (a bare header) of a type C registers under `ffi.Object`.
fn c_object(key: &CStr) -> ObjectRef {
    let mut index = 0u32;
    // SAFETY: NUL-terminated strings; `index` is writable.
    let rc =
        unsafe { obj_type_register(key.as_ptr(), c"ffi.Object".as_ptr(), 0, 0, 1, &mut index) };
    assert_eq!(rc, 0);
    header_object(index)
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn plugins_whose_structs_disagree_with_the_sealed_layouts_are_refused() {
    let (normal, skewed) = plugins();
    let cnode = c_object(c"plugin.CNode");
    let info = object_core::registry::type_info(cnode.type_index()).unwrap();
    assert!(
        matches!(
            info.layout_owner(),
            LayoutOwner::Foreign {
                object_size: Some(16),
                ancestor_key: "ffi.Object",
                ..
            }
        ),
        "{:?}",
        info.layout_owner()
    );
    let versioned: ObjectPtr<Versioned> = make_object(Versioned::new_value(7));
    assert_eq!(Versioned::type_info().key(), "fixtures.Versioned");

    // Another version of the shared crate: refused, naming the key and both layouts.
    let e = Module::load(&skewed).expect_err("a skewed plugin must be refused");
    let text = e.to_string();
    assert!(text.contains("fixtures.Versioned"), "{text}");
    assert!(
        text.contains("24 bytes") && text.contains("280 bytes"),
        "both layouts: {text}"
    );

    // C's 16-byte objects under a key the plugin's 144-byte struct claims: refused.
    let e = Module::load(&normal).expect_err("the plugin's CNode must be refused");
    let text = e.to_string();
    assert!(text.contains("plugin.CNode"), "{text}");
    assert!(
        text.contains("16 bytes") && text.contains("144 bytes"),
        "both layouts: {text}"
    );
    assert!(
        !text.contains("fixtures.Versioned"),
        "the normal build agrees on Versioned: {text}"
    );

    // (Accepted, the plugins' `wide_sum` and `versioned_tail` would read past these.)
    assert_eq!(versioned.version, 7);
    drop(cnode);
    assert_eq!(HEADERS_FREED.load(Ordering::Relaxed), 1);
}
