// `ref = …` names a new type: not the node's own name, and not on an `opaque` type.
use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tref.Same", ref = Same)]
pub struct Same {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.tref.Opaque", opaque, ref = OpaqueRef)]
pub struct OpaqueNode {
    base: Object,
}

fn main() {}
