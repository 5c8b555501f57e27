//! The iterative walker of the object IR, written by hand with today's API: a view
//! of a node's concrete type (a chain of `downcast_ref`s), its children, rebuilding a
//! node from rewritten children only when one changed, and the same post-order walk
//! with an explicit stack as the enum version's.

use object_core::prelude::*;

use super::*;

/// What a node is: one variant per concrete type, so passes can `match`.
#[derive(Clone, Copy, Debug)]
pub enum View<'a> {
    /// An [`IntImm`].
    Int(&'a IntImm),
    /// A [`Var`].
    Var(&'a Var),
    /// A [`BinaryOp`] and its operator.
    Binary(BinOpKind, &'a BinaryOp),
    /// A [`Not`].
    Not(&'a Not),
    /// A [`Select`].
    Select(&'a Select),
    /// A [`Let`].
    Let(&'a Let),
    /// A [`Call`].
    Call(&'a Call),
    /// An [`Evaluate`].
    Evaluate(&'a Evaluate),
    /// A [`LetStmt`].
    LetStmt(&'a LetStmt),
    /// A [`Store`].
    Store(&'a Store),
    /// A [`SeqStmt`].
    Seq(&'a SeqStmt),
    /// An [`IfThenElse`].
    If(&'a IfThenElse),
    /// Anything else (a type added at run time, a `Function`).
    Other,
}

/// The view of `n`, most frequent types first.
pub fn view(n: &ObjectRef) -> View<'_> {
    if let Some(b) = n.downcast_ref::<BinaryOp>() {
        op_of(n.type_index()).map_or(View::Other, |op| View::Binary(op, b))
    } else if let Some(x) = n.downcast_ref::<IntImm>() {
        View::Int(x)
    } else if let Some(x) = n.downcast_ref::<Var>() {
        View::Var(x)
    } else if let Some(x) = n.downcast_ref::<Let>() {
        View::Let(x)
    } else if let Some(x) = n.downcast_ref::<Select>() {
        View::Select(x)
    } else if let Some(x) = n.downcast_ref::<Not>() {
        View::Not(x)
    } else if let Some(x) = n.downcast_ref::<Call>() {
        View::Call(x)
    } else if let Some(x) = n.downcast_ref::<Store>() {
        View::Store(x)
    } else if let Some(x) = n.downcast_ref::<Evaluate>() {
        View::Evaluate(x)
    } else if let Some(x) = n.downcast_ref::<LetStmt>() {
        View::LetStmt(x)
    } else if let Some(x) = n.downcast_ref::<SeqStmt>() {
        View::Seq(x)
    } else if let Some(x) = n.downcast_ref::<IfThenElse>() {
        View::If(x)
    } else {
        View::Other
    }
}

/// The expression handle of `n`; a statement here is a bug in a rewrite (a statement
/// returned for an expression), and panics.
pub fn expr(n: &ObjectRef) -> &ObjectPtr<Expr> {
    match n.downcast_ptr_ref::<Expr>() {
        Some(e) => e,
        None => panic!("a `{}` where an expression belongs", n.type_key()),
    }
}

/// The statement handle of `n`; panics on anything else (see [`expr`]).
pub fn stmt(n: &ObjectRef) -> &ObjectPtr<Stmt> {
    match n.downcast_ptr_ref::<Stmt>() {
        Some(s) => s,
        None => panic!("a `{}` where a statement belongs", n.type_key()),
    }
}

/// A walk result that carries a node (the rewritten child).
pub trait HasNode {
    /// The node.
    fn node(&self) -> &ObjectRef;
}
impl HasNode for ObjectRef {
    fn node(&self) -> &ObjectRef {
        self
    }
}
impl<A> HasNode for (ObjectRef, A) {
    fn node(&self) -> &ObjectRef {
        &self.0
    }
}

/// Calls `f` with each child of `n`, in order (a binder is not a child).
pub fn for_each_child(n: &ObjectRef, mut f: impl FnMut(ObjectRef)) {
    let e = |x: &ObjectPtr<Expr>| x.clone().into_object_ref();
    let s = |x: &ObjectPtr<Stmt>| x.clone().into_object_ref();
    match view(n) {
        View::Int(_) | View::Var(_) | View::Other => {}
        View::Binary(_, x) => {
            f(e(&x.lhs));
            f(e(&x.rhs));
        }
        View::Let(x) => {
            f(e(&x.value));
            f(e(&x.body));
        }
        View::Not(x) => f(e(&x.a)),
        View::Select(x) => {
            f(e(&x.cond));
            f(e(&x.true_value));
            f(e(&x.false_value));
        }
        View::Call(x) => x.args.iter().for_each(|a| f(e(a))),
        View::Evaluate(x) => f(e(&x.value)),
        View::LetStmt(x) => {
            f(e(&x.value));
            f(s(&x.body));
        }
        View::Store(x) => {
            f(e(&x.index));
            f(e(&x.value));
        }
        View::Seq(x) => x.seq.iter().for_each(|b| f(s(b))),
        View::If(x) => {
            f(e(&x.cond));
            f(s(&x.then_case));
            f(s(&x.else_case));
        }
    }
}

/// `n` with its children replaced by `kids` (in [`for_each_child`]'s order): `n`
/// itself if every child is the same object, else a new node.
pub fn with_children<K: HasNode>(n: &ObjectRef, kids: &[K]) -> ObjectRef {
    let same = |i: usize, old: &ObjectPtr<Expr>| ObjectPtr::ptr_eq(kids[i].node(), old);
    let same_s = |i: usize, old: &ObjectPtr<Stmt>| ObjectPtr::ptr_eq(kids[i].node(), old);
    let ke = |i: usize| expr(kids[i].node()).clone();
    let ks = |i: usize| stmt(kids[i].node()).clone();
    let rebuilt: ObjectRef = match view(n) {
        View::Binary(op, x) if !(same(0, &x.lhs) && same(1, &x.rhs)) => {
            binary(op, ke(0), ke(1)).into_object_ref()
        }
        View::Let(x) if !(same(0, &x.value) && same(1, &x.body)) => {
            let_(x.var.clone(), ke(0), ke(1)).into_object_ref()
        }
        View::Not(x) if !same(0, &x.a) => not(ke(0)).into_object_ref(),
        View::Select(x)
            if !(same(0, &x.cond) && same(1, &x.true_value) && same(2, &x.false_value)) =>
        {
            select(ke(0), ke(1), ke(2)).into_object_ref()
        }
        View::Call(x) if !x.args.iter().enumerate().all(|(i, a)| same(i, a)) => {
            call(&x.op, (0..x.args.len()).map(ke).collect()).into_object_ref()
        }
        View::Evaluate(x) if !same(0, &x.value) => evaluate(ke(0)).into_object_ref(),
        View::LetStmt(x) if !(same(0, &x.value) && same_s(1, &x.body)) => {
            let_stmt(x.var.clone(), ke(0), ks(1)).into_object_ref()
        }
        View::Store(x) if !(same(0, &x.index) && same(1, &x.value)) => {
            store(&x.buffer, ke(0), ke(1)).into_object_ref()
        }
        View::Seq(x) if !x.seq.iter().enumerate().all(|(i, b)| same_s(i, b)) => {
            seq((0..x.seq.len()).map(ks).collect()).into_object_ref()
        }
        View::If(x)
            if !(same(0, &x.cond) && same_s(1, &x.then_case) && same_s(2, &x.else_case)) =>
        {
            if_then_else(ke(0), ks(1), ks(2)).into_object_ref()
        }
        _ => n.clone(),
    };
    rebuilt
}

/// Walks the tree under `root` in post-order with an explicit stack: `post` gets each
/// node and the results of its children, and its result goes to the parent. Returns the
/// root's result. A shared subtree is walked once per occurrence.
pub fn visit_post<A>(root: &ObjectRef, mut post: impl FnMut(&ObjectRef, &[A]) -> A) -> A {
    enum Task {
        Enter(ObjectRef),
        Exit(ObjectRef, usize),
    }
    let mut tasks = vec![Task::Enter(root.clone())];
    let mut results: Vec<A> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(n) => {
                let at = tasks.len();
                let mut count = 0;
                for_each_child(&n, |c| {
                    tasks.push(Task::Enter(c));
                    count += 1;
                });
                tasks[at..].reverse();
                tasks.insert(at, Task::Exit(n, count));
            }
            Task::Exit(n, count) => {
                let start = results.len() - count;
                let r = post(&n, &results[start..]);
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

/// Rewrites the tree under `root` bottom-up: `post` gets the original node and its
/// rewritten children (with their facts `A`) and returns the new node and its fact;
/// [`with_children`] rebuilds a node only if a child changed.
pub fn rewrite<A>(
    root: &ObjectRef,
    post: impl FnMut(&ObjectRef, &[(ObjectRef, A)]) -> (ObjectRef, A),
) -> (ObjectRef, A) {
    visit_post(root, post)
}
