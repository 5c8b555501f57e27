use object_core::Object;

const KEY: &str = "test.IdentKey";

#[derive(Object)]
#[repr(C)]
#[object(key = KEY)]
struct IdentKey {
    base: Object,
}

fn main() {
    let _ = KEY;
}
