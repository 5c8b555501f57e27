//! Finding the runtime already running in this process: every copy of this crate
//! exports one symbol, `obj_process_runtime_v1`, and the first time a copy needs a
//! registry it looks through the libraries loaded in the process for another copy that
//! runs one (see [`adopt`](super::adopt) for what happens then).
//!
//! A process may hold several copies of the runtime: the Python extension links one,
//! `libobject_capi.so` is another, a second Rust-built extension module a third. Each
//! is loaded with its own symbols (Python and `dlopen` load libraries `RTLD_LOCAL`), so
//! they cannot find each other through the global symbol scope. The loader's list of
//! loaded objects is shared, though: `dl_iterate_phdr` names every object in the
//! process, and `dlopen(name, RTLD_NOLOAD)` + `dlsym` asks each of them, in its own
//! scope, for its descriptor. Only copies exported from a shared library are found (a
//! Rust executable exports nothing; it hosts the others as plugins).
//!
//! The descriptor's first fields are frozen for every build (`extern "C"`, read before
//! anything else): the magic, its size, the build id and the state. The rest (the
//! registry's hooks, Rust function pointers) is read only from a copy of the same build.
//!
//! On targets other than Linux, and under Miri, nothing is found: each copy runs its
//! own registry unless a host hands it one (a plugin's handshake).

use core::ffi::{c_char, c_void};

use super::adopt::RegistryHooks;

/// `RuntimeDescriptor::magic`: "OBJRUNTM".
const MAGIC: u64 = 0x4f42_4a52_554e_544d;

/// The exported symbol.
#[cfg(all(target_os = "linux", not(miri)))]
const SYMBOL: &core::ffi::CStr = c"obj_process_runtime_v1";

/// What this copy exports. `#[repr(C)]`; the fields up to `state` are the same in every
/// build.
#[repr(C)]
#[derive(Debug)]
pub struct RuntimeDescriptor {
    magic: u64,
    size: u64,
    build_id: *const u8,
    build_id_len: usize,
    /// 0: undecided (no registry used yet), 1: runs its own registry, 2: uses another
    /// copy's (adopted), 3: refused (another build runs here).
    state: extern "C" fn() -> u32,
    /// Same build only: the hooks through which this copy's registry is reached (its
    /// own, or the ones it adopted), as `&'static RegistryHooks`.
    hooks: extern "C" fn() -> *const c_void,
}

// SAFETY: immutable static data; the pointer is to a static string.
unsafe impl Sync for RuntimeDescriptor {}

extern "C" fn descriptor_state() -> u32 {
    super::adopt::state_code()
}

extern "C" fn descriptor_hooks() -> *const c_void {
    (super::adopt::host_hooks() as *const RegistryHooks).cast()
}

static DESCRIPTOR: RuntimeDescriptor = RuntimeDescriptor {
    magic: MAGIC,
    size: core::mem::size_of::<RuntimeDescriptor>() as u64,
    build_id: super::adopt::BUILD_ID.as_ptr(),
    build_id_len: super::adopt::BUILD_ID.len(),
    state: descriptor_state,
    hooks: descriptor_hooks,
};

/// The exported descriptor of this copy.
///
/// Only other copies call it, through `dlsym` on a loaded library's own handle (which
/// finds that library's definition first, whatever the global scope holds), so it is
/// never called by name from Rust and cannot be interposed on this copy's own view.
#[no_mangle]
pub extern "C" fn obj_process_runtime_v1() -> *const RuntimeDescriptor {
    &DESCRIPTOR
}

/// What a search of the process found.
pub(super) enum Found {
    /// No other copy runs a registry here.
    Nothing,
    /// A copy of the same build runs one: its hooks, and the library it is in.
    Runtime {
        hooks: &'static RegistryHooks,
        library: String,
    },
    /// A copy of another build runs one.
    Conflict { library: String, build: String },
}

/// Looks through the loaded libraries for another copy that runs a registry (state 1
/// or 2). A copy of the same build wins over a conflicting one found earlier; two
/// running copies of the same build route to one registry, so the first is as good as
/// any.
pub(super) fn find_running() -> Found {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let mut conflict = None;
        for name in loaded_objects() {
            match probe(&name) {
                Probe::Same(hooks) => {
                    return Found::Runtime {
                        hooks,
                        library: display_name(&name),
                    }
                }
                Probe::Other(build) if conflict.is_none() => {
                    conflict = Some(Found::Conflict {
                        library: display_name(&name),
                        build,
                    })
                }
                _ => {}
            }
        }
        conflict.unwrap_or(Found::Nothing)
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    Found::Nothing
}

