use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(slots = 2)]
struct NoKey {
    base: Object,
}

fn main() {}
