//! The baseline: the same IR as a plain Rust `enum` behind `Arc`, the way a compiler in
//! Rust is usually written without an object system. `Hash`/`Eq` are derived (they are
//! the "structural hashing" of this version); variables carry a unique id, so they
//! compare by binding the way the object version's `Var` objects compare by identity.
//!
//! Two pieces of infrastructure an `enum` IR needs as soon as programs get deep: an
//! iterative `Drop` (the derived one recurses once per level and overflows the stack on
//! a deep program) and an iterative walker ([`walk`]); the derived `Hash`/`Eq`/`Debug`
//! still recurse, so the passes call them only on bounded subtrees.
//!
//! `Serialize`/`Deserialize` are derived too (serde's `rc` feature for the `Arc`s), the
//! way such an IR is saved as JSON with `serde_json`; both recurse once per level, so a
//! deep program needs a thread with a stack to match (and `serde_json`'s recursion
//! limit turned off).

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};

use super::ops::BinOpKind;
use super::syntax::Builder;

mod passes;
mod print;
pub mod walk;

pub use passes::{cse, eliminate_dead_lets, fold_constants};
pub use print::print;

/// An expression.
pub type Expr = Arc<ExprNode>;
/// A statement.
pub type Stmt = Arc<StmtNode>;

/// A variable: a name for printing and a unique id that equality and hashing use.
/// Serialized as its name and id (at each use); one deserialized keeps its id, and
/// variables made later in the process take ids above it.
#[derive(Clone, Debug, Serialize)]
#[serde(transparent)]
pub struct Var(Arc<VarNode>);

#[derive(Debug, Serialize, Deserialize)]
struct VarNode {
    name: String,
    id: u64,
}

impl<'de> Deserialize<'de> for Var {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Var, D::Error> {
        let node = VarNode::deserialize(d)?;
        NEXT_VAR.fetch_max(node.id.saturating_add(1), Ordering::Relaxed);
        Ok(Var(Arc::new(node)))
    }
}

static NEXT_VAR: AtomicU64 = AtomicU64::new(0);

impl Var {
    /// A fresh variable (never equal to any other).
    pub fn new(name: &str) -> Var {
        Var(Arc::new(VarNode {
            name: name.to_owned(),
            id: NEXT_VAR.fetch_add(1, Ordering::Relaxed),
        }))
    }
    /// The name, for printing.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The unique id.
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Var) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for Var {}
impl Hash for Var {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

/// A tensor constant: `f32` values of a shape (row-major). Equal and hashed by the
/// values' bits (as the object IR's structural equality compares a tensor's bytes).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tensor {
    /// The dimensions.
    pub shape: Vec<i64>,
    /// The values, row-major.
    pub data: Vec<f32>,
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        self.shape == other.shape
            && self.data.len() == other.data.len()
            && self
                .data
                .iter()
                .zip(&other.data)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}
impl Eq for Tensor {}
impl Hash for Tensor {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.shape.hash(state);
        state.write_usize(self.data.len());
        self.data.iter().for_each(|v| state.write_u32(v.to_bits()));
    }
}

/// The expression nodes.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExprNode {
    /// An integer constant.
    Int(i64),
    /// A tensor constant.
    Tensor(Tensor),
    /// A use of a variable.
    Var(Var),
    /// `(op lhs rhs)`.
    Binary(BinOpKind, Expr, Expr),
    /// `(not a)`.
    Not(Expr),
    /// `(select cond then else)`: both arms are evaluated.
    Select(Expr, Expr, Expr),
    /// `(let var value body)`.
    Let(Var, Expr, Expr),
    /// `(call name args…)`: a pure intrinsic.
    Call(String, Vec<Expr>),
}

/// The statement nodes.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StmtNode {
    /// `(eval value)`.
    Evaluate(Expr),
    /// `(let var value body)`.
    LetStmt(Var, Expr, Stmt),
    /// `(store buffer index value)`.
    Store(String, Expr, Expr),
    /// `(seq stmts…)`.
    Seq(Vec<Stmt>),
    /// `(if cond then else)`.
    IfThenElse(Expr, Stmt, Stmt),
}

/// A program: `(fn name (params…) body)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Function {
    /// The name.
    pub name: String,
    /// The parameters.
    pub params: Vec<Var>,
    /// The body.
    pub body: Stmt,
}

/// An expression or a statement: what the walker's work stack holds.
#[derive(Debug, Clone)]
pub enum Node {
    /// An expression.
    Expr(Expr),
    /// A statement.
    Stmt(Stmt),
}

thread_local! {
    /// Placeholders that a dying node's children are swapped for.
    static HOLES: (Expr, Stmt) = (Arc::new(ExprNode::Int(0)), Arc::new(StmtNode::Seq(Vec::new())));
}

/// Moves `slot` to `stack` if this is its last handle (a shared one is merely released).
fn take_expr(slot: &mut Expr, stack: &mut Vec<Node>) {
    if Arc::strong_count(slot) == 1 && !slot.is_leaf() {
        if let Ok(hole) = HOLES.try_with(|h| h.0.clone()) {
            stack.push(Node::Expr(std::mem::replace(slot, hole)));
        }
    }
}

