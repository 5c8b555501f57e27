use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Low", index = 64)]
struct Low {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.High", index = 128)]
struct High {
    base: Object,
}

fn main() {}
