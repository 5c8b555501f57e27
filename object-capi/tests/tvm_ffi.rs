//! Calling a library written to the tvm-ffi convention (`__tvm_ffi_<name>`), compiled
//! from `tests/c/tvmffi_lib.c`, which defines its own `TVMFFIAny` and `DLTensor`.

mod support;

use std::path::Path;
use std::process::Command;

use object_capi::tvm::TvmFfiLibrary;
use object_containers::{Any, AnyView, NDArray};

use support::{c_compiler, out_dir};

#[test]
#[cfg_attr(miri, ignore = "loads a shared library: no FFI under Miri")]
fn tvm_ffi_convention_library() {
    let Some(cc) = c_compiler() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_path = out_dir().join("tvmffi_lib.so");
    let status = Command::new(cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-shared", "-fPIC",
        ])
        .arg(dir.join("tests/c/tvmffi_lib.c"))
        .arg("-o")
        .arg(&lib_path)
        .status()
        .expect("run the C compiler");
    assert!(status.success());

    let lib = TvmFfiLibrary::open(&lib_path).unwrap();
    let add = lib.function("add").unwrap();
    assert_eq!(
        add.call_with([AnyView::from(40), AnyView::from(2)])
            .unwrap(),
        Any::from(42)
    );
    let scale = lib.function("scale").unwrap();
    assert_eq!(
        scale
            .call_with([AnyView::from(1.5), AnyView::from(4.0)])
            .unwrap(),
        Any::from(6.0)
    );
    let negate = lib.function("negate").unwrap();
    assert_eq!(
        negate.call_with([AnyView::from(true)]).unwrap(),
        Any::from(false)
    );
    let strlen = lib.function("strlen").unwrap();
    assert_eq!(
        strlen.call_with([AnyView::from("hello, tvm")]).unwrap(),
        Any::from(10)
    );
    assert_eq!(
        strlen.call_with([AnyView::from("tiny")]).unwrap(),
        Any::from(4)
    );

    // Tensors: an NDArray (passed as its DLTensor*) and a raw DLTensor*.
    let sum = lib.function("sum").unwrap();
    let a = NDArray::from_slice(&[4], &[1.0f64, 2.0, 3.0, 4.5]).unwrap();
    assert_eq!(sum.call_with([&a]).unwrap(), Any::from(10.5));
    let raw = a.as_raw_view();
    assert_eq!(sum.call(&[raw]).unwrap(), Any::from(10.5));
    let m = lib.module("tvmlib", &["add", "sum"]).unwrap();
    assert_eq!(
        m.get_function("sum", false)
            .unwrap()
            .call_with([&a])
            .unwrap(),
        Any::from(10.5)
    );

    // Errors: a nonzero return names the function; an object return says so; an object
    // argument is refused; a missing symbol is an error.
    let e = lib
        .function("fail")
        .unwrap()
        .call_with::<[AnyView<'_>; 0]>([])
        .unwrap_err();
    assert_eq!(e.kind(), "TvmFfiError");
    assert!(e.message().contains("`fail` failed (returned -1)"), "{e}");
    let e = add
        .call_with([AnyView::from("x"), AnyView::from(1)])
        .unwrap_err();
    assert!(e.message().contains("`add` failed (returned -2)"), "{e}");
    let e = lib
        .function("make_object")
        .unwrap()
        .call_with::<[AnyView<'_>; 0]>([])
        .unwrap_err();
    assert!(
        e.message().contains("returned an object (type index 70)"),
        "{e}"
    );
    let e = add
        .call_with([AnyView::from(&m), AnyView::from(1)])
        .unwrap_err();
    assert!(
        e.message().contains("a `ffi.Module` cannot be passed"),
        "{e}"
    );
    let e = lib.function("no_such").unwrap_err();
    assert!(e.message().contains("__tvm_ffi_no_such"), "{e}");
}
