//! Common-subexpression elimination with structural keys: `(a*b) + (a*b)` becomes
//! `let t0 = a*b in t0 + t0`.
//!
//! Subexpressions are counted in a `HashMap<StructuralKey<E>, _>`, so two separately
//! built `a*b` nodes are one key; each repeated one is bound once by a `let` and its
//! occurrences replaced by the new variable. Variables are `structural = "var"` and a
//! `let` defines its variable (`#[object(def)]`), so results that differ only in the
//! names of their temporaries are structurally equal, and hash alike.
//!
//! Run it with `cargo run --release -p object-examples --bin cse`.

use std::collections::HashMap;

use object_core::prelude::*;
use object_core::structural::{structural_equal, structural_hash, StructuralKey};

#[derive(Object)]
#[repr(C)]
#[object(key = "cse.Expr", slots = 8, abstract)]
struct Expr {
    base: Object,
}

/// A variable: compared by binding, its name only a hint.
#[derive(Object)]
#[repr(C)]
#[object(key = "cse.Var", parent = Expr, final, structural = "var")]
struct Var {
    base: Expr,
    #[object(no_eq)]
    name: String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "cse.Int", parent = Expr, final)]
struct Int {
    base: Expr,
    value: i64,
}

/// `lhs op rhs`, `op` one of `+`, `*`.
#[derive(Object)]
#[repr(C)]
#[object(key = "cse.Bin", parent = Expr, final)]
struct Bin {
    base: Expr,
    op: String,
    lhs: E,
    rhs: E,
}

/// `let var = value in body`.
#[derive(Object)]
#[repr(C)]
#[object(key = "cse.Let", parent = Expr, final)]
struct Let {
    base: Expr,
    #[object(def)]
    var: E,
    value: E,
    body: E,
}

type E = ObjectPtr<Expr>;

// The generated constructors (`T::new`, parents' fields first) do the building.
fn var(name: &str) -> E {
    Var::new(name).upcast()
}
fn int(value: i64) -> E {
    Int::new(value).upcast()
}
fn bin(op: &str, lhs: E, rhs: E) -> E {
    Bin::new(op, lhs, rhs).upcast()
}
fn let_(var: E, value: E, body: E) -> E {
    Let::new(var, value, body).upcast()
}

fn show(x: &E) -> String {
    if let Some(v) = x.downcast_ref::<Var>() {
        v.name.clone()
    } else if let Some(i) = x.downcast_ref::<Int>() {
        i.value.to_string()
    } else if let Some(b) = x.downcast_ref::<Bin>() {
        format!("({} {} {})", show(&b.lhs), b.op, show(&b.rhs))
    } else if let Some(l) = x.downcast_ref::<Let>() {
        format!(
            "let {} = {} in {}",
            show(&l.var),
            show(&l.value),
            show(&l.body)
        )
    } else {
        "?".into()
    }
}

fn eval(x: &E, env: &[(E, i64)]) -> i64 {
    if let Some(i) = x.downcast_ref::<Int>() {
        i.value
    } else if let Some(b) = x.downcast_ref::<Bin>() {
        let (l, r) = (eval(&b.lhs, env), eval(&b.rhs, env));
        if b.op == "+" {
            l + r
        } else {
            l * r
        }
    } else if let Some(l) = x.downcast_ref::<Let>() {
        let value = eval(&l.value, env);
        let mut inner = env.to_vec();
        inner.push((l.var.clone(), value));
        eval(&l.body, &inner)
    } else {
        env.iter()
            .rev()
            .find(|(v, _)| ObjectPtr::ptr_eq(v, x))
            .map_or(0, |(_, value)| *value)
    }
}

/// Counts every compound subexpression by structure, children first.
fn count(x: &E, counts: &mut HashMap<StructuralKey<E>, usize>, order: &mut Vec<E>) {
    if let Some(b) = x.downcast_ref::<Bin>() {
        count(&b.lhs, counts, order);
        count(&b.rhs, counts, order);
        let n = counts.entry(StructuralKey::new(x.clone())).or_insert(0);
        if *n == 0 {
            order.push(x.clone());
        }
        *n += 1;
    }
}

/// `x` with every subexpression structurally equal to a key of `names` replaced by its
/// variable.
fn replace(x: &E, names: &HashMap<StructuralKey<E>, E>) -> E {
    if let Some(v) = names.get(&StructuralKey::new(x.clone())) {
        return v.clone();
    }
    match x.downcast_ref::<Bin>() {
        Some(b) => bin(&b.op, replace(&b.lhs, names), replace(&b.rhs, names)),
        None => x.clone(),
    }
}

/// Binds each repeated subexpression once, innermost first.
fn cse(x: &E) -> E {
    let mut counts = HashMap::new();
    let mut order = Vec::new();
    count(x, &mut counts, &mut order);
    let mut names: HashMap<StructuralKey<E>, E> = HashMap::new();
    let mut bindings = Vec::new();
    for sub in order {
        let key = StructuralKey::new(sub.clone());
        if counts[&key] > 1 {
            let t = var(&format!("t{}", bindings.len()));
            // The value itself may use earlier temporaries.
            bindings.push((t.clone(), replace(&sub, &names)));
            names.insert(key, t);
        }
    }
    let mut body = replace(x, &names);
    for (t, value) in bindings.into_iter().rev() {
        body = let_(t, value, body);
    }
    body
}

fn main() {
    let (a, b) = (var("a"), var("b"));
    // (a*b) + (a*b), the two products built separately.
    let prog = bin(
        "+",
        bin("*", a.clone(), b.clone()),
        bin("*", a.clone(), b.clone()),
    );
    let out = cse(&prog);
    println!("before: {}", show(&prog));
    println!("after:  {}", show(&out));
    assert_eq!(show(&out), "let t0 = (a * b) in (t0 + t0)");

    // The rewrite keeps the meaning.
    let env = [(a.clone(), 6), (b.clone(), 7)];
    assert_eq!(eval(&prog, &env), eval(&out, &env));
    println!("both evaluate to {} with a = 6, b = 7", eval(&out, &env));

    // A temporary's name does not matter: `let u = a*b in u + u` is the same program.
    let u = var("u");
    let by_hand = let_(
        u.clone(),
        bin("*", a.clone(), b.clone()),
        bin("+", u.clone(), u.clone()),
    );
    assert!(structural_equal(&out, &by_hand));
    assert_eq!(structural_hash(&out), structural_hash(&by_hand));
    println!("and it is structurally equal to `{}`", show(&by_hand));

    // Nested: ((a*b)+1) * ((a*b)+1) binds a*b, then the sum that uses it.
    let s = || bin("+", bin("*", a.clone(), b.clone()), int(1));
    let nested = cse(&bin("*", s(), s()));
    println!("nested: {}", show(&nested));
    assert_eq!(
        show(&nested),
        "let t0 = (a * b) in let t1 = (t0 + 1) in (t1 * t1)"
    );
    assert_eq!(eval(&nested, &env), 43 * 43);
}
