//! Errors are data at the ABI too: the packed-call `Error`'s kind is an `ErrorKind` a
//! Rust caller matches on, while C (and Python) keep seeing its name as text, and a
//! plugin that cannot be loaded is a `LoadError` variant naming what was found. The
//! plugins that fail are builds of `tests/c/bad_plugin.c`, one failure each (skipped,
//! with the reason printed, when no C compiler is found outside CI).

mod support;

use std::collections::HashSet;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use object_capi::{
    obj_dec_ref, obj_error_kind, obj_error_raise, obj_error_take, obj_module_load, AbiMismatchKind,
    AbiVersion, LoadError, ModuleLoad, ObjHandle, ObjPluginDescriptor, ObjStr,
};
use object_containers::{register_global, remove_global, set_last_error, take_last_error};
use object_containers::{Function, Module};
use object_core::{Error, ErrorKind};

use support::{c_compiler, out_dir};

#[test]
fn kinds_are_matched_from_rust() {
    let e = Error::new(ErrorKind::KeyError, "no such key");
    let what = match e.kind() {
        ErrorKind::KeyError | ErrorKind::IndexError => "lookup",
        ErrorKind::TypeError => "type",
        _ => "other",
    };
    assert_eq!(what, "lookup");
    // The text form still compares, both ways round.
    assert_eq!(e.kind(), "KeyError");
    assert!("KeyError" == *e.kind());
    assert_eq!(e.to_string(), "KeyError: no such key");

    for known in ErrorKind::KNOWN {
        let name = known.as_str();
        assert_eq!(&ErrorKind::from_name(name), known);
        assert!(!known.is_other(), "{name}");
        assert_eq!(known.to_string(), name);
        assert_eq!(format!("{known:?}"), name);
        assert_eq!(name.parse::<ErrorKind>(), Ok(known.clone()));
        assert_eq!(Error::new(name, "m").kind(), known, "from a string");
        assert_eq!(
            Error::new(name.to_owned(), "m").kind(),
            known,
            "from a String"
        );
    }
    assert_eq!(ErrorKind::KNOWN.len(), 17);

    // Any other name is `Other`, and a known name is never held by `Other`.
    let mine = ErrorKind::from_name("MyOwnError");
    assert_eq!(mine, ErrorKind::Other("MyOwnError".to_owned()));
    assert!(mine.is_other() && mine == "MyOwnError");
    assert_eq!(format!("{mine:?}"), r#"Other("MyOwnError")"#);
    let hand_built = ErrorKind::Other("TypeError".to_owned());
    assert_eq!(hand_built, ErrorKind::TypeError, "equal by name");
    let set: HashSet<ErrorKind> = [hand_built.clone(), ErrorKind::TypeError].into();
    assert_eq!(set.len(), 1, "hashed by name");
    assert!(matches!(
        Error::new(hand_built, "m").kind(),
        ErrorKind::TypeError
    ));
    assert!(matches!(ErrorKind::from("Panic"), ErrorKind::Panic));
    assert_ne!(ErrorKind::from_name("typeerror"), ErrorKind::TypeError);

    // As small as the string it replaced in the error object.
    assert_eq!(size_of::<ErrorKind>(), size_of::<String>());
}

#[test]
fn the_library_raises_variants() {
    let f = Function::from_typed_named("twice", |x: i64| x * 2);
    let e = f.call_with(["not an int"]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TypeError), "{e}");

    register_global("error_kinds.twice", f.clone()).unwrap();
    let e = register_global("error_kinds.twice", f).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::KeyError), "{e}");
    remove_global("error_kinds.twice");

    let boom = Function::from_typed_named("boom", || -> i64 { panic!("boom") });
    let e = boom.call_with(Vec::<i64>::new()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Panic), "{e}");

    let e = Error::from("plain");
    assert!(matches!(e.kind(), ErrorKind::Error));
    let e: Error = object_core::reflection::create("no.such.Type", [])
        .unwrap_err()
        .into();
    assert!(matches!(e.kind(), ErrorKind::KeyError), "{e}");
}

