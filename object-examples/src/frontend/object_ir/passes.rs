//! The passes over the object IR: constant folding, CSE, dead-let elimination. Folding
//! and dead-let elimination are each one [`mutate`](object_core::transform::mutate)
//! with scoped hooks (`child` before a `let`'s body, `pre` of a variable, `post` of the
//! `let`); CSE is one post-order walk carrying a fact per node (`let`-free or not),
//! rebuilding a node from its children's results with [`map_children`], each maximal
//! `let`-free expression keyed through a `StructuralHashCache`.

use foldhash::{HashMap, HashSet};

use object_core::prelude::*;
use object_core::structural::{StructuralHashCache, StructuralMap};
use object_core::transform::{map_children, ChildField, ChildStep, Rewriter, TransformError};

use super::walk::{rewrite, run, visit_post};
use super::{
    CallNode, Expr, ExprNode, ExprView, Function, FunctionNode, IntImm, IntImmNode, Let, LetNode,
    LetStmtNode, StmtNode, StmtView, TensorImmNode, Var, VarNode,
};
use crate::frontend::MAX_CSE_HEIGHT;

fn addr(n: &ObjectRef) -> usize {
    ObjectRef::as_ptr(n) as usize
}

fn pick<T: TypedRef>(c: i64, a: &T, b: &T) -> ObjectRef {
    if c != 0 { a } else { b }.clone().into_object_ref()
}

/// Whether `n` is a constant (an integer or a tensor): a leaf a pass keeps as it is.
fn is_constant(n: &ObjectRef) -> bool {
    n.is::<IntImmNode>() || n.is::<TensorImmNode>()
}

/// The variable and body of a `let` (expression or statement).
fn binding(n: &ObjectRef) -> Option<(&Var, &ObjectRef)> {
    if let Some(x) = n.downcast_ref::<LetNode>() {
        return Some((&x.var, x.body.as_object_ref()));
    }
    let x = n.downcast_ref::<LetStmtNode>()?;
    Some((&x.var, x.body.as_object_ref()))
}

/// Constant folding: operators on constants (not where undefined: overflow, division
/// by zero), `not`, `select` and `if` on a constant condition; and a `let` whose folded
/// value is an integer constant is substituted into its body and removed. One walk:
/// unchanged subtrees are kept (the very same objects).
pub fn fold_constants(f: &Function) -> Function {
    run(f, &mut Fold::default())
}

/// The state of [`fold_constants`]: the variables bound to a constant (by address).
/// Each variable is bound once and used only under its binder, so the mutator's memo
/// (a variable's first use rewritten, the others given the same result) is right.
#[derive(Default)]
struct Fold {
    consts: HashMap<usize, ObjectRef>,
}

impl Rewriter for Fold {
    type Error = TransformError;

    #[inline]
    fn child(
        &mut self,
        parent: &ObjectRef,
        field: ChildField,
        _: &ObjectRef,
        earlier: &[ObjectRef],
    ) -> Result<ChildStep, TransformError> {
        if field.is_definition() {
            return Ok(ChildStep::Keep); // a binder is not a use
        }
        // Before a `let`'s body, `earlier` is its variable and its folded value.
        if let [var, value] = earlier {
            if value.is::<IntImmNode>() && binding(parent).is_some() {
                self.consts.insert(addr(var), value.clone());
            }
        }
        Ok(ChildStep::Visit)
    }

    #[inline]
    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
        if node.is::<VarNode>() {
            let value = self.consts.get(&addr(node));
            return Ok(Some(value.unwrap_or(node).clone()));
        }
        // A constant is a leaf: kept as it is, with no walk into it.
        Ok(is_constant(node).then(|| node.clone()))
    }

    #[inline]
    fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        Ok(self.fold(&n).unwrap_or(n))
    }

    /// No memo: a program is a tree but for its variables, which `pre` answers at each
    /// use. (The memo would take every node held elsewhere too — by the output of an
    /// earlier pass, which shares the unchanged parts — and keep a result for each.)
    #[inline]
    fn memoize(&mut self, _: &ObjectRef) -> bool {
        false
    }
}

