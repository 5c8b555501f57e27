//! Packed functions: [`Function`] (`ffi.Function`, static index 68), an ABI-stable
//! object whose first field after the header is a C entry point
//! `unsafe extern "C" fn(this, args: *const AnyView, num_args: i32, ret: *mut Any) -> i32`;
//! the callable lives in a generic tail after it. A nonzero return means an
//! [`Error`](object_core::Error) waits in a thread-local slot for the caller to take.
//!
//! Functions made from typed closures ([`Function::from_typed`]) also carry a Rust-side
//! fast entry that [`TypedFunction::call`] uses: the argument views by value (in
//! registers) and the result in registers, the same checks and the same errors. The
//! typed entry points first try allocation-free, error-free conversions
//! (`FromArg::from_arg_quick`) and fall back to the full ones, out of line, only when
//! those fail, so that their common path calls nothing and needs no stack frame.
//!
//! This layer depends on `object-core` only: the types above it (the containers, the
//! tensor) implement [`FromArg`], [`IntoRet`] and [`FromRet`] in their own files, with
//! [`impl_call_traits!`].
//!
//! | file | holds |
//! | --- | --- |
//! | `abi.rs` | the C entry points, fast entries and the unwinding fence  |
//! | `adopt.rs` | the error slot, global table and method table of the process's runtime, when another copy runs it (one `unsafe`: its hooks' pointer read as this build's struct) |
//! | `last_error.rs` | the thread-local error slot |
//! | `convert.rs` | the conversion traits, for core types, and `impl_call_traits!` |
//! | `typed.rs` | typed closures, argument tuples, [`TypedFunction`] |
//! | `packed.rs` | the [`Function`] handle |
//! | `registry.rs` | the global registry |
//! | `signature.rs` | [`Signature`]: parameter names, defaults, types; binding keyword calls |
//! | `methods.rs` | the per-type method table (found along the ancestry, shared like the globals) |
//! | `module.rs` | [`Module`] |

#[allow(unsafe_code, reason = "the C ABI: raw entries, erased fast entries")]
mod abi;
#[allow(
    unsafe_code,
    reason = "the hooks of the copy whose registry this one joined, handed over as a pointer, read as this build's struct"
)]
pub mod adopt;
mod convert;
mod last_error;
mod methods;
mod module;
mod packed;
mod registry;
mod signature;
mod typed;

pub use abi::{panic_error, FastEntry, FunctionObj, PackedCall};
pub(crate) use convert::impl_call_traits;
pub use last_error::{error_mark, set_last_error, take_error_since, take_last_error, ErrorMark};
pub use methods::{
    call_method, find_method, register_method, register_method_at, register_static_method,
    remove_method, type_methods, Method, MethodKind,
};
pub use module::{Module, ModuleBuilder, ModuleObj};
pub use object_core::{FromArg, FromRet, IntoRet};
pub use packed::Function;
pub use registry::{
    get_global, list_globals, register_global, register_global_override, remove_global,
};
pub use signature::{ArgLabel, Param, ParamKind, Signature};
pub use typed::{IntoArgs, TypedCallable, TypedFunction};
