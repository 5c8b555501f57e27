//! The parent part of a projection was `Pin<&mut Parent>`, so `base.set(...)` overwrote
//! the header (or a parent's whole part). It is now the parent's projection: `()` for
//! `Object`, a struct of field references above it.

use object_core::{make_object, Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.base_set.Expr")]
struct Expr {
    base: Object,
    span: u32,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.base_set.Add", parent = Expr)]
struct Add {
    base: Expr,
    lhs: i64,
}

fn main() {
    let mut e = make_object(Expr { base: Object::new(), span: 0 });
    ObjectPtr::get_mut(&mut e).unwrap().base.set(Object::new());

    let mut a = make_object(Add { base: Expr { base: Object::new(), span: 0 }, lhs: 1 });
    ObjectPtr::get_mut(&mut a)
        .unwrap()
        .base
        .set(Expr { base: Object::new(), span: 1 });
}
