//! The printer of the object IR: the text syntax, with an explicit stack.

use object_core::prelude::*;

use super::{ExprNode, ExprView as E, Function, StmtNode, StmtView as S};
use crate::frontend::syntax::write_tensor;

enum Item<'a> {
    N(&'a ObjectRef),
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

fn n<T: TypedRef>(p: &T) -> Item<'_> {
    Item::N(p.as_object_ref())
}

/// A node of a type the printer does not know: `<key>`.
fn other(o: &mut String, node: &ObjectRef) {
    o.push('<');
    o.push_str(node.type_key());
    o.push('>');
}

/// Prints a program in the text syntax (one line); [`parse`](crate::frontend::parse)
/// reads it back.
pub fn print(f: &Function) -> String {
    let mut out = format!("(fn {} (", f.name);
    let params: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    out.push_str(&params.join(" "));
    out.push_str(") ");
    write_nodes(&mut out, vec![Item::Text(")"), n(&f.body)]);
    out
}

/// Prints any node of the IR: a program as [`print()`] does, an expression or a
/// statement in its own syntax (`(+ x 1)`, `(eval x)`); a node of another type as
/// `<key>`. A variable prints as its name.
///
/// ```
/// use object_core::TypedRef;
/// use object_examples::frontend::{parse, object_ir::{print_node, ObjectBuilder}};
/// let f = parse("(fn f (x) (eval (+ x 1)))", &mut ObjectBuilder).unwrap();
/// assert_eq!(print_node(f.as_object_ref()), "(fn f (x) (eval (+ x 1)))");
/// assert_eq!(print_node(f.body.as_object_ref()), "(eval (+ x 1))");
/// ```
pub fn print_node(node: &ObjectRef) -> String {
    if let Some(f) = node.downcast_ptr_ref::<super::FunctionNode>() {
        return print(Function::from_object_ptr_ref(f));
    }
    let mut out = String::new();
    write_nodes(&mut out, vec![Item::N(node)]);
    out
}

/// Writes the items of `stack`, last first, expanding each node into its form.
fn write_nodes<'a>(out: &mut String, mut stack: Vec<Item<'a>>) {
    while let Some(item) = stack.pop() {
        let (o, st) = (&mut *out, &mut stack);
        let node = match item {
            Item::Text(t) => {
                o.push_str(t);
                continue;
            }
            Item::N(node) => node,
        };
        if let Some(e) = node.downcast_ptr_ref::<ExprNode>() {
            match e.view() {
                E::IntImm(x) => o.push_str(&x.value.to_string()),
                E::TensorImm(x) => match x.value.as_slice::<f32>() {
                    Ok(data) => write_tensor(o, x.value.shape(), data),
                    Err(_) => other(o, node),
                },
                E::Binary(x) => form(o, st, x.op.symbol(), [n(&x.lhs), n(&x.rhs)]),
                E::Var(x) => o.push_str(&x.name),
                E::Not(x) => form(o, st, "not", [n(&x.a)]),
                E::Select(x) => form(
                    o,
                    st,
                    "select",
                    [n(&x.cond), n(&x.true_value), n(&x.false_value)],
                ),
                E::Let(x) => form(
                    o,
                    st,
                    "let",
                    [Item::Text(&x.var.name), n(&x.value), n(&x.body)],
                ),
                E::Call(x) => {
                    let kids = std::iter::once(Item::Text(&x.op)).chain(x.args.iter().map(n));
                    form(o, st, "call", kids)
                }
                E::Other(_) => other(o, node),
            }
        } else if let Some(s) = node.downcast_ptr_ref::<StmtNode>() {
            match s.view() {
                S::Evaluate(x) => form(o, st, "eval", [n(&x.value)]),
                S::LetStmt(x) => form(
                    o,
                    st,
                    "let",
                    [Item::Text(&x.var.name), n(&x.value), n(&x.body)],
                ),
                S::Store(x) => form(
                    o,
                    st,
                    "store",
                    [Item::Text(&x.buffer), n(&x.index), n(&x.value)],
                ),
                S::SeqStmt(x) => form(o, st, "seq", x.seq.iter().map(n)),
                S::IfThenElse(x) => {
                    form(o, st, "if", [n(&x.cond), n(&x.then_case), n(&x.else_case)])
                }
                S::Other(_) => other(o, node),
            }
        } else {
            other(o, node);
        }
    }
}
