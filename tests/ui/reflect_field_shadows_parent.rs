use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ShadowBase")]
struct ShadowBase {
    base: Object,
    name: std::string::String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Shadow", parent = ShadowBase)]
struct Shadow {
    base: ShadowBase,
    name: std::string::String,
}

fn main() {}
