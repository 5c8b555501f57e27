use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.NoHeader")]
struct NoHeader {
    value: i64,
    base: Object,
}

fn main() {}
