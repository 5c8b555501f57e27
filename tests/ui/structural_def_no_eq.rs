use object_core::{Object, ObjectRef};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefNoEq")]
struct Binder {
    base: Object,
    #[object(def, no_eq)]
    var: ObjectRef,
}

fn main() {}
