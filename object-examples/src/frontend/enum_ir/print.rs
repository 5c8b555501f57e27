//! The printer of the enum IR: the text syntax, with an explicit stack.

use super::{Expr, ExprNode, Function, Stmt, StmtNode};
use crate::frontend::syntax::write_tensor;

enum Item<'a> {
    E(&'a Expr),
    S(&'a Stmt),
    Text(&'a str),
}

/// Writes `(head` and schedules ` kid` for each kid, then `)`.
fn form<'a>(
    out: &mut String,
    stack: &mut Vec<Item<'a>>,
    head: &str,
    kids: impl IntoIterator<Item = Item<'a>>,
) {
    out.push('(');
    out.push_str(head);
    stack.push(Item::Text(")"));
    let at = stack.len();
    for k in kids {
        stack.push(Item::Text(" "));
        stack.push(k);
    }
    stack[at..].reverse();
}

/// Prints a program in the text syntax (one line); [`parse`](crate::frontend::parse)
/// reads it back.
pub fn print(f: &Function) -> String {
    let mut out = format!("(fn {} (", f.name);
    let params: Vec<&str> = f.params.iter().map(|p| p.name()).collect();
    out.push_str(&params.join(" "));
    out.push_str(") ");
    let mut stack = vec![Item::Text(")"), Item::S(&f.body)];
    while let Some(item) = stack.pop() {
        let (o, st) = (&mut out, &mut stack);
        match item {
            Item::Text(t) => o.push_str(t),
            Item::E(e) => match &**e {
                ExprNode::Int(v) => o.push_str(&v.to_string()),
                ExprNode::Tensor(t) => write_tensor(o, &t.shape, &t.data),
                ExprNode::Var(v) => o.push_str(v.name()),
                ExprNode::Binary(op, a, b) => form(o, st, op.symbol(), [Item::E(a), Item::E(b)]),
                ExprNode::Not(a) => form(o, st, "not", [Item::E(a)]),
                ExprNode::Select(c, a, b) => {
                    form(o, st, "select", [Item::E(c), Item::E(a), Item::E(b)])
                }
                ExprNode::Let(v, a, b) => {
                    form(o, st, "let", [Item::Text(v.name()), Item::E(a), Item::E(b)])
                }
                ExprNode::Call(name, args) => {
                    let kids = std::iter::once(Item::Text(name)).chain(args.iter().map(Item::E));
                    form(o, st, "call", kids)
                }
            },
            Item::S(s) => match &**s {
                StmtNode::Evaluate(a) => form(o, st, "eval", [Item::E(a)]),
                StmtNode::LetStmt(v, a, b) => {
                    form(o, st, "let", [Item::Text(v.name()), Item::E(a), Item::S(b)])
                }
                StmtNode::Store(buf, a, b) => {
                    form(o, st, "store", [Item::Text(buf), Item::E(a), Item::E(b)])
                }
                StmtNode::Seq(stmts) => form(o, st, "seq", stmts.iter().map(Item::S)),
                StmtNode::IfThenElse(c, a, b) => {
                    form(o, st, "if", [Item::E(c), Item::S(a), Item::S(b)])
                }
            },
        }
    }
    out
}
