//! `mem::swap` / `mem::replace` need `&mut` of the object (or of its parent part, or of
//! its header); unique access hands out none of them.

use object_core::{make_object, Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.swap.Expr")]
struct Expr {
    base: Object,
    span: u32,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "ui.swap.Add", parent = Expr)]
struct Add {
    base: Expr,
    lhs: i64,
}

fn add(lhs: i64) -> Add {
    Add { base: Expr { base: Object::new(), span: 0 }, lhs }
}

fn main() {
    let mut a = make_object(add(1));
    let mut b = make_object(add(2));
    // The whole object.
    std::mem::swap(
        ObjectPtr::get_mut(&mut a).unwrap(),
        ObjectPtr::get_mut(&mut b).unwrap(),
    );
    let _: &mut Add = ObjectPtr::get_mut(&mut a).unwrap();
    // The parent part and the header.
    let fa = ObjectPtr::get_mut(&mut a).unwrap();
    let _: &mut Expr = fa.base;
    let _: &mut Object = fa.base.base;
}
