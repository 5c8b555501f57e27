use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.A", key = "test.B")]
struct TwiceInOne {
    base: Object,
}

fn main() {}
