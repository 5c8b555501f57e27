// A typed reference where an ancestor's is expected: rustc's mismatch, with its
// suggestion of `.into()` (the derive writes `From<Int> for Expr`); and a reference of
// another family where a constructor takes an `Expr`.
use object_core::prelude::*;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tup.Expr", abstract, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tup.Int", parent = ExprNode, final, ref = Int)]
pub struct IntNode {
    base: ExprNode,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tup.Neg", parent = ExprNode, final, ref = Neg)]
pub struct NegNode {
    base: ExprNode,
    arg: Expr,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tup.Stmt", ref = Stmt)]
pub struct StmtNode {
    base: Object,
}

fn main() {
    let e: Expr = Int::new(3);
    let _ = Neg::new(Stmt::new());
    let _ = e;
}
