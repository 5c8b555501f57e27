//! The front-end's IR as objects: an abstract `Expr` base with the expression nodes
//! under it (one `Binary` node for every operator, its `op` a [`BinOpKind`] enum
//! field), a `Stmt` family, and a `Function`. Each node type `…Node` has a typed
//! reference (`Expr`, `Binary`, `Var`, `Function`, …: `#[object(ref = …)]`, TVM's
//! `ObjectRef` subclasses), which the fields, the builder and the passes hold and the
//! IR's operations are methods of. Variables are `structural = "var"` and every binder
//! is a definition field (`#[object(def)]`), so structural equality and
//! [`StructuralKey`] compare programs up to the names of their variables.
//!
//! Written with the public API only: the derive's generated constructors on the
//! references (`Binary::new(BinOpKind::Add, a, b)`, taking any subtype's reference),
//! `#[object(abstract)]` bases, the exhaustive views [`ExprView`] and [`StmtView`]
//! (`object_view!`, matched in O(1)), the generic mutator
//! ([`object_core::transform::mutate`] with scoped hooks), `StructuralHashCache` and
//! `object_json`.
//!
//! ```
//! use object_examples::frontend::BinOpKind;
//! use object_examples::frontend::object_ir::{Binary, Expr, IntImm, Var};
//! let x = Var::new("x");
//! let e: Expr = Binary::new(BinOpKind::Mul, IntImm::new(6), Binary::new(BinOpKind::Add, x, IntImm::new(1))).into();
//! assert_eq!(e.to_text(), "(* 6 (+ x 1))");
//! assert_eq!(Expr::from(IntImm::new(7)).as_int(), Some(7));
//! ```
//!
//! [`StructuralKey`]: object_core::structural::StructuralKey

use std::fmt;

use object_containers::{Array, NDArray};
use object_core::prelude::*;
use object_core::Any;
use object_json::GraphError;

use super::ops::BinOpKind;
use super::syntax::Builder;

mod passes;
mod print;
pub mod walk;

pub use passes::{cse, eliminate_dead_lets, fold_constants};
pub use print::{print, print_node};
pub use walk::visit_post;

object_core::object_view! {
    /// What an [`Expr`] is: one variant per expression type, so that a new node type
    /// makes every `match` fail to compile.
    pub enum ExprView for ExprNode {
        IntImm(IntImmNode),
        TensorImm(TensorImmNode),
        Var(VarNode),
        Binary(BinaryNode),
        Not(NotNode),
        Select(SelectNode),
        Let(LetNode),
        Call(CallNode),
    }
}

object_core::object_view! {
    /// What a [`Stmt`] is.
    pub enum StmtView for StmtNode {
        Evaluate(EvaluateNode),
        LetStmt(LetStmtNode),
        Store(StoreNode),
        SeqStmt(SeqStmtNode),
        IfThenElse(IfThenElseNode),
    }
}

/// The base of every expression (abstract: only its subtypes are made).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Expr", abstract, slots = 8, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

/// An integer constant.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.IntImm", parent = ExprNode, final, ref = IntImm)]
pub struct IntImmNode {
    base: ExprNode,
    /// The value.
    pub value: i64,
}

/// A tensor constant: an `f32` [`NDArray`] (`(tensor (2 2) 1 0.5 -2 0.25)`).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.TensorImm", parent = ExprNode, final, ref = TensorImm)]
pub struct TensorImmNode {
    base: ExprNode,
    /// The values (`float32`, on the CPU).
    pub value: NDArray,
}

/// A variable: its identity is what it means; structurally, it is compared by where
/// it is bound. A use of a variable is the variable itself.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Var", parent = ExprNode, final, structural = "var", ref = Var)]
pub struct VarNode {
    base: ExprNode,
    /// The name, for printing only.
    #[object(no_eq)]
    pub name: String,
}

/// `(op lhs rhs)`: every binary operator, the operator an enum field.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Binary", parent = ExprNode, final, ref = Binary)]
pub struct BinaryNode {
    base: ExprNode,
    /// The operator.
    pub op: BinOpKind,
    /// Left operand.
    pub lhs: Expr,
    /// Right operand.
    pub rhs: Expr,
}

/// `(not a)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Not", parent = ExprNode, final, ref = Not)]
pub struct NotNode {
    base: ExprNode,
    /// The operand.
    pub a: Expr,
}

/// `(select cond then else)`: both arms are evaluated.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Select", parent = ExprNode, final, ref = Select)]
pub struct SelectNode {
    base: ExprNode,
    /// The condition.
    pub cond: Expr,
    /// The value if the condition is nonzero.
    pub true_value: Expr,
    /// The value otherwise.
    pub false_value: Expr,
}

