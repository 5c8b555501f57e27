//! Shared by the tests that build C programs and plugins: the C compiler, the target
//! directory, nested cargo builds of workspace libraries, and the optional runner.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use object_capi::{obj_object_init, ObjObjectHeader};
use object_core::{Object, ObjectRef};

/// The C compiler (`$CC`, `cc` or `gcc`), or `None` with the reason printed. In CI
/// (`CI` set) a missing compiler is a failure, not a skip.
pub fn c_compiler() -> Option<PathBuf> {
    let candidates = std::env::var_os("CC")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("cc"), PathBuf::from("gcc")]);
    for cc in candidates {
        if Command::new(&cc)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(cc);
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "no C compiler found (tried $CC, cc, gcc); CI must install gcc"
    );
    println!("SKIPPED: no C compiler found (tried $CC, cc, gcc)");
    None
}

/// The profile directory the running test binary lives in (`target/debug`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary sits in <target>/<profile>/deps")
        .to_path_buf()
}

/// A scratch directory for built programs.
pub fn out_dir() -> PathBuf {
    let d = profile_dir().join("capi-tests");
    std::fs::create_dir_all(&d).expect("create the scratch directory");
    d
}

/// Builds a workspace library package (its cdylib) with the profile the tests use,
/// into the same target directory, and returns the directory holding it. Builds are
/// serialized within a test binary; cargo's own lock serializes across processes.
pub fn build_library(package: &str) -> PathBuf {
    build_library_with(package, &[], &[])
}

/// As [`build_library`], with extra cargo arguments and environment.
///
/// The ThreadSanitizer run (`scripts/tsan.sh`) builds its tests for an explicit target
/// with an instrumented std (`-Zbuild-std --target <triple>`, in its own target
/// directory); the libraries they load must be built the same way, into the same
/// directory. It sets `OBJECT_TEST_NESTED_TARGET` to the triple (and
/// `CARGO_TARGET_DIR`): the builds then take `-Zbuild-std --target <triple>`, and the
/// library is in `$CARGO_TARGET_DIR/<triple>/debug`.
pub fn build_library_with(package: &str, args: &[&str], env: &[(&str, &str)]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let triple = std::env::var("OBJECT_TEST_NESTED_TARGET").ok();
    let (target, profile) = match (&triple, std::env::var_os("CARGO_TARGET_DIR")) {
        (Some(triple), Some(dir)) => {
            let dir = PathBuf::from(dir);
            let profile = dir.join(triple).join("debug");
            (dir, profile)
        }
        _ => {
            let profile = profile_dir();
            let target = profile
                .parent()
                .expect("the target directory")
                .to_path_buf();
            (target, profile)
        }
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "--profile", "test", "-p", package])
        .args(args)
        .arg("--target-dir")
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(triple) = &triple {
        cmd.args(["-Zbuild-std", "--target", triple]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("run cargo");
    assert!(status.success(), "cargo build -p {package} failed");
    profile
}

/// Runs a program, prefixed by `$OBJECT_CAPI_C_RUNNER` if set (e.g. valgrind).
pub fn run(exe: &Path) -> Output {
    run_with_args(exe, &[])
}

/// As [`run`], with arguments for the program.
pub fn run_with_args(exe: &Path, args: &[&Path]) -> Output {
    let runner = std::env::var("OBJECT_CAPI_C_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut cmd = match words.next() {
        Some(first) => {
            let mut c = Command::new(first);
            c.args(words).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(args).output().expect("run the program")
}

/// Copies the demo plugin just built into `dir` to a file of its own in the scratch
/// directory: each copy is a separate library when loaded (its own statics), and later
/// builds of the plugin do not change it.
pub fn copy_plugin(dir: &Path, to: &str) -> PathBuf {
    let from = dir.join(format!(
        "{}object_capi_plugin_demo{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let dest = out_dir().join(to);
    std::fs::copy(&from, &dest).expect("copy the plugin");
    dest
}

/// How many objects made by [`header_object`] were freed.
pub static HEADERS_FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn free_header(obj: *mut ObjObjectHeader) {
    // SAFETY: `obj` is the `Box<ObjObjectHeader>` made by `header_object`, freed once,
    // by its last reference.
    drop(unsafe { Box::from_raw(obj) });
    HEADERS_FREED.fetch_add(1, Ordering::Relaxed);
}

/// A bare 16-byte object (a header only) of type `index`, made as C makes one: a block
/// initialized by `obj_object_init`. Counted in [`HEADERS_FREED`] when freed.
pub fn header_object(index: u32) -> ObjectRef {
    let raw = Box::into_raw(Box::new(ObjObjectHeader {
        type_index: 0,
        ref_count: 0,
        deleter: None,
    }));
    // SAFETY: `raw` is a fresh, unshared 16-byte block.
    let rc =
        unsafe { obj_object_init(raw, size_of::<ObjObjectHeader>(), index, Some(free_header)) };
    assert_eq!(rc, 0, "{:?}", object_containers::take_last_error());
    // SAFETY: `obj_object_init` made a live object with one reference, which we take.
    unsafe { ObjectRef::from_raw(raw.cast::<Object>()) }
}

/// The `tvm-ffi-config` executable of an `apache-tvm-ffi` install: `$TVM_FFI_CONFIG`,
/// else `tvm-ffi-config` on PATH; `None` with the reason printed. In CI (`CI` set) a
/// missing tvm-ffi is a failure, not a skip (`.ci/run` installs it).
pub fn tvm_ffi_config() -> Option<PathBuf> {
    let candidate = std::env::var_os("TVM_FFI_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("tvm-ffi-config"));
    let found = Command::new(&candidate)
        .arg("--libdir")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(candidate);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tvm-ffi not found (tried `{}`): CI must install apache-tvm-ffi and set TVM_FFI_CONFIG",
        candidate.display()
    );
    println!(
        "SKIPPED: tvm-ffi not found (set TVM_FFI_CONFIG to an apache-tvm-ffi install's \
         tvm-ffi-config, or put tvm-ffi-config on PATH; tried `{}`)",
        candidate.display()
    );
    None
}

/// Builds `tests/cpp/tvm_kernels.cc` against the real tvm-ffi with
/// `scripts/build_tvm_kernels.sh` (once per test binary) and returns the library's
/// path, or `None` (with the reason printed) when tvm-ffi is not installed.
pub fn tvm_kernels() -> Option<PathBuf> {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.as_ref() {
        return Some(p.clone());
    }
    let config = tvm_ffi_config()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/build_tvm_kernels.sh");
    let dir = out_dir().join(format!("tvm-kernels-{}", std::process::id()));
    let out = Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .env("TVM_FFI_CONFIG", &config)
        .output()
        .expect("run scripts/build_tvm_kernels.sh");
    assert!(
        out.status.success(),
        "building tvm_kernels.cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(path.exists(), "the script named {}", path.display());
    *built = Some(path.clone());
    Some(path)
}
