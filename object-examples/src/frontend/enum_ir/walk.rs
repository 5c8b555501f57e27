//! The iterative walker of the enum IR: children of a node, rebuilding a node from
//! rewritten children (only when one changed), and a post-order walk with an explicit
//! work stack that passes use to rewrite or to compute bottom-up facts ([`walk`] with
//! a [`Pass`], which also hears of scopes: before a `let`'s value and before its body).

use std::marker::PhantomData;
use std::sync::Arc;

use super::{Expr, ExprNode, Node, Stmt, StmtNode, Var};

impl Node {
    /// The expression; a statement here is a bug in a rewrite (a statement returned
    /// for an expression), and panics.
    pub fn expr(&self) -> &Expr {
        match self {
            Node::Expr(e) => e,
            Node::Stmt(_) => panic!("a statement where an expression belongs"),
        }
    }
    /// The statement; panics on an expression (see [`Node::expr`]).
    pub fn stmt(&self) -> &Stmt {
        match self {
            Node::Stmt(s) => s,
            Node::Expr(_) => panic!("an expression where a statement belongs"),
        }
    }

    /// The variable, value and body of a `let` (expression or statement).
    pub fn binding(&self) -> Option<(&Var, &Expr, Node)> {
        match self {
            Node::Expr(e) => match &**e {
                ExprNode::Let(v, value, body) => Some((v, value, Node::Expr(body.clone()))),
                _ => None,
            },
            Node::Stmt(s) => match &**s {
                StmtNode::LetStmt(v, value, body) => Some((v, value, Node::Stmt(body.clone()))),
                _ => None,
            },
        }
    }
}

/// A walk result that carries a node (the rewritten child).
pub trait HasNode {
    /// The node.
    fn node(&self) -> &Node;
}
impl HasNode for Node {
    fn node(&self) -> &Node {
        self
    }
}
impl<A> HasNode for (Node, A) {
    fn node(&self) -> &Node {
        &self.0
    }
}

/// Calls `f` with each child of `n`, in order (a binder is not a child).
pub fn for_each_child(n: &Node, mut f: impl FnMut(Node)) {
    let e = |x: &Expr| Node::Expr(x.clone());
    let s = |x: &Stmt| Node::Stmt(x.clone());
    match n {
        Node::Expr(x) => match &**x {
            ExprNode::Int(_) | ExprNode::Tensor(_) | ExprNode::Var(_) => {}
            ExprNode::Binary(_, a, b) | ExprNode::Let(_, a, b) => {
                f(e(a));
                f(e(b));
            }
            ExprNode::Not(a) => f(e(a)),
            ExprNode::Select(a, b, c) => {
                f(e(a));
                f(e(b));
                f(e(c));
            }
            ExprNode::Call(_, args) => args.iter().for_each(|a| f(e(a))),
        },
        Node::Stmt(x) => match &**x {
            StmtNode::Evaluate(a) => f(e(a)),
            StmtNode::LetStmt(_, a, b) => {
                f(e(a));
                f(s(b));
            }
            StmtNode::Store(_, a, b) => {
                f(e(a));
                f(e(b));
            }
            StmtNode::Seq(stmts) => stmts.iter().for_each(|b| f(s(b))),
            StmtNode::IfThenElse(c, a, b) => {
                f(e(c));
                f(s(a));
                f(s(b));
            }
        },
    }
}

/// `n` with its children replaced by `kids` (in [`for_each_child`]'s order): `n`
/// itself if every child is the same `Arc`, else a new node.
pub fn with_children<K: HasNode>(n: &Node, kids: &[K]) -> Node {
    let same = |i: usize, old: &Expr| Arc::ptr_eq(kids[i].node().expr(), old);
    let same_s = |i: usize, old: &Stmt| Arc::ptr_eq(kids[i].node().stmt(), old);
    let ke = |i: usize| kids[i].node().expr().clone();
    let ks = |i: usize| kids[i].node().stmt().clone();
    match n {
        Node::Expr(x) => Node::Expr(match &**x {
            ExprNode::Int(_) | ExprNode::Tensor(_) | ExprNode::Var(_) => return n.clone(),
            ExprNode::Binary(op, a, b) if !(same(0, a) && same(1, b)) => {
                Arc::new(ExprNode::Binary(*op, ke(0), ke(1)))
            }
            ExprNode::Let(v, a, b) if !(same(0, a) && same(1, b)) => {
                Arc::new(ExprNode::Let(v.clone(), ke(0), ke(1)))
            }
            ExprNode::Not(a) if !same(0, a) => Arc::new(ExprNode::Not(ke(0))),
            ExprNode::Select(a, b, c) if !(same(0, a) && same(1, b) && same(2, c)) => {
                Arc::new(ExprNode::Select(ke(0), ke(1), ke(2)))
            }
            ExprNode::Call(name, args) if !args.iter().enumerate().all(|(i, a)| same(i, a)) => {
                Arc::new(ExprNode::Call(
                    name.clone(),
                    (0..args.len()).map(ke).collect(),
                ))
            }
            _ => return n.clone(),
        }),
        Node::Stmt(x) => Node::Stmt(match &**x {
            StmtNode::Evaluate(a) if !same(0, a) => Arc::new(StmtNode::Evaluate(ke(0))),
            StmtNode::LetStmt(v, a, b) if !(same(0, a) && same_s(1, b)) => {
                Arc::new(StmtNode::LetStmt(v.clone(), ke(0), ks(1)))
            }
            StmtNode::Store(buf, a, b) if !(same(0, a) && same(1, b)) => {
                Arc::new(StmtNode::Store(buf.clone(), ke(0), ke(1)))
            }
            StmtNode::Seq(stmts) if !stmts.iter().enumerate().all(|(i, b)| same_s(i, b)) => {
                Arc::new(StmtNode::Seq((0..stmts.len()).map(ks).collect()))
            }
            StmtNode::IfThenElse(c, a, b) if !(same(0, c) && same_s(1, a) && same_s(2, b)) => {
                Arc::new(StmtNode::IfThenElse(ke(0), ks(1), ks(2)))
            }
            _ => return n.clone(),
        }),
    }
}

