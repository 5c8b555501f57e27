//! One runtime per process, or a clear refusal: when a copy of another build runs the
//! process's registry (`tests/c/other_runtime.c` exports such a copy's descriptor), this
//! program's copy runs none, and every registration fails naming both builds, before
//! any object of its types exists. (One test in its own binary: the decision is made
//! once per process.) Skipped, with the reason printed, when no C compiler is found
//! outside CI.

mod support;

use std::path::Path;
use std::process::Command;

use object_core::registry::adopt::{process_runtime, ProcessRuntime};
use object_core::registry::{register_type, RegistryError, TypeSpec};

use support::{c_compiler, out_dir};

#[test]
#[cfg_attr(miri, ignore = "loads a shared library: no FFI under Miri")]
fn a_copy_of_another_build_running_makes_this_one_refuse() {
    let Some(cc) = c_compiler() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_path = out_dir().join("libother_runtime.so");
    let status = Command::new(cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o",
        ])
        .arg(&lib_path)
        .arg(dir.join("tests/c/other_runtime.c"))
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling other_runtime.c failed");
    // SAFETY: a library with no initializers; it exports one function.
    let lib = unsafe { libloading::Library::new(&lib_path) }.expect("load the library");

    let refused = match process_runtime() {
        ProcessRuntime::Refused(e) => e,
        other => panic!("expected a refusal, got {other:?}"),
    };
    match &refused {
        RegistryError::RuntimeConflict {
            library,
            theirs,
            ours,
        } => {
            assert!(library.ends_with("libother_runtime.so"), "{library}");
            assert!(theirs.contains("another build"), "{theirs}");
            assert_eq!(ours, object_core::registry::adopt::BUILD_ID);
        }
        other => panic!("expected RuntimeConflict, got {other:?}"),
    }
    let text = refused.to_string();
    assert!(
        text.contains("another build of the object runtime"),
        "{text}"
    );
    // Nothing can be registered or found through this copy.
    assert_eq!(
        register_type(&TypeSpec::new("conflict.T", "ffi.Object")).err(),
        Some(refused.clone())
    );
    assert!(object_core::registry::type_info_by_key("ffi.Object").is_none());
    assert_eq!(object_core::registry::link_errors(), vec![refused]);
    std::mem::forget(lib); // libraries are never unloaded
}
