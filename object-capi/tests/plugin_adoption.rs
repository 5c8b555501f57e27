//! A plugin's Rust types are registered in the host when the plugin adopts the host's
//! registry, not on their first use. `is::<T>()` never fills a cache (it reads an
//! unfilled one as "not a `T`"), so a plugin type whose key the host registered first
//! (as C or Python would), with objects made before the plugin was loaded, must check
//! as itself in the plugin's code at once. This binary holds only this test, so the
//! plugin is loaded here for the first time.

mod support;

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use object_capi::ModuleLoad;
use object_containers::Module;
use object_core::registry::{register_type, type_index_of, TypeSpec};
use object_core::Any;

use support::{build_library, copy_plugin, header_object, HEADERS_FREED};

fn plugin() -> PathBuf {
    copy_plugin(
        &build_library("object-capi-plugin-demo"),
        "plugin_rust_adoption.so",
    )
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn a_plugin_type_the_host_registered_first_checks_as_itself_at_once() {
    // The host registers the plugin's `plugin.Marker` (a bare final type) and makes an
    // object of it, as C would, before the plugin is loaded.
    let spec = TypeSpec::new("plugin.Marker", "ffi.Object").final_type(true);
    let info = register_type(&spec).unwrap();
    let marker = header_object(info.index());
    assert!(type_index_of("plugin.Square").is_err(), "not loaded yet");

    let m = Module::load(plugin()).unwrap();
    assert!(
        type_index_of("plugin.Square").is_ok(),
        "registered when the plugin adopted the host's registry"
    );
    let is_marker = m.get_function("is_marker", false).unwrap();
    let arg = Any::from(marker.clone());
    assert_eq!(
        is_marker.call(&[arg.view()]).unwrap(),
        Any::from(true),
        "the plugin's `Marker` cache was filled when it adopted the host's registry"
    );
    let other = Any::from(object_core::String::from("not a marker"));
    assert_eq!(is_marker.call(&[other.view()]).unwrap(), Any::from(false));
    drop((arg, marker));
    assert_eq!(HEADERS_FREED.load(Ordering::Relaxed), 1);
}
