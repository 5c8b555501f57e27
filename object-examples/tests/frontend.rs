//! The front-end example: both versions agree after every pass, on generated and
//! hand-written programs; the passes do what they say; deep programs work on a small
//! stack; parse errors carry kinds and positions.

use object_core::structural::structural_equal;
use object_core::TypedRef;
use object_examples::frontend::{enum_ir, generate, object_ir, parse, ParseErrorKind};

/// Every stage's print from both versions, asserting they agree and that each print
/// parses back to the same text.
fn stages(text: &str) -> Vec<String> {
    let e = parse(text, &mut enum_ir::EnumBuilder).expect("enum parse");
    let o = parse(text, &mut object_ir::ObjectBuilder).expect("object parse");
    let mut out = Vec::new();
    let mut check = |name: &str, e: &enum_ir::Function, o: &object_ir::Function| {
        let (pe, po) = (enum_ir::print(e), object_ir::print(o));
        assert_eq!(pe, po, "after {name}, for {text}");
        // (Text only: left out under Miri, which interprets it slowly.)
        if !cfg!(miri) {
            let again = parse(&po, &mut object_ir::ObjectBuilder).expect("reparse");
            assert_eq!(
                object_ir::print(&again),
                po,
                "print/parse round trip after {name}"
            );
        }
        out.push(po);
    };
    check("parse", &e, &o);
    let (e, o) = (enum_ir::fold_constants(&e), object_ir::fold_constants(&o));
    check("fold", &e, &o);
    let (e, o) = (enum_ir::cse(&e), object_ir::cse(&o));
    check("cse", &e, &o);
    let (e, o) = (
        enum_ir::eliminate_dead_lets(&e),
        object_ir::eliminate_dead_lets(&o),
    );
    check("dead-let", &e, &o);
    out
}

/// The output of one pass on a one-expression program `(fn f (x y) (eval E))`.
fn expr_after(pass: &str, e: &str) -> String {
    let text = format!("(fn f (x y) (eval {e}))");
    let s = stages(&text);
    let i = ["parse", "fold", "cse", "dead-let"]
        .iter()
        .position(|p| *p == pass)
        .unwrap();
    let out = &s[i];
    out.strip_prefix("(fn f (x y) (eval ")
        .and_then(|r| r.strip_suffix("))"))
        .unwrap_or(out)
        .to_owned()
}

