//! Functions from C callbacks, calls, the global registry, modules.

use core::ffi::{c_char, c_void};

use object_containers::{
    error_mark, get_global, list_globals, register_global, register_global_override, remove_global,
    take_error_since, Array, Function, FunctionObj, Module, ModuleObj, ParamKind, Signature,
};
use object_core::{Any, AnyView, Error, ErrorKind, ObjectPtr, String};

use crate::fence::{
    any_from_c_owned, borrow, c_str, give, guard, null, out, slot_from_c, slots_from_c, str_out,
    view_to_c, Slot,
};
use crate::types::*;
use crate::values::typed;

/// A C callback with its context; the context's deleter runs when the function dies.
struct CCallback {
    call: unsafe extern "C" fn(*mut c_void, *const ObjAny, i32, *mut ObjAny) -> i32,
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
    name: std::string::String,
}

// SAFETY: `obj_function_create`'s contract: the callback may be called from any thread
// and its context may be freed on any thread (C code that cannot promise that keeps
// its functions on one thread, as with any C library).
unsafe impl Send for CCallback {}
// SAFETY: as above.
unsafe impl Sync for CCallback {}

impl Drop for CCallback {
    fn drop(&mut self) {
        if let Some(d) = self.deleter {
            // SAFETY: the deleter given with this context, called once, here.
            unsafe { d(self.ctx) };
        }
    }
}

impl CCallback {
    fn invoke(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
        let n = i32::try_from(args.len()).map_err(|_| Error::value_error("too many arguments"))?;
        // The views as they are: `ObjAny` has `AnyView`'s layout (asserted in `types`),
        // so the callback reads the caller's array, without a copy.
        let c_args = args.as_ptr().cast::<ObjAny>();
        let mut ret = ObjAny::NONE;
        // An error left in the slot before the call (one nobody took) is not the
        // callback's: only one raised during the call is (read only if it fails).
        let mark = error_mark();
        // SAFETY: the callback's contract (`ObjCFunction`): borrowed arguments valid for
        // the call (the views live for it), a return slot initialized to None.
        let rc = unsafe { (self.call)(self.ctx, c_args, n, &mut ret) };
        if rc != 0 {
            // An owned value written before failing is released.
            // SAFETY: the callback wrote an owned value or left None.
            let _ = unsafe { any_from_c_owned(ret) };
            return Err(take_error_since(mark).unwrap_or_else(|| {
                Error::new(
                    ErrorKind::Error,
                    format!(
                        "C function `{}` returned {rc} without raising an error",
                        self.name
                    ),
                )
            }));
        }
        // SAFETY: the callback wrote an owned value following the header's rules.
        unsafe { any_from_c_owned(ret) }
            .map_err(|e| e.with_frame(format!("the return value of C function `{}`", self.name)))
    }
}

/// Makes a function object (`ffi.Function`) that calls `call(ctx, args, num_args, ret)`;
/// `deleter(ctx)` (if not null) runs once when the function dies. `name` (may be null)
/// names the function in error frames. On failure (a null `call` or `out_func`, a
/// `name` that is not UTF-8) nothing is called: `ctx` is still the caller's, to free.
///
/// The arguments are borrowed for the call. A tensor argument's data is **read-only**
/// to `call` (its caller may be reading it through a shared borrow), unless
/// `obj_ndarray_is_lent` says it is lent writable; a `DLTensor*` argument is always
/// read-only.
///
/// # Safety
///
/// `call` may be called from any thread while the function lives, with borrowed
/// arguments; `ctx` stays valid until `deleter` runs; `name` is null or NUL-terminated;
/// `out_func` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_function_create(
    call: ObjCFunction,
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
    name: *const c_char,
    out_func: *mut ObjHandle,
) -> i32 {
    // SAFETY: the caller's guarantees, which are `create_from_c`'s (no signature).
    unsafe { create_from_c(call, ctx, deleter, name, None, out_func) }
}

