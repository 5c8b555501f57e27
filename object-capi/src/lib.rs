//! # object-capi: the C ABI of the unified object protocol
//!
//! `extern "C"` functions over `object-core`, `object-containers` and `object-json`,
//! built as a `cdylib` and a `staticlib` (and an `rlib`, for Rust tests and plugins),
//! with the C header `include/object_capi.h` generated from this crate by cbindgen
//! (the `header` test regenerates it and fails on a difference).
//!
//! ## Conventions
//!
//! - Every symbol is `obj_…`, every type `Obj…`, every constant `OBJ_…`.
//! - Every function returns an `int32_t`: 0 on success; nonzero (-1) when an error waits
//!   in the calling thread's error slot, which `obj_error_take` empties (kind, message
//!   and the call frames the error crossed). Nothing unwinds out of an entry point: a
//!   panic is caught at the boundary and becomes a `Panic` error.
//! - Null pointers, bad UTF-8, wrong object types, wrong value kinds are errors, not
//!   crashes. What C cannot be checked on (a dangling pointer, a freed object) is its
//!   responsibility, as each function's `# Safety` says.
//! - An `ObjHandle` (a pointer to the 16-byte header) returned through an `out`
//!   parameter carries one strong reference (release with `obj_dec_ref`); handles passed
//!   in are borrowed. An `ObjAny` returned is owned (release with `obj_any_release`);
//!   argument arrays are borrowed. Strings returned as `ObjStr` are borrowed from the
//!   object (or type) they came from.
//! - A call that fails takes nothing and writes no `out` parameter: whatever the caller
//!   owned before it (a reference, a DLPack managed tensor, a callback's context) it
//!   still owns, and releases itself. The exceptions say so in their own docs:
//!   `obj_any_release` (the value is released and set to None even when it breaks the
//!   rules), `obj_global_def` (a context it could not register goes to its deleter) and
//!   `obj_function_call` / `obj_global_call` (`*ret` is None once the function ran).
//!
//! ## Plugins
//!
//! [`load_module`] (`Module::load` through [`ModuleLoad`], `obj_module_load` from C)
//! opens a shared library (a plugin, or a tvm-ffi kernel library: below) and talks to
//! a plugin through one entry symbol,
//! `obj_plugin_entry`, which returns a static [`ObjPluginDescriptor`]: a magic value,
//! the ABI major and minor version, the descriptor's size, the layout fingerprint
//! ([`OBJ_LAYOUT_FINGERPRINT`]: FNV-1a over the sizes and field offsets of the object
//! header, `ObjAny`, the function cell, `DLTensor` and `ObjFieldInfo`, computed at
//! compile time, in C by the header's `OBJ_LAYOUT_FINGERPRINT_C` from the C structs),
//! a name and `init`. A different major version, a newer minor version or a different
//! fingerprint is refused before any plugin code beyond the entry runs, with a
//! [`LoadError::Abi`] naming both sides' versions and fingerprints (each failure of a
//! load is a [`LoadError`] variant; as a packed-call `Error`, and to C, a
//! `PluginError`). Then the host calls
//! `init` with its [`ObjHostApi`]: a size-prefixed, append-only table of host
//! functions (a plugin checks `size` before using an entry added in a later minor).
//!
//! *Adoption.* A Rust plugin links its own copy of `object-core` and
//! `object-containers`, with their own statics (type registry, thread-local error slot,
//! global functions). The `init` that [`export_plugin!`] generates first installs the
//! host's hooks (`object_core::registry::adopt`, `object_containers::adopt`): a
//! once-set pointer that every registry entry point, the error slot and the global
//! table of the plugin's copy consult before their own statics. The plugin's own
//! registry is never built; its types are registered in the host on first use (parent
//! first), and the host fills the plugin's per-type caches, so its `is::<T>()` stays a
//! couple of loads and compares and its indices are the host's. Its objects keep their
//! own deleters; its errors land in the host's slot with their frames; its globals are
//! the host's. What stays per copy: the deferred-release queue of deep frees (each copy
//! bounds its own nesting); the `live-count` test counter is the host's. The host's `is::<T>()` fast
//! path and clone/drop do not look at the hooks; the index → entry look-up and the
//! out-of-range display check pay one load of a once-initialized pointer. Adoption
//! shares Rust types, so a Rust plugin must come from the same sources and compiler as
//! the host (`object_core::registry::adopt::BUILD_ID`, compared first). A C plugin
//! uses the table only and links no copy of the runtime.
//!
//! *Unloading:* never. A loaded library's handle is leaked: objects it made (with its
//! deleters), its functions and its type tables may outlive every handle to its module,
//! and nothing tracks them all.
//!
//! ## tvm-ffi kernel libraries
//!
//! The same loader takes libraries built with tvm-ffi (`TVM_FFI_DLL_EXPORT_TYPED_FUNC`
//! exports each function as `__tvm_ffi_<name>`): a library without `obj_plugin_entry`
//! whose ELF dynamic symbol table lists such functions becomes a [`Module`] of all of
//! them, named after the file stem (neither symbol: [`LoadError::MissingSymbol`], which
//! names both searches). [`tvm::TvmFfiLibrary`] is the library itself: its functions
//! one by one (tensor parameters declared read-only where they are), their names, and
//! the signatures and docs tvm-ffi exports with `TVM_FFI_DLL_EXPORT_INCLUDE_METADATA`.
//! The 16-byte value is the same on both sides for plain kinds and `DLTensor*`;
//! objects are converted through tvm-ffi's own C API, resolved from the library's
//! handle: a kernel's error keeps its kind, message and backtrace
//! (`TVMFFIErrorMoveFromRaised`), strings, bytes and shapes are copied, tensors
//! imported through DLPack without a copy, functions cross both ways, and every
//! foreign reference is released (`TVMFFIObjectDecRef`). A library written to the
//! convention without tvm-ffi is called with plain values only.
//!
//! [`Module`]: object_containers::Module
//!
//! ## The unsafe fence
//!
//! This crate is the C-ABI fence of the workspace: its whole purpose is to take raw
//! pointers from C, so `unsafe` is allowed throughout it (the other crates deny it at
//! their roots). Each raw pointer is checked where it can be (null, UTF-8, the object's
//! type against what the caller claims) in `fence.rs`, and every `unsafe` block states
//! the C caller's guarantee it relies on in a `// SAFETY:` comment.
//!
//! | file | holds |
//! | --- | --- |
//! | `types.rs` | the C structs, asserted against the Rust layouts |
//! | `fence.rs` | the panic/error fence, the checked C ↔ Rust value conversions |
//! | `object.rs` | counting, types, run-time registration, reflection's field table |
//! | `values.rs` | `ObjAny` helpers, errors, strings and bytes, arrays and maps |
//! | `function.rs` | functions from C callbacks, calls, globals, modules |
//! | `tensor.rs` | NDArray and DLPack, the JSON graph |
//! | `plugin.rs` | plugins: the handshake, the host table, adoption, loading |
//! | `tvm/` | tvm-ffi kernel libraries (`__tvm_ffi_<name>`): `mod.rs` the library and its calls, `runtime.rs` tvm-ffi's C API and its objects (24-byte header, released with `TVMFFIObjectDecRef`), `convert.rs` values both ways, `callback.rs` functions both ways, `symbols.rs` discovery |

mod fence;
mod function;
mod methods;
mod object;
mod plugin;
mod tensor;
pub mod tvm;
mod types;
mod values;

pub use function::*;
pub use methods::*;
pub use object::*;
pub use plugin::*;
pub use tensor::*;
pub use types::*;
pub use values::*;
