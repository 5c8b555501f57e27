use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Generic")]
struct Generic<T> {
    base: Object,
    value: T,
}

fn main() {}
