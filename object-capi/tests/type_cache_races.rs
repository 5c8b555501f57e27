//! The type caches under races: `is::<T>()` reads a type's cache word with a relaxed
//! load, and reads an unfilled word as "not a `T`", which is right only because a
//! type's cache is filled (and its overflow bit set) before any object of the type, or
//! of a type registered under it, can exist. Here threads keep registering types while
//! others check the objects they hold:
//!
//! - run-time registration (`register_type`) of subtypes of a Rust base with reserved
//!   slots (`fixtures.Shape`, 4) and of one of this test's (`cacherace.Base`, 2), until
//!   both overflow, with an object of each new type;
//! - C registration (`obj_type_register` + `obj_object_init`) of the same kinds;
//! - plugin adoption: loading the demo plugin, which registers its types under
//!   `fixtures.Shape` in the host when it adopts the host's registry, and makes objects
//!   of them in its own copy of the code (with its own caches);
//!
//! and two checker threads ask `is::<T>()` and `downcast_ref::<T>()` of every object
//! made so far, for the types each is and is not an instance of, and call the plugin's
//! own checks (`area`, `is_marker`) on them. A checker must never get a wrong answer
//! for an object it holds. All threads start together, so the registry's first build
//! races too: this binary holds only this test. Run under ThreadSanitizer by
//! `scripts/tsan.sh`.

mod support;

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};

use object_capi::ModuleLoad;
use object_capi::{obj_object_init, obj_type_register, ObjObjectHeader};
use object_capi_fixtures::{Point, ShapeNode};
use object_containers::{Function, Module};
use object_core::registry::{register_type, TypeSpec};
use object_core::{Any, Object, ObjectRef, ObjectType};

use support::{build_library, out_dir};

/// A Rust base with two reserved slots: the third subtype registered overflows it.
#[derive(Object)]
#[repr(C)]
#[object(key = "cacherace.Base", slots = 2)]
struct Base {
    base: Object,
}

/// A final Rust subtype of [`Base`].
#[derive(Object)]
#[repr(C)]
#[object(key = "cacherace.Leaf", parent = Base, final)]
struct Leaf {
    base: Base,
}

/// An object C makes of a type registered under `fixtures.Shape`: that type's layout
/// (`ShapeNode`: the header, then `id`).
#[repr(C)]
struct CShape {
    header: ObjObjectHeader,
    id: i32,
}

unsafe extern "C" fn free_shape(obj: *mut ObjObjectHeader) {
    // SAFETY: made by `c_object` as a `Box<CShape>`, freed once, by its last reference.
    drop(unsafe { Box::from_raw(obj.cast::<CShape>()) });
}

unsafe extern "C" fn free_header(obj: *mut ObjObjectHeader) {
    // SAFETY: made by `c_object` as a `Box<ObjObjectHeader>`, freed once, by its last
    // reference.
    drop(unsafe { Box::from_raw(obj) });
}

/// An object of type `index` as C makes one: a shape with `id` (for a type under
/// `fixtures.Shape`), or a bare header (under `cacherace.Base`).
fn c_object(index: u32, shape_id: Option<i32>) -> ObjectRef {
    let header = ObjObjectHeader {
        type_index: 0,
        ref_count: 0,
        deleter: None,
    };
    let (raw, deleter): (*mut ObjObjectHeader, unsafe extern "C" fn(_)) = match shape_id {
        Some(id) => (
            Box::into_raw(Box::new(CShape { header, id })).cast(),
            free_shape,
        ),
        None => (Box::into_raw(Box::new(header)), free_header),
    };
    // SAFETY: `raw` is fresh, unshared memory with the registered type's layout.
    let rc = unsafe { obj_object_init(raw, index, Some(deleter)) };
    assert_eq!(rc, 0, "obj_object_init of type {index}");
    // SAFETY: `obj_object_init` made a live object with one reference, which we take.
    unsafe { ObjectRef::from_raw(raw.cast::<Object>()) }
}

