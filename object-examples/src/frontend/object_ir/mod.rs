//! The front-end's IR as objects: an abstract `Expr` base with `BinaryOp` (and its
//! eleven operators) and the other expression nodes under it, a `Stmt` family, and a
//! `Function`. Variables are `structural = "var"` and every binder is a definition
//! field (`#[object(def)]`), so structural equality and [`StructuralKey`] compare
//! programs up to the names of their variables.
//!
//! Written with the public API only: the derive's generated constructors (`Add::new(a,
//! b)`), `#[object(abstract)]` bases, the exhaustive views [`ExprView`] and [`StmtView`]
//! (`object_view!`, matched in O(1)), the generic mutator
//! ([`object_core::transform::mutate`]), `StructuralKey` and `object_json`.
//!
//! [`StructuralKey`]: object_core::structural::StructuralKey

use std::fmt;

use object_containers::Array;
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
    pub enum ExprView for Expr {
        IntImm, Var, Add, Sub, Mul, Div, Mod, Min, Max, Lt, Eq, And, Or, Not, Select, Let, Call,
    }
}

object_core::object_view! {
    /// What a [`Stmt`] is.
    pub enum StmtView for Stmt { Evaluate, LetStmt, Store, SeqStmt, IfThenElse }
}

/// The base of every expression (abstract: only its subtypes are made).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Expr", abstract, slots = 8)]
pub struct Expr {
    base: Object,
}

/// An integer constant.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.IntImm", parent = Expr, final)]
pub struct IntImm {
    base: Expr,
    /// The value.
    pub value: i64,
}

/// A variable: its identity is what it means; structurally, it is compared by where
/// it is bound.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Var", parent = Expr, final, structural = "var")]
pub struct Var {
    base: Expr,
    /// The name, for printing only.
    #[object(no_eq)]
    pub name: String,
}

/// The base of the binary operators (abstract); the operator is the subtype.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.BinaryOp", parent = Expr, abstract, slots = 4)]
pub struct BinaryOp {
    base: Expr,
    /// Left operand.
    pub lhs: ObjectPtr<Expr>,
    /// Right operand.
    pub rhs: ObjectPtr<Expr>,
}