/// `obj_function_create` with a signature: parameter names, types (or null) and
/// defaults (or null), in `params[0..num_params]`, and a documentation text (`doc`,
/// may be null). The function then takes keyword arguments from Python, fills left-out
/// trailing parameters with their defaults for every caller (C included: the callback
/// always receives `num_params` arguments), and names parameters in its errors. On
/// failure (what fails `obj_function_create`; a signature that names a parameter twice
/// or puts one without a default after one with a default) nothing is kept: `ctx` is
/// still the caller's.
///
/// # Safety
///
/// As `obj_function_create`; `params` points to `num_params` specs whose strings are
/// NUL-terminated and whose defaults follow the header's rules; `doc` null or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn obj_function_create_with_signature(
    call: ObjCFunction,
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
    name: *const c_char,
    params: *const ObjParamSpec,
    num_params: i32,
    doc: *const c_char,
    out_func: *mut ObjHandle,
) -> i32 {
    // SAFETY: the caller's guarantees, which are `create_from_c`'s.
    unsafe {
        create_from_c(
            call,
            ctx,
            deleter,
            name,
            Some((params, num_params, doc)),
            out_func,
        )
    }
}

/// The body of `obj_function_create` and `obj_function_create_with_signature`:
/// `signature` is the latter's `(params, num_params, doc)`. Everything that can fail is
/// checked before the context becomes the function's, so on failure it is still the
/// caller's.
///
/// # Safety
///
/// As `obj_function_create_with_signature` (or `obj_function_create` without a
/// signature).
unsafe fn create_from_c(
    call: ObjCFunction,
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
    name: *const c_char,
    signature: Option<(*const ObjParamSpec, i32, *const c_char)>,
    out_func: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_func, "out_func")?;
        let call = call.ok_or_else(|| null("call"))?;
        let name = if name.is_null() {
            None
        } else {
            // SAFETY: the caller's guarantee.
            Some(unsafe { c_str(name, "name") }?)
        };
        let sig = match signature {
            Some((params, num_params, doc)) => {
                // SAFETY: the caller's guarantees.
                let sig = unsafe { signature_from_c(params, num_params, doc) }?;
                sig.check()?;
                Some(sig)
            }
            None => None,
        };
        // From here on the context is the function's (a second signature is the only
        // refusal left, and this one is new).
        let cb = CCallback {
            call,
            ctx,
            deleter,
            name: name.unwrap_or("<anonymous>").to_owned(),
        };
        let f = Function::from_packed_named(name, move |args: &[AnyView<'_>]| cb.invoke(args));
        let f = match sig {
            Some(sig) => f.with_signature(sig)?,
            None => f,
        };
        *o = give(f.into_object_ptr());
        Ok(())
    })
}

/// The signature C gives (see `obj_function_create_with_signature`).
///
/// # Safety
///
/// As `obj_function_create_with_signature`.
unsafe fn signature_from_c(
    params: *const ObjParamSpec,
    num_params: i32,
    doc: *const c_char,
) -> Result<Signature, Error> {
    let n = usize::try_from(num_params)
        .map_err(|_| Error::value_error(format!("negative count {num_params}")))?;
    if n > 0 && params.is_null() {
        return Err(null("params"));
    }
    let specs: &[ObjParamSpec] = if n == 0 {
        &[]
    } else {
        // SAFETY: the caller passes `n` specs at `params` (non-null, checked).
        unsafe { core::slice::from_raw_parts(params, n) }
    };
    let mut sig = Signature::new();
    for (i, p) in specs.iter().enumerate() {
        let what = format!("params[{i}]");
        // SAFETY: the caller's guarantee.
        let pname = unsafe { c_str(p.name, &what) }?;
        let type_str = if p.type_str.is_null() {
            None
        } else {
            // SAFETY: the caller's guarantee.
            Some(unsafe { c_str(p.type_str, &what) }?)
        };
        // SAFETY: null or a value following the header's rules (the caller's guarantee).
        let default = match unsafe { p.default_value.as_ref() } {
            None => None,
            // SAFETY: as above.
            Some(v) => Some(unsafe { slot_from_c(v) }?.view().to_any()),
        };
        sig = sig.param_full(pname, type_str, default, ParamKind::PositionalOrKeyword);
    }
    if !doc.is_null() {
        // SAFETY: the caller's guarantee.
        sig = sig.doc(unsafe { c_str(doc, "doc") }?);
    }
    Ok(sig)
}

