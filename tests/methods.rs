//! The per-type method table (`object_containers::register_method`, `find_method`,
//! `call_method`): found along the ancestry, nearest first, for Rust types and types
//! registered at run time alike; static methods; errors; methods that register or call
//! methods while they run; calls from many threads.

use object_containers::{
    call_method, find_method, register_method, register_method_at, register_static_method,
    remove_method, type_methods, Function, Map, MethodKind,
};
use object_core::prelude::*;
use object_core::reflection::{create, get_attr, FieldSpec, FieldType};
use object_core::registry::{register_type, type_info_by_key, TypeSpec};
use object_core::TypedRef;
use object_core::{Any, AnyView, ErrorKind, String as Str};
use object_tests::{scaled, LeakCheck};

/// The base of the expressions.
#[derive(Object)]
#[repr(C)]
#[object(key = "mth.Expr", slots = 8, abstract, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

/// A literal.
#[derive(Object)]
#[repr(C)]
#[object(key = "mth.Lit", parent = ExprNode, final, ref = Lit)]
pub struct LitNode {
    base: ExprNode,
    value: i64,
}

/// A sum.
#[derive(Object)]
#[repr(C)]
#[object(key = "mth.Add", parent = ExprNode, final, ref = Add)]
pub struct AddNode {
    base: ExprNode,
    lhs: Expr,
    rhs: Expr,
}

/// Evaluates through the method table: each node's `eval` calls its children's.
fn eval(e: &ObjectRef, env: &Map<Str, i64>) -> Result<i64, object_core::Error> {
    call_method(e, "eval", &[AnyView::from(env)])?
        .as_int()
        .ok_or_else(|| object_core::Error::type_error("eval returns an int"))
}

fn register_eval() {
    register_method::<LitNode>(
        "eval",
        Function::from_typed(|l: Lit, _: Map<Str, i64>| l.value),
    )
    .unwrap();
    register_method::<AddNode>(
        "eval",
        Function::from_typed(|a: Add, env: Map<Str, i64>| {
            Ok::<_, object_core::Error>(
                eval(a.lhs.as_object_ref(), &env)? + eval(a.rhs.as_object_ref(), &env)?,
            )
        }),
    )
    .unwrap();
    register_method::<ExprNode>(
        "describe",
        Function::from_typed(|e: Expr| format!("an expression ({})", e.type_key())),
    )
    .unwrap();
    register_static_method::<LitNode>("zero", Function::from_typed(|| Lit::new(0))).unwrap();
}

fn unregister_eval() {
    for (t, n) in [
        (LitNode::type_index(), "eval"),
        (AddNode::type_index(), "eval"),
        (ExprNode::type_index(), "describe"),
        (LitNode::type_index(), "zero"),
    ] {
        assert!(remove_method(t, n).is_some());
    }
}

/// The tests share the table: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn methods_are_found_along_the_ancestry() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _leaks = LeakCheck::new();
    register_eval();
    let e: ObjectRef = Add::new(Lit::new(2), Add::new(Lit::new(3), Lit::new(4))).into_object_ref();
    assert_eq!(eval(&e, &Map::new()).unwrap(), 9);
    // `describe` is the base's, for every subtype.
    let d = call_method(&e, "describe", &[]).unwrap();
    assert_eq!(d.as_str(), Some("an expression (mth.Add)"));
    let m = find_method(LitNode::type_index(), "describe").unwrap();
    assert_eq!(m.owner(), ExprNode::type_index());
    assert_eq!(m.kind(), MethodKind::Instance);
    // A static method is called without the object, also through one.
    let zero = find_method(LitNode::type_index(), "zero").unwrap();
    assert_eq!(zero.kind(), MethodKind::Static);
    let z = zero.function().call(&[]).unwrap();
    assert_eq!(z.as_object().unwrap().type_key(), "mth.Lit");
    let z2 = call_method(&e, "describe", &[]).unwrap();
    assert!(z2.as_str().is_some());
    let lit = Lit::new(5).into_object_ref();
    let z3 = call_method(&lit, "zero", &[]).unwrap();
    assert_eq!(
        get_attr(z3.as_object().unwrap(), "value").unwrap().as_int(),
        Some(0)
    );
    // What the type itself has.
    let own: Vec<std::string::String> = type_methods(LitNode::type_index())
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(own, ["eval", "zero"]);
    unregister_eval();
    assert!(find_method(LitNode::type_index(), "eval").is_none());
}

