use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.UnsupportedField")]
struct UnsupportedField {
    base: Object,
    count: i64,
    bytes: Vec<u8>,
}

fn main() {}
