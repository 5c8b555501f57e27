// A `std::string::String` where the object `String` is needed.
use object_core::{Object, ObjectPtr};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.str.Var")]
pub struct Var {
    base: Object,
    name: object_core::String,
}

fn rename(v: &mut ObjectPtr<Var>, name: std::string::String) {
    let fields = ObjectPtr::get_mut(v).unwrap();
    *fields.name = name;
}

fn main() {
    let mut v = Var::new("x");
    rename(&mut v, "y".to_owned());
}
