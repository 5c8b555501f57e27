use object_core::Object;

#[derive(Object)]
#[object(key = "test.NoRepr")]
struct NoRepr {
    base: Object,
}

fn main() {}
