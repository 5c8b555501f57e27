use object_core::Object;

static NOT_HOOKS: u32 = 0;

#[derive(Object, Debug)]
#[repr(C)]
#[object(key = "test.NotHooks", opaque, builtin = NOT_HOOKS)]
struct Builtin {
    base: Object,
}

fn main() {}
