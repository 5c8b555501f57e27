//! A C callback (`obj_function_create`) or a plugin's `init` that fails without raising
//! an error is reported with an error of its own naming it and its return code, not
//! with an error an earlier, unrelated call left waiting in the thread's slot:
//! `tests/c/stale_errors.c` leaves such an error before each failing call, and loads
//! `tests/c/stale_errors_plugin.c`, whose `init` returns -5 without raising. Skipped,
//! with the reason printed, when no C compiler is found outside CI.

mod support;

use std::path::Path;
use std::process::Command;

use support::{build_library, c_compiler, out_dir, run_with_args};

/// Compiles `tests/c/{name}.c` with the C API's header and `extra` arguments into
/// `out`.
fn compile(cc: &Path, name: &str, out: &Path, extra: &[&std::ffi::OsStr]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-o"])
        .arg(out)
        .arg(dir.join(format!("tests/c/{name}.c")))
        .arg("-I")
        .arg(dir.join("include"))
        .args(extra)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {name}.c failed");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "compiles and runs C programs: no FFI or processes under Miri"
)]
fn failures_without_an_error_are_not_reported_with_a_stale_one() {
    let Some(cc) = c_compiler() else { return };
    let lib_dir = build_library("object-capi-fixtures");
    let plugin = out_dir().join("stale_errors_plugin.so");
    compile(
        &cc,
        "stale_errors_plugin",
        &plugin,
        &["-shared".as_ref(), "-fPIC".as_ref()],
    );
    let exe = out_dir().join("stale_errors");
    let link = format!("-Wl,-rpath,{}", lib_dir.display());
    compile(
        &cc,
        "stale_errors",
        &exe,
        &[
            "-L".as_ref(),
            lib_dir.as_os_str(),
            "-lobject_capi_fixtures".as_ref(),
            link.as_ref(),
        ],
    );
    let out = run_with_args(&exe, &[&plugin]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "stale_errors failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert_eq!(stdout, "stale_errors: ok\n");
}
