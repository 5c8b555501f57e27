use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Union")]
union NotAStruct {
    a: u64,
    b: f64,
}

fn main() {}
