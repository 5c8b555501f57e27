use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.SkipRename")]
struct SkipRename {
    base: Object,
    #[object(skip, rename = "cached")]
    cache: u64,
}

fn main() {}
