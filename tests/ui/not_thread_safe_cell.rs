use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.HasCell")]
struct HasCell {
    base: Object,
    #[object(skip)]
    counter: std::cell::Cell<i32>,
}

fn main() {}
