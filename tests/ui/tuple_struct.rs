use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Tuple")]
struct Tuple(Object, i64);

fn main() {}
