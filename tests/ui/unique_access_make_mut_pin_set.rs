//! `Pin::set` on the result of copy-on-write access: as for `get_mut`, the projection
//! has no `set`.

use object_core::{make_object, Object, ObjectPtr};

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ui.make_mut_set.Node")]
struct Node {
    base: Object,
    #[object(skip)]
    data: Vec<u8>,
}

fn node() -> Node {
    Node { base: Object::new(), data: Vec::new() }
}

fn main() {
    let mut p = make_object(node());
    ObjectPtr::make_mut(&mut p).unwrap().set(node());
}
