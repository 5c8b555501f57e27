use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefaultParent")]
struct DefaultParent {
    #[object(default)]
    base: Object,
    level: i64,
}

fn main() {}
