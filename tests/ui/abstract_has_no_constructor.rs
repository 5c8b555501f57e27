// An abstract type has no constructor; `abstract` and `final` exclude each other.
use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.abs.Expr", abstract)]
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.abs.Leaf", abstract, final)]
pub struct Leaf {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.abs.Named", abstract, constructor = "make")]
pub struct Named {
    base: Object,
}

fn main() {
    let _ = Expr::new();
}
