//! Two link-time types claiming one static index: which one keeps it must not depend on
//! link or hash order. A core type (`ffi.Tensor` at 70 here) always keeps its index;
//! between two other types, the smaller key does; the refused type is listed by
//! `link_errors()` and its first use fails, naming both keys.
//!
//! The registry's key map is seeded per process, so the test runs this binary's
//! registry build in several child processes and checks they all agree. This binary
//! holds only these types, so that nothing else claims their indices.

use object_containers::NDArrayObj;
use object_core::registry::{self, RegistryError};
use object_core::{Object, ObjectType};
use object_tests::scaled;

/// Claims `ffi.Tensor`'s index.
#[derive(Object)]
#[repr(C)]
#[object(key = "clash.Tensor", index = 70, final)]
struct ClashTensor {
    base: Object,
}

/// Two non-core types on one free index; declared in reverse key order.
#[derive(Object)]
#[repr(C)]
#[object(key = "clash.B", index = 100, final)]
struct ClashB {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "clash.A", index = 100, final)]
struct ClashA {
    base: Object,
}

/// `T`'s index, or the message of the panic its first use raised.
fn first_use<T: ObjectType>() -> Result<u32, String> {
    std::panic::catch_unwind(T::type_index).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default()
    })
}

/// What this process's registry decided, one line per claimant.
fn outcome() -> String {
    let show = |r: Result<u32, String>| match r {
        Ok(i) => format!("index {i}"),
        Err(m) => format!("refused: {m}"),
    };
    format!(
        "ffi.Tensor: {}\nclash.Tensor: {}\nclash.A: {}\nclash.B: {}",
        show(first_use::<NDArrayObj>()),
        show(first_use::<ClashTensor>()),
        show(first_use::<ClashA>()),
        show(first_use::<ClashB>()),
    )
}

#[test]
fn the_core_type_keeps_its_index_and_the_error_names_both_keys() {
    assert_eq!(NDArrayObj::type_index(), 70);
    assert_eq!(registry::type_info(70).unwrap().key(), "ffi.Tensor");
    assert_eq!(ClashA::type_index(), 100);
    assert_eq!(registry::type_info(100).unwrap().key(), "clash.A");

    let errors = registry::link_errors();
    let find = |key: &str| {
        errors
            .iter()
            .find(|e| matches!(e, RegistryError::StaticIndexTaken { key: k, .. } if k == key))
            .unwrap_or_else(|| panic!("no StaticIndexTaken for {key} in {errors:?}"))
            .clone()
    };
    assert_eq!(
        find("clash.Tensor"),
        RegistryError::StaticIndexTaken {
            key: "clash.Tensor".into(),
            index: 70,
            holder: "ffi.Tensor".into(),
        }
    );
    assert_eq!(
        find("clash.B"),
        RegistryError::StaticIndexTaken {
            key: "clash.B".into(),
            index: 100,
            holder: "clash.A".into(),
        }
    );
    assert!(registry::type_info_by_key("clash.Tensor").is_none());
    assert!(registry::type_info_by_key("clash.B").is_none());

    // The refused types' first use fails, naming both keys.
    for (msg, key, holder) in [
        (first_use::<ClashTensor>(), "clash.Tensor", "ffi.Tensor"),
        (first_use::<ClashB>(), "clash.B", "clash.A"),
    ] {
        let msg = msg.expect_err("the refused type has no index");
        assert!(
            msg.contains(&format!("`{key}`")) && msg.contains(&format!("`{holder}`")),
            "{msg}"
        );
    }
}

/// Runs only in the child processes of [`the_outcome_is_the_same_in_every_process`].
#[test]
#[cfg_attr(
    not(miri),
    ignore = "helper: run in child processes by the_outcome_is_the_same_in_every_process"
)]
fn outcome_child() {
    if std::env::var_os("STATIC_INDEX_CHILD").is_none() {
        return;
    }
    println!("<outcome>\n{}\n</outcome>", outcome());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spawns processes; under Miri its child scenario runs in-process"
)]
fn the_outcome_is_the_same_in_every_process() {
    let runs = scaled(12, 4);
    let exe = std::env::current_exe().unwrap();
    let mut seen: Vec<(String, usize)> = Vec::new();
    for _ in 0..runs {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "outcome_child", "--ignored", "--nocapture"])
            .env("STATIC_INDEX_CHILD", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed: {stdout}");
        let start = stdout.find("<outcome>\n").expect("an outcome") + "<outcome>\n".len();
        let end = stdout.find("\n</outcome>").expect("an outcome");
        let o = stdout[start..end].to_owned();
        match seen.iter_mut().find(|(s, _)| *s == o) {
            Some((_, n)) => *n += 1,
            None => seen.push((o, 1)),
        }
    }
    assert_eq!(seen.len(), 1, "outcomes differ between runs: {seen:#?}");
    let expected = "ffi.Tensor: index 70\n\
        clash.Tensor: refused: object type `clash.Tensor` cannot be registered: \
        type `clash.Tensor` asks for static index 70, which `ffi.Tensor` holds\n\
        clash.A: index 100\n\
        clash.B: refused: object type `clash.B` cannot be registered: \
        type `clash.B` asks for static index 100, which `clash.A` holds";
    assert_eq!(seen[0].0, expected);
}
