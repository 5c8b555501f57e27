use object_core::Object;

#[repr(C)]
struct Plain {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.PlainChild", parent = Plain)]
struct PlainChild {
    base: Plain,
}

fn main() {}
