// The parent embedded as the first field, but `parent = Expr` left out.
use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.pnd.Expr", abstract)]
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.pnd.IntImm", final)]
pub struct IntImm {
    base: Expr,
    value: i64,
}

fn main() {}
