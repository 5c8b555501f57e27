//! The passes over the object IR: constant folding, CSE, dead-let elimination. Folding
//! and dead-let elimination are each one [`rewrite`] with the generic mutator plus a
//! `match` on the node's view; CSE is one post-order walk carrying a fact per node
//! (`let`-free or not, as the enum version's walk does), rebuilding a node from its
//! children's results with [`map_children`].

use std::collections::HashMap;

use foldhash::HashSet;

use object_core::prelude::*;
use object_core::structural::{StructuralHashCache, StructuralMap};
use object_core::transform::map_children;

use super::walk::{rewrite, rewrite_post, visit_post};
use super::{Call, Expr, ExprView, Function, IntImm, Let, LetStmt, Stmt, StmtView, Var};
use crate::frontend::MAX_CSE_HEIGHT;

/// Folds operators on constants (not where undefined: overflow, division by zero),
/// `not`, `select` and `if` on a constant condition. Unchanged subtrees are kept (the
/// very same objects).
pub fn fold_constants(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    rewrite_post(f, fold)
}

fn fold(n: ObjectRef) -> ObjectRef {
    let konst = |e: &ObjectPtr<Expr>| e.downcast_ref::<IntImm>().map(|i| i.value);
    let int = |v: i64| IntImm::new(v).into_object_ref();
    let folded = if let Some(e) = n.downcast_ptr_ref::<Expr>() {
        match e.view() {
            ExprView::Not(x) => konst(&x.a).map(|a| int(i64::from(a == 0))),
            ExprView::Select(x) => konst(&x.cond).map(|c| pick(c, &x.true_value, &x.false_value)),
            v => v
                .binary()
                .and_then(|(op, x)| op.apply(konst(&x.lhs)?, konst(&x.rhs)?))
                .map(int),
        }
    } else if let Some(StmtView::IfThenElse(x)) = n.downcast_ptr_ref::<Stmt>().map(|s| s.view()) {
        konst(&x.cond).map(|c| pick(c, &x.then_case, &x.else_case))
    } else {
        None
    };
    folded.unwrap_or(n)
}

fn pick<T: ObjectType>(c: i64, a: &ObjectPtr<T>, b: &ObjectPtr<T>) -> ObjectRef {
    if c != 0 { a } else { b }.clone().into_object_ref()
}

/// Common-subexpression elimination: in each maximal `let`-free expression, every
/// subexpression (of height 1 to [`MAX_CSE_HEIGHT`]) that occurs more than once —
/// structurally, keyed through a `StructuralHashCache` — is bound once by a `let _tN`
/// around that expression, innermost first.
pub fn cse(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    let (mut temps, mut hashes) = (0, StructuralHashCache::new());
    // Bottom-up, each node's result and whether it is `let`-free: an expression (or the
    // array of a call's arguments) without `let`s, left as it is.
    let (out, _) = visit_post(f.as_object_ref(), |n, kids: &[(ObjectRef, bool)]| {
        if !(n.is::<Stmt>() || n.is::<Let>() || n.is::<Function>()) && kids.iter().all(|k| k.1) {
            return (n.clone(), true);
        }
        let mut kids = kids.iter();
        let out = map_children(n, |c| match (kids.next(), c.downcast_ptr_ref::<Expr>()) {
            (Some((_, true)), Some(e)) => cse_tree(e, &mut temps, &mut hashes).upcast(),
            (Some((k, _)), _) => k.clone(),
            (None, _) => c.clone(),
        });
        (out.expect("an expression replaces an expression"), false)
    });
    out.downcast().expect("a function stays a function")
}

fn addr<T: ObjectType>(n: &ObjectPtr<T>) -> usize {
    ObjectPtr::as_ptr(n) as usize
}

/// Subexpressions by structure (hashed by their structural hash as it is).
type Subexprs<V> = StructuralMap<ObjectPtr<Expr>, V>;

