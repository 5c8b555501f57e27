use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = 5)]
struct IntKey {
    base: Object,
}

fn main() {}