impl Fold {
    /// What `n` (its children folded) folds to, if anything.
    #[inline]
    fn fold(&mut self, n: &ObjectRef) -> Option<ObjectRef> {
        let int = |v: i64| IntImm::new(v).into_object_ref();
        if let Some(e) = n.downcast_ptr_ref::<ExprNode>() {
            return match e.view() {
                ExprView::Binary(x) => x.fold().map(int),
                ExprView::Not(x) => x.a.as_int().map(|a| int(i64::from(a == 0))),
                ExprView::Select(x) => x
                    .cond
                    .as_int()
                    .map(|c| pick(c, &x.true_value, &x.false_value)),
                ExprView::Let(x) => self.substituted(&x.var).then(|| x.body.clone().into()),
                _ => None,
            };
        }
        match n.downcast_ptr_ref::<StmtNode>()?.view() {
            StmtView::IfThenElse(x) => x.cond.as_int().map(|c| pick(c, &x.then_case, &x.else_case)),
            StmtView::LetStmt(x) => self.substituted(&x.var).then(|| x.body.clone().into()),
            _ => None,
        }
    }

    /// Whether `v` was bound to a constant (substituted in its body: the `let` goes).
    fn substituted(&mut self, v: &Var) -> bool {
        self.consts.remove(&addr(v.as_object_ref())).is_some()
    }
}

/// Common-subexpression elimination: in each maximal `let`-free expression, every
/// subexpression (of height 1 to [`MAX_CSE_HEIGHT`]) that occurs more than once —
/// structurally, keyed through a `StructuralHashCache` — is bound once by a `let _tN`
/// around that expression, innermost first.
///
/// Deep keys, not shallow ones: the children of a subexpression are not canonical
/// (equal subtrees are distinct objects until this pass), which a shallow key needs.
/// The cache hashes each node once from its children's kept hashes (O(1) a key), and
/// the variables in a `let`-free expression are free there, hashed by identity: keys
/// over many distinct variables do not collide, so the pass stays linear.
pub fn cse(f: &Function) -> Function {
    let (mut temps, mut hashes) = (0, StructuralHashCache::new());
    // Bottom-up, each node's result and whether it is `let`-free: an expression (or the
    // array of a call's arguments) without `let`s, left as it is.
    let (out, _) = visit_post(f.as_object_ref(), |n, kids: &[(ObjectRef, bool)]| {
        let scope = n.is::<StmtNode>() || n.is::<LetNode>() || n.is::<FunctionNode>();
        if !scope && kids.iter().all(|k| k.1) {
            return (n.clone(), true);
        }
        let mut kids = kids.iter();
        let out = map_children(n, |c| {
            match (kids.next(), c.downcast_ptr_ref::<ExprNode>()) {
                (Some((_, true)), Some(e)) => {
                    let e = Expr::from_object_ptr_ref(e);
                    cse_tree(e, &mut temps, &mut hashes).into()
                }
                (Some((k, _)), _) => k.clone(),
                (None, _) => c.clone(),
            }
        });
        (out.expect("an expression replaces an expression"), false)
    });
    Function::try_from_object(out).expect("a function stays a function")
}

/// Subexpressions by structure (hashed by their structural hash as it is).
type Subexprs<V> = StructuralMap<Expr, V>;

fn cse_tree(e: &Expr, temps: &mut usize, hashes: &mut StructuralHashCache) -> Expr {
    if e.is_leaf() {
        return e.clone();
    }
    let mut counts: Subexprs<usize> = Subexprs::default();
    let (mut order, mut small) = (Vec::new(), HashSet::default());
    // Bottom-up, so each key's hash takes its children's from the cache: O(n) in all
    // (emptied for each tree, its room kept).
    hashes.clear();
    visit_post(e.as_object_ref(), |n, kids: &[u32]| {
        let h = kids.iter().map(|h| h + 1).max().unwrap_or(0);
        // A call's arguments are one level down, in an array; a tensor constant is a
        // leaf (its `NDArray` is no expression).
        let h = if n.is::<CallNode>() {
            h - 1
        } else if n.is::<TensorImmNode>() {
            0
        } else {
            h
        };
        if let (true, Some(n)) = (
            (1..=MAX_CSE_HEIGHT).contains(&h),
            n.downcast_ptr_ref::<ExprNode>(),
        ) {
            small.insert(addr(n.as_object_ref()));
            let key = hashes.key(Expr::from_object_ptr_ref(n).clone());
            let count = counts.entry(key.clone()).or_insert(0);
            if *count == 0 {
                order.push(key);
            }
            *count += 1;
        }
        h
    });
    let mut names: Subexprs<Var> = Subexprs::default();
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
        body = Let::new(t, value, body).into();
    }
    body
}