/// What an object is, so that a checker knows every right answer.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Under `fixtures.Shape`, with its id; a `fixtures.Point`; the plugin's.
    Shape { id: i32, point: bool, plugin: bool },
    /// Under `cacherace.Base`; a `Leaf`.
    Base { leaf: bool },
}

#[derive(Clone)]
struct Held {
    obj: ObjectRef,
    kind: Kind,
}

/// The plugin's checks, once it is loaded: its `area` (which down-casts to its own
/// `Circle` and `Square`) and `is_marker`.
struct PluginChecks {
    area: Function,
    is_marker: Function,
}

/// Checks every answer for `h`; a description of the first wrong one.
fn check(h: &Held, plugin: Option<&PluginChecks>) -> Result<(), String> {
    let o = &h.obj;
    let wrong = |what: &str| Err(format!("{what} for a `{}` ({:?})", o.type_key(), h.kind));
    match h.kind {
        Kind::Shape {
            id,
            point,
            plugin: of_plugin,
        } => {
            if !o.is::<ShapeNode>() || o.downcast_ref::<ShapeNode>().map(|s| s.id) != Some(id) {
                return wrong("not a fixtures.Shape with its id");
            }
            if o.is::<Point>() != point || o.downcast_ref::<Point>().is_some() != point {
                return wrong("is::<Point>() wrong");
            }
            if o.is::<Base>() || o.is::<Leaf>() || o.downcast_ref::<Base>().is_some() {
                return wrong("a cacherace.Base");
            }
            if let Some(p) = plugin {
                let area = p.area.call(&[Any::from(o.clone()).view()]);
                if area.is_ok() != of_plugin {
                    return wrong("the plugin's `area` down-cast wrong");
                }
            }
        }
        Kind::Base { leaf } => {
            if !o.is::<Base>() || o.downcast_ref::<Base>().is_none() {
                return wrong("not a cacherace.Base");
            }
            if o.is::<Leaf>() != leaf || o.downcast_ref::<Leaf>().is_some() != leaf {
                return wrong("is::<Leaf>() wrong");
            }
            if o.is::<ShapeNode>() || o.is::<Point>() || o.downcast_ref::<ShapeNode>().is_some() {
                return wrong("a fixtures.Shape");
            }
        }
    }
    if let Some(p) = plugin {
        let marker = p.is_marker.call(&[Any::from(o.clone()).view()]);
        if marker.ok() != Some(Any::from(false)) {
            return wrong("the plugin's `is_marker` wrong");
        }
    }
    Ok(())
}

