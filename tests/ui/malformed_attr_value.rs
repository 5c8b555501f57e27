use object_core::Object;

// A value of the wrong kind is reported, and does not also report the `key` that
// follows it as missing.
#[derive(Object)]
#[repr(C)]
#[object(slots = "four", key = "test.Malformed")]
#[object(overflow = 1)]
struct Malformed {
    base: Object,
}

fn main() {}
