use std::collections::HashMap;

use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.UnsupportedMap")]
struct UnsupportedMap {
    base: Object,
    table: HashMap<std::string::String, i64>,
}

fn main() {}