/// A pass over [`walk`]: a fact per node, bottom-up, and the scopes of `let`s.
pub trait Pass {
    /// What a node's visit gives its parent.
    type Fact;

    /// Called before each child of a `let` (expression or statement): its value
    /// (`child` 0), then its body (`child` 1, with the value's fact in `earlier`).
    fn scope(&mut self, binder: &Node, child: usize, earlier: &[Self::Fact]) {
        let _ = (binder, child, earlier);
    }

    /// Called after `n`'s children, with their facts (in [`for_each_child`]'s order).
    fn post(&mut self, n: &Node, kids: &[Self::Fact]) -> Self::Fact;
}

/// Walks the tree under `root` in post-order with an explicit stack, calling the
/// pass's hooks; returns the root's fact. A shared subtree is walked once per
/// occurrence.
///
/// ```
/// use object_examples::frontend::enum_ir::walk::{walk, Pass};
/// use object_examples::frontend::enum_ir::{EnumBuilder, Node};
/// use object_examples::frontend::parse;
///
/// /// Counts the nodes, and the `let` bodies entered.
/// struct Count {
///     bodies: usize,
/// }
/// impl Pass for Count {
///     type Fact = usize;
///     fn scope(&mut self, _: &Node, child: usize, earlier: &[usize]) {
///         assert_eq!(earlier.len(), child); // the value's fact, before the body
///         self.bodies += usize::from(child == 1);
///     }
///     fn post(&mut self, _: &Node, kids: &[usize]) -> usize {
///         1 + kids.iter().sum::<usize>()
///     }
/// }
/// let f = parse("(fn f (x) (let y (+ x 1) (eval (let z y z))))", &mut EnumBuilder).unwrap();
/// let mut count = Count { bodies: 0 };
/// assert_eq!(walk(&Node::Stmt(f.body.clone()), &mut count), 8);
/// assert_eq!(count.bodies, 2);
/// ```
pub fn walk<P: Pass>(root: &Node, pass: &mut P) -> P::Fact {
    enum Task {
        Enter(Node),
        Scope(Node, usize),
        Exit(Node, usize),
    }
    let mut tasks = vec![Task::Enter(root.clone())];
    let mut results: Vec<P::Fact> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(n) => {
                if let Some((_, value, body)) = n.binding() {
                    let value = Node::Expr(value.clone());
                    tasks.push(Task::Exit(n.clone(), 2));
                    tasks.push(Task::Enter(body));
                    tasks.push(Task::Scope(n.clone(), 1));
                    tasks.push(Task::Enter(value));
                    tasks.push(Task::Scope(n, 0));
                    continue;
                }
                let at = tasks.len();
                let mut count = 0;
                for_each_child(&n, |c| {
                    tasks.push(Task::Enter(c));
                    count += 1;
                });
                tasks[at..].reverse();
                tasks.insert(at, Task::Exit(n, count));
            }
            Task::Scope(n, i) => pass.scope(&n, i, &results[results.len() - i..]),
            Task::Exit(n, count) => {
                let start = results.len() - count;
                let r = pass.post(&n, &results[start..]);
                results.truncate(start);
                results.push(r);
            }
        }
    }
    match results.pop() {
        Some(r) => r,
        None => unreachable!("the root's result is always pushed"),
    }
}

/// A closure as a [`Pass`] without scopes.
struct Post<F, A>(F, PhantomData<fn() -> A>);

impl<A, F: FnMut(&Node, &[A]) -> A> Pass for Post<F, A> {
    type Fact = A;
    fn post(&mut self, n: &Node, kids: &[A]) -> A {
        (self.0)(n, kids)
    }
}

/// [`walk`] with a closure: `post` gets each node and the results of its children, and
/// its result goes to the parent. Returns the root's result.
pub fn visit_post<A>(root: &Node, post: impl FnMut(&Node, &[A]) -> A) -> A {
    walk(root, &mut Post(post, PhantomData))
}

/// Rewrites the tree under `root` bottom-up: `post` gets the original node and its
/// rewritten children (with their facts `A`) and returns the new node and its fact;
/// [`with_children`] rebuilds a node only if a child changed.
pub fn rewrite<A>(root: &Node, post: impl FnMut(&Node, &[(Node, A)]) -> (Node, A)) -> (Node, A) {
    visit_post(root, post)
}
