use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.SkipParent")]
struct SkipParent {
    #[object(skip)]
    base: Object,
    value: i64,
}

fn main() {}