macro_rules! binary_ops {
    ($($name:ident $key:literal,)*) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` operator.")]
            #[derive(Object)]
            #[repr(C)]
            #[object(key = $key, parent = BinaryOp, final)]
            pub struct $name {
                base: BinaryOp,
            }
        )*

        /// A binary operator node of kind `op`.
        pub fn binary(op: BinOpKind, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
            match op {
                $(BinOpKind::$name => $name::new(lhs, rhs).upcast(),)*
            }
        }

        impl<'a> ExprView<'a> {
            /// The operator and operands of a binary operator node.
            pub fn binary(&self) -> Option<(BinOpKind, &'a BinaryOp)> {
                match *self {
                    $(ExprView::$name(x) => Some((BinOpKind::$name, &x.base)),)*
                    _ => None,
                }
            }
        }
    };
}

binary_ops! {
    Add "frontend.Add",
    Sub "frontend.Sub",
    Mul "frontend.Mul",
    Div "frontend.Div",
    Mod "frontend.Mod",
    Min "frontend.Min",
    Max "frontend.Max",
    Lt "frontend.Lt",
    Eq "frontend.Eq",
    And "frontend.And",
    Or "frontend.Or",
}

/// `(not a)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Not", parent = Expr, final)]
pub struct Not {
    base: Expr,
    /// The operand.
    pub a: ObjectPtr<Expr>,
}

/// `(select cond then else)`: both arms are evaluated.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Select", parent = Expr, final)]
pub struct Select {
    base: Expr,
    /// The condition.
    pub cond: ObjectPtr<Expr>,
    /// The value if the condition is nonzero.
    pub true_value: ObjectPtr<Expr>,
    /// The value otherwise.
    pub false_value: ObjectPtr<Expr>,
}

/// `(let var value body)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Let", parent = Expr, final)]
pub struct Let {
    base: Expr,
    /// The variable, defined here.
    #[object(def)]
    pub var: ObjectPtr<Var>,
    /// Its value.
    pub value: ObjectPtr<Expr>,
    /// Where it is in scope.
    pub body: ObjectPtr<Expr>,
}

/// `(call op args…)`: a pure intrinsic.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Call", parent = Expr, final)]
pub struct Call {
    base: Expr,
    /// The intrinsic's name.
    pub op: String,
    /// The arguments.
    pub args: Array<ObjectPtr<Expr>>,
}

/// The base of every statement (abstract).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Stmt", abstract, slots = 4)]
pub struct Stmt {
    base: Object,
}

/// `(eval value)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Evaluate", parent = Stmt, final)]
pub struct Evaluate {
    base: Stmt,
    /// The expression.
    pub value: ObjectPtr<Expr>,
}

/// `(let var value body)` as a statement.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.LetStmt", parent = Stmt, final)]
pub struct LetStmt {
    base: Stmt,
    /// The variable, defined here.
    #[object(def)]
    pub var: ObjectPtr<Var>,
    /// Its value.
    pub value: ObjectPtr<Expr>,
    /// Where it is in scope.
    pub body: ObjectPtr<Stmt>,
}

/// `(store buffer index value)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Store", parent = Stmt, final)]
pub struct Store {
    base: Stmt,
    /// The buffer's name.
    pub buffer: String,
    /// The index.
    pub index: ObjectPtr<Expr>,
    /// The value stored.
    pub value: ObjectPtr<Expr>,
}

/// `(seq stmts…)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.SeqStmt", parent = Stmt, final)]
pub struct SeqStmt {
    base: Stmt,
    /// The statements, in order.
    pub seq: Array<ObjectPtr<Stmt>>,
}

/// `(if cond then else)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.IfThenElse", parent = Stmt, final)]
pub struct IfThenElse {
    base: Stmt,
    /// The condition.
    pub cond: ObjectPtr<Expr>,
    /// Run if the condition is nonzero.
    pub then_case: ObjectPtr<Stmt>,
    /// Run otherwise.
    pub else_case: ObjectPtr<Stmt>,
}

/// A program: `(fn name (params…) body)`.
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Function", final)]
pub struct Function {
    base: Object,
    /// The name.
    pub name: String,
    /// The parameters, defined here.
    #[object(def)]
    pub params: Array<ObjectPtr<Var>>,
    /// The body.
    pub body: ObjectPtr<Stmt>,
}

/// Builds the object IR from the parser.
#[derive(Debug, Default)]
pub struct ObjectBuilder;

impl Builder for ObjectBuilder {
    type Expr = ObjectPtr<Expr>;
    type Stmt = ObjectPtr<Stmt>;
    type Var = ObjectPtr<Var>;
    type Function = ObjectPtr<Function>;

    fn var(&mut self, name: &str) -> ObjectPtr<Var> {
        Var::new(name)
    }
    fn var_ref(&mut self, v: &ObjectPtr<Var>) -> ObjectPtr<Expr> {
        v.clone().upcast()
    }
    fn int(&mut self, value: i64) -> ObjectPtr<Expr> {
        IntImm::new(value).upcast()
    }
    fn binary(
        &mut self,
        op: BinOpKind,
        lhs: ObjectPtr<Expr>,
        rhs: ObjectPtr<Expr>,
    ) -> ObjectPtr<Expr> {
        binary(op, lhs, rhs)
    }
    fn not(&mut self, a: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
        Not::new(a).upcast()
    }
    fn select(
        &mut self,
        c: ObjectPtr<Expr>,
        t: ObjectPtr<Expr>,
        f: ObjectPtr<Expr>,
    ) -> ObjectPtr<Expr> {
        Select::new(c, t, f).upcast()
    }
    fn let_(
        &mut self,
        v: ObjectPtr<Var>,
        value: ObjectPtr<Expr>,
        body: ObjectPtr<Expr>,
    ) -> ObjectPtr<Expr> {
        Let::new(v, value, body).upcast()
    }
    fn call(&mut self, name: &str, args: Vec<ObjectPtr<Expr>>) -> ObjectPtr<Expr> {
        Call::new(name, args).upcast()
    }
    fn evaluate(&mut self, value: ObjectPtr<Expr>) -> ObjectPtr<Stmt> {
        Evaluate::new(value).upcast()
    }
    fn let_stmt(
        &mut self,
        v: ObjectPtr<Var>,
        value: ObjectPtr<Expr>,
        body: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Stmt> {
        LetStmt::new(v, value, body).upcast()
    }
    fn store(
        &mut self,
        buffer: &str,
        index: ObjectPtr<Expr>,
        value: ObjectPtr<Expr>,
    ) -> ObjectPtr<Stmt> {
        Store::new(buffer, index, value).upcast()
    }
    fn seq(&mut self, stmts: Vec<ObjectPtr<Stmt>>) -> ObjectPtr<Stmt> {
        SeqStmt::new(stmts).upcast()
    }
    fn if_then_else(
        &mut self,
        c: ObjectPtr<Expr>,
        t: ObjectPtr<Stmt>,
        f: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Stmt> {
        IfThenElse::new(c, t, f).upcast()
    }
    fn function(
        &mut self,
        name: &str,
        params: Vec<ObjectPtr<Var>>,
        body: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Function> {
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
pub fn save_json(f: &ObjectPtr<Function>) -> Result<String, JsonError> {
    object_json::to_json_graph(&Any::from(f.clone())).map_err(JsonError::Graph)
}

/// Loads a program saved by [`save_json`].
pub fn load_json(text: &str) -> Result<ObjectPtr<Function>, JsonError> {
    let any = object_json::from_json_graph(text).map_err(JsonError::Graph)?;
    match any.as_object_of::<Function>() {
        Some(f) => Ok(f.clone()),
        None => Err(JsonError::NotAFunction(any.type_key())),
    }
}
