//! The passes over the object IR: constant folding, CSE, dead-let elimination. Each is
//! one bottom-up [`rewrite`] (iterative) plus a `match` on the node's [`view`].

use std::collections::HashMap;

use object_core::prelude::*;
use object_core::structural::StructuralKey;

use super::walk::{expr, rewrite, stmt, view, visit_post, with_children, View};
use super::{function, int, let_, var, Expr, Function, IntImm, Let, Var};
use crate::frontend::MAX_CSE_HEIGHT;

fn on_body(
    f: &ObjectPtr<Function>,
    pass: impl FnOnce(ObjectRef) -> ObjectRef,
) -> ObjectPtr<Function> {
    let body = pass(f.body.clone().into_object_ref());
    if ObjectPtr::ptr_eq(&body, &f.body) {
        return f.clone();
    }
    function(&f.name, f.params.clone(), stmt(&body).clone())
}

/// Folds operators on constants (not where undefined: overflow, division by zero),
/// `not`, `select` and `if` on a constant condition. Unchanged subtrees are kept (the
/// very same objects).
pub fn fold_constants(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    on_body(f, |body| {
        rewrite(&body, |n, kids: &[(ObjectRef, ())]| {
            (fold(with_children(n, kids)), ())
        })
        .0
    })
}

fn fold(n: ObjectRef) -> ObjectRef {
    let konst = |e: &ObjectPtr<Expr>| e.downcast_ref::<IntImm>().map(|i| i.value);
    let folded = match view(&n) {
        View::Binary(op, x) => konst(&x.lhs)
            .zip(konst(&x.rhs))
            .and_then(|(a, b)| op.apply(a, b))
            .map(|v| int(v).into_object_ref()),
        View::Not(x) => konst(&x.a).map(|v| int(i64::from(v == 0)).into_object_ref()),
        View::Select(x) => konst(&x.cond).map(|c| {
            if c != 0 {
                &x.true_value
            } else {
                &x.false_value
            }
            .clone()
            .into_object_ref()
        }),
        View::If(x) => konst(&x.cond).map(|c| {
            if c != 0 { &x.then_case } else { &x.else_case }
                .clone()
                .into_object_ref()
        }),
        _ => None,
    };
    folded.unwrap_or(n)
}

/// Common-subexpression elimination: in each maximal `let`-free expression, every
/// subexpression (of height 1 to [`MAX_CSE_HEIGHT`]) that occurs more than once —
/// structurally, by [`StructuralKey`] — is bound once by a `let _tN` around that
/// expression, innermost first.
pub fn cse(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    let mut temps = 0;
    on_body(f, |body| {
        rewrite(&body, |n, kids: &[(ObjectRef, bool)]| {
            let let_free = n.is::<Expr>() && !n.is::<Let>() && kids.iter().all(|k| k.1);
            if let_free {
                return (with_children(n, kids), true);
            }
            let kids: Vec<ObjectRef> = kids
                .iter()
                .map(|(k, lf)| {
                    if *lf {
                        cse_tree(expr(k), &mut temps).into_object_ref()
                    } else {
                        k.clone()
                    }
                })
                .collect();
            (with_children(n, &kids), false)
        })
        .0
    })
}

type Key = StructuralKey<ObjectPtr<Expr>>;

fn height(kids: &[(ObjectRef, u32)]) -> u32 {
    kids.iter().map(|k| k.1 + 1).max().unwrap_or(0)
}

fn cse_tree(e: &ObjectPtr<Expr>, temps: &mut usize) -> ObjectPtr<Expr> {
    if e.is::<IntImm>() || e.is::<Var>() {
        return e.clone();
    }
    let mut counts: HashMap<Key, usize> = HashMap::new();
    let mut order = Vec::new();
    visit_post(e.as_object_ref(), |n, kids: &[u32]| {
        let h = kids.iter().map(|h| h + 1).max().unwrap_or(0);
        if (1..=MAX_CSE_HEIGHT).contains(&h) {
            let key = StructuralKey::new(expr(n).clone());
            let count = counts.entry(key.clone()).or_insert(0);
            if *count == 0 {
                order.push(key);
            }
            *count += 1;
        }
        h
    });
    let mut names: HashMap<Key, ObjectPtr<Var>> = HashMap::new();
    let mut lets = Vec::new();
    for key in order {
        if counts[&key] > 1 {
            let t = var(&format!("_t{temps}"));
            *temps += 1;
            lets.push((t.clone(), replace(key.get(), &names)));
            names.insert(key, t);
        }
    }
    let mut body = replace(e, &names);
    for (t, value) in lets.into_iter().rev() {
        body = let_(t, value, body);
    }
    body
}

/// `e` with each subexpression that `names` holds replaced by its variable.
fn replace(e: &ObjectPtr<Expr>, names: &HashMap<Key, ObjectPtr<Var>>) -> ObjectPtr<Expr> {
    if names.is_empty() {
        return e.clone();
    }
    let (out, _) = rewrite(e.as_object_ref(), |n, kids: &[(ObjectRef, u32)]| {
        let h = height(kids);
        let t = (1..=MAX_CSE_HEIGHT)
            .contains(&h)
            .then(|| names.get(&StructuralKey::new(expr(n).clone())))
            .flatten();
        match t {
            Some(t) => (t.clone().into_object_ref(), h),
            None => (with_children(n, kids), h),
        }
    });
    expr(&out).clone()
}

/// Removes every `let` (expression or statement) whose variable is not used, including
/// those whose only uses were in removed `let`s.
pub fn eliminate_dead_lets(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    let mut uses: HashMap<usize, isize> = HashMap::new();
    on_body(f, |body| {
        count_uses(&body, &mut uses, 1);
        rewrite(&body, |n, kids: &[(ObjectRef, ())]| {
            let n = with_children(n, kids);
            let dead = |v: &ObjectPtr<Var>| {
                uses.get(&(ObjectPtr::as_ptr(v) as usize))
                    .is_none_or(|&c| c == 0)
            };
            let removed = match view(&n) {
                View::Let(x) if dead(&x.var) => Some((
                    x.value.clone().into_object_ref(),
                    x.body.clone().into_object_ref(),
                )),
                View::LetStmt(x) if dead(&x.var) => Some((
                    x.value.clone().into_object_ref(),
                    x.body.clone().into_object_ref(),
                )),
                _ => None,
            };
            match removed {
                Some((value, body)) => {
                    count_uses(&value, &mut uses, -1);
                    (body, ())
                }
                None => (n, ()),
            }
        })
        .0
    })
}

fn count_uses(n: &ObjectRef, uses: &mut HashMap<usize, isize>, delta: isize) {
    visit_post(n, |n, _: &[()]| {
        if n.is::<Var>() {
            *uses.entry(ObjectPtr::as_ptr(n) as usize).or_insert(0) += delta;
        }
    });
}
