use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ReadOnlyParent")]
struct ReadOnlyParent {
    #[object(read_only)]
    base: Object,
    value: i64,
}

fn main() {}
