//! The passes over the enum IR: constant folding, CSE, dead-let elimination. Each is
//! one bottom-up [`rewrite`] (iterative) plus a `match` per node.

use std::collections::HashMap;
use std::sync::Arc;

use super::walk::{rewrite, visit_post, with_children};
use super::{int, Expr, ExprNode, Function, Node, StmtNode, Var};
use crate::frontend::MAX_CSE_HEIGHT;

fn on_body(f: &Function, pass: impl FnOnce(Node) -> Node) -> Function {
    let body = pass(Node::Stmt(f.body.clone())).stmt().clone();
    Function { body, ..f.clone() }
}

/// Folds operators on constants (not where undefined: overflow, division by zero),
/// `not`, `select` and `if` on a constant condition. Unchanged subtrees are kept.
pub fn fold_constants(f: &Function) -> Function {
    on_body(f, |body| {
        rewrite(&body, |n, kids: &[(Node, ())]| {
            (fold(with_children(n, kids)), ())
        })
        .0
    })
}

fn fold(n: Node) -> Node {
    let konst = |e: &Expr| match **e {
        ExprNode::Int(v) => Some(v),
        _ => None,
    };
    let folded = match &n {
        Node::Expr(e) => match &**e {
            ExprNode::Binary(op, a, b) => konst(a)
                .zip(konst(b))
                .and_then(|(x, y)| op.apply(x, y))
                .map(int),
            ExprNode::Not(a) => konst(a).map(|x| int(i64::from(x == 0))),
            ExprNode::Select(c, a, b) => konst(c).map(|x| if x != 0 { a } else { b }.clone()),
            _ => None,
        }
        .map(Node::Expr),
        Node::Stmt(s) => match &**s {
            StmtNode::IfThenElse(c, a, b) => {
                konst(c).map(|x| Node::Stmt(if x != 0 { a } else { b }.clone()))
            }
            _ => None,
        },
    };
    folded.unwrap_or(n)
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
    if matches!(**e, ExprNode::Int(_) | ExprNode::Var(_)) {
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
/// those whose only uses were in removed `let`s.
pub fn eliminate_dead_lets(f: &Function) -> Function {
    let mut uses: HashMap<u64, isize> = HashMap::new();
    on_body(f, |body| {
        count_uses(&body, &mut uses, 1);
        rewrite(&body, |n, kids: &[(Node, ())]| {
            let n = with_children(n, kids);
            let dead = |v: &Var| uses.get(&v.id()).is_none_or(|&c| c == 0);
            let removed = match &n {
                Node::Expr(e) => match &**e {
                    ExprNode::Let(v, value, body) if dead(v) => {
                        Some((Node::Expr(value.clone()), Node::Expr(body.clone())))
                    }
                    _ => None,
                },
                Node::Stmt(s) => match &**s {
                    StmtNode::LetStmt(v, value, body) if dead(v) => {
                        Some((Node::Expr(value.clone()), Node::Stmt(body.clone())))
                    }
                    _ => None,
                },
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

fn count_uses(n: &Node, uses: &mut HashMap<u64, isize>, delta: isize) {
    visit_post(n, |n, _: &[()]| {
        if let Node::Expr(e) = n {
            if let ExprNode::Var(v) = &**e {
                *uses.entry(v.id()).or_insert(0) += delta;
            }
        }
    });
}
