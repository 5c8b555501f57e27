//! A Rust plugin: node types that are subtypes of the host's `fixtures.Shape`, typed
//! functions in its module, a global, and errors. Loaded by `object-capi`'s tests.

use object_capi::export_plugin;
use object_capi_fixtures::ShapeNode;
use object_containers::{register_global_override, Function, Module};
use object_core::{make_object, Error, ObjectPtr, ObjectRef};

/// A circle: a host shape.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "plugin.Circle", parent = ShapeNode)]
pub struct Circle {
    base: ShapeNode,
    /// The radius.
    pub radius: f64,
}

/// A square: a host shape.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "plugin.Square", parent = ShapeNode, final)]
pub struct Square {
    base: ShapeNode,
    /// The side.
    pub side: f64,
}

/// A bare final type, which a host may register under the same key before loading the
/// plugin (as C or Python would).
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "plugin.Marker", final)]
pub struct Marker {
    base: object_core::Object,
}

fn area(shape: ObjectRef) -> Result<f64, Error> {
    if let Some(c) = shape.downcast_ref::<Circle>() {
        Ok(std::f64::consts::PI * c.radius * c.radius)
    } else if let Some(s) = shape.downcast_ref::<Square>() {
        Ok(s.side * s.side)
    } else {
        Err(Error::type_error(format!(
            "not a plugin shape: {}",
            shape.type_key()
        )))
    }
}

fn init() -> Result<Module, Error> {
    // The plugin's types are registered in the host already: adopting the host's
    // registry registers every type this copy collected.
    register_global_override(
        "plugin.demo.version",
        Function::from_typed_named("plugin.demo.version", || 3i64),
    );
    Ok(Module::builder("demo")
        .function(
            "add",
            Function::from_typed_named("add", |a: i64, b: i64| a + b),
        )
        .function(
            "make_circle",
            Function::from_typed_named("make_circle", |id: i64, r: f64| -> ObjectPtr<Circle> {
                make_object(Circle {
                    base: ShapeNode::new_value(id as i32),
                    radius: r,
                })
            }),
        )
        .function(
            "make_square",
            Function::from_typed_named("make_square", |id: i64, side: f64| -> ObjectPtr<Square> {
                make_object(Square {
                    base: ShapeNode::new_value(id as i32),
                    side,
                })
            }),
        )
        .function("area", Function::from_typed_named("area", area))
        .function(
            "is_marker",
            Function::from_typed_named("is_marker", |o: ObjectRef| o.is::<Marker>()),
        )
        .function(
            "fail",
            Function::from_typed_named("fail", |msg: object_core::String| -> Result<i64, Error> {
                Err(Error::value_error(msg.as_str()))
            }),
        )
        .function(
            "index_of",
            Function::from_typed_named(
                "index_of",
                |key: object_core::String| -> Result<i64, Error> {
                    object_core::registry::type_index_of(key.as_str())
                        .map(i64::from)
                        .map_err(|e| Error::new("KeyError", e.to_string()))
                },
            ),
        )
        .build())
}

#[cfg(not(feature = "skew-abi"))]
export_plugin!(c"rust-demo", init);
#[cfg(feature = "skew-abi")]
export_plugin!(
    c"rust-demo",
    init,
    abi = (object_capi::OBJ_ABI_MAJOR + 1, 0)
);
