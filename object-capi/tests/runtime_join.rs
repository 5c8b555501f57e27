//! One runtime per process: a `libobject_capi` loaded and used first runs the
//! process's registry, and this program's own copy of the library (linked in, as a
//! Python extension or a second extension module links one) joins it when it first
//! needs a registry: its Rust types are registered there, its globals and errors are
//! the library's. (One test in its own binary: the decision is made once per process.)

mod support;

use core::ffi::c_char;

use object_capi::{ObjAny, ObjAnyPayload, ObjHandle, ObjStr, OBJ_KIND_INT, OBJ_RUNTIME_OWN};
use object_containers::{register_global, Function};
use object_core::registry::adopt::{process_runtime, ProcessRuntime};
use object_core::{Error, Object};

use support::{build_library, out_dir};

/// A Rust type of this program, which the library's registry learns of when this copy
/// joins it.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "join.RustNode")]
struct RustNode {
    base: Object,
    value: i64,
}

type TypeRegister =
    unsafe extern "C" fn(*const c_char, *const c_char, u32, i32, i32, *mut u32) -> i32;
type TypeIndexOf = unsafe extern "C" fn(*const c_char, *mut u32) -> i32;
type RuntimeInfo = unsafe extern "C" fn(*mut i32, *mut ObjStr) -> i32;
type GlobalCall = unsafe extern "C" fn(*const c_char, *const ObjAny, i32, *mut ObjAny) -> i32;
type ErrorTake = unsafe extern "C" fn(*mut ObjHandle) -> i32;
type ErrorKindOf = unsafe extern "C" fn(ObjHandle, *mut ObjStr) -> i32;
type DecRef = unsafe extern "C" fn(ObjHandle) -> i32;

fn text(s: ObjStr) -> String {
    // SAFETY: the library returned a string of `len` bytes valid for the process.
    let bytes = unsafe { core::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
#[cfg_attr(miri, ignore = "loads a shared library: no FFI under Miri")]
fn a_copy_linked_in_joins_the_runtime_a_library_runs() {
    let dir = build_library("object-capi");
    let name = format!(
        "{}object_capi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let lib_path = out_dir().join("libobject_capi_join.so");
    std::fs::copy(dir.join(name), &lib_path).expect("copy the library");
    // SAFETY: the C API library of this build; its initializers are the crate's.
    let lib = unsafe { libloading::Library::new(&lib_path) }.expect("load libobject_capi");
    // SAFETY: the symbols have the C header's signatures, spelled above.
    let (register, index_of, info, call, take, kind, dec_ref) = unsafe {
        (
            *lib.get::<TypeRegister>(b"obj_type_register").unwrap(),
            *lib.get::<TypeIndexOf>(b"obj_type_index_of").unwrap(),
            *lib.get::<RuntimeInfo>(b"obj_runtime_info").unwrap(),
            *lib.get::<GlobalCall>(b"obj_global_call").unwrap(),
            *lib.get::<ErrorTake>(b"obj_error_take").unwrap(),
            *lib.get::<ErrorKindOf>(b"obj_error_kind").unwrap(),
            *lib.get::<DecRef>(b"obj_dec_ref").unwrap(),
        )
    };

    // The library is used first (as a C program would, before Python is imported):
    // it runs its own registry.
    let mut from_c = 0u32;
    // SAFETY: NUL-terminated keys, a writable out parameter.
    let rc = unsafe {
        register(
            c"join.FromC".as_ptr(),
            c"ffi.Object".as_ptr(),
            0,
            0,
            1,
            &mut from_c,
        )
    };
    assert_eq!(rc, 0);
    let (mut state, mut library) = (
        -1,
        ObjStr {
            data: core::ptr::null(),
            len: 0,
        },
    );
    // SAFETY: writable out parameters.
    assert_eq!(unsafe { info(&mut state, &mut library) }, 0);
    assert_eq!(state, OBJ_RUNTIME_OWN);
    assert!(
        text(library).ends_with("libobject_capi_join.so"),
        "{}",
        text(library)
    );

    // Now this program's copy needs a registry: it finds the library's and joins it.
    match process_runtime() {
        ProcessRuntime::Joined { library } => {
            assert!(library.ends_with("libobject_capi_join.so"), "{library}")
        }
        other => panic!("expected to join the library's runtime, got {other:?}"),
    }
    // C's type is ours, with its index.
    assert_eq!(
        object_core::registry::type_index_of("join.FromC"),
        Ok(from_c)
    );
    // Ours is C's: registered there when this copy joined.
    let ours = object_core::registry::type_index_of("join.RustNode").unwrap();
    let mut seen = 0u32;
    // SAFETY: as above.
    assert_eq!(unsafe { index_of(c"join.RustNode".as_ptr(), &mut seen) }, 0);
    assert_eq!(seen, ours);
    let node = RustNode::new(5);
    assert_eq!(node.value, 5);
    assert_eq!(node.type_index(), ours);

    // A global registered here is the library's; its errors reach C's slot.
    register_global("join.twice", Function::from_typed(|x: i64| 2 * x)).unwrap();
    register_global(
        "join.fail",
        Function::from_typed(|| -> Result<i64, Error> { Err(Error::value_error("boom")) }),
    )
    .unwrap();
    let arg = ObjAny {
        type_index: OBJ_KIND_INT,
        small: 0,
        v: ObjAnyPayload { v_int64: 21 },
    };
    let mut ret = ObjAny::NONE;
    // SAFETY: one valid argument, a writable result.
    let rc = unsafe { call(c"join.twice".as_ptr(), &arg, 1, &mut ret) };
    assert_eq!(rc, 0);
    assert_eq!(ret.type_index, OBJ_KIND_INT);
    // SAFETY: an int's payload.
    assert_eq!(unsafe { ret.v.v_int64 }, 42);
    // SAFETY: no arguments, a writable result.
    let rc = unsafe { call(c"join.fail".as_ptr(), core::ptr::null(), 0, &mut ret) };
    assert_ne!(rc, 0);
    let mut err: ObjHandle = core::ptr::null_mut();
    let mut k = ObjStr {
        data: core::ptr::null(),
        len: 0,
    };
    // SAFETY: the slot holds the error; the handle is released once.
    unsafe {
        assert_eq!(take(&mut err), 0);
        assert!(!err.is_null());
        assert_eq!(kind(err, &mut k), 0);
        assert_eq!(text(k), "ValueError");
        assert_eq!(dec_ref(err), 0);
    }
    // The library reports that it runs the process's registry; nothing else does.
    assert_eq!(
        object_core::registry::adopt::process_runtime(),
        ProcessRuntime::Joined {
            library: lib_path.display().to_string()
        }
    );
    std::mem::forget(lib); // libraries are never unloaded
}
