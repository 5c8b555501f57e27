//! Plugins: a Rust plugin (subtypes of a host type, typed functions, a global, errors
//! with frames) built by cargo, a build of it that claims another ABI version, and a
//! plugin in C built with the system C compiler; loaded with `Module::load`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use object_capi::{AbiMismatchKind, AbiVersion, LoadError, ModuleLoad, OBJ_LAYOUT_FINGERPRINT};
use object_capi_fixtures::ShapeNode;
use object_containers::{get_global, Module};
use object_core::reflection::get_attr;
use object_core::registry::{type_index_of, type_info};
use object_core::{Any, Error, ErrorKind, ObjectRef, ObjectType};

use support::{build_library, build_library_with, c_compiler, copy_plugin, out_dir};

struct Plugins {
    rust: PathBuf,
    rust_skewed: PathBuf,
    /// The C plugin and two skewed builds of it (minor, layout), if a C compiler exists.
    c: Option<[PathBuf; 3]>,
}

fn compile_c_plugin(cc: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dest = out_dir().join(name);
    let status = Command::new(cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-shared", "-fPIC",
        ])
        .args(defines)
        .arg("-I")
        .arg(dir.join("include"))
        .arg(dir.join("tests/c/plugin.c"))
        .arg("-o")
        .arg(&dest)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling the C plugin failed");
    dest
}

fn plugins() -> &'static Plugins {
    static BUILT: OnceLock<Plugins> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = build_library_with("object-capi-plugin-demo", &["--features", "skew-abi"], &[]);
        let rust_skewed = copy_plugin(&dir, "plugin_rust_skewed.so");
        let dir = build_library("object-capi-plugin-demo");
        let rust = copy_plugin(&dir, "plugin_rust.so");
        let c = c_compiler().map(|cc| {
            [
                compile_c_plugin(&cc, "plugin_c.so", &[]),
                compile_c_plugin(&cc, "plugin_c_minor.so", &["-DSKEW_MINOR"]),
                compile_c_plugin(&cc, "plugin_c_layout.so", &["-DSKEW_LAYOUT"]),
            ]
        });
        Plugins {
            rust,
            rust_skewed,
            c,
        }
    })
}