fn cse_tree(
    e: &ObjectPtr<Expr>,
    temps: &mut usize,
    hashes: &mut StructuralHashCache,
) -> ObjectPtr<Expr> {
    if e.is::<IntImm>() || e.is::<Var>() {
        return e.clone();
    }
    let mut counts: Subexprs<usize> = Subexprs::default();
    let (mut order, mut small) = (Vec::new(), HashSet::default());
    // Bottom-up, so each key's hash takes its children's from the cache: O(n) in all
    // (emptied for each tree, its room kept).
    hashes.clear();
    visit_post(e.as_object_ref(), |n, kids: &[u32]| {
        let h = kids.iter().map(|h| h + 1).max().unwrap_or(0);
        // A call's arguments are one level down, in an array.
        let h = if n.is::<Call>() { h - 1 } else { h };
        if let (true, Some(n)) = (
            (1..=MAX_CSE_HEIGHT).contains(&h),
            n.downcast_ptr_ref::<Expr>(),
        ) {
            small.insert(addr(n));
            let key = hashes.key(n.clone());
            let count = counts.entry(key.clone()).or_insert(0);
            if *count == 0 {
                order.push(key);
            }
            *count += 1;
        }
        h
    });
    let mut names: Subexprs<ObjectPtr<Var>> = Subexprs::default();
    let mut lets = Vec::new();
    for key in order {
        if counts[&key] > 1 {
            let t = Var::new(format!("_t{temps}"));
            *temps += 1;
            lets.push((t.clone(), replace(key.get(), &names, &small, hashes)));
            names.insert(key, t);
        }
    }
    let mut body = replace(e, &names, &small, hashes);
    for (t, value) in lets.into_iter().rev() {
        body = Let::new(t, value, body).upcast();
    }
    body
}

/// `e` with each subexpression that `names` holds replaced by its variable (looked up
/// only for those of height 1 to [`MAX_CSE_HEIGHT`], the addresses in `small`).
fn replace(
    e: &ObjectPtr<Expr>,
    names: &Subexprs<ObjectPtr<Var>>,
    small: &HashSet<usize>,
    hashes: &mut StructuralHashCache,
) -> ObjectPtr<Expr> {
    if names.is_empty() {
        return e.clone();
    }
    let mut name = |n: &ObjectRef| match n.downcast_ptr_ref::<Expr>() {
        Some(n) if small.contains(&addr(n)) => names.get(&hashes.key(n.clone())),
        _ => None,
    };
    rewrite(e, |n| name(n).map(|t| t.clone().upcast()), |n| n)
}

/// Removes every `let` (expression or statement) whose variable is not used, including
/// those whose only uses were in removed `let`s.
pub fn eliminate_dead_lets(f: &ObjectPtr<Function>) -> ObjectPtr<Function> {
    let mut uses: HashMap<usize, isize> = HashMap::new();
    count_uses(f.body.as_object_ref(), &mut uses, 1);
    rewrite_post(f, |n| {
        let dead = |v: &ObjectPtr<Var>| uses.get(&addr(v)).is_none_or(|&c| c == 0);
        match binding(&n) {
            Some((v, value, body)) if dead(v) => {
                count_uses(value, &mut uses, -1);
                body.clone()
            }
            _ => n,
        }
    })
}

/// The variable, value and body of a `let` (expression or statement).
fn binding(n: &ObjectRef) -> Option<(&ObjectPtr<Var>, &ObjectRef, &ObjectRef)> {
    if let Some(x) = n.downcast_ref::<Let>() {
        return Some((&x.var, x.value.as_object_ref(), x.body.as_object_ref()));
    }
    let x = n.downcast_ref::<LetStmt>()?;
    Some((&x.var, x.value.as_object_ref(), x.body.as_object_ref()))
}

/// Adds `delta` to the count of each use of a variable under `n` (a binder is not a use).
fn count_uses(n: &ObjectRef, uses: &mut HashMap<usize, isize>, delta: isize) {
    visit_post(n, |n, _: &[()]| {
        if n.is::<Var>() {
            *uses.entry(addr(n)).or_insert(0) += delta;
        } else if let Some((v, _, _)) = binding(n) {
            *uses.entry(addr(v)).or_insert(0) -= delta;
        }
    });
}