/// `(let var value body)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Let", parent = ExprNode, final, ref = Let)]
pub struct LetNode {
    base: ExprNode,
    /// The variable, defined here.
    #[object(def)]
    pub var: Var,
    /// Its value.
    pub value: Expr,
    /// Where it is in scope.
    pub body: Expr,
}

/// `(call op args…)`: a pure intrinsic.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Call", parent = ExprNode, final, ref = Call)]
pub struct CallNode {
    base: ExprNode,
    /// The intrinsic's name.
    pub op: String,
    /// The arguments.
    pub args: Array<Expr>,
}

/// The base of every statement (abstract).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Stmt", abstract, slots = 4, ref = Stmt)]
pub struct StmtNode {
    base: Object,
}

/// `(eval value)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Evaluate", parent = StmtNode, final, ref = Evaluate)]
pub struct EvaluateNode {
    base: StmtNode,
    /// The expression.
    pub value: Expr,
}

/// `(let var value body)` as a statement.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.LetStmt", parent = StmtNode, final, ref = LetStmt)]
pub struct LetStmtNode {
    base: StmtNode,
    /// The variable, defined here.
    #[object(def)]
    pub var: Var,
    /// Its value.
    pub value: Expr,
    /// Where it is in scope.
    pub body: Stmt,
}

/// `(store buffer index value)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Store", parent = StmtNode, final, ref = Store)]
pub struct StoreNode {
    base: StmtNode,
    /// The buffer's name.
    pub buffer: String,
    /// The index.
    pub index: Expr,
    /// The value stored.
    pub value: Expr,
}

/// `(seq stmts…)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.SeqStmt", parent = StmtNode, final, ref = SeqStmt)]
pub struct SeqStmtNode {
    base: StmtNode,
    /// The statements, in order.
    pub seq: Array<Stmt>,
}

/// `(if cond then else)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.IfThenElse", parent = StmtNode, final, ref = IfThenElse)]
pub struct IfThenElseNode {
    base: StmtNode,
    /// The condition.
    pub cond: Expr,
    /// Run if the condition is nonzero.
    pub then_case: Stmt,
    /// Run otherwise.
    pub else_case: Stmt,
}

/// A program: `(fn name (params…) body)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Function", final, ref = Function)]
pub struct FunctionNode {
    base: Object,
    /// The name.
    pub name: String,
    /// The parameters, defined here.
    #[object(def)]
    pub params: Array<Var>,
    /// The body.
    pub body: Stmt,
}

impl Expr {
    /// The value of an integer constant; `None` for any other expression.
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        self.downcast_ref::<IntImmNode>().map(|i| i.value)
    }

    /// Whether the expression is a leaf (a constant or a variable).
    #[inline]
    pub fn is_leaf(&self) -> bool {
        matches!(
            self.view(),
            ExprView::IntImm(_) | ExprView::TensorImm(_) | ExprView::Var(_)
        )
    }

    /// The expression in the text syntax (`(+ x 1)`).
    pub fn to_text(&self) -> String {
        print_node(self.as_object_ref())
    }
}

impl BinaryNode {
    /// The folded value, if both operands are integer constants and the operation is
    /// defined on them ([`BinOpKind::apply`]).
    #[inline]
    pub fn fold(&self) -> Option<i64> {
        self.op.apply(self.lhs.as_int()?, self.rhs.as_int()?)
    }
}

impl TensorImm {
    /// A tensor constant of `f32` values (row-major).
    ///
    /// ```
    /// use object_examples::frontend::object_ir::{Expr, TensorImm};
    /// let t = TensorImm::from_values(&[2], &[1.5, -2.0]);
    /// assert_eq!((t.value.shape(), t.values()), (&[2i64][..], &[1.5f32, -2.0][..]));
    /// assert_eq!(Expr::from(t).to_text(), "(tensor (2) 1.5 -2)");
    /// ```
    ///
    /// # Panics
    ///
    /// If `data` does not hold the product of `shape` values.
    pub fn from_values(shape: &[i64], data: &[f32]) -> TensorImm {
        let value = NDArray::from_slice(shape, data).expect("as many values as the shape holds");
        TensorImm::new(value)
    }

    /// The values (row-major).
    pub fn values(&self) -> &[f32] {
        self.value
            .as_slice::<f32>()
            .expect("a tensor constant holds contiguous f32 values")
    }
}

