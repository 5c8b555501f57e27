use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefaultWrongType")]
struct DefaultWrongType {
    base: Object,
    #[object(default = "seven")]
    level: i64,
}

fn main() {}
