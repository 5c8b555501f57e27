// Assigning to a field through a shared handle.
use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.ui.assign.IntImm")]
pub struct IntImm {
    base: Object,
    value: i64,
}

fn main() {
    let mut p = IntImm::new(1);
    p.value = 2;
}
