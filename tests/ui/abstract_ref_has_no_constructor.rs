// An abstract type with a typed reference: `Expr::new()` says that it is abstract.
use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.absref.Expr", abstract, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

fn main() {
    let _ = Expr::new();
}
