use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Unit")]
struct Unit;

fn main() {}
