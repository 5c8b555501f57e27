use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.DefaultOnSkip")]
struct DefaultOnSkip {
    base: Object,
    #[object(skip, default = 7)]
    cache: u64,
}

fn main() {}
