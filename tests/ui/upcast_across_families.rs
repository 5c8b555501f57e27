// Up-casting to a type that is not an ancestor.
use object_core::{Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.up.Expr")]
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.up.IntImm", parent = Expr, final)]
pub struct IntImm {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.up.Stmt")]
pub struct Stmt {
    base: Object,
}

fn main() {
    let i = IntImm::new(1);
    let _s: ObjectPtr<Stmt> = i.upcast::<Stmt>();
}
