use object_core::{Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.VecField")]
struct Block {
    base: Object,
    stmts: Vec<ObjectPtr<Object>>,
    weights: Option<Vec<f64>>,
}

fn main() {}
