use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.UnknownField")]
struct UnknownField {
    base: Object,
    #[object(defaults)]
    value: i64,
    #[object(alias = "v")]
    other: i64,
}

fn main() {}
