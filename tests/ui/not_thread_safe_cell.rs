use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.HasCell")]
struct HasCell {
    base: Object,
    counter: std::cell::Cell<i32>,
}

fn main() {}
