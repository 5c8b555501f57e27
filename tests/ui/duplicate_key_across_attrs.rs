use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.A", final)]
#[object(key = "test.B", final)]
struct TwiceAcross {
    base: Object,
}

fn main() {}
