//! Criterion benchmarks of a call into a kernel library built with the real tvm-ffi
//! (`object-capi/tests/cpp/tvm_kernels.cc`, built by `scripts/build_tvm_kernels.sh`):
//! its `add_int(a, b)`, from Rust through what `load_module` returns, beside the same
//! kernel called through tvm-ffi's own C API.
//!
//! Run with `TVM_FFI_CONFIG=<venv>/bin/tvm-ffi-config cargo bench -p object-benches
//! --bench tvm_kernels` (or with `tvm-ffi-config` on PATH). Without tvm-ffi it prints
//! why and measures nothing (the bench compiles without it: everything of tvm-ffi is
//! resolved at run time from the kernel library).
//!
//! # Groups
//!
//! - `tvm_ffi_kernel_add_int`: one call of the kernel `add_int(i64, i64) -> i64`:
//!   - `module_packed` / `module_typed`: the function of the `Module` that
//!     `load_module` makes of the library, through `Function::call` and the typed view
//!     (our function object, the arguments converted to tvm-ffi's values, the
//!     exported symbol called, the result converted back);
//!   - `tvm_ffi_function_call`: tvm-ffi's own `TVMFFIFunctionCall` on the function its
//!     module loader (`ffi.ModuleLoadFromFile`, `ffi.ModuleGetFunction`) gives for the
//!     same symbol: what a C caller of tvm-ffi pays;
//!   - `symbol_direct`: the exported `__tvm_ffi_add_int` called with two `TVMFFIAny`s,
//!     the floor of both (the kernel's own argument checks and the add);
//!   - `box_dyn_fn`: a `Box<dyn Fn(i64, i64) -> i64>`.
//!
//! # Measured
//!
//! 2026-12-02, the shared 2-core machine, tvm-ffi 0.1.15.post2, the kernel built with
//! `-O1`; medians of 5 runs in a row (each run all five rows in turn, criterion with 1 s
//! of warm-up and 2 s of measurement): `module_packed` 13.9 ns, `module_typed` 8.5 ns,
//! `tvm_ffi_function_call` 5.9 ns, `symbol_direct` 2.6 ns, `box_dyn_fn` 1.0 ns. So a
//! typed call through our module is 1.44 × tvm-ffi's own `TVMFFIFunctionCall` of the
//! same kernel (2.4 × through `Function::call`, which builds views), and 3.3 × the
//! bare symbol. Before the plain-value fast path in `call_foreign` (no argument holder,
//! no converter call, ints and floats returned in line) the two rows were 40.4 and
//! 34.8 ns; callgrind then counted 417 instructions a `Function::call`, 190 of them in
//! `call_foreign` itself.

use core::ffi::{c_char, c_void};
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use object_core::AnyView;

/// tvm-ffi's `TVMFFIAny` (the same 16 bytes as ours).
#[repr(C)]
#[derive(Clone, Copy)]
struct FfiAny {
    type_index: i32,
    padding: u32,
    v: u64,
}

impl FfiAny {
    fn int(v: i64) -> FfiAny {
        FfiAny {
            type_index: 1,
            padding: 0,
            v: v as u64,
        }
    }
    fn ptr(type_index: i32, p: *const c_void) -> FfiAny {
        FfiAny {
            type_index,
            padding: 0,
            v: p as u64,
        }
    }
}

#[repr(C)]
struct ByteArray {
    data: *const c_char,
    size: usize,
}

type SafeCall = unsafe extern "C" fn(*mut c_void, *const FfiAny, i32, *mut FfiAny) -> i32;
type FunctionCall = unsafe extern "C" fn(*mut c_void, *mut FfiAny, i32, *mut FfiAny) -> i32;
type GetGlobal = unsafe extern "C" fn(*const ByteArray, *mut *mut c_void) -> i32;