/// `native` natively; `miri` under Miri, which interprets every step (a few cases
/// check the code paths for undefined behaviour; the counts are for native runs).
const fn native_or_miri(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// `OBJECT_TEST_SCALE` (valgrind runs at 0.01), as the workspace's other tests read it.
fn scale() -> f64 {
    std::env::var("OBJECT_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

/// `native` scaled by [`scale`], at least `min`; `miri` under Miri.
fn scaled(native: usize, min: usize, miri: usize) -> usize {
    native_or_miri(((native as f64 * scale()) as usize).max(min), miri)
}

/// Whether this run has the full counts the coverage assertions are written for.
fn full_scale() -> bool {
    !cfg!(miri) && scale() >= 1.0
}

#[test]
fn versions_agree_on_generated_programs() {
    let (mut folded, mut cse, mut dead) = (0, 0, 0);
    for seed in 0..scaled(120, 4, 1) as u64 {
        let text = generate(20 + 25 * seed as usize, seed);
        let s = stages(&text);
        folded += usize::from(s[1] != s[0]);
        cse += usize::from(s[2].contains("_t0"));
        dead += usize::from(s[3] != s[2]);
    }
    // The generator makes work for every pass in most programs.
    if !full_scale() {
        return;
    }
    assert!(folded > 100, "fold changed {folded} of 120");
    assert!(cse > 60, "cse bound something in {cse} of 120");
    assert!(dead > 60, "dead-let removed something in {dead} of 120");
}

#[test]
fn folding() {
    assert_eq!(expr_after("fold", "(+ (* 2 3) (- 10 4))"), "12");
    assert_eq!(expr_after("fold", "(+ x (* 2 3))"), "(+ x 6)");
    // Undefined operations stay.
    assert_eq!(expr_after("fold", "(/ 7 0)"), "(/ 7 0)");
    assert_eq!(expr_after("fold", "(% (+ 1 6) (- 2 2))"), "(% 7 0)");
    assert_eq!(
        expr_after("fold", "(* 9223372036854775807 2)"),
        "(* 9223372036854775807 2)"
    );
    assert_eq!(
        expr_after("fold", "(/ -9223372036854775808 -1)"),
        "(/ -9223372036854775808 -1)"
    );
    assert_eq!(expr_after("fold", "(/ -7 2)"), "-3");
    assert_eq!(expr_after("fold", "(% -7 2)"), "-1");
    assert_eq!(expr_after("fold", "(and (< 1 2) (or 0 (== 3 3)))"), "1");
    assert_eq!(expr_after("fold", "(min (max 3 9) 4)"), "4");
    assert_eq!(expr_after("fold", "(not (not 5))"), "1");
    assert_eq!(expr_after("fold", "(select (< 2 1) x y)"), "y");
    assert_eq!(expr_after("fold", "(select x 1 2)"), "(select x 1 2)");
    assert_eq!(expr_after("fold", "(call f (+ 1 1))"), "(call f 2)");
    let s = stages("(fn f (x) (if (== 1 1) (store a 0 (+ 1 2)) (eval x)))");
    assert_eq!(s[1], "(fn f (x) (store a 0 3))");
    // Tensors are constants, but not integers: left as they are.
    assert_eq!(
        expr_after("fold", "(+ (tensor (2) 1 2) (* 2 3))"),
        "(+ (tensor (2) 1 2) 6)"
    );
}

#[test]
fn folding_substitutes_constant_lets() {
    // A `let` whose value folds to a constant goes, its uses replaced by the value.
    assert_eq!(expr_after("fold", "(let z (+ 1 2) (* z x))"), "(* 3 x)");
    assert_eq!(
        expr_after("fold", "(let z 3 (let w (+ z 1) (* w w)))"),
        "16"
    );
    assert_eq!(expr_after("fold", "(let z 7 x)"), "x");
    // Not a constant: kept, and its uses too.
    assert_eq!(
        expr_after("fold", "(let z (+ x 1) (* z z))"),
        "(let z (+ x 1) (* z z))"
    );
    assert_eq!(
        expr_after("fold", "(let z (/ 1 0) (+ z 1))"),
        "(let z (/ 1 0) (+ z 1))"
    );
    assert_eq!(
        expr_after("fold", "(let t (tensor (2) 1 2) (call g t t))"),
        "(let t (tensor (2) 1 2) (call g t t))"
    );
    // Shadowing: the inner `z` is another variable, bound to a value that uses the
    // outer one.
    assert_eq!(
        expr_after("fold", "(let z 1 (let z (+ z x) (* z z)))"),
        "(let z (+ 1 x) (* z z))"
    );
    assert_eq!(expr_after("fold", "(let z 1 (let z (+ z 1) (* z z)))"), "4");
    // A value folded by substitution makes its own `let` go: a chain in one pass.
    assert_eq!(
        expr_after("fold", "(select (let c (< 1 2) c) (let d 5 (+ d x)) y)"),
        "(+ 5 x)"
    );
    // Statement lets too.
    let s = stages("(fn f (x) (let k (* 2 3) (seq (store a k (+ k x)) (let u x (eval u)))))");
    assert_eq!(
        s[1],
        "(fn f (x) (seq (store a 6 (+ 6 x)) (let u x (eval u))))"
    );
}

#[test]
fn common_subexpressions() {
    assert_eq!(
        expr_after("cse", "(+ (* x y) (* x y))"),
        "(let _t0 (* x y) (+ _t0 _t0))"
    );
    assert_eq!(
        expr_after("cse", "(* (+ (* x y) 1) (+ (* x y) 1))"),
        "(let _t0 (* x y) (let _t1 (+ _t0 1) (* _t1 _t1)))"
    );
    // Different operators or operands are different expressions.
    assert_eq!(
        expr_after("cse", "(+ (* x y) (* y x))"),
        "(+ (* x y) (* y x))"
    );
    assert_eq!(
        expr_after("cse", "(+ (< x y) (== x y))"),
        "(+ (< x y) (== x y))"
    );
    // The same name bound by two different lets is two variables: `(+ x 1)` under
    // each is not common, while each let-free part is handled on its own.
    assert_eq!(
        expr_after("cse", "(+ (let x (- y 1) (+ x 1)) (let x (- y 2) (+ x 1)))"),
        "(+ (let x (- y 1) (+ x 1)) (let x (- y 2) (+ x 1)))"
    );
    assert_eq!(
        expr_after("cse", "(let z (- x y) (* (- x y) (- x y)))"),
        "(let z (- x y) (let _t0 (- x y) (* _t0 _t0)))"
    );
    // Calls are pure intrinsics; leaves are never bound.
    assert_eq!(
        expr_after("cse", "(+ (call g x) (call g x))"),
        "(let _t0 (call g x) (+ _t0 _t0))"
    );
    assert_eq!(expr_after("cse", "(+ x x)"), "(+ x x)");
}

#[test]
fn dead_lets() {
    // (Values that are no constants: folding would substitute those.)
    assert_eq!(expr_after("dead-let", "(let z (+ x 1) x)"), "x");
    assert_eq!(
        expr_after("dead-let", "(let z (+ x 1) (+ z x))"),
        "(let z (+ x 1) (+ z x))"
    );
    // A chain: `b` is dead, so `a`'s only use goes, and `a` is dead too.
    assert_eq!(expr_after("dead-let", "(let a x (let b (+ a 1) y))"), "y");
    assert_eq!(
        expr_after("dead-let", "(let a x (let b (+ a 1) (let c (* b 2) y)))"),
        "y"
    );
    // A use in the body keeps it; uses in a removed value do not.
    assert_eq!(
        expr_after("dead-let", "(let a x (+ (let b (+ a 1) y) a))"),
        "(let a x (+ y a))"
    );
    // Shadowing: the inner `z` is used, the outer one is not.
    assert_eq!(
        expr_after("dead-let", "(let z x (let z y z))"),
        "(let z y z)"
    );
    assert_eq!(
        expr_after("dead-let", "(let z x (let z (+ z 1) z))"),
        "(let z x (let z (+ z 1) z))"
    );
    let s = stages("(fn f (x) (let a (+ x 1) (let b 2 (seq (store m a b) (let c a (eval x))))))");
    assert_eq!(
        s[3],
        "(fn f (x) (let a (+ x 1) (seq (store m a 2) (eval x))))"
    );
    // A variable whose only uses are in a dead statement `let`'s value.
    let s = stages("(fn f (x) (let a (* x x) (let b (+ a a) (eval x))))");
    assert_eq!(s[3], "(fn f (x) (eval x))");
}

#[test]
fn unchanged_programs_come_back_as_the_same_objects() {
    let text = generate(native_or_miri(3000, 120), 11);
    let o = parse(&text, &mut object_ir::ObjectBuilder).unwrap();
    // Each pass is idempotent: a second run finds nothing and returns its input.
    // (Dead-let elimination may expose new folding: `(let y 0 8)` becomes `8`.)
    let folded = o.fold_constants();
    assert!(!folded.same_as(&o));
    assert!(folded.fold_constants().same_as(&folded));
    let clean = folded.eliminate_dead_lets();
    assert!(!clean.same_as(&folded));
    assert!(clean.eliminate_dead_lets().same_as(&clean));
    // A pass that changes one statement keeps the untouched ones.
    let a = parse(
        "(fn f (x) (seq (eval (+ x 1)) (eval (+ 1 1))))",
        &mut object_ir::ObjectBuilder,
    )
    .unwrap();
    let b = object_ir::fold_constants(&a);
    let (sa, sb) = (seq_items(&a), seq_items(&b));
    assert!(sa[0].same_as(&sb[0]));
    assert!(!sa[1].same_as(&sb[1]));
}

fn seq_items(f: &object_ir::Function) -> Vec<object_ir::Stmt> {
    let s = f
        .body
        .downcast_ref::<object_ir::SeqStmtNode>()
        .expect("a seq");
    s.seq.iter().cloned().collect()
}

#[test]
fn json_round_trip() {
    for seed in [1, 2, 3].into_iter().take(native_or_miri(3, 1)) {
        let text = generate(native_or_miri(2000, 30), seed);
        let o = parse(&text, &mut object_ir::ObjectBuilder).unwrap();
        let o = object_ir::cse(&object_ir::fold_constants(&o));
        let json = object_ir::save_json(&o).unwrap();
        let back = object_ir::load_json(&json).unwrap();
        assert!(structural_equal(&back, &o));
        assert_eq!(object_ir::print(&back), object_ir::print(&o));
        assert!(!back.same_as(&o));
    }
    let not_fn =
        object_json::to_json_graph(&object_core::Any::from(object_ir::IntImm::new(3))).unwrap();
    assert!(matches!(
        object_ir::load_json(&not_fn),
        Err(object_ir::JsonError::NotAFunction("frontend.IntImm"))
    ));
    assert!(matches!(
        object_ir::load_json("{"),
        Err(object_ir::JsonError::Graph(_))
    ));
}

#[test]
fn parse_errors_have_kinds_and_positions() {
    use ParseErrorKind::*;
    let cases: &[(&str, ParseErrorKind, u32, u32)] = &[
        ("", UnexpectedEof, 1, 1),
        ("x", ExpectedOpen, 1, 1),
        ("(fun f () (eval 1))", UnknownForm("fun".into()), 1, 2),
        ("(fn 1 () (eval 1))", ExpectedName, 1, 5),
        (
            "(fn f (x) (eval (+ x y)))",
            UnboundVariable("y".into()),
            1,
            22,
        ),
        ("(fn f (x)\n  (eval (+ x 1 2)))", ExpectedClose, 2, 16),
        ("(fn f (x) (eval (+ x)))", UnexpectedClose, 1, 21),
        (
            "(fn f (x) (eval (pow x 2)))",
            UnknownForm("pow".into()),
            1,
            18,
        ),
        ("(fn f (x) (eval (seq)))", UnknownForm("seq".into()), 1, 18),
        (
            "(fn f (x) (select x 1 2))",
            UnknownForm("select".into()),
            1,
            12,
        ),
        ("(fn f (x) x)", ExpectedStatement("x".into()), 1, 11),
        (
            "(fn f (x) (eval 99999999999999999999))",
            BadInteger("99999999999999999999".into()),
            1,
            17,
        ),
        ("(fn f (x) (eval (let 3 1 x)))", ExpectedName, 1, 22),
        (
            "(fn f (x) (eval (let y y y)))",
            UnboundVariable("y".into()),
            1,
            24,
        ),
        ("(fn f (x) (eval x)) (eval x)", TrailingInput, 1, 21),
        ("(fn f (x) (eval (+ x 1)", UnexpectedEof, 1, 24),
        ("(fn f (x) ; comment\n (eval (+ x ])))", ExpectedName, 2, 13),
        ("(fn f (x) (eval (+ x 1))))", TrailingInput, 1, 26),
        (
            "(fn f (x) (eval (tensor (2 2) 1 2 3)))",
            TensorSize {
                expected: 4,
                found: 3,
            },
            1,
            36,
        ),
        (
            "(fn f (x) (eval (tensor (2 -1) 1)))",
            BadNumber("-1".into()),
            1,
            28,
        ),
        (
            "(fn f (x) (eval (tensor (2) 1 x)))",
            BadNumber("x".into()),
            1,
            31,
        ),
        ("(fn f (x) (eval (tensor 2 1)))", ExpectedOpen, 1, 25),
        (
            "(fn f (x) (eval (tensor (2) (1))))",
            BadNumber("(".into()),
            1,
            29,
        ),
        (
            "(fn f (x) (tensor (1) 1))",
            UnknownForm("tensor".into()),
            1,
            12,
        ),
    ];
    for (text, kind, line, column) in cases {
        let e = parse(text, &mut enum_ir::EnumBuilder).unwrap_err();
        assert_eq!(
            (e.kind(), e.line(), e.column()),
            (kind, *line, *column),
            "{text:?}: {e}"
        );
        let o = parse(text, &mut object_ir::ObjectBuilder).unwrap_err();
        assert_eq!(e, o);
    }
}

/// Runs `f` on a thread with a 2 MiB stack.
fn small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// `(fn f (v) PREFIX OPEN×depth LEAF )×depth SUFFIX)`.
fn nested(depth: usize, prefix: &str, open: &str, leaf: &str, suffix: &str) -> String {
    let mut s = format!("(fn f (v) {prefix}");
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push_str(leaf);
    s.extend(std::iter::repeat_n(')', depth));
    s.push_str(suffix);
    s.push(')');
    s
}

#[test]
#[cfg_attr(
    miri,
    ignore = "minutes per 40 levels under Miri; object-tests' deep_graphs and transform \
              targets take the deep paths under Miri"
)]
fn deep_programs_on_a_small_stack() {
    small_stack(|| {
        let depth = scaled(200_000, 2_000, 0);
        let cases = [
            // Statement lets, all dead: dead-let removes them all.
            (
                nested(depth, "", "(let w (+ v 1) ", "(eval v)", ""),
                "(fn f (v) (eval v))".to_owned(),
            ),
            // An expression 200,000 deep with no let in it: CSE bounds its hashing.
            (
                nested(depth, "(eval ", "(+ (* v 2) ", "(- 3 1)", ")"),
                nested(depth, "(eval (let _t0 (* v 2) ", "(+ _t0 ", "2", "))"),
            ),
            (
                nested(
                    depth,
                    "",
                    "(seq (eval v) ",
                    "(eval (let w (* v 2) (+ w (+ 1 2))))",
                    "",
                ),
                nested(
                    depth,
                    "",
                    "(seq (eval v) ",
                    "(eval (let w (* v 2) (+ w 3)))",
                    "",
                ),
            ),
        ];
        for (text, want) in cases {
            let e = parse(&text, &mut enum_ir::EnumBuilder).unwrap();
            let o = parse(&text, &mut object_ir::ObjectBuilder).unwrap();
            assert_eq!(object_ir::print(&o), text, "parse/print round trip");
            assert_eq!(enum_ir::print(&e), text, "parse/print round trip");
            let (e, o) = (enum_ir::fold_constants(&e), object_ir::fold_constants(&o));
            assert_eq!(enum_ir::print(&e), object_ir::print(&o));
            let (e, o) = (enum_ir::cse(&e), object_ir::cse(&o));
            assert_eq!(enum_ir::print(&e), object_ir::print(&o));
            let (e, o) = (
                enum_ir::eliminate_dead_lets(&e),
                object_ir::eliminate_dead_lets(&o),
            );
            assert_eq!(enum_ir::print(&e), want);
            assert_eq!(object_ir::print(&o), want);
            let json = object_ir::save_json(&o).unwrap();
            assert!(structural_equal(&object_ir::load_json(&json).unwrap(), &o));
        }
    });
}

/// A reference interpreter of the enum IR (recursive: for the small programs of the
/// tests only). An undefined operation (division by zero, overflow) gives a poison
/// value (`None`) that spreads through what uses it, so every program has a meaning:
/// the list of its stores, in order. Calls are pure: a hash of the name and arguments.
mod interp {
    use object_examples::frontend::enum_ir::{Expr, ExprNode, Function, Stmt, StmtNode};

    pub type Trace = Vec<(String, Option<i64>, Option<i64>)>;
    type Env = Vec<(u64, Option<i64>)>;

    fn eval(e: &Expr, env: &mut Env) -> Option<i64> {
        match &**e {
            ExprNode::Int(v) => Some(*v),
            // A tensor, as an integer: its number of values.
            ExprNode::Tensor(t) => Some(t.data.len() as i64),
            ExprNode::Var(v) => env
                .iter()
                .rev()
                .find(|(id, _)| *id == v.id())
                .and_then(|b| b.1),
            ExprNode::Binary(op, a, b) => {
                let (x, y) = (eval(a, env), eval(b, env));
                op.apply(x?, y?)
            }
            ExprNode::Not(a) => eval(a, env).map(|x| i64::from(x == 0)),
            ExprNode::Select(c, a, b) => {
                let (c, a, b) = (eval(c, env), eval(a, env), eval(b, env));
                if c? != 0 {
                    a
                } else {
                    b
                }
            }
            ExprNode::Let(v, value, body) => {
                let x = eval(value, env);
                env.push((v.id(), x));
                let r = eval(body, env);
                env.pop();
                r
            }
            ExprNode::Call(name, args) => {
                let mut acc = Some(name.len() as i64);
                for a in args {
                    let x = eval(a, env);
                    acc = acc
                        .zip(x)
                        .map(|(acc, x)| acc.wrapping_mul(31).wrapping_add(x));
                }
                acc
            }
        }
    }

    fn exec(s: &Stmt, env: &mut Env, trace: &mut Trace) {
        match &**s {
            StmtNode::Evaluate(e) => {
                eval(e, env);
            }
            StmtNode::LetStmt(v, value, body) => {
                let x = eval(value, env);
                env.push((v.id(), x));
                exec(body, env, trace);
                env.pop();
            }
            StmtNode::Store(buf, i, v) => {
                let (i, v) = (eval(i, env), eval(v, env));
                trace.push((buf.clone(), i, v));
            }
            StmtNode::Seq(stmts) => stmts.iter().for_each(|s| exec(s, env, trace)),
            StmtNode::IfThenElse(c, a, b) => match eval(c, env) {
                Some(0) => exec(b, env, trace),
                Some(_) => exec(a, env, trace),
                None => trace.push(("<poisoned if>".into(), None, None)),
            },
        }
    }

    pub fn run(f: &Function, args: &[i64]) -> Trace {
        let mut env: Env = f
            .params
            .iter()
            .zip(args)
            .map(|(p, a)| (p.id(), Some(*a)))
            .collect();
        let mut trace = Vec::new();
        exec(&f.body, &mut env, &mut trace);
        trace
    }
}

#[test]
fn passes_keep_the_meaning_of_generated_programs() {
    let mut stores = 0;
    for seed in 0..scaled(60, 4, 1) as u64 {
        let text = generate(40 + 40 * seed as usize, 1000 + seed);
        let p0 = parse(&text, &mut enum_ir::EnumBuilder).unwrap();
        let p1 = enum_ir::fold_constants(&p0);
        let p2 = enum_ir::cse(&p1);
        let p3 = enum_ir::eliminate_dead_lets(&p2);
        // Each pass alone, too, on the original.
        let alone = [enum_ir::cse(&p0), enum_ir::eliminate_dead_lets(&p0)];
        for args in [[0, 0, 0], [1, -2, 3], [7, 5, -1]] {
            let want = interp::run(&p0, &args);
            stores += want
                .iter()
                .filter(|s| s.1.is_some() && s.2.is_some())
                .count();
            for (name, p) in [
                ("fold", &p1),
                ("cse", &p2),
                ("dead-let", &p3),
                ("cse alone", &alone[0]),
                ("dead-let alone", &alone[1]),
            ] {
                assert_eq!(
                    interp::run(p, &args),
                    want,
                    "{name} changed the meaning of seed {seed}"
                );
            }
        }
    }
    if full_scale() {
        assert!(stores > 500, "the programs store defined values ({stores})");
    }
}

#[test]
fn views_list_every_node_type() {
    use object_ir::{ExprView, StmtView};
    // Every concrete expression and statement type of the example has its variant, so a
    // new node type makes the passes' `match`es fail to compile.
    assert!(
        ExprView::unlisted().is_empty(),
        "{:?}",
        ExprView::unlisted()
    );
    assert!(
        StmtView::unlisted().is_empty(),
        "{:?}",
        StmtView::unlisted()
    );
    ExprView::assert_exhaustive();
    StmtView::assert_exhaustive();
    let o = parse("(fn f (x) (eval (- x 1)))", &mut object_ir::ObjectBuilder).unwrap();
    let e = &o
        .body
        .downcast_ref::<object_ir::EvaluateNode>()
        .unwrap()
        .value;
    // One node type for every operator: the operator is its enum field.
    let ExprView::Binary(b) = e.view() else {
        panic!("a binary operator: {e:?}")
    };
    assert_eq!(b.op, object_examples::frontend::BinOpKind::Sub);
    assert_eq!(e.type_key(), "frontend.Binary");
    assert!(matches!(b.rhs.view(), ExprView::IntImm(i) if i.value == 1));
    assert!(matches!(b.lhs.view(), ExprView::Var(v) if v.name == "x"));
    assert!(matches!(o.body.view(), StmtView::Evaluate(_)));
    // The typed references convert along the hierarchy and back.
    let bin: object_ir::Binary = e.clone().downcast().expect("a Binary");
    assert!(bin.same_as(e));
    assert!(e.downcast_as::<object_ir::Let>().is_none());
}

#[test]
fn tensor_constants() {
    let text = "(fn f (x) (eval (call g (tensor (2 2) 1 0.5 -2 0.25) (tensor () 3) (tensor (0)))))";
    let s = stages(text);
    assert_eq!(s[0], text);
    let o = parse(text, &mut object_ir::ObjectBuilder).unwrap();
    let call = &o
        .body
        .downcast_ref::<object_ir::EvaluateNode>()
        .unwrap()
        .value;
    let call = call.downcast_ref::<object_ir::CallNode>().unwrap();
    let t = call.args.get(0).unwrap();
    let t: &object_ir::TensorImm = t.downcast_as().expect("a tensor constant");
    assert_eq!(t.value.shape(), [2, 2]);
    assert_eq!(t.values(), [1.0, 0.5, -2.0, 0.25]);
    // Saved in the JSON graph and loaded back, bytes and all.
    let back = object_ir::load_json(&object_ir::save_json(&o).unwrap()).unwrap();
    assert!(structural_equal(&back, &o));
    assert_eq!(object_ir::print(&back), text);
    // Values that print in many digits read back as the same `f32`.
    let odd = "(fn f () (eval (tensor (3) 0.1 -3.4028235e38 0.000001)))";
    let o = parse(odd, &mut object_ir::ObjectBuilder).unwrap();
    let e = parse(odd, &mut enum_ir::EnumBuilder).unwrap();
    let printed = object_ir::print(&o);
    assert_eq!(printed, enum_ir::print(&e));
    let again = parse(&printed, &mut object_ir::ObjectBuilder).unwrap();
    assert!(structural_equal(&again, &o));
    // Equal tensors are common subexpressions in both versions, different ones not.
    assert_eq!(
        expr_after("cse", "(+ (* x (tensor (2) 1 2)) (* x (tensor (2) 1 2)))"),
        "(let _t0 (* x (tensor (2) 1 2)) (+ _t0 _t0))"
    );
    assert_eq!(
        expr_after("cse", "(+ (* x (tensor (2) 1 2)) (* x (tensor (2) 1 -2)))"),
        "(+ (* x (tensor (2) 1 2)) (* x (tensor (2) 1 -2)))"
    );
    assert_eq!(
        expr_after("cse", "(+ (* x (tensor (2) 0 2)) (* x (tensor (2) -0 2)))"),
        "(+ (* x (tensor (2) 0 2)) (* x (tensor (2) -0 2)))"
    );
}

#[test]
fn the_enum_version_saves_and_loads_with_serde() {
    let text = generate(native_or_miri(3000, 60), 5);
    let e = parse(&text, &mut enum_ir::EnumBuilder).unwrap();
    let json = serde_json::to_string(&e).unwrap();
    // (Nested some 200 deep: past `serde_json`'s default limit of 128.)
    assert!(serde_json::from_str::<enum_ir::Function>(&json).is_err());
    let mut de = serde_json::Deserializer::from_str(&json);
    de.disable_recursion_limit();
    let back: enum_ir::Function = serde::Deserialize::deserialize(&mut de).unwrap();
    de.end().unwrap();
    assert_eq!(enum_ir::print(&back), enum_ir::print(&e));
    assert_eq!(back.body, e.body);
    // A variable made after the load is none of the loaded ones.
    let fresh = enum_ir::Var::new("z");
    assert!(back.params.iter().all(|p| p.id() < fresh.id()));
}

#[test]
fn generated_programs_hold_thousands_of_variables() {
    if !full_scale() {
        return;
    }
    let text = generate(250_000, 42);
    let e = parse(&text, &mut enum_ir::EnumBuilder).unwrap();
    // The distinct variables used inside `let`-free expressions (free there: what CSE
    // keys hold).
    let mut vars = std::collections::HashSet::new();
    let (mut tensors, mut nodes) = (0, 0);
    enum_ir::walk::visit_post(&enum_ir::Node::Stmt(e.body.clone()), |n, _: &[()]| {
        nodes += 1;
        if let enum_ir::Node::Expr(x) = n {
            match &**x {
                enum_ir::ExprNode::Var(v) => {
                    vars.insert(v.id());
                }
                enum_ir::ExprNode::Tensor(_) => tensors += 1,
                _ => {}
            }
        }
    });
    assert!(vars.len() > 2_000, "{} distinct variables", vars.len());
    assert!(tensors > 1_000, "{tensors} tensor constants");
    assert!(nodes > 200_000, "{nodes} nodes");
    // Folded, the program keeps most of its variables.
    let folded = enum_ir::fold_constants(&e);
    assert!(enum_ir::print(&folded).matches("x1").count() > 1_000);
}
