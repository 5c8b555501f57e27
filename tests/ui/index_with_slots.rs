use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.StaticSlots", index = 100, slots = 4)]
struct StaticSlots {
    base: Object,
}

fn main() {}
