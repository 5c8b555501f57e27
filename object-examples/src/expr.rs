//! The expression language: an `Expr` base (with reserved slots for node kinds that
//! plugins add later), `Var`, `IntImm`, a `BinOp` base for `Add`, `Sub` and `Mul`, and
//! `Function`. Printing and evaluation dispatch by matching with `downcast_ref`, the
//! way the RFC's `Process(Expr)` does in C++, and walk with stacks of their own, so that
//! no depth of expression overflows the thread's.

use std::fmt;

use object_containers::Array;
use object_core::{IntoObjectPtr, Object, ObjectPtr, ObjectRef};

/// The base of every expression. `slots = 16` leaves room for run-time node kinds;
/// `abstract`: only its subtypes are ever instantiated.
#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "tour.Expr", slots = 16, abstract)]
pub struct Expr {
    base: Object,
}

/// A variable, compared by identity (two `Var("x")` objects are different variables);
/// structurally, by binding (`structural = "var"`): parameters bound at a function map
/// to each other, so `fn(x) { x + 1 }` equals `fn(y) { y + 1 }`.
#[derive(Object)]
#[repr(C)]
#[object(key = "tour.Var", parent = Expr, final, structural = "var")]
pub struct Var {
    base: Expr,
    /// The name, for printing only (left out of structural equality).
    #[object(no_eq)]
    pub name: String,
}

/// An integer constant.
#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "tour.IntImm", parent = Expr, final)]
pub struct IntImm {
    base: Expr,
    /// The value.
    pub value: i64,
}

/// The base of binary operators; `is::<BinOp>()` is true for all of them. Abstract:
/// a `BinOp` object is always one of its subtypes (possibly one registered at run time,
/// built from [`BinOp::value`]).
#[derive(Object)]
#[repr(C)]
#[object(key = "tour.BinOp", parent = Expr, slots = 2, abstract)]
pub struct BinOp {
    base: Expr,
    /// Left operand.
    pub lhs: ObjectPtr<Expr>,
    /// Right operand.
    pub rhs: ObjectPtr<Expr>,
}

impl BinOp {
    /// A `BinOp` value (not an object): the whole of an operator that a plugin
    /// registers at run time, to be placed in an object with `make_object_as`.
    pub fn value(lhs: impl IntoObjectPtr<Expr>, rhs: impl IntoObjectPtr<Expr>) -> Self {
        BinOp {
            base: Expr {
                base: Object::new(),
            },
            lhs: lhs.into_object_ptr(),
            rhs: rhs.into_object_ptr(),
        }
    }
}

macro_rules! binop {
    ($(#[$doc:meta])* $name:ident, $key:literal, $ctor:ident, $sym:literal) => {
        $(#[$doc])*
        #[derive(Object)]
        #[repr(C)]
        #[object(key = $key, parent = BinOp, final)]
        pub struct $name {
            base: BinOp,
        }

        impl $name {
            /// The operator's symbol.
            pub const SYMBOL: &'static str = $sym;
        }

        #[doc = concat!("Builds `lhs ", $sym, " rhs`.")]
        pub fn $ctor(lhs: impl IntoObjectPtr<Expr>, rhs: impl IntoObjectPtr<Expr>) -> ObjectPtr<Expr> {
            $name::new(lhs, rhs).upcast()
        }
    };
}

binop!(
    /// `lhs + rhs`.
    Add, "tour.Add", add, "+"
);
binop!(
    /// `lhs - rhs`.
    Sub, "tour.Sub", sub, "-"
);
binop!(
    /// `lhs * rhs`.
    Mul, "tour.Mul", mul, "*"
);

/// A function: parameters and a body. A function is an expression too.
#[derive(Object)]
#[repr(C)]
#[object(key = "tour.Function", parent = Expr, final)]
pub struct Function {
    base: Expr,
    /// The parameters: an `ffi.Array` of `Var` nodes, defined here.
    #[object(def)]
    pub params: Array<ObjectPtr<Var>>,
    /// The body.
    pub body: ObjectPtr<Expr>,
}

/// A fresh variable.
pub fn var(name: &str) -> ObjectPtr<Var> {
    Var::new(name)
}

/// An integer constant.
pub fn int(value: i64) -> ObjectPtr<Expr> {
    IntImm::new(value).upcast()
}

/// A function.
pub fn function(
    params: impl IntoIterator<Item = ObjectPtr<Var>>,
    body: impl IntoObjectPtr<Expr>,
) -> ObjectPtr<Function> {
    Function::new(params.into_iter().collect::<Array<_>>(), body)
}

/// Prints an expression by matching on its dynamic type. It walks with a stack of its
/// own (what is left to print), so an expression of any depth prints.
pub fn print(e: &ObjectPtr<Expr>) -> String {
    /// What is left to print, last first.
    enum Part<'a> {
        Expr(&'a ObjectPtr<Expr>),
        Text(&'static str),
    }
    let mut out = String::new();
    let mut todo = vec![Part::Expr(e)];
    while let Some(part) = todo.pop() {
        let e = match part {
            Part::Text(t) => {
                out.push_str(t);
                continue;
            }
            Part::Expr(e) => e,
        };
        if let Some(v) = e.downcast_ref::<Var>() {
            out.push_str(&v.name);
        } else if let Some(i) = e.downcast_ref::<IntImm>() {
            out.push_str(&i.value.to_string());
        } else if let Some(b) = e.downcast_ref::<BinOp>() {
            out.push('(');
            todo.extend([
                Part::Text(")"),
                Part::Expr(&b.rhs),
                Part::Text(" "),
                Part::Text(symbol(e)),
                Part::Text(" "),
                Part::Expr(&b.lhs),
            ]);
        } else if let Some(f) = e.downcast_ref::<Function>() {
            let params: Vec<_> = f.params.iter().map(|p| p.name.as_str()).collect();
            out.push_str(&format!("fn({}) {{ ", params.join(", ")));
            todo.extend([Part::Text(" }"), Part::Expr(&f.body)]);
        } else {
            out.push_str(&format!("<{}>", e.type_key()));
        }
    }
    out
}

fn symbol(e: &ObjectPtr<Expr>) -> &'static str {
    if e.is::<Add>() {
        Add::SYMBOL
    } else if e.is::<Sub>() {
        Sub::SYMBOL
    } else if e.is::<Mul>() {
        Mul::SYMBOL
    } else {
        "?"
    }
}

/// Why evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// A variable with no binding.
    Unbound(String),
    /// Integer overflow.
    Overflow,
    /// A node kind the evaluator does not know (e.g. one a plugin registered).
    Unknown(&'static str),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unbound(v) => write!(f, "unbound variable `{v}`"),
            EvalError::Overflow => write!(f, "integer overflow"),
            EvalError::Unknown(k) => write!(f, "cannot evaluate a `{k}`"),
        }
    }
}

