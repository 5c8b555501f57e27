use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Leaf", final)]
struct Leaf {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.BelowLeaf", parent = Leaf)]
struct BelowLeaf {
    base: Leaf,
}

fn main() {}