#[test]
fn the_nearest_ancestor_wins_and_errors_are_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _leaks = LeakCheck::new();
    let base = ExprNode::type_index();
    let lit = LitNode::type_index();
    register_method_at(
        base,
        "name",
        Function::from_typed(|_: Expr| "base"),
        MethodKind::Instance,
        false,
    )
    .unwrap();
    register_method_at(
        lit,
        "name",
        Function::from_typed(|_: Lit| "lit"),
        MethodKind::Instance,
        false,
    )
    .unwrap();
    let l = Lit::new(1).into_object_ref();
    let a = Add::new(Lit::new(1), Lit::new(2)).into_object_ref();
    assert_eq!(call_method(&l, "name", &[]).unwrap().as_str(), Some("lit"));
    assert_eq!(call_method(&a, "name", &[]).unwrap().as_str(), Some("base"));
    // Taken: an error, unless replaced on purpose (the old one is returned).
    let e = register_method_at(
        lit,
        "name",
        Function::from_typed(|| 0),
        MethodKind::Instance,
        false,
    )
    .unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::KeyError);
    assert!(e.message().contains("already has a method `name`"), "{e}");
    let old = register_method_at(
        lit,
        "name",
        Function::from_typed(|_: Lit| "new"),
        MethodKind::Instance,
        true,
    )
    .unwrap();
    assert!(old.is_some());
    assert_eq!(call_method(&l, "name", &[]).unwrap().as_str(), Some("new"));
    // No such method; no such type; no name.
    let e = call_method(&l, "nope", &[]).unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::AttributeError);
    assert_eq!(e.message(), "`mth.Lit` has no method `nope`");
    let e = register_method_at(
        7,
        "x",
        Function::from_typed(|| 0),
        MethodKind::Static,
        false,
    )
    .unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::KeyError);
    let e = register_method_at(
        lit,
        "",
        Function::from_typed(|| 0),
        MethodKind::Static,
        false,
    )
    .unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::ValueError);
    // A method's own errors come back as they are.
    register_method_at(
        lit,
        "fail",
        Function::from_typed(|_: Lit| Err::<(), _>(object_core::Error::value_error("no"))),
        MethodKind::Instance,
        false,
    )
    .unwrap();
    let e = call_method(&l, "fail", &[]).unwrap_err();
    assert_eq!((e.kind(), e.message()), (&ErrorKind::ValueError, "no"));
    // A wrong argument is the function's TypeError.
    let e = call_method(&l, "name", &[AnyView::from(1)]).unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::TypeError);
    for (t, n) in [(base, "name"), (lit, "name"), (lit, "fail")] {
        assert!(remove_method(t, n).is_some());
    }
    assert!(remove_method(lit, "name").is_none());
}

#[test]
fn methods_of_run_time_types_and_on_their_rust_ancestors() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let info = register_type(&TypeSpec::new("mth.Scaled", "mth.Expr").fields(vec![
        FieldSpec::new("arg", FieldType::Object("mth.Expr".into())),
        FieldSpec::new("factor", FieldType::Int).default(2),
    ]))
    .unwrap();
    let _leaks = LeakCheck::new();
    register_eval();
    // An `eval` for the run-time type, written against its fields through reflection.
    register_method_at(
        info.index(),
        "eval",
        Function::from_packed(|args| {
            let this = args[0].to_any();
            let this = this
                .as_object()
                .ok_or_else(|| object_core::Error::type_error("self"))?;
            let env = Map::<Str, i64>::try_from(args[1].to_any())?;
            let arg = get_attr(this, "arg").map_err(object_core::Error::from)?;
            let factor = get_attr(this, "factor").map_err(object_core::Error::from)?;
            Ok(Any::from(
                eval(arg.as_object().unwrap(), &env)? * factor.as_int().unwrap(),
            ))
        }),
        MethodKind::Instance,
        false,
    )
    .unwrap();
    let s = create(
        "mth.Scaled",
        [("arg", Any::from(Add::new(Lit::new(1), Lit::new(2))))],
    )
    .unwrap();
    let root = Add::new(Lit::new(1), Expr::try_from_object(s.clone()).unwrap()).into_object_ref();
    assert_eq!(eval(&root, &Map::new()).unwrap(), 7);
    // The Rust base's method is found for the run-time type.
    assert_eq!(
        call_method(&s, "describe", &[]).unwrap().as_str(),
        Some("an expression (mth.Scaled)")
    );
    assert!(remove_method(info.index(), "eval").is_some());
    unregister_eval();
    assert_eq!(
        type_info_by_key("mth.Scaled").unwrap().index(),
        info.index()
    );
}

#[test]
fn a_method_may_register_and_call_methods_while_it_runs() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _leaks = LeakCheck::new();
    let lit = LitNode::type_index();
    register_method_at(
        lit,
        "install",
        Function::from_typed(|l: Lit| -> Result<i64, object_core::Error> {
            register_method_at(
                LitNode::type_index(),
                "double",
                Function::from_typed(|l: Lit| 2 * l.value),
                MethodKind::Instance,
                true,
            )?;
            call_method(l.as_object_ref(), "double", &[])?
                .as_int()
                .ok_or_else(|| object_core::Error::type_error("int"))
        }),
        MethodKind::Instance,
        false,
    )
    .unwrap();
    let l = Lit::new(21).into_object_ref();
    assert_eq!(call_method(&l, "install", &[]).unwrap(), Any::from(42));
    assert!(remove_method(lit, "install").is_some());
    assert!(remove_method(lit, "double").is_some());
}

#[test]
fn methods_are_called_from_many_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _leaks = LeakCheck::new();
    register_eval();
    let n = scaled(500, 8);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut sum = 0;
                for i in 0..n {
                    let e = Add::new(Lit::new(t), Lit::new(i as i64)).into_object_ref();
                    sum += eval(&e, &Map::new()).unwrap();
                }
                sum
            })
        })
        .collect();
    let total: i64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let n = n as i64;
    assert_eq!(total, (0..4).map(|t| t * n + n * (n - 1) / 2).sum::<i64>());
    unregister_eval();
}
