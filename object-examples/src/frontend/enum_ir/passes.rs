//! The passes over the enum IR: constant folding, CSE, dead-let elimination. Each is
//! one bottom-up walk (iterative) plus a `match` per node; folding and dead-let
//! elimination also act at the scopes of `let`s ([`Pass::scope`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::walk::{rewrite, visit_post, walk, with_children, Pass};
use super::{int, Expr, ExprNode, Function, Node, StmtNode, Var};
use crate::frontend::MAX_CSE_HEIGHT;

fn on_body(f: &Function, pass: impl FnOnce(Node) -> Node) -> Function {
    let body = pass(Node::Stmt(f.body.clone())).stmt().clone();
    Function { body, ..f.clone() }
}

/// Constant folding: operators on constants (not where undefined: overflow, division
/// by zero), `not`, `select` and `if` on a constant condition; and a `let` whose folded
/// value is an integer constant is substituted into its body and removed. One walk:
/// unchanged subtrees are kept.
pub fn fold_constants(f: &Function) -> Function {
    on_body(f, |body| walk(&body, &mut Fold::default()))
}

/// The state of [`fold_constants`]: the variables bound to a constant (by id).
#[derive(Default)]
struct Fold {
    consts: foldhash::HashMap<u64, Expr>,
}

impl Pass for Fold {
    type Fact = Node;

    #[inline]
    fn scope(&mut self, binder: &Node, child: usize, earlier: &[Node]) {
        // Before the body, with the folded value in hand.
        if let (1, Some((v, _, _)), [Node::Expr(value)]) = (child, binder.binding(), earlier) {
            if value.as_int().is_some() {
                self.consts.insert(v.id(), value.clone());
            }
        }
    }

    #[inline]
    fn post(&mut self, n: &Node, kids: &[Node]) -> Node {
        let n = with_children(n, kids);
        self.fold(&n).unwrap_or(n)
    }
}

impl Fold {
    /// What `n` (its children folded) folds to, if anything.
    #[inline]
    fn fold(&mut self, n: &Node) -> Option<Node> {
        let pick = |c: i64, a: &Expr, b: &Expr| if c != 0 { a } else { b }.clone();
        match n {
            Node::Expr(e) => match &**e {
                ExprNode::Var(v) => self.consts.get(&v.id()).cloned(),
                ExprNode::Binary(op, a, b) => op.apply(a.as_int()?, b.as_int()?).map(int),
                ExprNode::Not(a) => a.as_int().map(|x| int(i64::from(x == 0))),
                ExprNode::Select(c, a, b) => c.as_int().map(|x| pick(x, a, b)),
                ExprNode::Let(v, _, body) => self.consts.remove(&v.id()).map(|_| body.clone()),
                _ => None,
            }
            .map(Node::Expr),
            Node::Stmt(s) => match &**s {
                StmtNode::IfThenElse(c, a, b) => {
                    c.as_int().map(|x| if x != 0 { a } else { b }.clone())
                }
                StmtNode::LetStmt(v, _, body) => self.consts.remove(&v.id()).map(|_| body.clone()),
                _ => None,
            }
            .map(Node::Stmt),
        }
    }
}

