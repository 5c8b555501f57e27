use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "")]
struct EmptyKey {
    base: Object,
}

fn main() {}
