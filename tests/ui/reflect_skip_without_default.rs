use object_core::Object;

/// Not `Default`.
struct Handle(u32);

#[derive(Object)]
#[repr(C)]
#[object(key = "test.SkipNoDefault")]
struct SkipNoDefault {
    base: Object,
    value: i64,
    #[object(skip)]
    handle: Handle,
}

fn main() {}