/// What a function says of its parameters: `*out_num_params` is their number, or -1
/// when it says nothing (a packed function without a signature takes any arguments);
/// `*out_doc` its documentation and `*out_returns` its result's type (each `len` 0 when
/// there is none; may be null). A typed Rust closure without a declared signature
/// describes its types, its parameters positional-only and named `arg0`, `arg1`, ….
/// The strings are borrowed from the function (valid while it lives), not
/// NUL-terminated. Read each parameter with `obj_function_param`.
///
/// # Safety
///
/// `func` null (an error) or a live object; `out_num_params` writable; `out_doc` and
/// `out_returns` null or writable.
#[no_mangle]
pub unsafe extern "C" fn obj_function_signature(
    func: ObjHandle,
    out_num_params: *mut i32,
    out_doc: *mut ObjStr,
    out_returns: *mut ObjStr,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(func, "func") }?;
        let f = Function::from_object_ptr(typed::<FunctionObj>(&b, "func")?);
        let o = out(out_num_params, "out_num_params")?;
        let empty = ObjStr {
            data: core::ptr::null(),
            len: 0,
        };
        // The function is borrowed from the caller, who keeps it alive; what the
        // strings point into lives as long as it (a signature is never replaced).
        let (n, doc, returns) = match f.signature() {
            Some(sig) => (
                i32::try_from(sig.len()).unwrap_or(i32::MAX),
                sig.doc_text().map_or(empty, str_out),
                sig.return_type().map_or(empty, str_out),
            ),
            None => (-1, empty, empty),
        };
        *o = n;
        // SAFETY: null or writable (the caller's guarantee).
        if let Some(d) = unsafe { out_doc.as_mut() } {
            *d = doc;
        }
        // SAFETY: as above.
        if let Some(r) = unsafe { out_returns.as_mut() } {
            *r = returns;
        }
        Ok(())
    })
}

/// Sets (`long_running` nonzero) or clears a function's long-running hint (ABI 2.3):
/// front-ends whose callers hold a global lock (Python's GIL) keep it during a call
/// unless the function is marked so, and let it go around a call of one that is. Mark
/// a function that computes for long, blocks, or waits for threads that call back into
/// such a front-end (held, the lock would deadlock that wait). `*out_previous` (may be
/// null) receives the hint as it was, 0 or 1.
///
/// # Safety
///
/// `func` null (an error) or a live object; `out_previous` null or writable.
#[no_mangle]
pub unsafe extern "C" fn obj_function_set_long_running(
    func: ObjHandle,
    long_running: i32,
    out_previous: *mut i32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(func, "func") }?;
        let f = Function::from_object_ptr(typed::<FunctionObj>(&b, "func")?);
        let previous = i32::from(f.is_long_running());
        if long_running != previous {
            f.set_long_running(long_running != 0);
        }
        // SAFETY: null or writable (the caller's guarantee).
        if let Some(p) = unsafe { out_previous.as_mut() } {
            *p = previous;
        }
        Ok(())
    })
}

