//! The checked-in C header is what cbindgen generates from the crate today.
//! `OBJECT_CAPI_BLESS=1 cargo test -p object-capi --test header` rewrites it.

use std::path::Path;

#[test]
#[cfg_attr(
    miri,
    ignore = "runs cbindgen (file system, a parser): not what Miri checks"
)]
fn header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = cbindgen::generate(dir).expect("cbindgen runs on object-capi");
    let mut text = Vec::new();
    generated.write(&mut text);
    let text = String::from_utf8(text).expect("the header is UTF-8");
    let path = dir.join("include/object_capi.h");
    if std::env::var_os("OBJECT_CAPI_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write the header");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == text,
        "include/object_capi.h is out of date: run \
         `OBJECT_CAPI_BLESS=1 cargo test -p object-capi --test header` and commit it"
    );
}
