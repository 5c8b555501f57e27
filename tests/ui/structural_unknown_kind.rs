use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.StructuralKind", structural = "graph")]
struct Node {
    base: Object,
    value: i64,
}

fn main() {}
