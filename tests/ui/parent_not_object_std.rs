use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.StringChild", parent = String)]
struct StringChild {
    base: String,
}

fn main() {
    let _ = Object::new();
}