fn call(
    m: &Module,
    name: &str,
    args: impl IntoIterator<Item = Any>,
) -> Result<Any, object_core::Error> {
    let f = m
        .get_function(name, false)
        .unwrap_or_else(|| panic!("no `{name}` in the module"));
    let args: Vec<Any> = args.into_iter().collect();
    let views: Vec<_> = args.iter().map(Any::view).collect();
    f.call(&views)
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn rust_plugin_types_adopt_the_host_registry() {
    let m = Module::load(&plugins().rust).unwrap();
    // Registered when the plugin adopted the host's registry, before any use.
    assert!(type_index_of("plugin.Square").is_ok());
    assert_eq!(
        call(&m, "add", [Any::from(2), Any::from(3)]).unwrap(),
        Any::from(5)
    );

    let c: ObjectRef = call(&m, "make_circle", [Any::from(1), Any::from(2.0)])
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(c.type_key(), "plugin.Circle");
    assert!(
        c.is::<ShapeNode>(),
        "a plugin type is a subtype of the host's base"
    );
    assert_eq!(c.downcast_ref::<ShapeNode>().map(|s| s.id), Some(1));
    let circle = type_info(c.type_index()).unwrap();
    assert_eq!(circle.parent_index(), Some(ShapeNode::type_index()));
    assert_eq!(type_index_of("plugin.Circle"), Ok(c.type_index()));
    // The plugin's copy numbers types as the host does.
    for key in [
        "plugin.Circle",
        "fixtures.Shape",
        "ffi.Function",
        "plugin.Square",
    ] {
        let theirs = call(&m, "index_of", [Any::from(key)]).unwrap();
        assert_eq!(
            theirs,
            Any::from(i64::from(type_index_of(key).unwrap())),
            "{key}"
        );
    }
    // Reflection of a plugin type, from the host.
    assert_eq!(get_attr(&c, "radius").unwrap(), Any::from(2.0));
    assert_eq!(get_attr(&c, "id").unwrap(), Any::from(1));
    let area = call(&m, "area", [Any::from(c.clone())]).unwrap();
    assert!((area.as_float().unwrap() - std::f64::consts::PI * 4.0).abs() < 1e-12);

    // Globals the plugin registered are the host's.
    let v = get_global("plugin.demo.version").expect("the plugin's global");
    assert_eq!(v.call(&[]).unwrap(), Any::from(3));

    // Errors arrive in the host's slot, with their frames.
    let e = call(&m, "fail", [Any::from("bad input")]).unwrap_err();
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("ValueError", "bad input")
    );
    assert_eq!(e.frames(), ["fail"]);
    let e = call(&m, "area", [Any::from(m.clone())]).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn eight_threads_call_into_a_plugin() {
    let m = Module::load(&plugins().rust).unwrap();
    let make = m.get_function("make_square", false).unwrap();
    let area = m.get_function("area", false).unwrap();
    let n = if cfg!(debug_assertions) {
        2_000
    } else {
        20_000
    };
    let n = (n as f64
        * std::env::var("OBJECT_TEST_SCALE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1.0))
    .max(10.0) as i64;
    std::thread::scope(|s| {
        for t in 0..8i64 {
            let (make, area) = (make.clone(), area.clone());
            s.spawn(move || {
                for i in 0..n {
                    let side = (t * n + i) as f64;
                    let sq = make.call_with(&[Any::from(t), Any::from(side)]).unwrap();
                    assert!(sq.as_object().unwrap().is::<ShapeNode>());
                    let a = area.call(&[sq.view()]).unwrap();
                    assert_eq!(a, Any::from(side * side));
                    if i % 97 == 0 {
                        assert!(area.call_with(&[Any::from(1)]).is_err());
                    }
                }
            });
        }
    });
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn plugin_objects_outlive_the_module() {
    let m = Module::load(&plugins().rust).unwrap();
    let make = m.get_function("make_circle", false).unwrap();
    let objects: Vec<Any> = (0..10)
        .map(|i| make.call_with(&[Any::from(i), Any::from(1.5)]).unwrap())
        .collect();
    drop(make);
    drop(m); // the last handle to the module and its functions
    for (i, o) in objects.iter().enumerate() {
        let o = o.as_object().unwrap();
        assert_eq!(o.downcast_ref::<ShapeNode>().map(|s| s.id), Some(i as i32));
        assert_eq!(get_attr(o, "radius").unwrap(), Any::from(1.5));
    }
    drop(objects); // freed by the plugin's deleters: its code is still mapped
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn a_skewed_abi_is_refused_with_both_versions() {
    let e = Module::load(&plugins().rust_skewed).unwrap_err();
    let (major, minor) = (object_capi::OBJ_ABI_MAJOR, object_capi::OBJ_ABI_MINOR);
    match &e {
        LoadError::Abi { path, mismatch } => {
            assert_eq!(path, &plugins().rust_skewed);
            assert_eq!(mismatch.kind, AbiMismatchKind::Major);
            assert_eq!(
                (mismatch.plugin.major, mismatch.plugin.minor),
                (major + 1, 0)
            );
            assert_eq!(mismatch.host, AbiVersion::host());
        }
        other => panic!("not an ABI mismatch: {other}"),
    }
    let msg = Error::from(e.clone()).message().to_owned();
    assert_eq!(msg, e.to_string());
    assert_eq!(Error::from(e).kind(), &ErrorKind::PluginError);
    assert!(
        msg.contains(&format!("built for ABI {}.0", major + 1)),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("implements ABI {major}.{minor}")),
        "{msg}"
    );
    assert!(msg.contains("the major versions differ"), "{msg}");
    let e = Module::load(out_dir().join("no_such_plugin.so")).unwrap_err();
    assert!(matches!(e, LoadError::Open { .. }), "{e}");
    assert_eq!(Error::from(e).kind(), "PluginError");
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn c_plugin() {
    let Some([ok, minor, layout]) = &plugins().c else {
        return;
    };
    let m = Module::load(ok).unwrap();
    assert_eq!(call(&m, "scale", [Any::from(7)]).unwrap(), Any::from(21));
    assert_eq!(
        get_global("cplugin.scale")
            .unwrap()
            .call_with(&[Any::from(2)])
            .unwrap(),
        Any::from(6)
    );
    let t = call(&m, "make_thing", [Any::from(5)]).unwrap();
    let t = t.as_object().unwrap();
    assert_eq!(t.type_key(), "cplugin.Thing");
    assert!(t.is::<ShapeNode>());
    assert_eq!(t.downcast_ref::<ShapeNode>().map(|s| s.id), Some(5));
    let e = call(&m, "fail", []).unwrap_err();
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("RuntimeError", "the C plugin failed")
    );
    assert_eq!(e.frames(), ["cplugin.fail"]);

    let e = Module::load(minor).unwrap_err();
    assert!(
        matches!(&e, LoadError::Abi { mismatch, .. } if mismatch.kind == AbiMismatchKind::NewerMinor),
        "{e}"
    );
    assert!(
        e.to_string().contains(&format!(
            "built for ABI {}.{}",
            object_capi::OBJ_ABI_MAJOR,
            object_capi::OBJ_ABI_MINOR + 1
        )) && e.to_string().contains("the plugin is newer"),
        "{e}"
    );
    let e = Module::load(layout).unwrap_err();
    assert!(e.to_string().contains("the layouts differ"), "{e}");
    match &e {
        LoadError::Abi { mismatch, .. } => {
            assert_eq!(mismatch.kind, AbiMismatchKind::Layout);
            assert_eq!(mismatch.plugin.fingerprint, OBJ_LAYOUT_FINGERPRINT + 1);
        }
        other => panic!("not an ABI mismatch: {other}"),
    }
}