impl std::error::Error for EvalError {}

/// Variable bindings, looked up by the variable's identity.
#[derive(Debug, Default, Clone)]
pub struct Env(Vec<(ObjectPtr<Var>, i64)>);

impl Env {
    /// No bindings.
    pub fn new() -> Self {
        Env(Vec::new())
    }
    /// Adds a binding.
    pub fn bind(mut self, v: &ObjectPtr<Var>, value: i64) -> Self {
        self.0.push((v.clone(), value));
        self
    }
    fn get(&self, e: &ObjectPtr<Expr>) -> Option<i64> {
        self.0
            .iter()
            .rev()
            .find(|(v, _)| ObjectPtr::ptr_eq(v, e))
            .map(|(_, x)| *x)
    }
}

/// Evaluates an expression by matching on its dynamic type, the left operand of an
/// operator first. It walks with a stack of its own (the operators whose operands are
/// being evaluated), so an expression of any depth evaluates.
pub fn eval(e: &ObjectPtr<Expr>, env: &Env) -> Result<i64, EvalError> {
    /// An operator whose operands are being evaluated, and its left one's value once
    /// known.
    struct Pending<'a> {
        e: &'a ObjectPtr<Expr>,
        op: &'a BinOp,
        lhs: Option<i64>,
    }
    let mut pending: Vec<Pending<'_>> = Vec::new();
    let mut next = e;
    loop {
        // Down the left operands to a leaf.
        let mut value = if let Some(i) = next.downcast_ref::<IntImm>() {
            i.value
        } else if let Some(v) = next.downcast_ref::<Var>() {
            env.get(next)
                .ok_or_else(|| EvalError::Unbound(v.name.clone()))?
        } else if let Some(op) = next.downcast_ref::<BinOp>() {
            pending.push(Pending {
                e: next,
                op,
                lhs: None,
            });
            next = &op.lhs;
            continue;
        } else {
            return Err(EvalError::Unknown(next.type_key()));
        };
        // Up through the operators `value` completes, to one whose right operand is
        // next.
        loop {
            let Some(top) = pending.last_mut() else {
                return Ok(value);
            };
            let Some(l) = top.lhs else {
                top.lhs = Some(value);
                next = &top.op.rhs;
                break;
            };
            let e = top.e;
            pending.pop();
            value = apply(e, l, value)?;
        }
    }
}

/// The operator `e` applied to `l` and `r`.
fn apply(e: &ObjectPtr<Expr>, l: i64, r: i64) -> Result<i64, EvalError> {
    let out = if e.is::<Add>() {
        l.checked_add(r)
    } else if e.is::<Sub>() {
        l.checked_sub(r)
    } else if e.is::<Mul>() {
        l.checked_mul(r)
    } else {
        return Err(EvalError::Unknown(e.type_key()));
    };
    out.ok_or(EvalError::Overflow)
}

