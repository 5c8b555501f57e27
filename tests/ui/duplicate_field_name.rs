use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DupName")]
struct DupName {
    base: Object,
    #[object(rename = "b")]
    a: i64,
    b: i64,
}

fn main() {}
