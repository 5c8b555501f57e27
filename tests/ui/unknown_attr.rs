use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Unknown", abc = 1)]
struct Unknown {
    base: Object,
}

fn main() {}