impl Function {
    /// Constant folding with `let` substitution ([`fold_constants`]).
    ///
    /// ```
    /// use object_examples::frontend::{parse, object_ir::ObjectBuilder};
    /// let f = parse("(fn f (x) (eval (let k (* 2 3) (+ k x))))", &mut ObjectBuilder).unwrap();
    /// assert_eq!(f.fold_constants().to_text(), "(fn f (x) (eval (+ 6 x)))");
    /// ```
    pub fn fold_constants(&self) -> Function {
        fold_constants(self)
    }
    /// Common-subexpression elimination ([`cse`]).
    pub fn cse(&self) -> Function {
        cse(self)
    }
    /// Dead-`let` elimination ([`eliminate_dead_lets`]).
    ///
    /// ```
    /// use object_core::TypedRef;
    /// use object_examples::frontend::{parse, object_ir::ObjectBuilder};
    /// let f = parse("(fn f (x) (eval (let a (* x x) (let b (+ a 1) x))))", &mut ObjectBuilder).unwrap();
    /// let g = f.eliminate_dead_lets();
    /// assert_eq!(g.to_text(), "(fn f (x) (eval x))");
    /// // Nothing left to remove: the very same program comes back.
    /// assert!(g.eliminate_dead_lets().same_as(&g));
    /// ```
    pub fn eliminate_dead_lets(&self) -> Function {
        eliminate_dead_lets(self)
    }
    /// The program in the text syntax ([`print()`]).
    pub fn to_text(&self) -> String {
        print(self)
    }
    /// The program as a JSON graph ([`save_json`]).
    ///
    /// # Errors
    ///
    /// The graph writer's (none for a program of this IR's types).
    pub fn to_json(&self) -> Result<String, JsonError> {
        save_json(self)
    }
    /// The program a JSON graph holds ([`load_json`]).
    ///
    /// # Errors
    ///
    /// See [`load_json`].
    pub fn from_json(text: &str) -> Result<Function, JsonError> {
        load_json(text)
    }
}

/// Builds the object IR from the parser.
#[derive(Debug, Default)]
pub struct ObjectBuilder;

impl Builder for ObjectBuilder {
    type Expr = Expr;
    type Stmt = Stmt;
    type Var = Var;
    type Function = Function;

    fn var(&mut self, name: &str) -> Var {
        Var::new(name)
    }
    fn var_ref(&mut self, v: &Var) -> Expr {
        v.clone().into()
    }
    fn int(&mut self, value: i64) -> Expr {
        IntImm::new(value).into()
    }
    fn tensor(&mut self, shape: &[i64], data: &[f32]) -> Expr {
        TensorImm::from_values(shape, data).into()
    }
    fn binary(&mut self, op: BinOpKind, lhs: Expr, rhs: Expr) -> Expr {
        Binary::new(op, lhs, rhs).into()
    }
    fn not(&mut self, a: Expr) -> Expr {
        Not::new(a).into()
    }
    fn select(&mut self, c: Expr, t: Expr, f: Expr) -> Expr {
        Select::new(c, t, f).into()
    }
    fn let_(&mut self, v: Var, value: Expr, body: Expr) -> Expr {
        Let::new(v, value, body).into()
    }
    fn call(&mut self, name: &str, args: Vec<Expr>) -> Expr {
        Call::new(name, args).into()
    }
    fn evaluate(&mut self, value: Expr) -> Stmt {
        Evaluate::new(value).into()
    }
    fn let_stmt(&mut self, v: Var, value: Expr, body: Stmt) -> Stmt {
        LetStmt::new(v, value, body).into()
    }
    fn store(&mut self, buffer: &str, index: Expr, value: Expr) -> Stmt {
        Store::new(buffer, index, value).into()
    }
    fn seq(&mut self, stmts: Vec<Stmt>) -> Stmt {
        SeqStmt::new(stmts).into()
    }
    fn if_then_else(&mut self, c: Expr, t: Stmt, f: Stmt) -> Stmt {
        IfThenElse::new(c, t, f).into()
    }
    fn function(&mut self, name: &str, params: Vec<Var>, body: Stmt) -> Function {
        Function::new(name, params, body)
    }
}

/// Why [`load_json`] failed.
#[derive(Debug)]
pub enum JsonError {
    /// The JSON graph is bad (its error says where).
    Graph(GraphError),
    /// The graph's root is not a `frontend.Function` but this type.
    NotAFunction(&'static str),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Graph(e) => write!(f, "{e}"),
            JsonError::NotAFunction(k) => write!(f, "the root is a `{k}`, not a function"),
        }
    }
}

impl std::error::Error for JsonError {}

/// Saves a program as a JSON graph (tvm-ffi's format; shared variables written once).
pub fn save_json(f: &Function) -> Result<String, JsonError> {
    object_json::to_json_graph(&Any::from(f.clone())).map_err(JsonError::Graph)
}

/// Loads a program saved by [`save_json`].
pub fn load_json(text: &str) -> Result<Function, JsonError> {
    let any = object_json::from_json_graph(text).map_err(JsonError::Graph)?;
    match any.as_object_of::<FunctionNode>() {
        Some(f) => Ok(Function::from_object_ptr(f.clone())),
        None => Err(JsonError::NotAFunction(any.type_key())),
    }
}
