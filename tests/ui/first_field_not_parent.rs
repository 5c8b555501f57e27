use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Expr")]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.IntImm", parent = Expr)]
struct IntImm {
    value: i64,
    base: Expr,
}

fn main() {}
