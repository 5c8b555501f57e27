//! The front-end example shipped as a plugin (`object-examples/plugin`, the crate
//! `object-frontend-plugin`), built by cargo and loaded with `load_module`: the flow a
//! user of the compiler follows, through the module's functions and the globals — parse
//! a program, read its nodes' fields, run a pass by name, print, save and load — and
//! its errors.
//!
//! This test binary links no front-end code: the IR's types and functions are in the
//! host only once the plugin is loaded (adoption registers its copy's types), and the
//! host reads the nodes by reflection only.

mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use object_capi::load_module;
use object_containers::{get_global, Array, Module};
use object_core::reflection::get_attr;
use object_core::registry::{is_instance_of_index, type_index_of};
use object_core::structural::structural_equal;
use object_core::{Any, Error, ErrorKind, ObjectRef};

const PROGRAM: &str = "
(fn demo (n m)
  (let k (* 4 (+ 2 3))                          ; folds to 20, substituted
    (seq
      (store out (+ n k) (/ m 0))               ; division by zero: not folded
      (let unused (+ n 1)                       ; never used: removed
        (eval (+ (* (+ n m) k) (* (+ n m) k)))))))  ; repeated: CSE
";

const PRINTED: &str = "(fn demo (n m) (let k (* 4 (+ 2 3)) (seq (store out (+ n k) (/ m 0)) \
                       (let unused (+ n 1) (eval (+ (* (+ n m) k) (* (+ n m) k)))))))";

/// The plugin's library path, and whether the host knew `frontend.Expr` before loading.
fn plugin() -> &'static (PathBuf, bool) {
    static BUILT: OnceLock<(PathBuf, bool)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = support::build_library("object-frontend-plugin");
        let path = dir.join(format!(
            "{}object_frontend_plugin{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        let known_before = type_index_of("frontend.Expr").is_ok();
        load_module(&path).expect("load the front-end plugin");
        (path, known_before)
    })
}

fn module() -> Module {
    load_module(&plugin().0).expect("load the front-end plugin")
}

fn call(m: &Module, name: &str, args: impl IntoIterator<Item = Any>) -> Result<Any, Error> {
    let f = m
        .get_function(name, false)
        .unwrap_or_else(|| panic!("no `{name}` in the module"));
    let args: Vec<Any> = args.into_iter().collect();
    f.call_with(&args)
}

fn object(v: Any) -> ObjectRef {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v:?}"))
        .clone()
}

fn field(o: &ObjectRef, name: &str) -> Any {
    get_attr(o, name).unwrap_or_else(|e| panic!("{}.{name}: {e}", o.type_key()))
}

fn text(v: Any) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v:?}"))
        .to_owned()
}