fn plugin_path() -> PathBuf {
    let dir = build_library("object-capi-plugin-demo");
    let from = dir.join(format!(
        "{}object_capi_plugin_demo{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let dest = out_dir().join("plugin_rust_cache_races.so");
    std::fs::copy(&from, &dest).expect("copy the plugin");
    dest
}

fn scale() -> f64 {
    std::env::var("OBJECT_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0)
        .unwrap_or(1.0)
}

#[test]
#[cfg_attr(
    miri,
    ignore = "loads a shared library and calls the C API: no FFI under Miri"
)]
fn checks_of_held_objects_stay_right_while_types_are_registered() {
    let rounds = ((200.0 * scale()) as usize).max(6);
    let plugin = plugin_path();
    const PRODUCERS: usize = 3;
    const CHECKERS: usize = 2;
    let held: Mutex<Vec<Held>> = Mutex::new(Vec::new());
    let push = |obj: ObjectRef, kind: Kind| {
        held.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Held { obj, kind });
    };
    let producing = AtomicUsize::new(PRODUCERS);
    let checks = AtomicUsize::new(0);
    let plugin_checks: OnceLock<PluginChecks> = OnceLock::new();
    let start = Barrier::new(PRODUCERS + CHECKERS + 1);
    let failure = std::thread::scope(|s| {
        // Run-time registration.
        s.spawn(|| {
            start.wait();
            for i in 0..rounds {
                let shape = register_type(&TypeSpec::new(
                    format!("cacherace.rt.Shape{i}"),
                    ShapeNode::TYPE_KEY,
                ))
                .unwrap();
                let id = i as i32;
                push(
                    c_object(shape.index(), Some(id)),
                    Kind::Shape {
                        id,
                        point: false,
                        plugin: false,
                    },
                );
                let base = register_type(&TypeSpec::new(
                    format!("cacherace.rt.Base{i}"),
                    "cacherace.Base",
                ))
                .unwrap();
                push(c_object(base.index(), None), Kind::Base { leaf: false });
            }
            producing.fetch_sub(1, Ordering::Release);
        });
        // C registration.
        s.spawn(|| {
            start.wait();
            for i in 0..rounds {
                let id = 1_000_000 + i as i32;
                for (key, parent, shape_id) in [
                    (format!("cacherace.c.Shape{i}"), c"fixtures.Shape", Some(id)),
                    (format!("cacherace.c.Base{i}"), c"cacherace.Base", None),
                ] {
                    let key = CString::new(key).unwrap();
                    let mut index = 0u32;
                    // SAFETY: NUL-terminated strings; `index` is writable.
                    let rc = unsafe {
                        obj_type_register(key.as_ptr(), parent.as_ptr(), 0, 0, 1, &mut index)
                    };
                    assert_eq!(rc, 0, "obj_type_register({key:?})");
                    let kind = match shape_id {
                        Some(id) => Kind::Shape {
                            id,
                            point: false,
                            plugin: false,
                        },
                        None => Kind::Base { leaf: false },
                    };
                    push(c_object(index, shape_id), kind);
                }
            }
            producing.fetch_sub(1, Ordering::Release);
        });
        // Plugin adoption, and the plugin's objects; then Rust objects of link-time types.
        s.spawn(|| {
            start.wait();
            let m = Module::load(&plugin).unwrap();
            let get = |name: &str| m.get_function(name, false).unwrap();
            let (circle, square) = (get("make_circle"), get("make_square"));
            let _ = plugin_checks.set(PluginChecks {
                area: get("area"),
                is_marker: get("is_marker"),
            });
            for i in 0..rounds {
                let id = 2_000_000 + i as i32;
                let make = if i % 2 == 0 { &circle } else { &square };
                let obj = make
                    .call_with(&[Any::from(i64::from(id)), Any::from(1.5)])
                    .unwrap();
                let obj = obj.as_object().unwrap().clone();
                push(
                    obj,
                    Kind::Shape {
                        id,
                        point: false,
                        plugin: true,
                    },
                );
                let point = Point::new(id, i64::from(id), 0.5, true, 1, "p", "q", "r", None);
                push(
                    point.into_object_ref(),
                    Kind::Shape {
                        id,
                        point: true,
                        plugin: false,
                    },
                );
                push(Leaf::new().into_object_ref(), Kind::Base { leaf: true });
            }
            producing.fetch_sub(1, Ordering::Release);
        });
        let checkers: Vec<_> = (0..CHECKERS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    loop {
                        let done = producing.load(Ordering::Acquire) == 0;
                        // The objects made so far (their handles cloned under the lock),
                        // then every check on them without it.
                        let now: Vec<Held> = held.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        let plugin = plugin_checks.get();
                        for h in &now {
                            check(h, plugin)?;
                        }
                        checks.fetch_add(now.len(), Ordering::Relaxed);
                        if done {
                            return Ok::<(), String>(());
                        }
                    }
                })
            })
            .collect();
        start.wait();
        checkers
            .into_iter()
            .map(|c| c.join().unwrap())
            .find(Result::is_err)
    });
    if let Some(Err(e)) = failure {
        panic!("a wrong answer: {e}");
    }
    let held = held.into_inner().unwrap();
    assert_eq!(held.len(), 7 * rounds);
    assert!(checks.load(Ordering::Relaxed) >= held.len() * CHECKERS);
    // Both bases overflowed: the races covered the overflow bit, not only the ranges.
    for key in ["fixtures.Shape", "cacherace.Base"] {
        let info =
            object_core::registry::type_info(object_core::registry::type_index_of(key).unwrap())
                .unwrap();
        assert!(info.has_overflowed_descendants(), "{key} overflowed");
    }
}
