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
//! | `tvm.rs` | libraries of tvm-ffi-convention packed functions (`__tvm_ffi_<name>`) |

mod fence;
mod function;
mod object;
mod plugin;
mod tensor;
pub mod tvm;
mod types;
mod values;

pub use function::*;
pub use object::*;
pub use plugin::*;
pub use tensor::*;
pub use types::*;
pub use values::*;