/// The kind of the handle's error as C reads it.
fn kind_text(h: ObjHandle) -> String {
    let mut s = ObjStr {
        data: core::ptr::null(),
        len: 0,
    };
    // SAFETY: a live error object; a writable `ObjStr`.
    assert_eq!(unsafe { obj_error_kind(h, &mut s) }, 0);
    // SAFETY: `obj_error_kind` wrote `len` bytes borrowed from the live error.
    let bytes = unsafe { core::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Takes the slot's error through C.
fn take_through_c() -> ObjHandle {
    let mut h: ObjHandle = core::ptr::null_mut();
    // SAFETY: a writable handle.
    assert_eq!(unsafe { obj_error_take(&mut h) }, 0);
    assert!(!h.is_null(), "an error waits in the slot");
    h
}

#[test]
fn kind_names_cross_c_unchanged() {
    // C raises, Rust matches (a known and an unknown name).
    for (name, known) in [
        ("TypeError", true),
        ("PluginError", true),
        ("MyOwnError", false),
    ] {
        let kind = CString::new(name).unwrap();
        // SAFETY: two NUL-terminated strings.
        let rc = unsafe { obj_error_raise(kind.as_ptr(), c"from C".as_ptr()) };
        assert_ne!(rc, 0);
        let e = take_last_error().expect("the raised error");
        assert_eq!(e.kind().as_str(), name);
        assert_eq!(e.kind().is_other(), !known, "{name}");
        assert_eq!(e.kind(), &ErrorKind::from_name(name));

        // C raises, C reads the same text back.
        // SAFETY: as above.
        let rc = unsafe { obj_error_raise(kind.as_ptr(), c"again".as_ptr()) };
        assert_ne!(rc, 0);
        let h = take_through_c();
        assert_eq!(kind_text(h), name);
        // SAFETY: the reference `obj_error_take` gave us.
        assert_eq!(unsafe { obj_dec_ref(h) }, 0);
    }
    // A null kind is the kind-less `Error`.
    // SAFETY: null kind, a NUL-terminated message.
    let rc = unsafe { obj_error_raise(core::ptr::null(), c"m".as_ptr()) };
    assert_ne!(rc, 0);
    assert!(matches!(
        take_last_error().map(|e| e.kind().clone()),
        Some(ErrorKind::Error)
    ));

    // Rust raises, C reads the name.
    for kind in [ErrorKind::ValueError, ErrorKind::from_name("RustOnlyError")] {
        let name = kind.to_string();
        set_last_error(Error::new(kind, "from Rust"));
        let h = take_through_c();
        assert_eq!(kind_text(h), name);
        // SAFETY: the reference `obj_error_take` gave us.
        assert_eq!(unsafe { obj_dec_ref(h) }, 0);
    }
}

/// Builds `tests/c/bad_plugin.c` with `-D{define}` into its own library.
fn bad_plugin(cc: &Path, define: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dest = out_dir().join(format!("bad_plugin_{}.so", define.to_lowercase()));
    let status = Command::new(cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-shared", "-fPIC",
        ])
        .arg(format!("-D{define}"))
        .arg("-I")
        .arg(dir.join("include"))
        .arg(dir.join("tests/c/bad_plugin.c"))
        .arg("-o")
        .arg(&dest)
        .status()
        .expect("run the C compiler");
    assert!(
        status.success(),
        "compiling bad_plugin.c with -D{define} failed"
    );
    dest
}

/// Loads `path`, which must fail; checks what every `LoadError` promises.
fn refused(path: &Path) -> LoadError {
    let e = Module::load(path).expect_err("the plugin must be refused");
    assert_eq!(e.path(), path);
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("cannot load plugin `{}`: ", path.display())),
        "{text}"
    );
    let packed = Error::from(e.clone());
    if !matches!(e, LoadError::InitFailed { .. }) {
        assert_eq!(packed.kind(), &ErrorKind::PluginError, "{e}");
        assert_eq!(packed.message(), text);
    }
    e
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn each_load_error() {
    // No such file, and a file that is no library.
    let missing = out_dir().join("no_such_bad_plugin.so");
    let e = refused(&missing);
    assert!(
        matches!(&e, LoadError::Open { message, .. } if !message.is_empty()),
        "{e}"
    );
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/bad_plugin.c");
    assert!(matches!(refused(&source), LoadError::Open { .. }));

    // From C, the same refusal is a `PluginError` with the same message.
    let c_path = CString::new(missing.to_str().unwrap()).unwrap();
    let mut m: ObjHandle = core::ptr::null_mut();
    // SAFETY: a NUL-terminated path, a writable handle.
    assert_ne!(unsafe { obj_module_load(c_path.as_ptr(), &mut m) }, 0);
    assert!(m.is_null());
    let h = take_through_c();
    assert_eq!(kind_text(h), "PluginError");
    // SAFETY: the reference `obj_error_take` gave us.
    assert_eq!(unsafe { obj_dec_ref(h) }, 0);

    let Some(cc) = c_compiler() else { return };

    let e = refused(&bad_plugin(&cc, "NO_ENTRY"));
    assert!(
        matches!(
            &e,
            LoadError::MissingSymbol {
                symbol: "obj_plugin_entry",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("no `obj_plugin_entry` symbol"),
        "{e}"
    );

    let e = refused(&bad_plugin(&cc, "NULL_DESCRIPTOR"));
    assert!(matches!(e, LoadError::NullDescriptor { .. }), "{e}");
    assert!(e.to_string().ends_with("`obj_plugin_entry` returned null"));

    let e = refused(&bad_plugin(&cc, "BAD_MAGIC"));
    assert!(
        matches!(e, LoadError::BadMagic { found: 0x1234, .. }),
        "{e}"
    );
    assert!(e.to_string().ends_with("bad magic 0x1234"), "{e}");

    let e = refused(&bad_plugin(&cc, "SKEW_MAJOR"));
    match &e {
        LoadError::Abi { mismatch, .. } => {
            assert_eq!(mismatch.kind, AbiMismatchKind::Major);
            assert_eq!(mismatch.plugin.major, object_capi::OBJ_ABI_MAJOR + 1);
            assert_eq!(mismatch.plugin.fingerprint, mismatch.host.fingerprint);
            assert_eq!(mismatch.host, AbiVersion::host());
        }
        other => panic!("not an ABI mismatch: {other}"),
    }
    assert!(e.to_string().contains("the major versions differ"), "{e}");

    let e = refused(&bad_plugin(&cc, "SMALL_DESCRIPTOR"));
    let minimum = size_of::<ObjPluginDescriptor>();
    assert!(
        matches!(e, LoadError::DescriptorTooSmall { size: 8, minimum: m, .. } if m == minimum),
        "{e}"
    );
    assert!(e
        .to_string()
        .ends_with("a descriptor of 8 bytes is too small"));

    let e = refused(&bad_plugin(&cc, "NO_INIT"));
    assert!(matches!(e, LoadError::NoInit { .. }), "{e}");

    // `init` fails with an error of its own: the packed error is that one, with the
    // load as a frame; the `LoadError` keeps it as its source.
    let path = bad_plugin(&cc, "INIT_RAISES");
    let e = refused(&path);
    match &e {
        LoadError::InitFailed { name, error, .. } => {
            assert_eq!(name, "bad-plugin");
            assert!(matches!(error.kind(), ErrorKind::ValueError));
            assert_eq!(error.message(), "the bad plugin refuses to start");
        }
        other => panic!("not an init failure: {other}"),
    }
    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<Error>());
    assert_eq!(
        source.map(Error::message),
        Some("the bad plugin refuses to start")
    );
    let packed = Error::from(e);
    assert_eq!(
        (packed.kind(), packed.message()),
        (&ErrorKind::ValueError, "the bad plugin refuses to start")
    );
    let frame = format!("loading plugin `bad-plugin` from `{}`", path.display());
    assert_eq!(packed.frames(), [frame]);

    let path = bad_plugin(&cc, "INIT_CODE");
    let e = refused(&path);
    assert!(
        matches!(&e, LoadError::InitCode { code: -7, name, .. } if name == "bad-plugin"),
        "{e}"
    );
    assert!(
        e.to_string()
            .ends_with("`init` returned -7 without an error"),
        "{e}"
    );
    let frame = format!("loading plugin `bad-plugin` from `{}`", path.display());
    assert_eq!(Error::from(e).frames(), [frame]);

    let e = refused(&bad_plugin(&cc, "NO_MODULE"));
    assert!(matches!(e, LoadError::NoModule { .. }), "{e}");

    let e = refused(&bad_plugin(&cc, "NOT_A_MODULE"));
    assert!(
        matches!(&e, LoadError::NotAModule { type_key, .. } if type_key == "ffi.String"),
        "{e}"
    );
    assert!(e
        .to_string()
        .ends_with("`init` returned a `ffi.String`, not a module"));
}