fn take_stmt(slot: &mut Stmt, stack: &mut Vec<Node>) {
    if Arc::strong_count(slot) == 1 {
        if let Ok(hole) = HOLES.try_with(|h| h.1.clone()) {
            stack.push(Node::Stmt(std::mem::replace(slot, hole)));
        }
    }
}

impl ExprNode {
    /// Whether the node is a leaf (a constant or a variable).
    pub fn is_leaf(&self) -> bool {
        matches!(
            self,
            ExprNode::Int(_) | ExprNode::Tensor(_) | ExprNode::Var(_)
        )
    }

    /// The value of an integer constant.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            ExprNode::Int(v) => Some(*v),
            _ => None,
        }
    }

    fn take_children(&mut self, stack: &mut Vec<Node>) {
        match self {
            ExprNode::Int(_) | ExprNode::Tensor(_) | ExprNode::Var(_) => {}
            ExprNode::Binary(_, a, b) | ExprNode::Let(_, a, b) => {
                take_expr(a, stack);
                take_expr(b, stack);
            }
            ExprNode::Not(a) => take_expr(a, stack),
            ExprNode::Select(a, b, c) => {
                take_expr(a, stack);
                take_expr(b, stack);
                take_expr(c, stack);
            }
            ExprNode::Call(_, args) => stack.extend(args.drain(..).map(Node::Expr)),
        }
    }
}

impl StmtNode {
    fn take_children(&mut self, stack: &mut Vec<Node>) {
        match self {
            StmtNode::Evaluate(a) => take_expr(a, stack),
            StmtNode::LetStmt(_, a, s) => {
                take_expr(a, stack);
                take_stmt(s, stack);
            }
            StmtNode::Store(_, a, b) => {
                take_expr(a, stack);
                take_expr(b, stack);
            }
            StmtNode::Seq(s) => stack.extend(s.drain(..).map(Node::Stmt)),
            StmtNode::IfThenElse(c, a, b) => {
                take_expr(c, stack);
                take_stmt(a, stack);
                take_stmt(b, stack);
            }
        }
    }
}

/// Releases the nodes of `stack` one at a time: each node that this was the last handle
/// of gives up its children to the stack before it is dropped, so nothing recurses.
fn drain(stack: &mut Vec<Node>) {
    while let Some(node) = stack.pop() {
        match node {
            Node::Expr(e) => {
                if let Some(mut n) = Arc::into_inner(e) {
                    n.take_children(stack);
                }
            }
            Node::Stmt(s) => {
                if let Some(mut n) = Arc::into_inner(s) {
                    n.take_children(stack);
                }
            }
        }
    }
}

impl Drop for ExprNode {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        drain(&mut stack);
    }
}

impl Drop for StmtNode {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        drain(&mut stack);
    }
}

/// A constant.
pub fn int(value: i64) -> Expr {
    Arc::new(ExprNode::Int(value))
}

/// Builds the enum IR from the parser.
#[derive(Debug, Default)]
pub struct EnumBuilder;

impl Builder for EnumBuilder {
    type Expr = Expr;
    type Stmt = Stmt;
    type Var = Var;
    type Function = Function;

    fn var(&mut self, name: &str) -> Var {
        Var::new(name)
    }
    fn var_ref(&mut self, var: &Var) -> Expr {
        Arc::new(ExprNode::Var(var.clone()))
    }
    fn int(&mut self, value: i64) -> Expr {
        int(value)
    }
    fn tensor(&mut self, shape: &[i64], data: &[f32]) -> Expr {
        Arc::new(ExprNode::Tensor(Tensor {
            shape: shape.to_vec(),
            data: data.to_vec(),
        }))
    }
    fn binary(&mut self, op: BinOpKind, lhs: Expr, rhs: Expr) -> Expr {
        Arc::new(ExprNode::Binary(op, lhs, rhs))
    }
    fn not(&mut self, a: Expr) -> Expr {
        Arc::new(ExprNode::Not(a))
    }
    fn select(&mut self, cond: Expr, t: Expr, f: Expr) -> Expr {
        Arc::new(ExprNode::Select(cond, t, f))
    }
    fn let_(&mut self, var: Var, value: Expr, body: Expr) -> Expr {
        Arc::new(ExprNode::Let(var, value, body))
    }
    fn call(&mut self, name: &str, args: Vec<Expr>) -> Expr {
        Arc::new(ExprNode::Call(name.to_owned(), args))
    }
    fn evaluate(&mut self, value: Expr) -> Stmt {
        Arc::new(StmtNode::Evaluate(value))
    }
    fn let_stmt(&mut self, var: Var, value: Expr, body: Stmt) -> Stmt {
        Arc::new(StmtNode::LetStmt(var, value, body))
    }
    fn store(&mut self, buffer: &str, index: Expr, value: Expr) -> Stmt {
        Arc::new(StmtNode::Store(buffer.to_owned(), index, value))
    }
    fn seq(&mut self, stmts: Vec<Stmt>) -> Stmt {
        Arc::new(StmtNode::Seq(stmts))
    }
    fn if_then_else(&mut self, cond: Expr, t: Stmt, f: Stmt) -> Stmt {
        Arc::new(StmtNode::IfThenElse(cond, t, f))
    }
    fn function(&mut self, name: &str, params: Vec<Var>, body: Stmt) -> Function {
        Function {
            name: name.to_owned(),
            params,
            body,
        }
    }
}