/// Parameter `index` of a function's signature (see `obj_function_signature`), borrowed
/// from the function. An index out of range is an `IndexError`.
///
/// # Safety
///
/// `func` null (an error) or a live object; `out_param` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_function_param(
    func: ObjHandle,
    index: i32,
    out_param: *mut ObjParamInfo,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(func, "func") }?;
        let f = Function::from_object_ptr(typed::<FunctionObj>(&b, "func")?);
        let o = out(out_param, "out_param")?;
        let sig = f.signature().ok_or_else(|| {
            Error::new(
                ErrorKind::IndexError,
                "the function declares no parameters (it takes any arguments)",
            )
        })?;
        let p = usize::try_from(index)
            .ok()
            .and_then(|i| sig.parameters().get(i))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::IndexError,
                    format!("parameter {index} of {}", sig.len()),
                )
            })?;
        *o = ObjParamInfo {
            name: str_out(p.name()),
            type_str: p.type_str().map_or(
                ObjStr {
                    data: core::ptr::null(),
                    len: 0,
                },
                str_out,
            ),
            kind: match p.kind() {
                ParamKind::PositionalOrKeyword => OBJ_PARAM_POSITIONAL_OR_KEYWORD,
                ParamKind::PositionalOnly => OBJ_PARAM_POSITIONAL_ONLY,
            },
            has_default: p.default_value().is_some().into(),
            default_value: p
                .default_value()
                .map_or(ObjAny::NONE, |d| view_to_c(d.into())),
        };
        Ok(())
    })
}

/// At most this many arguments are checked on the stack; more go to the heap.
const INLINE_ARGS: usize = 8;

/// Calls a function object with `num_args` C values (checked), writing the owned result
/// to `*ret`, which need not be initialized: its old content is overwritten, never
/// released. On failure `*ret` holds nothing to release: None once the function ran
/// (a value a C callback wrote before failing is released), or left as it was when the
/// call was refused before it ran (a null or wrong `func`, bad arguments).
///
/// The common call (a live function, plain numbers, `None`, bools and objects whose
/// header says the type the value claims) is checked in line and goes straight to the
/// function's entry point with the caller's array: no copy of the arguments, no count
/// change, no thread-local access, and no `catch_unwind` of its own, because nothing on
/// that path can panic (the entry point itself never unwinds: it catches panics and
/// leaves them in the error slot). Everything else (null pointers, a wrong type, a
/// negative count, strings, tensors and values to convert) goes through the fence.
///
/// # Safety
///
/// `func` is null (an error) or a live object; `args` points to `num_args` values
/// following the header's rules; `ret` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_function_call(
    func: ObjHandle,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> i32 {
    // SAFETY: the caller's guarantees; `call_direct` reads only what it checked.
    match unsafe { call_direct(func, args, num_args, ret) } {
        Some(rc) => rc,
        // SAFETY: the caller's guarantees.
        None => unsafe { call_fenced(func, args, num_args, ret) },
    }
}