/// The file this copy of the crate was loaded from (a shared library; the main
/// program's name if it is linked into it), if the loader knows it.
///
/// ```
/// // A test program: the copy is linked into it.
/// let _ = object_core::registry::process::this_library();
/// ```
pub fn this_library() -> Option<String> {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let mut info: libc::Dl_info = empty_dl_info();
        // SAFETY: `dladdr` reads the address (of our static) and fills `info`; the
        // strings it points to live as long as the library stays loaded (forever).
        let ok =
            unsafe { libc::dladdr((&DESCRIPTOR as *const RuntimeDescriptor).cast(), &mut info) };
        if ok != 0 && !info.dli_fname.is_null() {
            // SAFETY: a NUL-terminated string owned by the loader (see above).
            let name = unsafe { core::ffi::CStr::from_ptr(info.dli_fname) };
            return Some(name.to_string_lossy().into_owned());
        }
        None
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    None
}

#[cfg(all(target_os = "linux", not(miri)))]
fn empty_dl_info() -> libc::Dl_info {
    libc::Dl_info {
        dli_fname: core::ptr::null(),
        dli_fbase: core::ptr::null_mut(),
        dli_sname: core::ptr::null(),
        dli_saddr: core::ptr::null_mut(),
    }
}

#[cfg(all(target_os = "linux", not(miri)))]
fn display_name(name: &std::ffi::CString) -> String {
    if name.as_bytes().is_empty() {
        "the main program".to_owned()
    } else {
        name.to_string_lossy().into_owned()
    }
}

#[cfg(all(target_os = "linux", not(miri)))]
enum Probe {
    /// No descriptor, ours, or one not running.
    Skip,
    /// A running copy of our build.
    Same(&'static RegistryHooks),
    /// A running copy of another build (its build id).
    Other(String),
}

/// The names of the loaded objects, the main program first (as the empty name).
#[cfg(all(target_os = "linux", not(miri)))]
fn loaded_objects() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the `Vec` passed below, borrowed for the iteration, and
        // `info` is the loader's record for one object, valid during this call.
        let (names, info) = unsafe { (&mut *data.cast::<Vec<std::ffi::CString>>(), &*info) };
        let name = if info.dlpi_name.is_null() {
            std::ffi::CString::default()
        } else {
            // SAFETY: the loader's NUL-terminated name of the object.
            unsafe { core::ffi::CStr::from_ptr(info.dlpi_name) }.to_owned()
        };
        names.push(name);
        0
    }
    let mut names: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback only copies the names (no loader call from inside it, which
    // could take the loader's other lock in the opposite order of a concurrent dlopen).
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut names as *mut Vec<_>).cast()) };
    names
}

/// Asks one loaded object for its descriptor.
#[cfg(all(target_os = "linux", not(miri)))]
fn probe(name: &std::ffi::CString) -> Probe {
    let path: *const c_char = if name.as_bytes().is_empty() {
        core::ptr::null()
    } else {
        name.as_ptr()
    };
    // The reference this open takes is kept: glibc's `dlclose` of it loses the
    // dependency list the open built for an object loaded only as another's dependency
    // (valgrind reports it lost), and no library in this protocol is ever unloaded; a
    // library loaded when a copy first needs its registry stays loaded.
    // SAFETY: RTLD_NOLOAD opens nothing new: it returns a handle to an object already
    // loaded, or null.
    let handle = unsafe { libc::dlopen(path, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return Probe::Skip;
    }
    // SAFETY: a symbol looked up in the object's own scope.
    let sym = unsafe { libc::dlsym(handle, SYMBOL.as_ptr()) };
    if sym.is_null() {
        return Probe::Skip;
    }
    // SAFETY: every copy exports this symbol as
    // `extern "C" fn() -> *const RuntimeDescriptor`.
    let entry: extern "C" fn() -> *const RuntimeDescriptor =
        unsafe { core::mem::transmute::<*mut c_void, _>(sym) };
    read_descriptor(entry())
}

#[cfg(all(target_os = "linux", not(miri)))]
fn read_descriptor(d: *const RuntimeDescriptor) -> Probe {
    if d.is_null() || core::ptr::eq(d, &DESCRIPTOR) {
        return Probe::Skip;
    }
    // SAFETY: a descriptor is static data of a loaded library; the frozen prefix
    // (magic, size, build id, state) is the same in every build, and nothing past it
    // is read unless the size covers it and the build ids are equal.
    unsafe {
        if (*d).magic != MAGIC || (*d).size < core::mem::size_of::<RuntimeDescriptor>() as u64 {
            return Probe::Skip;
        }
        let state = ((*d).state)();
        if state != 1 && state != 2 {
            return Probe::Skip;
        }
        let build = core::slice::from_raw_parts((*d).build_id, (*d).build_id_len);
        if build != super::adopt::BUILD_ID.as_bytes() {
            return Probe::Other(String::from_utf8_lossy(build).into_owned());
        }
        let hooks = ((*d).hooks)().cast::<RegistryHooks>();
        if hooks.is_null() {
            return Probe::Skip;
        }
        // Same build: the pointer is a `&'static RegistryHooks` of that copy.
        Probe::Same(&*hooks)
    }
}
