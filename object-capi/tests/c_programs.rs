//! Compiles the C programs in `tests/c/` with the system C compiler against the
//! generated header and the shared libraries the workspace builds, runs them, and
//! checks that each reports success. Skipped, with the reason printed, when no C
//! compiler is found outside CI (CI installs gcc).
//!
//! `OBJECT_CAPI_C_RUNNER` (e.g. `valgrind --error-exitcode=1 …`) prefixes each run:
//! `scripts/valgrind.sh` sets it.

mod support;

use std::path::Path;
use std::process::Command;

use support::{build_library, c_compiler, out_dir, run};

/// The programs linked against the fixtures library (the whole C API plus Rust types
/// and globals for C to use), with what each prints on success.
const FIXTURE_PROGRAMS: &[&str] = &[
    "objects",
    "functions",
    "signatures",
    "dlpack",
    "errors",
    "ownership",
    "call_timing",
    "layouts",
    "fields_methods",
];

fn compile_and_run(cc: &Path, name: &str, lib_dir: &Path, lib: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let exe = out_dir().join(name);
    let status = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
        .arg("-L")
        .arg(lib_dir)
        .arg(format!("-l{lib}"))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {name}.c failed");
    let out = run(&exe);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    println!("{stdout}");
    stdout.into_owned()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "compiles and runs C programs: no FFI or processes under Miri"
)]
fn c_programs_against_the_fixtures() {
    let Some(cc) = c_compiler() else { return };
    let lib_dir = build_library("object-capi-fixtures");
    for name in FIXTURE_PROGRAMS {
        let _ = compile_and_run(&cc, name, &lib_dir, "object_capi_fixtures");
    }
}

/// The README's example, against the plain C API library.
#[test]
#[cfg_attr(
    miri,
    ignore = "compiles and runs C programs: no FFI or processes under Miri"
)]
fn readme_example() {
    let Some(cc) = c_compiler() else { return };
    let lib_dir = build_library("object-capi");
    let stdout = compile_and_run(&cc, "readme", &lib_dir, "object_capi");
    assert_eq!(
        stdout, "42\n",
        "the README's example prints `demo.add(40, 2)`"
    );
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("read the README");
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/readme.c"))
            .expect("read the example");
    assert!(
        readme.contains(example.trim()),
        "the README's C example must be tests/c/readme.c, word for word"
    );
}
