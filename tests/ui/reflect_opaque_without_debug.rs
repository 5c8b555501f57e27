use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.OpaqueNoDebug", final, opaque)]
struct OpaqueNoDebug {
    base: Object,
    data: Vec<u8>,
}

fn main() {}
