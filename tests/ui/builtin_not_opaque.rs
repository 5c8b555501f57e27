use object_core::Object;

#[derive(Object, Debug)]
#[repr(C)]
#[object(key = "test.NotOpaque", builtin = HOOKS)]
struct Builtin {
    base: Object,
    n: i64,
}

fn main() {}