/// `obj_function_call`'s path for the common call: `Some(code)` of the entry point
/// when every check passes in line, `None` (nothing called, nothing written) for
/// anything the fence must look at. Cannot panic: compares and loads only.
///
/// # Safety
///
/// As `obj_function_call`.
#[inline(always)]
unsafe fn call_direct(
    func: ObjHandle,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> Option<i32> {
    if func.is_null() || ret.is_null() {
        return None;
    }
    // SAFETY: non-null and a live object (the caller's guarantee): its header is
    // readable.
    if unsafe { (*func).type_index } != object_core::type_index::FUNCTION {
        return None;
    }
    if num_args != 0 {
        // (A negative count is refused here, by the fence.)
        let n = usize::try_from(num_args).ok()?;
        if args.is_null() {
            return None;
        }
        // SAFETY: the caller passes `n` values at `args` (non-null, checked).
        let kind = |i: usize| unsafe { (*args.add(i)).type_index };
        // The commonest calls, with one or two numbers, in one test each.
        let numbers = match n {
            1 => is_number(kind(0)),
            2 => (not_number(kind(0)) | not_number(kind(1))) == 0,
            _ => false,
        };
        if !numbers {
            for i in 0..n {
                // SAFETY: as above.
                if !is_view_as_is(unsafe { &*args.add(i) }) {
                    return None;
                }
            }
        }
    }
    let cell = func.cast_const() as *const ObjFunctionCell;
    // SAFETY: the type index of `ffi.Function` (final, static): the object is a
    // `FunctionObj`, which starts with the header and the entry point
    // (`ObjFunctionCell`, asserted against `FunctionObj` in `types`).
    let entry = unsafe { (*cell).call }?;
    // SAFETY: `ret` is writable (checked non-null; the caller's guarantee). The caller
    // gave up its old content (the header's rule), and the entry wants `None`.
    unsafe { ret.write(ObjAny::NONE) };
    // SAFETY: the entry's contract: a live function, `num_args` valid views (each
    // checked by `is_view_as_is`; `ObjAny` has `AnyView`'s layout, asserted in `types`)
    // that live for the call, a `None` return slot. The entry never unwinds.
    Some(unsafe { entry(cell, args, num_args, ret) })
}

/// `obj_function_call` through the fence: every check with its error, values that need
/// converting converted, panics caught. `extern "C"`, so that the compiler knows it
/// does not unwind: `obj_function_call` then jumps to it as its last act, and keeps
/// no stack frame of its own (a landing pad for an unwind would need one).
///
/// # Safety
///
/// As `obj_function_call`.
#[cold]
#[inline(never)]
unsafe extern "C" fn call_fenced(
    func: ObjHandle,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> i32 {
    let mut failed = 0;
    let rc = crate::fence::guard(|| {
        // SAFETY: the caller's guarantees.
        failed = unsafe { call_checked(func, args, num_args, ret) }?;
        Ok(())
    });
    if rc != 0 {
        rc
    } else {
        failed
    }
}

/// Zero for the kind of an int or a float, nonzero for any other: `1 | 2 == 3 | 2 ==
/// 3`, and no other index gives 3. Any bits are a valid int or float.
#[inline(always)]
fn not_number(kind: u32) -> u32 {
    use object_core::type_index as ti;
    const _: () = assert!(ti::INT | 2 == 3 && ti::FLOAT | 2 == 3 && ti::FLOAT == 3);
    (kind | 2) ^ 3
}

/// Whether `kind` is an int's or a float's (see [`not_number`]).
#[inline(always)]
fn is_number(kind: u32) -> bool {
    not_number(kind) == 0
}

/// Whether a C value is already a valid borrowed view: a plain number, or a live object
/// whose header has the type index the value claims (the object's liveness is the
/// caller's guarantee, as for every argument).
#[inline(always)]
fn is_view_as_is(a: &ObjAny) -> bool {
    use object_core::type_index as ti;
    // Ints and floats first, in one compare.
    if is_number(a.type_index) {
        return true;
    }
    match a.type_index {
        // SAFETY: the member of bools: the Rust invariant wants 0 or 1.
        ti::BOOL => matches!(unsafe { a.v.v_int64 }, 0 | 1),
        // SAFETY: the member of None: the Rust invariant wants zero.
        ti::NONE => (unsafe { a.v.v_int64 }) == 0,
        index if index >= ti::STATIC_OBJECT_BEGIN => {
            // SAFETY: the member of objects.
            let p = unsafe { a.v.v_obj };
            // SAFETY: non-null, a live object (the caller's guarantee): its header is
            // readable.
            !p.is_null() && unsafe { (*p).type_index } == index
        }
        _ => false,
    }
}

/// Calls the function's own entry with views, into `*ret`; returns the entry's code
/// (nonzero: its error is already in this thread's slot).
///
/// # Safety
///
/// `func` is a live function object; `views` points to `n` valid views (Rust's
/// invariants hold for each) that live for the call.
unsafe fn call_entry(
    func: ObjHandle,
    views: *const ObjAny,
    n: usize,
    ret: &mut ObjAny,
) -> Result<i32, Error> {
    let cell = func.cast_const() as *const ObjFunctionCell;
    // SAFETY: `func` is a live function object (checked by the caller), whose layout
    // starts with the header and the entry point (`ObjFunctionCell`, asserted against
    // `FunctionObj` in `types`).
    let entry = unsafe { (*cell).call }.ok_or_else(|| null("function entry"))?;
    *ret = ObjAny::NONE;
    // SAFETY: the entry's contract: a live function, `n` valid views for the call, a
    // None return slot.
    Ok(unsafe { entry(cell, views, n as i32, ret) })
}

/// `obj_function_call` inside the fence.
///
/// # Safety
///
/// As `obj_function_call`.
unsafe fn call_checked(
    func: ObjHandle,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> Result<i32, Error> {
    {
        // SAFETY: the caller's guarantee.
        let f = unsafe { borrow(func, "func") }?;
        if f.downcast_ref::<FunctionObj>().is_none() {
            return Err(Error::type_error(format!(
                "`func` must be a `ffi.Function`, got `{}`",
                f.type_key()
            )));
        }
        let r = out(ret, "ret")?;
        let n = usize::try_from(num_args)
            .map_err(|_| Error::value_error(format!("negative count {num_args}")))?;
        if n > 0 && args.is_null() {
            return Err(null("args"));
        }
        let raw: &[ObjAny] = if n == 0 {
            &[]
        } else {
            // SAFETY: the caller passes `n` values at `args` (checked non-null).
            unsafe { core::slice::from_raw_parts(args, n) }
        };
        // Fast path: values that already are valid views (plain numbers, live objects of
        // the type they claim) go to the entry as they are, without a copy.
        if raw.iter().all(is_view_as_is) {
            // SAFETY: a checked function; each value is a valid view as it is.
            return unsafe { call_entry(func, raw.as_ptr().cast(), n, r) };
        }
        // SAFETY: the caller's guarantees.
        unsafe { call_converted(func, raw, num_args, r) }
    }
}

/// [`call_checked`] for values that need converting (strings, tensors, small strings,
/// values to check): checked copies, out of line.
///
/// # Safety
///
/// As `obj_function_call`, with `func` checked and the values in `raw`.
#[cold]
#[inline(never)]
unsafe fn call_converted(
    func: ObjHandle,
    raw: &[ObjAny],
    num_args: i32,
    r: &mut ObjAny,
) -> Result<i32, Error> {
    let n = raw.len();
    let args = raw.as_ptr();
    // Checked arguments: on the stack for up to `INLINE_ARGS`, else on the heap.
    let mut inline_slots: [Slot<'_>; INLINE_ARGS] = Default::default();
    let heap_slots: Vec<Slot<'_>>;
    let slots: &[Slot<'_>] = if n <= INLINE_ARGS {
        for (i, (s, a)) in inline_slots.iter_mut().zip(raw).enumerate() {
            // SAFETY: the caller's guarantee, per value.
            *s = unsafe { slot_from_c(a) }.map_err(|e| e.with_frame(format!("argument {i}")))?;
        }
        &inline_slots[..n]
    } else {
        // SAFETY: the caller's guarantee.
        heap_slots = unsafe { slots_from_c(args, num_args) }?;
        &heap_slots
    };
    let mut inline = [AnyView::NONE; INLINE_ARGS];
    let heap: Vec<AnyView<'_>>;
    let views: &[AnyView<'_>] = if slots.len() <= INLINE_ARGS {
        for (v, s) in inline.iter_mut().zip(slots) {
            *v = s.view();
        }
        &inline[..slots.len()]
    } else {
        heap = slots.iter().map(Slot::view).collect();
        &heap
    };
    // SAFETY: a checked function; views made from checked values.
    unsafe { call_entry(func, views.as_ptr().cast(), views.len(), r) }
}

/// Registers `func` as the global function `name`. A taken name is an error unless
/// `override_existing` is nonzero.
///
/// # Safety
///
/// `name` null or NUL-terminated; `func` null (an error) or a live object.
#[no_mangle]
pub unsafe extern "C" fn obj_global_set(
    name: *const c_char,
    func: ObjHandle,
    override_existing: i32,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(func, "func") }?;
        let f = Function::from_object_ptr(typed::<FunctionObj>(&b, "func")?);
        if override_existing != 0 {
            register_global_override(name, f);
            Ok(())
        } else {
            register_global(name, f)
        }
    })
}

/// Registers a C callback as the global function `name` in one call: what
/// `obj_function_create(call, ctx, deleter, name, &f)`, `obj_global_set(name, f, 0)` and
/// `obj_dec_ref(f)` do together, except that the context is the call's in every case:
/// `deleter(ctx)` (if not null) runs once, when the function dies, or before this
/// returns if the call fails (a taken name is a `KeyError`; a null or non-UTF-8 `name`
/// and a null `call` fail too), so that `if (obj_global_def(...)) return
/// obj_error_print();` leaks nothing. The caller never frees `ctx` itself.
///
/// # Safety
///
/// As `obj_function_create`; `name` null (an error) or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn obj_global_def(
    name: *const c_char,
    call: ObjCFunction,
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
) -> i32 {
    guard(|| {
        // The context belongs to the function from here on, so that every failure
        // below hands it to its deleter exactly once.
        let owner = ContextOwner { ctx, deleter };
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let call = call.ok_or_else(|| null("call"))?;
        let cb = CCallback {
            call,
            ctx: owner.release(),
            deleter,
            name: name.to_owned(),
        };
        let f =
            Function::from_packed_named(Some(name), move |args: &[AnyView<'_>]| cb.invoke(args));
        register_global(name, f)
    })
}

/// Runs a context's deleter when dropped, until `release`d (for `obj_global_def`'s
/// early failures).
struct ContextOwner {
    ctx: *mut c_void,
    deleter: ObjCContextDeleter,
}

impl ContextOwner {
    fn release(self) -> *mut c_void {
        let ctx = self.ctx;
        core::mem::forget(self);
        ctx
    }
}

impl Drop for ContextOwner {
    fn drop(&mut self) {
        if let Some(d) = self.deleter {
            // SAFETY: the deleter given with this context, called once, here (the
            // context was not handed to a function).
            unsafe { d(self.ctx) };
        }
    }
}

/// Calls the global function `name` in one call: the look-up and `obj_function_call`
/// (same arguments, same checks, same result rules). No function of that name is a
/// `KeyError` naming it.
///
/// # Safety
///
/// `name` null (an error) or NUL-terminated; otherwise as `obj_function_call`.
#[no_mangle]
pub unsafe extern "C" fn obj_global_call(
    name: *const c_char,
    args: *const ObjAny,
    num_args: i32,
    ret: *mut ObjAny,
) -> i32 {
    let mut found: Option<Function> = None;
    let rc = guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        found = Some(get_global(name).ok_or_else(|| {
            Error::new(ErrorKind::KeyError, format!("no global function `{name}`"))
        })?);
        Ok(())
    });
    match found {
        Some(f) if rc == 0 => {
            let handle = ObjectPtr::as_ptr(f.as_object_ptr()).cast_mut().cast();
            // SAFETY: a live function (held by `f` for the call); the rest is the
            // caller's guarantee. `obj_function_call` never unwinds.
            let rc = unsafe { obj_function_call(handle, args, num_args, ret) };
            // Our reference: the last one only if the global was removed meanwhile; a
            // deleter never unwinds (a panicking one aborts, see `object_core`'s
            // release).
            drop(f);
            rc
        }
        _ => rc,
    }
}