/// Calls a function with arguments.
pub fn call(f: &ObjectPtr<Function>, args: &[i64]) -> Result<i64, EvalError> {
    let env = f
        .params
        .iter()
        .zip(args)
        .fold(Env::new(), |env, (p, &a)| env.bind(p, a));
    eval(&f.body, &env)
}

/// Folds constant sub-expressions, reusing every node that does not change (so shared
/// sub-trees stay shared).
pub fn fold_constants(e: &ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    let Some(b) = e.downcast_ref::<BinOp>() else {
        return e.clone();
    };
    let (l, r) = (fold_constants(&b.lhs), fold_constants(&b.rhs));
    let constant = l.is::<IntImm>() && r.is::<IntImm>();
    let node = if ObjectPtr::ptr_eq(&l, &b.lhs) && ObjectPtr::ptr_eq(&r, &b.rhs) {
        e.clone()
    } else {
        rebuild(e, l, r)
    };
    match eval(&node, &Env::new()) {
        Ok(v) if constant => int(v),
        _ => node,
    }
}

fn rebuild(e: &ObjectPtr<Expr>, l: ObjectPtr<Expr>, r: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    if e.is::<Add>() {
        add(l, r)
    } else if e.is::<Sub>() {
        sub(l, r)
    } else {
        mul(l, r)
    }
}

/// Counts the distinct objects reachable from `e` (shared nodes once).
pub fn count_distinct(e: &ObjectPtr<Expr>) -> usize {
    fn walk(e: &ObjectPtr<Expr>, seen: &mut Vec<ObjectRef>) {
        if seen.iter().any(|s| ObjectPtr::ptr_eq(s, e)) {
            return;
        }
        seen.push(e.clone().into_object_ref());
        if let Some(b) = e.downcast_ref::<BinOp>() {
            walk(&b.lhs, seen);
            walk(&b.rhs, seen);
        }
    }
    let mut seen = Vec::new();
    walk(e, &mut seen);
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_and_prints() {
        let x = var("x");
        let y = var("y");
        let body = mul(add(x.clone(), int(3)), sub(y.clone(), x.clone()));
        let f = function(vec![x.clone(), y.clone()], body);
        assert_eq!(
            print(&f.clone().upcast()),
            "fn(x, y) { ((x + 3) * (y - x)) }"
        );
        assert_eq!(call(&f, &[2, 10]), Ok(40));
        assert_eq!(call(&f, &[2]), Err(EvalError::Unbound("y".into())));
        assert_eq!(
            eval(&f.upcast(), &Env::new()),
            Err(EvalError::Unknown("tour.Function"))
        );
        assert_eq!(
            eval(&mul(int(i64::MAX), int(2)), &Env::new()),
            Err(EvalError::Overflow)
        );
    }

    #[test]
    fn deep_expressions_evaluate_and_print_without_recursion() {
        // Nested on the left and on the right by turns, deeper than a test thread's
        // stack holds frames for (natively; under Miri, which interprets every step, a
        // few hundred levels check the same loops).
        let x = var("x");
        let mut e: ObjectPtr<Expr> = x.clone().upcast();
        let mut expected = 4i64;
        let depth = if cfg!(miri) { 300 } else { 100_000 };
        for i in 0..depth {
            if i % 2 == 0 {
                e = add(e, int(1));
                expected += 1;
            } else {
                e = sub(int(2), e);
                expected = 2 - expected;
            }
        }
        assert_eq!(eval(&e, &Env::new().bind(&x, 4)), Ok(expected));
        assert_eq!(eval(&e, &Env::new()), Err(EvalError::Unbound("x".into())));
        let f = function(vec![x.clone()], e);
        assert_eq!(call(&f, &[4]), Ok(expected));
        let text = print(&f.upcast());
        assert!(
            text.starts_with("fn(x) { (2 - ((2 - ((2 - "),
            "{}",
            &text[..40]
        );
        assert!(
            text.ends_with(" + 1)) + 1)) }"),
            "{}",
            &text[text.len() - 40..]
        );
        assert!(text.contains("(2 - ((2 - (x + 1)) + 1)) + 1)"));
        assert_eq!(text.matches('(').count(), depth + 1);
    }

    #[test]
    fn folding_keeps_sharing() {
        let x: ObjectPtr<Expr> = var("x").upcast();
        let e = add(mul(int(2), int(3)), x.clone());
        let folded = fold_constants(&e);
        assert_eq!(print(&folded), "(6 + x)");
        let b = folded.downcast_ref::<BinOp>().unwrap();
        assert!(ObjectPtr::ptr_eq(&b.rhs, &x));
        let untouched = add(x.clone(), x.clone());
        assert!(ObjectPtr::ptr_eq(&fold_constants(&untouched), &untouched));
        assert_eq!(count_distinct(&untouched), 2);
    }
}
