//! Against the real tvm-ffi: `tests/cpp/tvm_kernels.cc`, built with the
//! `apache-tvm-ffi` wheel's headers and `TVM_FFI_DLL_EXPORT_TYPED_FUNC`, called through
//! `TvmFfiLibrary` and `load_module`. Every value kind both ways, every error with its
//! kind, callbacks, discovery and metadata, and that returned objects are released.
//! Skipped (with the reason printed) without tvm-ffi, except in CI; not under Miri
//! (foreign code).

mod support;

use object_capi::tvm::TvmFfiLibrary;
use object_containers::{Any, AnyView, Function, Module, NDArray, Shape};
use object_core::{Bytes, DataType, Device, Error, ErrorKind};

/// The tests of this file run one at a time: the memory test reads the process's
/// resident size, which the others' allocations would move.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn lib() -> Option<TvmFfiLibrary> {
    let path = support::tvm_kernels()?;
    Some(TvmFfiLibrary::open(path).expect("open the kernel library"))
}

fn call(lib: &TvmFfiLibrary, name: &str, args: &[AnyView<'_>]) -> Result<Any, Error> {
    lib.function(name).unwrap().call(args)
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn plain_values() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    assert!(lib.has_tvm_ffi_runtime());
    assert_eq!(
        call(&lib, "add_int", &[40.into(), 2.into()]).unwrap(),
        Any::from(42)
    );
    assert_eq!(
        call(&lib, "mul_float", &[1.5.into(), 4.0.into()]).unwrap(),
        Any::from(6.0)
    );
    assert_eq!(
        call(&lib, "not_bool", &[true.into()]).unwrap(),
        Any::from(false)
    );
    assert!(call(&lib, "return_none", &[]).unwrap().is_none());
    let dt = DataType::float(16);
    assert_eq!(
        call(&lib, "echo_dtype", &[dt.into()])
            .unwrap()
            .as_data_type(),
        Some(dt)
    );
    assert_eq!(
        call(&lib, "dtype_bits", &[dt.into()]).unwrap(),
        Any::from(16)
    );
    let dev = Device::new(2, 3);
    assert_eq!(
        call(&lib, "echo_device", &[dev.into()])
            .unwrap()
            .as_device(),
        Some(dev)
    );
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn strings_and_bytes() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    // Returned: a small (inline) string, long ones (ffi.String objects), 1 MiB too.
    assert_eq!(
        call(&lib, "small_string", &[]).unwrap().as_str(),
        Some("tiny")
    );
    let long = call(&lib, "long_string", &[300.into()]).unwrap();
    let s = long.as_str().unwrap();
    assert_eq!((s.len(), &s[..3], &s[97..98]), (300, "axx", "b"));
    let mib = call(&lib, "long_string", &[(1i64 << 20).into()]).unwrap();
    assert_eq!(mib.as_str().map(str::len), Some(1 << 20));

    // Passed and echoed: short, long, with NULs inside (a tvm-ffi String made for the
    // call), as our string objects and as borrowed `&str`.
    let echo = lib.function("echo_string").unwrap();
    for text in [
        "",
        "hi",
        "hello, tvm-ffi kernels",
        "nul\0inside",
        "\0",
        &"y".repeat(5000),
    ] {
        let owned = Any::from(text);
        for arg in [AnyView::from(text), owned.view()] {
            assert_eq!(echo.call(&[arg]).unwrap().as_str(), Some(text), "{text:?}");
        }
        assert_eq!(
            call(&lib, "string_size", &[text.into()]).unwrap(),
            Any::from(text.len() as i64)
        );
        assert_eq!(
            call(&lib, "std_string_size", &[text.into()]).unwrap(),
            Any::from(text.len() as i64)
        );
    }
    // A `const char*` parameter takes strings without a NUL; one with a NUL inside
    // cannot be one, and tvm-ffi refuses it with its own TypeError.
    assert_eq!(
        call(&lib, "cstr_len", &["four".into()]).unwrap(),
        Any::from(4)
    );
    let e = call(&lib, "cstr_len", &["a\0b".into()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");

    // Bytes: inline (SmallBytes) and objects returned; passed as `TVMFFIByteArray*`.
    let small = call(&lib, "small_bytes", &[]).unwrap();
    assert_eq!(Bytes::try_from(small).unwrap().as_bytes(), b"\x01\x00\x02");
    let long = call(&lib, "long_bytes", &[1000.into()]).unwrap();
    assert_eq!(Bytes::try_from(long).unwrap().as_bytes(), &[0xff; 1000][..]);
    for b in [&b""[..], b"\x00\x01", &[7u8; 4096][..]] {
        let arg = Bytes::new(b);
        let back = call(&lib, "echo_bytes", &[AnyView::from(&arg)]).unwrap();
        assert_eq!(Bytes::try_from(back).unwrap().as_bytes(), b);
        // `std::string` takes a byte array too…
        assert_eq!(
            call(&lib, "std_string_size", &[AnyView::from(&arg)]).unwrap(),
            Any::from(b.len() as i64)
        );
    }
    // …but tvm-ffi's `ffi::String` does not (its conversion takes `const char*`,
    // inline strings and string objects only), which is why a string with a NUL is
    // passed as a tvm-ffi String rather than as a byte array.
    let e = call(&lib, "string_size", &[AnyView::from(&Bytes::new(b"ab"))]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");
    assert!(
        e.message().contains("Mismatched type on argument #0"),
        "{e}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn shapes_and_tensors() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    let shape = Shape::try_from(call(&lib, "make_shape", &[4.into()]).unwrap()).unwrap();
    assert_eq!(shape.as_slice(), &[1, 2, 3, 4]);
    assert_eq!(
        call(
            &lib,
            "shape_numel",
            &[AnyView::from(&Shape::new(&[2, 3, 7]))]
        )
        .unwrap(),
        Any::from(42)
    );

    // A tensor the kernel allocated, imported without a copy.
    let t = NDArray::try_from(call(&lib, "make_tensor", &[5.into()]).unwrap()).unwrap();
    assert_eq!(t.shape(), &[5]);
    assert_eq!(t.as_slice::<f32>().unwrap(), &[0.0, 0.5, 1.0, 1.5, 2.0]);
    assert!(!t.is_read_only());

    // Destination-passing: inputs declared read-only, the output lent.
    // SAFETY: `add_into` reads its first two tensors and writes only the third.
    let add_into = unsafe { lib.function_reading("add_into", &[0, 1]) }.unwrap();
    let a = NDArray::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let b = NDArray::from_slice(&[3], &[10.0f32, 20.0, 30.0]).unwrap();
    let mut out = NDArray::from_slice(&[3], &[0.0f32; 3]).unwrap();
    {
        let lease = out.lend_mut().unwrap();
        add_into
            .call(&[AnyView::from(&a), AnyView::from(&b), lease.arg()])
            .unwrap();
    }
    assert_eq!(out.as_slice::<f32>().unwrap(), &[11.0, 22.0, 33.0]);
    // Not lent: refused before the kernel runs.
    let e = add_into
        .call(&[AnyView::from(&a), AnyView::from(&b), AnyView::from(&out)])
        .unwrap_err();
    assert!(e.message().contains("lend it writable"), "{e}");
    // The kernel's own checks arrive as its errors.
    let short = NDArray::from_slice(&[2], &[0.0f32; 2]).unwrap();
    let mut o2 = NDArray::from_slice(&[3], &[0.0f32; 3]).unwrap();
    let lease = o2.lend_mut().unwrap();
    let e = add_into
        .call(&[AnyView::from(&a), AnyView::from(&short), lease.arg()])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError, "{e}");
    assert!(e.message().contains("shapes differ"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn errors_keep_their_kind() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    let e = call(&lib, "raise_value_error", &[7.into()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError, "{e}");
    assert_eq!(e.message(), "boom 7");
    // The foreign backtrace comes along as frames, and the call as the last one.
    assert!(
        e.frames().iter().any(|f| f.contains("RaiseValueError")),
        "{:?}",
        e.frames()
    );
    let frames = e.frames();
    assert!(frames[0].contains("RaiseValueError"), "{e}");
    assert!(frames[1].contains("__tvm_ffi_raise_value_error"), "{e}");
    assert_eq!(frames[2], "tvm-ffi function `raise_value_error`", "{e}");
    assert_eq!(frames.len(), 4, "{e}"); // and our function's own frame
    let e = call(&lib, "raise_type_error", &[]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (&ErrorKind::TypeError, "not a type I know")
    );
    let e = call(&lib, "raise_custom", &[]).unwrap_err();
    assert_eq!(e.kind(), "KernelFault");
    assert!(e.kind().is_other());
    let e = call(&lib, "raise_std", &[]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (&ErrorKind::InternalError, "a std::exception")
    );
    // tvm-ffi's own argument checks.
    let e = call(&lib, "add_int", &["x".into(), 1.into()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");
    assert!(
        e.message().contains("Mismatched type on argument #0"),
        "{e}"
    );
    let e = call(&lib, "add_int", &[1.into()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");
    // An object this runtime has no form for: released, and named.
    let e = call(&lib, "return_array", &[]).unwrap_err();
    assert!(e.message().contains("`ffi.Array`"), "{e}");
    // Ours that cannot cross.
    let m = Module::builder("m").build();
    let e = call(&lib, "add_int", &[AnyView::from(&m), 1.into()]).unwrap_err();
    assert!(
        e.message().contains("a `ffi.Module` cannot be passed"),
        "{e}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn callbacks_both_ways() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    // Our function called by the kernel.
    let inc = Function::from_typed(|x: i64| x + 1);
    let apply_twice = lib.function("apply_twice").unwrap();
    assert_eq!(
        apply_twice.call(&[AnyView::from(&inc), 40.into()]).unwrap(),
        Any::from(42)
    );
    // Values through a callback and back: strings, bytes, shapes, tensors.
    let apply_any = lib.function("apply_any").unwrap();
    let id = Function::from_packed(|args| Ok(args[0].to_any()));
    for text in ["s", "a longer string through the callback", "n\0l"] {
        let r = apply_any.call(&[AnyView::from(&id), text.into()]).unwrap();
        assert_eq!(r.as_str(), Some(text));
    }
    let r = apply_any
        .call(&[AnyView::from(&id), AnyView::from(&Shape::new(&[3, 4]))])
        .unwrap();
    assert_eq!(Shape::try_from(r).unwrap().as_slice(), &[3, 4]);
    let r = apply_any
        .call(&[AnyView::from(&id), AnyView::from(&Bytes::new(b"\x00b"))])
        .unwrap();
    assert_eq!(Bytes::try_from(r).unwrap().as_bytes(), b"\x00b");
    let make = Function::from_packed(|_| {
        Ok(Any::from(
            NDArray::from_slice(&[2], &[1.0f32, 2.0]).unwrap(),
        ))
    });
    let r = apply_any.call(&[AnyView::from(&make), 0.into()]).unwrap();
    assert_eq!(
        NDArray::try_from(r).unwrap().as_slice::<f32>().unwrap(),
        &[1.0, 2.0]
    );
    // A shared NDArray is not handed over (a tvm-ffi Tensor cannot be read-only).
    let kept = NDArray::from_slice(&[1], &[5.0f32]).unwrap();
    let k2 = kept.clone();
    let share = Function::from_packed(move |_| Ok(Any::from(k2.clone())));
    let e = apply_any
        .call(&[AnyView::from(&share), 0.into()])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");

    // Our error comes back through the kernel with its kind and message.
    let fail = Function::from_packed(|_| Err(Error::value_error("no thanks")));
    let e = apply_twice
        .call(&[AnyView::from(&fail), 1.into()])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ValueError, "{e}");
    assert!(e.message().starts_with("no thanks"), "{e}");
    let panics = Function::from_packed(|_| panic!("a panic in the callback"));
    let e = apply_twice
        .call(&[AnyView::from(&panics), 1.into()])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Panic, "{e}");
    // A wrong result type is the kernel's TypeError.
    let text = Function::from_packed(|_| Ok(Any::from("not an int")));
    let e = apply_twice
        .call(&[AnyView::from(&text), 1.into()])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");

    // A tvm-ffi function returned to us, called, passed back in.
    let add5 = Function::try_from(call(&lib, "make_adder", &[5.into()]).unwrap()).unwrap();
    assert_eq!(add5.call(&[10.into()]).unwrap(), Any::from(15));
    assert_eq!(
        apply_twice.call(&[AnyView::from(&add5), 0.into()]).unwrap(),
        Any::from(10)
    );
    let e = add5.call(&["x".into()]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TypeError, "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn discovery_and_load_module() {
    let Some(path) = support::tvm_kernels() else {
        return;
    };
    let lib = TvmFfiLibrary::open(&path).unwrap();
    let names = lib.function_names().unwrap();
    for n in [
        "add_int",
        "echo_string",
        "make_tensor",
        "raise_value_error",
        "apply_twice",
    ] {
        assert!(names.iter().any(|m| m == n), "{n} in {names:?}");
    }
    assert!(names.iter().all(|n| !n.starts_with('_')), "{names:?}");
    assert_eq!(names.len(), 29, "{names:?}");
    let meta = lib.metadata("add_int").unwrap().unwrap();
    assert!(
        meta.contains("type_schema") && meta.contains("int"),
        "{meta}"
    );
    assert_eq!(
        lib.doc("add_int").unwrap().as_deref(),
        Some("Adds two integers.")
    );
    assert_eq!(lib.doc("mul_float").unwrap(), None);

    let m = lib.module_all("kernels").unwrap();
    assert_eq!(m.function_names().count(), names.len());

    // One loader: `load_module` tells a tvm-ffi library from a plugin by its symbols.
    let m = object_capi::load_module(&path).unwrap();
    assert_eq!(m.name(), "libtvm_kernels");
    let add = m.get_function("add_int", false).unwrap();
    assert_eq!(add.call(&[1.into(), 2.into()]).unwrap(), Any::from(3));
    let e = m
        .get_function("raise_value_error", false)
        .unwrap()
        .call(&[3.into()])
        .unwrap_err();
    assert_eq!((e.kind(), e.message()), (&ErrorKind::ValueError, "boom 3"));
}

/// Resident memory in bytes (`/proc/self/statm`'s second field, in pages).
fn rss() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Returned strings and tensors are released: 64 calls returning 1 MiB strings, and 64
/// returning 1 MiB tensors, each leave resident memory far below the 64 MiB a leak
/// would keep.
#[test]
#[cfg_attr(miri, ignore = "calls foreign code: no FFI under Miri")]
fn returned_objects_are_released() {
    let _serial = serial();
    let Some(lib) = lib() else { return };
    let long_string = lib.function("long_string").unwrap();
    let make_tensor = lib.function("make_tensor").unwrap();
    let mib = 1i64 << 20;
    let strings = || {
        let s = long_string.call(&[mib.into()]).unwrap();
        assert_eq!(s.as_str().map(str::len), Some(1 << 20));
    };
    let tensors = || {
        let t = NDArray::try_from(make_tensor.call(&[(mib / 4).into()]).unwrap()).unwrap();
        assert_eq!(t.shape(), &[mib / 4]);
    };
    for (what, f) in [("strings", &strings as &dyn Fn()), ("tensors", &tensors)] {
        // Warm up (the allocators' first arenas).
        for _ in 0..4 {
            f();
        }
        let Some(before) = rss() else {
            println!("SKIPPED the RSS check: no /proc/self/statm");
            return;
        };
        for _ in 0..64 {
            f();
        }
        let growth = rss().unwrap().saturating_sub(before);
        assert!(
            growth < 8 << 20,
            "resident memory grew by {growth} bytes over 64 calls returning 1 MiB {what}"
        );
    }
}

/// The same library from C (`tests/c/tvm_kernels.c`), loaded with `obj_module_load`.
#[test]
#[cfg_attr(
    miri,
    ignore = "compiles and runs C programs: no FFI or processes under Miri"
)]
fn from_c() {
    let _serial = serial();
    let Some(kernels) = support::tvm_kernels() else {
        return;
    };
    let Some(cc) = support::c_compiler() else {
        return;
    };
    let lib_dir = support::build_library("object-capi");
    let exe = support::out_dir().join("tvm_kernels");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = std::process::Command::new(cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-o"])
        .arg(&exe)
        .arg(dir.join("tests/c/tvm_kernels.c"))
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-L")
        .arg(&lib_dir)
        .arg("-lobject_capi")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling tvm_kernels.c failed");
    let out = support::run_with_args(&exe, &[&kernels]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "tvm_kernels failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert_eq!(stdout.trim(), "tvm_kernels: ok");
}
