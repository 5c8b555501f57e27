use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.FinalSlots", final, slots = 4)]
struct FinalSlots {
    base: Object,
}

fn main() {}