/// `e` with each subexpression that `names` holds replaced by its variable (looked up
/// only for those of height 1 to [`MAX_CSE_HEIGHT`], the addresses in `small`).
fn replace(
    e: &Expr,
    names: &Subexprs<Var>,
    small: &HashSet<usize>,
    hashes: &mut StructuralHashCache,
) -> Expr {
    if names.is_empty() {
        return e.clone();
    }
    let mut name = |n: &ObjectRef| match n.downcast_ptr_ref::<ExprNode>() {
        Some(p) if small.contains(&addr(n)) => {
            names.get(&hashes.key(Expr::from_object_ptr_ref(p).clone()))
        }
        _ => None,
    };
    rewrite(e, |n| name(n).map(|t| t.clone().into()), |n| n)
}

/// Removes every `let` (expression or statement) whose variable is not used, including
/// those whose only uses were in removed `let`s. One walk: uses are counted as they are
/// met (a binder, at a definition site, is no use), and at the end of a `let` whose
/// variable has none the `let` goes, and the uses in its value with it.
pub fn eliminate_dead_lets(f: &Function) -> Function {
    run(f, &mut DeadLets::default())
}

/// The state of [`eliminate_dead_lets`].
#[derive(Default)]
struct DeadLets {
    /// Uses met so far, by variable (its address), less those in removed values.
    uses: HashMap<usize, u32>,
    /// Every use met, in order (those in removed values taken out).
    log: Vec<usize>,
    /// The `let`s being visited, innermost last: where the uses of its value and of
    /// its body start in `log`.
    open: Vec<(usize, usize)>,
}

impl Rewriter for DeadLets {
    type Error = TransformError;

    #[inline]
    fn child(
        &mut self,
        parent: &ObjectRef,
        field: ChildField,
        _: &ObjectRef,
        _: &[ObjectRef],
    ) -> Result<ChildStep, TransformError> {
        if field.is_definition() {
            return Ok(ChildStep::Keep); // a binder is not a use
        }
        if binding(parent).is_some() {
            match field.name() {
                Some("value") => self.open.push((self.log.len(), self.log.len())),
                Some("body") => {
                    if let Some(open) = self.open.last_mut() {
                        open.1 = self.log.len();
                    }
                }
                _ => {}
            }
        }
        Ok(ChildStep::Visit)
    }

    #[inline]
    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
        if !node.is::<VarNode>() {
            return Ok(is_constant(node).then(|| node.clone()));
        }
        let v = addr(node);
        *self.uses.entry(v).or_default() += 1;
        self.log.push(v);
        Ok(Some(node.clone())) // a leaf: kept as it is
    }

    #[inline]
    fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        let Some((var, body)) = binding(&n) else {
            return Ok(n);
        };
        let (value_uses, body_uses) = self.open.pop().expect("opened at its value");
        if self
            .uses
            .get(&addr(var.as_object_ref()))
            .is_some_and(|&c| c > 0)
        {
            return Ok(n);
        }
        // Dead: the uses in its value go with it (those of the `let`s removed inside it
        // are gone from the log already).
        for gone in self.log.drain(value_uses..body_uses) {
            if let Some(c) = self.uses.get_mut(&gone) {
                *c -= 1;
            }
        }
        Ok(body.clone())
    }

    /// Uses are counted per occurrence: a shared subtree is visited at each.
    fn memoize(&mut self, _: &ObjectRef) -> bool {
        false
    }
}
