//! `Pin::set` on the result of unique access once wrote a whole value, header included,
//! over a live object. Unique access is now a field projection: there is nothing to `set`.

use object_core::{make_object, Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.pin_set.Node")]
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
    ObjectPtr::get_mut(&mut p).unwrap().set(node());
}