/// The global function `name` (a new reference), or null if there is none.
///
/// # Safety
///
/// `name` null (an error) or NUL-terminated; `out_func` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_global_get(name: *const c_char, out_func: *mut ObjHandle) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let o = out(out_func, "out_func")?;
        *o = get_global(name).map_or(core::ptr::null_mut(), |f| give(f.into_object_ptr()));
        Ok(())
    })
}

/// The names of every global function, as an `ffi.Array` of `ffi.String`.
///
/// # Safety
///
/// `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_global_list(out_array: *mut ObjHandle) -> i32 {
    guard(|| {
        let o = out(out_array, "out_array")?;
        let names: Vec<String> = list_globals().iter().map(|n| String::new(n)).collect();
        *o = give(Array::<String>::from(names).into_object_ptr());
        Ok(())
    })
}

/// Removes the global function `name`; `*out_removed` is 1 if there was one.
///
/// # Safety
///
/// `name` null (an error) or NUL-terminated; `out_removed` null or writable.
#[no_mangle]
pub unsafe extern "C" fn obj_global_remove(name: *const c_char, out_removed: *mut i32) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let removed = remove_global(name).is_some();
        // SAFETY: null or writable (the caller's guarantee).
        if let Some(o) = unsafe { out_removed.as_mut() } {
            *o = removed.into();
        }
        Ok(())
    })
}

