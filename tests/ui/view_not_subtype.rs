// A view lists a type outside the base's family, and `Other` twice.
use object_core::{object_view, Object};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.view.Expr", abstract)]
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.view.Int", parent = Expr, final)]
pub struct Int {
    base: Expr,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.view.Stmt")]
pub struct Stmt {
    base: Object,
}

object_view! {
    pub enum ExprView for Expr { Int, Stmt }
}

object_view! {
    pub enum Bad for Stmt { Other(Stmt), Int, Int }
}

fn main() {}
