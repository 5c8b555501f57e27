use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.HasRc")]
struct HasRc {
    base: Object,
    #[object(skip)]
    shared: std::rc::Rc<i32>,
}

fn main() {}
