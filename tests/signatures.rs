//! Function signatures: names, defaults and types declared with `with_signature`, the
//! types a typed closure knows, defaults filled in the entry point (for every caller),
//! keyword calls (`call_kw`), the errors that name parameters, what refuses a
//! signature, and a global registered with one.

use object_containers::{
    get_global, register_global, remove_global, Array, Function, ParamKind, Signature,
};
use object_core::{Any, AnyView, ErrorKind};
use object_tests::LeakCheck;

fn add() -> Function {
    Function::from_typed_named("tour.add", |x: i64, y: i64| x + y)
        .with_signature(
            Signature::new()
                .param("x")
                .param_default("y", 1)
                .doc("Adds."),
        )
        .unwrap()
}

#[test]
fn typed_closure_takes_names_defaults_and_types() {
    let _guard = LeakCheck::new();
    let f = add();
    let sig = f.declared_signature().unwrap();
    assert_eq!(sig.len(), 2);
    assert_eq!(sig.parameters()[0].name(), "x");
    assert_eq!(sig.parameters()[0].type_str(), Some("int"));
    assert!(sig.parameters()[0].default_value().is_none());
    assert_eq!(sig.parameters()[1].default_value(), Some(&Any::from(1)));
    assert_eq!(sig.parameters()[1].kind(), ParamKind::PositionalOrKeyword);
    assert_eq!(sig.return_type(), Some("int"));
    assert_eq!(sig.doc_text(), Some("Adds."));
    assert_eq!(
        f.signature().unwrap().to_string(),
        "(x: int, y: int = 1) -> int"
    );
}

#[test]
fn defaults_fill_trailing_arguments_for_every_caller() {
    let _guard = LeakCheck::new();
    let f = add();
    assert_eq!(f.call_with([41]).unwrap().as_int(), Some(42));
    assert_eq!(f.call_with([40, 2]).unwrap().as_int(), Some(42));
    // The typed view of another arity goes through the entry point too.
    assert_eq!(f.typed::<(i64,), i64>().call((9,)).unwrap(), 10);
    // The fast path (same arity) is unchanged.
    assert_eq!(f.typed::<(i64, i64), i64>().call((9, 9)).unwrap(), 18);
}

#[test]
fn errors_name_the_parameter_and_the_function() {
    let _guard = LeakCheck::new();
    let f = add();
    let e = f
        .call_with([AnyView::from(1), AnyView::from("two")])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError);
    assert_eq!(
        e.message(),
        "argument `y` of `tour.add`: expected int, got str"
    );
    let e = f.call(&[]).unwrap_err();
    assert_eq!(e.message(), "missing argument `x` of `tour.add`");
    let e = f.call_with([1, 2, 3]).unwrap_err();
    assert_eq!(e.message(), "`tour.add` takes 2 arguments, got 3");
    // Without a declared signature the messages are positional, as before.
    let plain = Function::from_typed(|x: i64| x);
    let e = plain.call_with(["s"]).unwrap_err();
    assert_eq!(e.message(), "argument 0: expected int, got const char*");
}

#[test]
fn keyword_calls_bind_by_name() {
    let _guard = LeakCheck::new();
    let f = add();
    let kw = |pairs: &[(&str, i64)]| -> Vec<(String, Any)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), Any::from(*v)))
            .collect()
    };
    let call = |pos: &[i64], pairs: &[(&str, i64)]| {
        let pos: Vec<Any> = pos.iter().map(|v| Any::from(*v)).collect();
        let pos: Vec<AnyView<'_>> = pos.iter().map(AnyView::from).collect();
        let owned = kw(pairs);
        let named: Vec<(&str, AnyView<'_>)> = owned
            .iter()
            .map(|(n, v)| (n.as_str(), AnyView::from(v)))
            .collect();
        f.call_kw(&pos, &named)
    };
    assert_eq!(call(&[], &[("x", 5)]).unwrap().as_int(), Some(6));
    assert_eq!(
        call(&[], &[("y", 10), ("x", 5)]).unwrap().as_int(),
        Some(15)
    );
    assert_eq!(call(&[5], &[("y", 10)]).unwrap().as_int(), Some(15));
    assert_eq!(
        call(&[5], &[("x", 1)]).unwrap_err().message(),
        "`tour.add` got multiple values for argument `x`"
    );
    assert_eq!(
        call(&[5], &[("z", 1)]).unwrap_err().message(),
        "`tour.add` got an unexpected keyword argument `z`"
    );
    assert_eq!(
        call(&[], &[("y", 1)]).unwrap_err().message(),
        "missing argument `x` of `tour.add`"
    );
    // A function without a declared signature takes no keywords.
    let plain = Function::from_typed_named("plain", |x: i64| x);
    let e = plain.call_kw(&[], &[("x", AnyView::from(1))]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError);
    assert!(
        e.message()
            == "`plain` got an unexpected keyword argument `x` (it declares no parameter names)",
        "{e:?}"
    );
}

