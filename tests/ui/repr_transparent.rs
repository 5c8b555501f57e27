use object_core::Object;

#[derive(Object)]
#[repr(transparent)]
#[object(key = "test.Transparent")]
struct Transparent {
    base: Object,
}

fn main() {}
