use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.OpaqueAttr", opaque)]
struct OpaqueAttr {
    base: Object,
    #[object(no_eq)]
    len: usize,
}

impl std::fmt::Debug for OpaqueAttr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpaqueAttr")
    }
}

fn main() {}
