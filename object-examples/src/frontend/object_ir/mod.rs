//! The front-end's IR as objects: an abstract `Expr` base with `BinaryOp` (and its
//! eleven operators) and the other expression nodes under it, a `Stmt` family, and a
//! `Function`. Variables are `structural = "var"` and every binder is a definition
//! field (`#[object(def)]`), so structural equality and [`StructuralKey`] compare
//! programs up to the names of their variables.
//!
//! Written with today's public API only: `make_object` with explicit `base` chains
//! (behind the small constructors in this module), `downcast_ref`, `ObjectPtr`,
//! `StructuralKey`, `object_json`. The [`walk`] module holds what a generated view and
//! a reflection-driven mutator will replace: the table from type to variant ([`view`])
//! and the rebuild-if-changed rule ([`walk::with_children`]).
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
pub use print::print;
pub use walk::{view, View};

/// The base of every expression (abstract: only its subtypes are made).
#[derive(Object)]
#[repr(C)]
#[object(key = "frontend.Expr", slots = 8)]
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
#[object(key = "frontend.BinaryOp", parent = Expr, slots = 4)]
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
            let base = BinaryOp { base: expr_base(), lhs, rhs };
            match op {
                $(BinOpKind::$name => make_object($name { base }).upcast(),)*
            }
        }

        /// The operator of a `BinaryOp` of type index `index`: one look-up in a table
        /// indexed from the lowest operator index.
        fn op_of(index: u32) -> Option<BinOpKind> {
            static TABLE: std::sync::OnceLock<(u32, Vec<Option<BinOpKind>>)> = std::sync::OnceLock::new();
            let (first, table) = TABLE.get_or_init(|| {
                let ops = [$(($name::type_index(), BinOpKind::$name),)*];
                let first = ops.iter().map(|(i, _)| *i).min().unwrap_or(0);
                let last = ops.iter().map(|(i, _)| *i).max().unwrap_or(0);
                let mut table = vec![None; (last - first + 1) as usize];
                for (i, op) in ops {
                    table[(i - first) as usize] = Some(op);
                }
                (first, table)
            });
            table.get(index.checked_sub(*first)? as usize).copied().flatten()
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
#[object(key = "frontend.Stmt", slots = 4)]
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

// The constructors: what `#[derive(Object)]`-generated `new`s will replace.

fn expr_base() -> Expr {
    Expr {
        base: Object::new(),
    }
}

fn stmt_base() -> Stmt {
    Stmt {
        base: Object::new(),
    }
}

/// A constant.
pub fn int(value: i64) -> ObjectPtr<Expr> {
    make_object(IntImm {
        base: expr_base(),
        value,
    })
    .upcast()
}

/// A fresh variable.
pub fn var(name: &str) -> ObjectPtr<Var> {
    make_object(Var {
        base: expr_base(),
        name: name.to_owned(),
    })
}

/// `(not a)`.
pub fn not(a: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Not {
        base: expr_base(),
        a,
    })
    .upcast()
}

/// `(select cond t f)`.
pub fn select(cond: ObjectPtr<Expr>, t: ObjectPtr<Expr>, f: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Select {
        base: expr_base(),
        cond,
        true_value: t,
        false_value: f,
    })
    .upcast()
}

/// `(let var value body)`.
pub fn let_(var: ObjectPtr<Var>, value: ObjectPtr<Expr>, body: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Let {
        base: expr_base(),
        var,
        value,
        body,
    })
    .upcast()
}

/// `(call op args…)`.
pub fn call(op: &str, args: Array<ObjectPtr<Expr>>) -> ObjectPtr<Expr> {
    make_object(Call {
        base: expr_base(),
        op: op.to_owned(),
        args,
    })
    .upcast()
}

/// `(eval value)`.
pub fn evaluate(value: ObjectPtr<Expr>) -> ObjectPtr<Stmt> {
    make_object(Evaluate {
        base: stmt_base(),
        value,
    })
    .upcast()
}

/// `(let var value body)` as a statement.
pub fn let_stmt(
    var: ObjectPtr<Var>,
    value: ObjectPtr<Expr>,
    body: ObjectPtr<Stmt>,
) -> ObjectPtr<Stmt> {
    make_object(LetStmt {
        base: stmt_base(),
        var,
        value,
        body,
    })
    .upcast()
}

/// `(store buffer index value)`.
pub fn store(buffer: &str, index: ObjectPtr<Expr>, value: ObjectPtr<Expr>) -> ObjectPtr<Stmt> {
    make_object(Store {
        base: stmt_base(),
        buffer: buffer.to_owned(),
        index,
        value,
    })
    .upcast()
}

/// `(seq stmts…)`.
pub fn seq(seq: Array<ObjectPtr<Stmt>>) -> ObjectPtr<Stmt> {
    make_object(SeqStmt {
        base: stmt_base(),
        seq,
    })
    .upcast()
}

/// `(if cond then else)`.
pub fn if_then_else(
    cond: ObjectPtr<Expr>,
    t: ObjectPtr<Stmt>,
    f: ObjectPtr<Stmt>,
) -> ObjectPtr<Stmt> {
    make_object(IfThenElse {
        base: stmt_base(),
        cond,
        then_case: t,
        else_case: f,
    })
    .upcast()
}

/// `(fn name (params…) body)`.
pub fn function(
    name: &str,
    params: Array<ObjectPtr<Var>>,
    body: ObjectPtr<Stmt>,
) -> ObjectPtr<Function> {
    make_object(Function {
        base: Object::new(),
        name: name.to_owned(),
        params,
        body,
    })
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
        var(name)
    }
    fn var_ref(&mut self, v: &ObjectPtr<Var>) -> ObjectPtr<Expr> {
        v.clone().upcast()
    }
    fn int(&mut self, value: i64) -> ObjectPtr<Expr> {
        int(value)
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
        not(a)
    }
    fn select(
        &mut self,
        c: ObjectPtr<Expr>,
        t: ObjectPtr<Expr>,
        f: ObjectPtr<Expr>,
    ) -> ObjectPtr<Expr> {
        select(c, t, f)
    }
    fn let_(
        &mut self,
        v: ObjectPtr<Var>,
        value: ObjectPtr<Expr>,
        body: ObjectPtr<Expr>,
    ) -> ObjectPtr<Expr> {
        let_(v, value, body)
    }
    fn call(&mut self, name: &str, args: Vec<ObjectPtr<Expr>>) -> ObjectPtr<Expr> {
        call(name, args.into())
    }
    fn evaluate(&mut self, value: ObjectPtr<Expr>) -> ObjectPtr<Stmt> {
        evaluate(value)
    }
    fn let_stmt(
        &mut self,
        v: ObjectPtr<Var>,
        value: ObjectPtr<Expr>,
        body: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Stmt> {
        let_stmt(v, value, body)
    }
    fn store(
        &mut self,
        buffer: &str,
        index: ObjectPtr<Expr>,
        value: ObjectPtr<Expr>,
    ) -> ObjectPtr<Stmt> {
        store(buffer, index, value)
    }
    fn seq(&mut self, stmts: Vec<ObjectPtr<Stmt>>) -> ObjectPtr<Stmt> {
        seq(stmts.into())
    }
    fn if_then_else(
        &mut self,
        c: ObjectPtr<Expr>,
        t: ObjectPtr<Stmt>,
        f: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Stmt> {
        if_then_else(c, t, f)
    }
    fn function(
        &mut self,
        name: &str,
        params: Vec<ObjectPtr<Var>>,
        body: ObjectPtr<Stmt>,
    ) -> ObjectPtr<Function> {
        function(name, params.into(), body)
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
