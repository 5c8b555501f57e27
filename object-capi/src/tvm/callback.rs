//! Functions across the boundary, both ways: our [`Function`] handed to a kernel as a
//! tvm-ffi `Function` (made with tvm-ffi's own `TVMFFIFunctionCreate`, whose
//! `safe_call` converts, calls ours and raises our error in tvm-ffi's slot), and a
//! tvm-ffi function handed to us as a [`Function`] (called with `TVMFFIFunctionCall`,
//! released when the last handle goes).

use core::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use object_containers::Function;
use object_core::{AnyView, Error, ErrorKind};

use super::convert::{callback_argument, callback_result, Arg};
use super::runtime::{Foreign, Runtime};
use super::{call_foreign, Callee};
use crate::types::ObjAny;

/// What the tvm-ffi function made by [`wrap`] points to: our function and the runtime.
struct Callback {
    rt: &'static Runtime,
    f: Function,
}

/// Our function as a tvm-ffi `Function` object (one reference, released when the
/// returned value is dropped; tvm-ffi frees the context with the object).
pub(super) fn wrap(rt: &'static Runtime, f: Function) -> Result<Foreign, Error> {
    let ctx = Box::into_raw(Box::new(Callback { rt, f }));
    let mut out: *mut c_void = core::ptr::null_mut();
    // SAFETY: `c_api.h`: `ctx` is passed back to `safe_call` and given to `deleter`
    // once, when the object goes.
    let rc =
        unsafe { (rt.function_create)(ctx.cast(), safe_call, Some(delete_callback), &mut out) };
    if rc != 0 || out.is_null() {
        // No object was made, so no deleter will run: the context is still ours.
        // SAFETY: made by `Box::into_raw` above, not handed to anyone.
        drop(unsafe { Box::from_raw(ctx) });
        return Err(rt.failure("`TVMFFIFunctionCreate`", rc));
    }
    // SAFETY: one reference to the new function, ours.
    unsafe { Foreign::from_owned(rt, out) }
        .ok_or_else(|| Error::new(ErrorKind::TvmFfiError, "`TVMFFIFunctionCreate` made null"))
}

/// Frees a [`Callback`] (tvm-ffi's deleter of the function's context).
unsafe extern "C" fn delete_callback(ctx: *mut c_void) {
    // Nothing may unwind into tvm-ffi: a panicking drop of the function is contained.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the context `wrap` made, given to this deleter once.
        drop(unsafe { Box::from_raw(ctx.cast::<Callback>()) });
    }));
}

/// The `safe_call` of a wrapped function: tvm-ffi's arguments borrowed as ours, our
/// function called, its result converted back; an error (a panic included) raised in
/// tvm-ffi's slot with its kind and message, and -1.
unsafe extern "C" fn safe_call(
    ctx: *mut c_void,
    args: *const ObjAny,
    n: i32,
    result: *mut ObjAny,
) -> i32 {
    // SAFETY: the context `wrap` made, alive while the function object is.
    let cb = unsafe { &*ctx.cast::<Callback>() };
    // SAFETY: tvm-ffi's calling convention: `n` borrowed arguments, a result slot.
    let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { invoke(cb, args, n, result) }));
    let error = match outcome {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(payload) => object_containers::panic_error(payload),
    };
    let _ = catch_unwind(AssertUnwindSafe(|| cb.rt.raise(&error)));
    -1
}

/// # Safety
///
/// As tvm-ffi calls a `safe_call`: `args` points to `n` valid values (null when 0),
/// `result` is writable.
unsafe fn invoke(
    cb: &Callback,
    args: *const ObjAny,
    n: i32,
    result: *mut ObjAny,
) -> Result<(), Error> {
    let n = usize::try_from(n).map_err(|_| Error::value_error(format!("negative count {n}")))?;
    let args: &[ObjAny] = if n == 0 {
        &[]
    } else if args.is_null() {
        return Err(Error::value_error("null arguments"));
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts(args, n) }
    };
    let held: Vec<Arg<'_>> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            // SAFETY: each argument is valid for the call (the caller's guarantee).
            unsafe { callback_argument(cb.rt, a) }
                .map_err(|e| e.with_frame(format!("argument {i}")))
        })
        .collect::<Result<_, _>>()?;
    let views: Vec<AnyView<'_>> = held.iter().map(Arg::view).collect();
    let out = cb.f.call(&views)?;
    let r = callback_result(cb.rt, out)?;
    if result.is_null() {
        return Err(Error::value_error("null result slot"));
    }
    // SAFETY: a writable slot (the caller's guarantee); what it held is tvm-ffi's
    // None (a fresh slot), nothing to release.
    unsafe { result.write(r) };
    Ok(())
}

/// A tvm-ffi function object as our [`Function`]: each call converts our arguments,
/// calls it with `TVMFFIFunctionCall` and converts the result, as a kernel's symbol;
/// the reference is released with the last handle.
pub(super) fn foreign_function(obj: Foreign, name: Option<&str>) -> Function {
    let label = name.unwrap_or("<tvm-ffi function>").to_owned();
    Function::from_packed_named(name, move |args: &[AnyView<'_>]| {
        call_foreign(Some(obj.runtime()), Callee::Object(&obj), &label, &[], args)
    })
}
