//! What `tests/test_pytypes.py` and `tests/test_methods.py` call on the Rust side:
//! Rust methods of the tour's types (`eval`, `describe`, the static `IntImm.make`), a
//! Rust pass over trees that mix Rust and Python-defined nodes, the JSON graph saved
//! and loaded by Rust, reflection read by Rust, and method calls made by Rust, also
//! from a thread of its own. Compiled only with the `testing` feature.

use object_containers::{
    call_method, register_global_override, register_method_at, Function, Map, MethodKind,
};
use object_core::reflection::{create, get_attr};
use object_core::transform::{mutate, Rewriter, TransformError};
use object_core::{Any, AnyView, Error, ObjectPtr, ObjectRef, ObjectType};
use object_examples::expr::{self, Env, Expr, IntImm, Var};

/// Adds one to every `tour.IntImm` of a tree, whatever node types hold them.
struct BumpInts;

impl Rewriter for BumpInts {
    type Error = TransformError;
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        match node.downcast_ref::<IntImm>() {
            Some(i) => Ok(IntImm::new(i.value + 1).into_object_ref()),
            None => Ok(node),
        }
    }
}

fn object_arg(a: &AnyView<'_>) -> Result<ObjectRef, Error> {
    a.to_any()
        .as_object()
        .cloned()
        .ok_or_else(|| Error::type_error("an object"))
}

fn registered() -> Vec<(&'static str, Function)> {
    vec![
        (
            "testing.bump_ints",
            Function::from_typed_named("testing.bump_ints", |tree: ObjectRef| {
                mutate(&tree, &mut BumpInts).map_err(|e| Error::type_error(e.to_string()))
            }),
        ),
        (
            "testing.to_json",
            Function::from_packed_named(Some("testing.to_json"), |args| {
                let v = args.first().map(AnyView::to_any).unwrap_or_default();
                object_json::to_json_graph(&v)
                    .map(|t| Any::from(t.as_str()))
                    .map_err(Error::from)
            }),
        ),
        (
            "testing.from_json",
            Function::from_typed_named("testing.from_json", |text: String| {
                object_json::from_json_graph(&text).map_err(Error::from)
            }),
        ),
        (
            "testing.get_attr",
            Function::from_typed_named("testing.get_attr", |o: ObjectRef, name: String| {
                get_attr(&o, &name).map_err(Error::from)
            }),
        ),
        (
            "testing.create",
            Function::from_typed_named(
                "testing.create",
                |key: String, fields: Map<object_core::String, Any>| {
                    let fields: Vec<(std::string::String, Any)> = fields
                        .iter()
                        .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
                        .collect();
                    create(&key, fields.iter().map(|(k, v)| (k.as_str(), v.clone())))
                        .map_err(Error::from)
                },
            ),
        ),
        (
            // `[(name, kind, static type key, offset, flags)]` of a type's table, as Rust
            // reads it.
            "testing.field_table",
            Function::from_typed_named("testing.field_table", |key: String| {
                let info = object_core::registry::type_info_by_key(&key)
                    .ok_or_else(|| Error::new("KeyError", format!("no type `{key}`")))?;
                let rows: Vec<Any> = info
                    .reflection()
                    .reflected_fields()
                    .map(|f| {
                        Any::from(object_containers::Array::from(vec![
                            Any::from(f.name()),
                            Any::from(format!("{:?}", f.kind()).as_str()),
                            Any::from(f.static_type_key()),
                            Any::from(f.offset() as i64),
                            Any::from(i64::from(f.flags().bits())),
                        ]))
                    })
                    .collect();
                Ok::<_, Error>(object_containers::Array::from(rows))
            }),
        ),
        (
            // Rust's `call_method(obj, name, args)`.
            "testing.call_method",
            Function::from_packed_named(Some("testing.call_method"), |args| {
                let (obj, name) = object_and_name(args)?;
                call_method(&obj, &name, &args[2..])
            }),
        ),
        (
            // The same, from a new Rust thread (no Python thread state on it), joined:
            // marked long-running, so that a call lets the GIL go (the thread takes it).
            "testing.call_method_in_thread",
            Function::from_packed_named(Some("testing.call_method_in_thread"), |args| {
                let (obj, name) = object_and_name(args)?;
                let rest: Vec<Any> = args[2..].iter().map(AnyView::to_any).collect();
                std::thread::spawn(move || {
                    let views: Vec<AnyView<'_>> = rest.iter().map(AnyView::from).collect();
                    call_method(&obj, &name, &views)
                })
                .join()
                .map_err(|_| Error::new("RuntimeError", "the calling thread panicked"))?
            })
            .long_running(),
        ),
    ]
}

/// The `obj, name` that `testing.call_method(obj, name, *args)` and its thread form
/// begin with.
fn object_and_name(args: &[AnyView<'_>]) -> Result<(ObjectRef, std::string::String), Error> {
    let obj = object_arg(args.first().ok_or_else(|| Error::type_error("obj"))?)?;
    let name = args
        .get(1)
        .and_then(AnyView::as_str)
        .ok_or_else(|| Error::type_error("name"))?
        .to_owned();
    Ok((obj, name))
}

/// Registers the globals and the tour's Rust methods (idempotent).
pub(crate) fn register() -> Result<(), Error> {
    for (name, f) in registered() {
        drop(register_global_override(name, f));
    }
    let methods: Vec<(u32, &str, Function, MethodKind)> = vec![
        (
            Expr::type_index(),
            "eval",
            Function::from_typed_named(
                "tour.Expr.eval",
                |e: ObjectPtr<Expr>, env: Map<ObjectPtr<Var>, i64>| -> Result<i64, Error> {
                    let env = env.iter().fold(Env::new(), |acc, (v, x)| acc.bind(v, *x));
                    expr::eval(&e, &env).map_err(|e| Error::value_error(e.to_string()))
                },
            ),
            MethodKind::Instance,
        ),
        (
            Expr::type_index(),
            "describe",
            Function::from_typed_named("tour.Expr.describe", |e: ObjectRef| {
                format!("a Rust method of tour.Expr, on a {}", e.type_key())
            }),
            MethodKind::Instance,
        ),
        (
            IntImm::type_index(),
            "make",
            Function::from_typed_named("tour.IntImm.make", |v: i64| IntImm::new(v)),
            MethodKind::Static,
        ),
    ];
    for (t, name, f, kind) in methods {
        register_method_at(t, name, f, kind, true)?;
    }
    Ok(())
}