#[test]
fn packed_functions_take_declared_types_and_defaults() {
    let _guard = LeakCheck::new();
    let join = Function::from_packed_named(Some("demo.join"), |args| {
        let parts: Vec<&str> = args.iter().filter_map(|a| a.as_str()).collect();
        Ok(Any::from(parts.join("")))
    })
    .with_signature(
        Signature::new()
            .param_typed("a", "str")
            .param_default("b", "!")
            .returns("str"),
    )
    .unwrap();
    assert_eq!(join.call_with(["hi"]).unwrap().as_str(), Some("hi!"));
    assert_eq!(join.call_with(["hi", "?"]).unwrap().as_str(), Some("hi?"));
    assert_eq!(
        join.call(&[]).unwrap_err().message(),
        "missing argument `a` of `demo.join`"
    );
    assert_eq!(
        join.signature().unwrap().to_string(),
        "(a: str, b=\"!\") -> str"
    );
    // Objects as defaults are kept alive by the signature, and released with it.
    let items = Function::from_packed(|args| Ok(args[0].to_any()))
        .with_signature(Signature::new().param_default("xs", Array::<i64>::from(vec![1, 2])))
        .unwrap();
    let got = items.call(&[]).unwrap();
    assert_eq!(Array::<i64>::try_from(got).unwrap().len(), 2);
}

#[test]
fn typed_closures_describe_themselves_without_names() {
    let _guard = LeakCheck::new();
    let f = Function::from_typed(|a: f64, b: Array<i64>, c: Option<String>| {
        let _ = (b, c);
        a
    });
    assert!(f.declared_signature().is_none());
    let sig = f.signature().unwrap();
    assert_eq!(sig.parameters()[0].kind(), ParamKind::PositionalOnly);
    assert_eq!(sig.parameters()[2].type_str(), Some("Optional[str]"));
    assert_eq!(
        sig.to_string(),
        format!(
            "(arg0: float, arg1: {}, arg2: Optional[str], /) -> float",
            sig.parameters()[1].type_str().unwrap()
        )
    );
    assert!(sig.parameters()[1].type_str().unwrap().contains("Array"));
    assert!(Function::from_packed(|_| Ok(Any::NONE))
        .signature()
        .is_none());
}

#[test]
fn bad_signatures_are_refused() {
    let _guard = LeakCheck::new();
    let two = || Function::from_typed_named("two", |a: i64, b: i64| a * b);
    let e = two()
        .with_signature(Signature::new().param("a"))
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError);
    assert_eq!(
        e.message(),
        "the signature of `two` names 1 parameter, the function takes 2"
    );
    let e = two()
        .with_signature(Signature::new().param("a").param("a"))
        .unwrap_err();
    assert_eq!(e.message(), "parameter `a` is named twice");
    let e = two()
        .with_signature(Signature::new().param_default("a", 1).param("b"))
        .unwrap_err();
    assert!(
        e.message().contains("without a default follows `a`"),
        "{e:?}"
    );
    let f = two()
        .with_signature(Signature::new().params(["a", "b"]))
        .unwrap();
    let e = f
        .with_signature(Signature::new().params(["p", "q"]))
        .unwrap_err();
    assert_eq!(e.message(), "`two` already has a signature");
}

#[test]
fn a_global_registered_with_a_signature_keeps_it() {
    let _guard = LeakCheck::new();
    register_global("sig.add", add()).unwrap();
    let g = get_global("sig.add").unwrap();
    assert_eq!(g.declared_signature().unwrap().parameters()[1].name(), "y");
    assert_eq!(g.call_with([1]).unwrap().as_int(), Some(2));
    assert!(remove_global("sig.add").is_some());
}

#[test]
fn many_threads_call_with_defaults() {
    let _guard = LeakCheck::new();
    let f = add();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let f = f.clone();
            s.spawn(move || {
                for i in 0..200i64 {
                    assert_eq!(f.call_with([t * i]).unwrap().as_int(), Some(t * i + 1));
                }
            });
        }
    });
}

#[test]
fn more_parameters_than_the_stack_buffer() {
    let _guard = LeakCheck::new();
    // Ten parameters (the binding keeps eight on the stack), the last three defaulted.
    let mut sig = Signature::new();
    for i in 0..7 {
        sig = sig.param(&format!("p{i}"));
    }
    for i in 7..10 {
        sig = sig.param_default(&format!("p{i}"), i as i64 * 100);
    }
    let sum = Function::from_packed_named(Some("sum10"), |args| {
        Ok(Any::from(
            args.iter().filter_map(|a| a.as_int()).sum::<i64>(),
        ))
    })
    .with_signature(sig)
    .unwrap();
    let seven: Vec<i64> = (0..7).collect();
    assert_eq!(
        sum.call_with(seven.clone()).unwrap().as_int(),
        Some(21 + 700 + 800 + 900)
    );
    let pos: Vec<Any> = (0..5).map(Any::from).collect();
    let pos: Vec<AnyView<'_>> = pos.iter().map(AnyView::from).collect();
    let six = Any::from(6);
    let five = Any::from(5);
    let nine = Any::from(-900);
    let kw = [
        ("p6", AnyView::from(&six)),
        ("p5", AnyView::from(&five)),
        ("p9", AnyView::from(&nine)),
    ];
    assert_eq!(
        sum.call_kw(&pos, &kw).unwrap().as_int(),
        Some(21 + 700 + 800 - 900)
    );
    let e = sum.call_kw(&pos[..4], &kw).unwrap_err();
    assert_eq!(e.message(), "missing argument `p4` of `sum10`");
}