/// Builds the kernel library into the target directory, or `None` without tvm-ffi.
fn kernels() -> Option<PathBuf> {
    let config = std::env::var_os("TVM_FFI_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("tvm-ffi-config"));
    if !Command::new(&config)
        .arg("--libdir")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!(
            "tvm_kernels: SKIPPED: no tvm-ffi (set TVM_FFI_CONFIG to an apache-tvm-ffi \
             install's tvm-ffi-config)"
        );
        return None;
    }
    let exe = std::env::current_exe().expect("the bench binary's path");
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("<target>/<profile>/deps")
        .join("tvm-kernels-bench");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/build_tvm_kernels.sh"
    );
    let out = Command::new("bash")
        .arg(script)
        .arg(&dir)
        .env("TVM_FFI_CONFIG", &config)
        .output()
        .expect("run build_tvm_kernels.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// tvm-ffi's own function for the kernel `name`, through its module loader.
fn tvm_ffi_function(
    lib: &libloading::Library,
    path: &str,
    name: &str,
) -> (FunctionCall, *mut c_void) {
    // SAFETY: the symbols of tvm-ffi's C API, with `c_api.h`'s types.
    let (get_global, call) = unsafe {
        (
            *lib.get::<GetGlobal>(b"TVMFFIFunctionGetGlobal\0").unwrap(),
            *lib.get::<FunctionCall>(b"TVMFFIFunctionCall\0").unwrap(),
        )
    };
    let global = |n: &str| {
        let name = ByteArray {
            data: n.as_ptr().cast(),
            size: n.len(),
        };
        let mut f = core::ptr::null_mut();
        // SAFETY: a name, a slot for one reference.
        assert_eq!(unsafe { get_global(&name, &mut f) }, 0);
        assert!(!f.is_null(), "no global {n}");
        f
    };
    let (load, get) = (
        global("ffi.ModuleLoadFromFile"),
        global("ffi.ModuleGetFunction"),
    );
    let path = std::ffi::CString::new(path).unwrap();
    let fname = std::ffi::CString::new(name).unwrap();
    let mut args = [FfiAny::ptr(8, path.as_ptr().cast())];
    let mut module = FfiAny::int(0);
    // SAFETY: a live function, one `const char*`, a result slot.
    assert_eq!(unsafe { call(load, args.as_mut_ptr(), 1, &mut module) }, 0);
    let mut args = [
        module,
        FfiAny::ptr(8, fname.as_ptr().cast()),
        FfiAny {
            type_index: 2,
            padding: 0,
            v: 0,
        },
    ];
    let mut f = FfiAny::int(0);
    // SAFETY: as above: the module, the name, `query_imports`.
    assert_eq!(unsafe { call(get, args.as_mut_ptr(), 3, &mut f) }, 0);
    assert_eq!(
        f.type_index, 68,
        "ffi.ModuleGetFunction returned a function"
    );
    // (The module, the globals and the function are kept for the process.)
    (call, f.v as *mut c_void)
}

fn bench(c: &mut Criterion) {
    let Some(path) = kernels() else { return };
    let module = object_capi::load_module(&path).expect("load the kernel library");
    let add = module.get_function("add_int", false).expect("add_int");
    let typed = add.typed::<(i64, i64), i64>();
    assert_eq!(typed.call((40, 2)).unwrap(), 42);

    // SAFETY: loading the library already loaded (a second handle to it).
    let lib = unsafe { libloading::Library::new(&path) }.unwrap();
    // SAFETY: the exported kernel, with tvm-ffi's packed signature.
    let symbol: SafeCall = *unsafe { lib.get::<SafeCall>(b"__tvm_ffi_add_int\0") }.unwrap();
    let (function_call, f) = tvm_ffi_function(&lib, path.to_str().unwrap(), "add_int");
    let boxed: Box<dyn Fn(i64, i64) -> i64> = Box::new(|a, b| a + b);

    let mut g = c.benchmark_group("tvm_ffi_kernel_add_int");
    g.bench_function("module_packed", |b| {
        b.iter(|| {
            add.call(&[
                AnyView::from(black_box(40i64)),
                AnyView::from(black_box(2i64)),
            ])
            .unwrap()
        })
    });
    g.bench_function("module_typed", |b| {
        b.iter(|| typed.call((black_box(40), black_box(2))).unwrap())
    });
    g.bench_function("tvm_ffi_function_call", |b| {
        b.iter(|| {
            let mut args = [FfiAny::int(black_box(40)), FfiAny::int(black_box(2))];
            let mut ret = FfiAny::int(0);
            // SAFETY: a live function, two ints, a result slot.
            let rc = unsafe { function_call(f, args.as_mut_ptr(), 2, &mut ret) };
            assert_eq!(rc, 0);
            ret.v
        })
    });
    g.bench_function("symbol_direct", |b| {
        b.iter(|| {
            let args = [FfiAny::int(black_box(40)), FfiAny::int(black_box(2))];
            let mut ret = FfiAny::int(0);
            // SAFETY: the kernel's calling convention: two ints, a result slot.
            let rc = unsafe { symbol(core::ptr::null_mut(), args.as_ptr(), 2, &mut ret) };
            assert_eq!(rc, 0);
            ret.v
        })
    });
    g.bench_function("box_dyn_fn", |b| {
        b.iter(|| boxed(black_box(40), black_box(2)))
    });
    g.finish();
    core::mem::forget(lib);
}

criterion_group!(benches, bench);
criterion_main!(benches);