/// Makes a module called `name` from `n` named functions.
///
/// # Safety
///
/// `name` and each of `names[..n]` NUL-terminated; `funcs[..n]` live function objects;
/// `out_module` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_module_create(
    name: *const c_char,
    names: *const *const c_char,
    funcs: *const ObjHandle,
    n: usize,
    out_module: *mut ObjHandle,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let o = out(out_module, "out_module")?;
        let mut b = Module::builder(name);
        if n > 0 {
            if names.is_null() || funcs.is_null() {
                return Err(null("names/funcs"));
            }
            // SAFETY: the caller's guarantee.
            let (ns, fs) = unsafe {
                (
                    core::slice::from_raw_parts(names, n),
                    core::slice::from_raw_parts(funcs, n),
                )
            };
            for (nm, f) in ns.iter().zip(fs) {
                // SAFETY: the caller's guarantee.
                let nm = unsafe { c_str(*nm, "names[i]") }?;
                // SAFETY: the caller's guarantee.
                let fb = unsafe { borrow(*f, "funcs[i]") }?;
                b = b.function(
                    nm,
                    Function::from_object_ptr(typed::<FunctionObj>(&fb, "funcs[i]")?),
                );
            }
        }
        *o = give(b.build().into_object_ptr());
        Ok(())
    })
}

