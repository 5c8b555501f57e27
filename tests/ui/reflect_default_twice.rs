use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefaultTwice")]
struct DefaultTwice {
    base: Object,
    #[object(default = 1, default)]
    level: i64,
}

fn main() {}
