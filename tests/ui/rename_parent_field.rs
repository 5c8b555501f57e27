use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.RenameParent")]
struct RenameParent {
    #[object(rename = "header")]
    base: Object,
    value: i64,
}

fn main() {}
