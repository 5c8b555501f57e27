use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.UnknownReflectAttr")]
struct UnknownReflectAttr {
    base: Object,
    #[object(readonly)]
    value: i64,
}

fn main() {}
