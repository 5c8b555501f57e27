use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Borrowed")]
struct Borrowed<'a> {
    base: Object,
    name: &'a str,
}

fn main() {}