/// Common-subexpression elimination: in each maximal `let`-free expression, every
/// subexpression (of height 1 to [`MAX_CSE_HEIGHT`]) that occurs more than once is
/// bound once by a `let _tN` around that expression, innermost first.
pub fn cse(f: &Function) -> Function {
    let mut temps = 0;
    on_body(f, |body| {
        rewrite(&body, |n, kids: &[(Node, bool)]| {
            let let_free = matches!(n, Node::Expr(e) if !matches!(**e, ExprNode::Let(..)))
                && kids.iter().all(|k| k.1);
            if let_free {
                return (with_children(n, kids), true);
            }
            let kids: Vec<Node> = kids
                .iter()
                .map(|(k, lf)| {
                    if *lf {
                        Node::Expr(cse_tree(k.expr(), &mut temps))
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

fn height(kids: &[(Node, u32)]) -> u32 {
    kids.iter().map(|k| k.1 + 1).max().unwrap_or(0)
}

fn cse_tree(e: &Expr, temps: &mut usize) -> Expr {
    if e.is_leaf() {
        return e.clone();
    }
    let mut counts: HashMap<Expr, usize> = HashMap::new();
    let mut order = Vec::new();
    visit_post(&Node::Expr(e.clone()), |n, kids: &[u32]| {
        let h = kids.iter().map(|h| h + 1).max().unwrap_or(0);
        if (1..=MAX_CSE_HEIGHT).contains(&h) {
            let count = counts.entry(n.expr().clone()).or_insert(0);
            if *count == 0 {
                order.push(n.expr().clone());
            }
            *count += 1;
        }
        h
    });
    let mut names: HashMap<Expr, Var> = HashMap::new();
    let mut lets = Vec::new();
    for sub in order {
        if counts[&sub] > 1 {
            let t = Var::new(&format!("_t{temps}"));
            *temps += 1;
            lets.push((t.clone(), replace(&sub, &names)));
            names.insert(sub, t);
        }
    }
    let mut body = replace(e, &names);
    for (t, value) in lets.into_iter().rev() {
        body = Arc::new(ExprNode::Let(t, value, body));
    }
    body
}

/// `e` with each subexpression that `names` holds replaced by its variable.
fn replace(e: &Expr, names: &HashMap<Expr, Var>) -> Expr {
    if names.is_empty() {
        return e.clone();
    }
    let (out, _) = rewrite(&Node::Expr(e.clone()), |n, kids: &[(Node, u32)]| {
        let h = height(kids);
        let t = (1..=MAX_CSE_HEIGHT)
            .contains(&h)
            .then(|| names.get(n.expr()))
            .flatten();
        match t {
            Some(t) => (Node::Expr(Arc::new(ExprNode::Var(t.clone()))), h),
            None => (with_children(n, kids), h),
        }
    });
    out.expr().clone()
}

/// Removes every `let` (expression or statement) whose variable is not used, including
/// those whose only uses were in removed `let`s. One walk: uses are counted as they are
/// met, and at the end of a `let` whose variable has none the `let` goes, and the uses
/// in its value with it.
pub fn eliminate_dead_lets(f: &Function) -> Function {
    on_body(f, |body| walk(&body, &mut DeadLets::default()))
}

/// The state of [`eliminate_dead_lets`].
#[derive(Default)]
struct DeadLets {
    /// Uses met so far, by variable id, less those in removed values.
    uses: foldhash::HashMap<u64, u32>,
    /// Every use met, in order (those in removed values taken out).
    log: Vec<u64>,
    /// The `let`s being visited, innermost last: where the uses of its value and of
    /// its body start in `log`.
    open: Vec<(usize, usize)>,
}

impl Pass for DeadLets {
    type Fact = Node;

    #[inline]
    fn scope(&mut self, _: &Node, child: usize, _: &[Node]) {
        let at = self.log.len();
        match (child, self.open.last_mut()) {
            (0, _) => self.open.push((at, at)),
            (_, Some(open)) => open.1 = at,
            (_, None) => {}
        }
    }

    #[inline]
    fn post(&mut self, n: &Node, kids: &[Node]) -> Node {
        if let Node::Expr(e) = n {
            if let ExprNode::Var(v) = &**e {
                *self.uses.entry(v.id()).or_default() += 1;
                self.log.push(v.id());
                return n.clone();
            }
        }
        let n = with_children(n, kids);
        let Some((v, _, body)) = n.binding() else {
            return n;
        };
        let (value_uses, body_uses) = self.open.pop().expect("opened at its value");
        if self.uses.get(&v.id()).is_some_and(|&c| c > 0) {
            return n;
        }
        // Dead: the uses in its value go with it (those of the `let`s removed inside it
        // are gone from the log already).
        for gone in self.log.drain(value_uses..body_uses) {
            if let Some(c) = self.uses.get_mut(&gone) {
                *c -= 1;
            }
        }
        body
    }
}
