use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Movable")]
struct Movable {
    base: Object,
    value: i64,
}

// Would let safe code move (or `mem::swap`) a pinned object header.
impl Unpin for Movable {}

fn main() {}
