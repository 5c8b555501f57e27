//! Calling a library written to the tvm-ffi convention (`__tvm_ffi_<name>`), compiled
//! from `tests/c/tvmffi_lib.c`, which defines its own `TVMFFIAny` and `DLTensor`.

mod support;

use std::path::Path;
use std::process::Command;

use core::ffi::c_void;
use object_capi::tvm::TvmFfiLibrary;

use object_containers::dlpack::DLTensor;
use object_containers::{Any, AnyView, NDArray};
use object_core::{DataType, Device};

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

    // Tensors: an NDArray (passed as its DLTensor*) and a raw DLTensor*, at a
    // parameter declared read-only.
    // SAFETY: `sum` only reads its tensor.
    let sum = unsafe { lib.function_reading("sum", &[0]) }.unwrap();
    let a = NDArray::from_slice(&[4], &[1.0f64, 2.0, 3.0, 4.5]).unwrap();
    assert_eq!(sum.call_with([&a]).unwrap(), Any::from(10.5));
    let raw = a.as_raw_view().unwrap();
    assert_eq!(sum.call(&[raw]).unwrap(), Any::from(10.5));
    // Undeclared, the parameter may be written: a shared NDArray is refused.
    let m = lib.module("tvmlib", &["add", "sum"]).unwrap();
    let e = m
        .get_function("sum", false)
        .unwrap()
        .call_with([&a])
        .unwrap_err();
    assert!(e.message().contains("lend it writable"), "{e}");

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

    writes_only_where_rust_lets_it(&lib);
}

/// A kernel that writes its output argument (destination-passing style) may write only
/// an NDArray lent writable: never read-only memory, never memory a live shared borrow
/// reads, never a borrowed `DLTensor*`.
fn writes_only_where_rust_lets_it(lib: &TvmFfiLibrary) {
    let fill = lib.function("fill").unwrap();

    // Read-only memory (a `static`, in the read-only segment), imported read-only.
    static CONSTANTS: [f64; 4] = [1.0, 2.0, 3.0, 4.0];
    let shape = [4i64];
    let t = DLTensor {
        data: CONSTANTS.as_ptr() as *mut c_void,
        device: Device::cpu(),
        ndim: 1,
        dtype: DataType::float(64),
        shape: shape.as_ptr() as *mut i64,
        strides: core::ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: `t` describes the static, valid for the process, which nobody writes.
    let ro = unsafe { NDArray::from_dl_tensor_owned_by(&t, true, ()) }.unwrap();
    let e = fill
        .call_with([AnyView::from(&ro), AnyView::from(9.0)])
        .unwrap_err();
    assert!(e.message().contains("read-only"), "{e}");
    assert_eq!(CONSTANTS, [1.0, 2.0, 3.0, 4.0]);

    // Memory a live shared borrow reads: refused, and the borrow sees no change.
    let a = NDArray::from_slice(&[3], &[1.0f64, 2.0, 3.0]).unwrap();
    let seen = a.as_slice::<f64>().unwrap();
    let e = fill
        .call_with([AnyView::from(&a.clone()), AnyView::from(9.0)])
        .unwrap_err();
    assert!(e.message().contains("shared"), "{e}");
    assert_eq!(seen, &[1.0, 2.0, 3.0]);

    // A borrowed DLTensor* cannot be lent.
    let e = fill
        .call_with([a.as_raw_view().unwrap(), AnyView::from(9.0)])
        .unwrap_err();
    assert!(e.message().contains("borrowed DLTensor*"), "{e}");

    // Lent writable: written, and readable again once the lease ends.
    let mut out = NDArray::from_slice(&[3], &[0.0f64; 3]).unwrap();
    {
        let lease = out.lend_mut().unwrap();
        fill.call_with([lease.arg(), AnyView::from(7.5)]).unwrap();
        // While lent, another handle cannot read it.
        let other = NDArray::try_from(lease.arg().to_any()).unwrap();
        assert_eq!(
            other.as_slice::<f64>().unwrap_err(),
            object_containers::NDArrayError::Lent
        );
    }
    assert_eq!(out.as_slice::<f64>().unwrap(), &[7.5, 7.5, 7.5]);
}
