use object_core::{Object, ObjectRef};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefNotObject")]
struct Binder {
    base: Object,
    #[object(def)]
    count: i64,
    #[object(def)]
    var: ObjectRef,
}

fn main() {}
