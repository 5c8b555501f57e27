use object_core::{Object, ObjectRef};

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefaultNotDefault")]
struct DefaultNotDefault {
    base: Object,
    #[object(default)]
    target: ObjectRef,
}

fn main() {}
