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
    base: Object,
    value: i64,
}

fn main() {}
