// A handle of another family where a constructor takes `impl IntoObjectPtr<Expr>`.
use object_core::{Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.fam.Expr", abstract)]
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.fam.Neg", parent = Expr, final)]
pub struct Neg {
    base: Expr,
    arg: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.fam.Stmt")]
pub struct Stmt {
    base: Object,
}

fn main() {
    let s = Stmt::new();
    let _ = Neg::new(s);
}