/// The function `name` of a module (a new reference), searching its imports too when
/// `query_imports` is nonzero; null if there is none.
///
/// # Safety
///
/// `module` null (an error) or a live object; `name` NUL-terminated; `out_func`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn obj_module_get_function(
    module: ObjHandle,
    name: *const c_char,
    query_imports: i32,
    out_func: *mut ObjHandle,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(module, "module") }?;
        let m = Module::from_object_ptr(typed::<ModuleObj>(&b, "module")?);
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(name, "name") }?;
        let o = out(out_func, "out_func")?;
        *o = m
            .get_function(name, query_imports != 0)
            .map_or(core::ptr::null_mut(), |f| give(f.into_object_ptr()));
        Ok(())
    })
}

/// The names of a module's own functions (not its imports'), sorted, as a new
/// `ffi.Array` of strings in `*out_array`.
///
/// # Safety
///
/// `module` null (an error) or a live object; `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_module_function_names(
    module: ObjHandle,
    out_array: *mut ObjHandle,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(module, "module") }?;
        let m = Module::from_object_ptr(typed::<ModuleObj>(&b, "module")?);
        let o = out(out_array, "out_array")?;
        let names: Vec<String> = m.function_names().map(String::new).collect();
        *o = give(Array::<String>::from(names).into_object_ptr());
        Ok(())
    })
}

/// The modules a module imports, in order, as a new `ffi.Array` in `*out_array`.
///
/// # Safety
///
/// `module` null (an error) or a live object; `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_module_imports(module: ObjHandle, out_array: *mut ObjHandle) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(module, "module") }?;
        let m = Module::from_object_ptr(typed::<ModuleObj>(&b, "module")?);
        let o = out(out_array, "out_array")?;
        let imports: Vec<Module> = m.imports().to_vec();
        *o = give(Array::<Module>::from(imports).into_object_ptr());
        Ok(())
    })
}