fn is(o: &ObjectRef, key: &str) -> bool {
    is_instance_of_index(o.type_index(), type_index_of(key).unwrap())
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn the_types_come_from_the_plugin() {
    let (_, known_before) = plugin();
    assert!(
        !known_before,
        "this binary links no front-end: its types must come from the plugin"
    );
    for key in [
        "frontend.Expr",
        "frontend.Binary",
        "frontend.TensorImm",
        "frontend.Stmt",
        "frontend.Function",
    ] {
        assert!(type_index_of(key).is_ok(), "{key} registered by the load");
    }
    // One node type for every operator: the operator is an enum field.
    for gone in ["frontend.BinaryOp", "frontend.Add"] {
        assert!(type_index_of(gone).is_err(), "{gone} is no type any more");
    }
    let m = module();
    assert_eq!(m.name(), "frontend");
    let mut names: Vec<&str> = m.function_names().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "from_json",
            "generate",
            "parse",
            "passes",
            "print",
            "run_pass",
            "to_json"
        ]
    );
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn parse_read_fields_run_passes_print_save_and_load() {
    let m = module();
    let f = object(call(&m, "parse", [Any::from(PROGRAM)]).unwrap());

    // The nodes' fields, by reflection (this binary has no Rust type for them).
    assert_eq!(f.type_key(), "frontend.Function");
    assert_eq!(text(field(&f, "name")), "demo");
    let params = field(&f, "params");
    let params: Array<ObjectRef> = Array::try_from(params).unwrap();
    let names: Vec<String> = params.iter().map(|p| text(field(p, "name"))).collect();
    assert_eq!(names, ["n", "m"]);
    let body = object(field(&f, "body"));
    assert_eq!(body.type_key(), "frontend.LetStmt");
    assert!(is(&body, "frontend.Stmt") && !is(&body, "frontend.Expr"));
    let k = object(field(&body, "value"));
    assert_eq!(k.type_key(), "frontend.Binary");
    assert!(is(&k, "frontend.Expr"));
    // The operator, an enum field: its value (`BinOpKind::Mul as i64`), and its name
    // in the printer and the JSON graph.
    assert_eq!(field(&k, "op"), Any::from(2));
    assert!(format!("{k:?}").contains("op: Mul"), "{k:?}");
    assert_eq!(field(&object(field(&k, "lhs")), "value"), Any::from(4));
    assert_eq!(object(field(&k, "rhs")).type_key(), "frontend.Binary");
    // A use of a variable is its binder: the very same object as the parameter.
    let seq = object(field(&body, "body"));
    let seq: Array<ObjectRef> = Array::try_from(field(&seq, "seq")).unwrap();
    let store = seq.get(0).unwrap();
    assert_eq!(store.type_key(), "frontend.Store");
    assert_eq!(text(field(store, "buffer")), "out");
    let index = object(field(store, "index"));
    assert!(ObjectRef::ptr_eq(
        &object(field(&index, "lhs")),
        params.get(0).unwrap()
    ));

    // Printing a program, and any node of it.
    assert_eq!(
        text(call(&m, "print", [Any::from(f.clone())]).unwrap()),
        PRINTED
    );
    assert_eq!(
        text(call(&m, "print", [Any::from(k.clone())]).unwrap()),
        "(* 4 (+ 2 3))"
    );

    // The passes, by name, in pipeline order.
    let passes = call(&m, "passes", []).unwrap();
    let passes: Array<object_core::String> = Array::try_from(passes).unwrap();
    let passes: Vec<String> = passes.iter().map(|s| s.as_str().to_owned()).collect();
    assert_eq!(passes, ["fold_constants", "cse", "eliminate_dead_lets"]);
    let mut g = f.clone();
    let mut stages = Vec::new();
    for pass in &passes {
        g = object(call(&m, "run_pass", [Any::from(pass.as_str()), Any::from(g)]).unwrap());
        stages.push(text(call(&m, "print", [Any::from(g.clone())]).unwrap()));
    }
    assert_eq!(
        stages,
        [
            "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) \
             (let unused (+ n 1) (eval (+ (* (+ n m) 20) (* (+ n m) 20))))))",
            "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) \
             (let unused (+ n 1) (eval (let _t0 (+ n m) (let _t1 (* _t0 20) (+ _t1 _t1)))))))",
            "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) \
             (eval (let _t0 (+ n m) (let _t1 (* _t0 20) (+ _t1 _t1))))))",
        ]
    );
    // A pass that changes nothing returns the very same program.
    let again = object(
        call(
            &m,
            "run_pass",
            [Any::from("fold_constants"), Any::from(g.clone())],
        )
        .unwrap(),
    );
    assert!(ObjectRef::ptr_eq(&again, &g));

    // The printed text parses back to a structurally equal program.
    let printed = call(&m, "print", [Any::from(g.clone())]).unwrap();
    let reparsed = object(call(&m, "parse", [printed]).unwrap());
    assert!(structural_equal(&reparsed, &g));

    // Saved as a JSON graph and loaded back: a new, structurally equal program.
    let json = call(&m, "to_json", [Any::from(g.clone())]).unwrap();
    assert!(text(json.clone()).contains("frontend.Function"));
    assert!(text(json.clone()).contains("\"Mul\""), "operators by name");
    let loaded = object(call(&m, "from_json", [json]).unwrap());
    assert!(!ObjectRef::ptr_eq(&loaded, &g));
    assert!(structural_equal(&loaded, &g));
    assert_eq!(
        call(&m, "print", [Any::from(loaded)]).unwrap(),
        call(&m, "print", [Any::from(g)]).unwrap()
    );
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn the_globals_are_the_module_functions() {
    plugin();
    let parse = get_global("frontend.parse").expect("the plugin's global");
    let print = get_global("frontend.print").expect("the plugin's global");
    let run_pass = get_global("frontend.run_pass").expect("the plugin's global");
    let f = parse
        .call_with(&[Any::from("(fn f (x) (eval (+ (* 2 3) x)))")])
        .unwrap();
    let f = run_pass
        .call_with(&[Any::from("fold_constants"), f])
        .unwrap();
    assert_eq!(
        text(print.call_with(&[f]).unwrap()),
        "(fn f (x) (eval (+ 6 x)))"
    );
    let generate = get_global("frontend.generate").unwrap();
    let program = generate.call_with(&[Any::from(300), Any::from(7)]).unwrap();
    assert_eq!(
        program,
        generate.call_with(&[Any::from(300), Any::from(7)]).unwrap()
    );
    // A generated program parses; its printed text parses and prints back as it is.
    let printed = print
        .call_with(&[parse.call_with(&[program]).unwrap()])
        .unwrap();
    assert!(text(printed.clone()).starts_with("(fn main (a b c) (let x0 "));
    let again = print
        .call_with(&[parse.call_with(std::slice::from_ref(&printed)).unwrap()])
        .unwrap();
    assert_eq!(again, printed);
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn errors_keep_their_kind_and_say_where() {
    let m = module();
    // A parse error: a ValueError with the line and column of the offending token.
    let e = call(&m, "parse", [Any::from("(fn f (x)\n  (eval (+ x y)))")]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError);
    assert_eq!(e.message(), "parse error at 2:14: unbound variable `y`");
    assert_eq!(e.frames(), ["frontend.parse"]);
    let e = call(&m, "parse", [Any::from("(fn f () (eval 1)")]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError);
    assert!(e.message().starts_with("parse error at 1:18: "), "{e}");

    // An unknown pass: a ValueError naming the known ones.
    let f = call(&m, "parse", [Any::from("(fn f (x) (eval x))")]).unwrap();
    let e = call(&m, "run_pass", [Any::from("inline"), f.clone()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError);
    assert_eq!(
        e.message(),
        "unknown pass `inline`: the passes are fold_constants, cse, eliminate_dead_lets"
    );

    // A pass takes a program, not an expression.
    let body = object(field(&object(f.clone()), "body"));
    let e = call(&m, "run_pass", [Any::from("cse"), Any::from(body)]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError);

    // A bad JSON graph, and one whose root is no program.
    let e = call(&m, "from_json", [Any::from("{not json")]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError, "{e}");
    let not_a_program = object_json::to_json_graph(&Any::from(3)).unwrap();
    let e = call(&m, "from_json", [Any::from(not_a_program)]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "loads shared libraries: no FFI under Miri")]
fn a_deep_program_crosses_the_plugin_without_recursion() {
    let m = module();
    // 100,000 deep (scaled down under valgrind, never below 10,000).
    let scale: f64 = std::env::var("OBJECT_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let depth = ((100_000.0 * scale) as usize).clamp(10_000, 100_000);
    let mut src = String::from("(fn f (x) (eval ");
    for _ in 0..depth {
        src.push_str("(+ 1 ");
    }
    src.push('x');
    src.push_str(&")".repeat(depth));
    src.push_str("))");
    // On a small stack: nothing on the way recurses with the depth.
    let want = src.clone();
    let printed = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let f = call(&m, "parse", [Any::from(src.as_str())]).unwrap();
            let f = call(&m, "run_pass", [Any::from("fold_constants"), f]).unwrap();
            let json = call(&m, "to_json", [f.clone()]).unwrap();
            let loaded = call(&m, "from_json", [json]).unwrap();
            assert!(structural_equal(&loaded, &f));
            text(call(&m, "print", [loaded]).unwrap())
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(printed == want, "the deep program prints back as written");
}
