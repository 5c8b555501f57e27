use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.CustomNoDebug", custom_debug)]
struct CustomNoDebug {
    base: Object,
    value: i64,
}

fn main() {}
