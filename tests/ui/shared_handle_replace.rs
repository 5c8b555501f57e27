//! A shared handle derefs to `&T` only: no `mem::replace` / `mem::swap` / assignment
//! through it.

#![allow(unused_mut)] // the bindings are `mut` so that only the missing `DerefMut` is reported

use object_core::{make_object, Object};

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.replace.Node")]
struct Node {
    base: Object,
    value: i64,
}

fn main() {
    let mut a = make_object(Node { base: Object::new(), value: 1 });
    let mut b = make_object(Node { base: Object::new(), value: 2 });
    let _ = std::mem::replace(&mut *a, Node { base: Object::new(), value: 3 });
    std::mem::swap(&mut *a, &mut *b);
    a.value = 4;
}
