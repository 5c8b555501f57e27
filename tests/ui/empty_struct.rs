use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Empty")]
struct Empty {}

fn main() {}
