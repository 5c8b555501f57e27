use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.RenameShadowBase", slots = 1)]
struct RenameShadowBase {
    base: Object,
    #[object(rename = "{id}")]
    id: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.RenameShadowMid", parent = RenameShadowBase, slots = 1)]
struct RenameShadowMid {
    base: RenameShadowBase,
    label: std::string::String,
}

/// Clashes with the grandparent's field, through a rename.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.RenameShadow", parent = RenameShadowMid)]
struct RenameShadow {
    base: RenameShadowMid,
    #[object(rename = "{id}")]
    other: i64,
}

fn main() {}
