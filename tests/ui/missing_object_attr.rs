use object_core::Object;

#[derive(Object)]
#[repr(C)]
struct NoAttr {
    base: Object,
}

fn main() {}
