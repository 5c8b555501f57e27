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

/// A wide node (16 fields, 144 bytes) under a key C may have registered first with
/// 16-byte objects: the host must refuse the plugin then, or `wide_sum` would read past
/// C's objects.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "plugin.CNode")]
pub struct CNode {
    base: object_core::Object,
    /// One reflected field, and room for fifteen more words.
    pub first: i64,
    /// Fifteen more words.
    #[object(skip)]
    pub rest: [i64; 15],
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
            "wide_sum",
            Function::from_typed_named("wide_sum", |o: ObjectRef| -> Option<i64> {
                o.downcast_ref::<CNode>()
                    .map(|n| n.first + n.rest.iter().sum::<i64>())
            }),
        )
        .function(
            "versioned_tail",
            Function::from_typed_named("versioned_tail", |o: ObjectRef| -> Option<i64> {
                o.downcast_ref::<object_capi_fixtures::Versioned>()
                    .map(versioned_tail)
            }),
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

/// The last word of the struct as this build knows it.
#[cfg(not(feature = "skew-layout"))]
fn versioned_tail(v: &object_capi_fixtures::Versioned) -> i64 {
    v.version
}

/// The last word of the struct as this build knows it: 256 bytes past the host's.
#[cfg(feature = "skew-layout")]
fn versioned_tail(v: &object_capi_fixtures::Versioned) -> i64 {
    v.history[31] as i64
}

#[cfg(not(feature = "skew-abi"))]
export_plugin!(c"rust-demo", init);
#[cfg(feature = "skew-abi")]
export_plugin!(
    c"rust-demo",
    init,
    abi = (object_capi::OBJ_ABI_MAJOR + 1, 0)
);
