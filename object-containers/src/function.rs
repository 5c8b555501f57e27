//! `Function` (`ffi.Function`, static index 68): the packed function, an ABI-stable
//! object. Its first field after the header is a C entry point
//! `unsafe extern "C" fn(this, args: *const AnyView, num_args: i32, ret: *mut Any) -> i32`;
//! the callable lives in a generic tail after it (dropped by the deleter). A nonzero
//! return means an [`Error`] waits in a thread-local slot for the caller to take.
//!
//! Functions made from typed closures ([`Function::from_typed`]) also carry a Rust-side
//! fast entry that [`TypedFunction::call`] uses: the argument views by value (in
//! registers) and the result in registers, the same checks and the same errors. The
//! typed entry points first try allocation-free, error-free conversions
//! (`FromArg::from_arg_quick`) and fall back to the full ones, out of line, only when
//! those fail, so that their common path calls nothing and needs no stack frame.
//!
//! Nothing unwinds out of an entry point (which would abort the process): a panic in the
//! callable, in an argument's `FromArg` or `Drop`, in the result's `IntoRet`, or in the
//! `Drop` of a panic's own payload is caught and becomes a `Panic` error.
//!
//! This module holds the FFI entry points, hence its `unsafe` blocks.

use core::cell::RefCell;
use core::fmt;
use core::marker::PhantomData;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{OnceLock, RwLock};

use object_core::{
    alloc::extra_of, make_object_with_extra, Any, AnyItem, AnyView, DataType, Device, Object,
    ObjectPtr, ObjectType, String, TypeError,
};

use crate::dlpack::DLTensor;
use crate::{Array, Error, Map, NDArray, NDArrayObj, Shape};

/// The C ABI of a packed call: `this`, `num_args` arguments, the return slot. The caller
/// initializes `*ret` to `None`; the callee writes its result over it (without dropping
/// the `None`, which owns nothing), and the caller owns what was written. Returns 0 on
/// success; nonzero leaves an [`Error`] in the calling thread's error slot.
pub type PackedCall = unsafe extern "C" fn(
    this: *const FunctionObj,
    args: *const AnyView<'static>,
    num_args: i32,
    ret: *mut Any,
) -> i32;

/// The object behind [`Function`]: the header, the entry point, and the function's name
/// (for error frames). The callable follows in the same block.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Function", index = 68, final, opaque)]
pub struct FunctionObj {
    base: Object,
    call: PackedCall,
    name: Option<String>,
    /// Rust-side entry for typed callers (functions made by [`Function::from_typed`]):
    /// the arguments as views by value, in registers, instead of an array in memory.
    fast: Option<FastEntry>,
}

/// A typed function's second entry point, for Rust callers of this crate's typed views
/// ([`TypedFunction`]): an `unsafe extern "C" fn(*const FunctionObj, AnyView, …) -> RawRet`
/// taking `arity` views by value (in registers), with its type erased. It converts and
/// checks the arguments like the C entry point, and reports errors the same way.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
// Reachable (through `TypedCallable::fast_entry`) but not nameable: `unnameable_types`
// reports it; its home is for the `function/` restructuring of issue 11 to decide.
#[allow(unnameable_types)]
pub struct FastEntry {
    arity: usize,
    entry: unsafe extern "C" fn(),
}

/// What a fast entry returns, in two registers: the bits of the result `Any` (which the
/// caller then owns), or, with `type_index == RawRet::FAILED`, the nonzero code of a
/// failure (in `small`) whose `Error` waits in the error slot.
#[repr(C)]
struct RawRet {
    type_index: u32,
    small: u32,
    payload: core::mem::MaybeUninit<u64>,
}

const _: () = {
    assert!(size_of::<RawRet>() == size_of::<Any>());
    assert!(object_core::registry::MAX_TYPES < RawRet::FAILED);
};

impl RawRet {
    /// The type index that marks a failure (above every type index the registry hands
    /// out, so no `Any` has it).
    const FAILED: u32 = u32::MAX;

    #[inline(always)]
    fn ok(value: Any) -> RawRet {
        // SAFETY: `Any` is `repr(C)` (u32, u32, an 8-byte union); `RawRet` has the same
        // layout and keeps the payload's bytes (and provenance) in a `MaybeUninit`.
        unsafe { core::mem::transmute::<Any, RawRet>(value) }
    }

    #[inline(always)]
    fn failed(rc: i32) -> RawRet {
        RawRet {
            type_index: RawRet::FAILED,
            small: rc as u32,
            payload: core::mem::MaybeUninit::new(0),
        }
    }

    #[inline(always)]
    fn into_result(self) -> Result<Any, Error> {
        if self.type_index != RawRet::FAILED {
            // SAFETY: not a failure, so these are the bits of an `Any` made by `ok`.
            Ok(unsafe { core::mem::transmute::<RawRet, Any>(self) })
        } else {
            Err(call_failed(self.small as i32))
        }
    }
}

/// `AnyView<$l>`, once per argument of a fast entry's signature (the first token is
/// only a counter).
macro_rules! view_of {
    ($a:ident, $l:lifetime) => {
        AnyView<$l>
    };
}

impl fmt::Debug for FunctionObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Function({})",
            self.name.as_deref().unwrap_or("<anonymous>")
        )
    }
}

std::thread_local! {
    static LAST_ERROR: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Leaves `e` in this thread's error slot (what a C-ABI callee does before returning a
/// nonzero code). While the thread's storage is being torn down (a call from a
/// thread-local destructor) the slot is gone and the error is dropped; the caller then
/// reports the failure without its details.
pub fn set_last_error(e: Error) {
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(e));
}

/// Takes the error a failed call left in this thread's slot.
pub fn take_last_error() -> Option<Error> {
    LAST_ERROR
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten()
}

fn panic_message(p: &(dyn core::any::Any + Send)) -> std::string::String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<std::string::String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// The entry point for a callable `F` stored in the object's tail.
unsafe extern "C" fn call_packed<F>(
    this: *const FunctionObj,
    args: *const AnyView<'static>,
    num_args: i32,
    ret: *mut Any,
) -> i32
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    // SAFETY: this entry point is only installed by `Function::from_packed_named::<F>`,
    // whose object is a `WithExtra<FunctionObj, F>`; `this` comes from the caller's handle
    // (full provenance) and the caller keeps the object alive during the call.
    let f: &F = unsafe { extra_of::<FunctionObj, F>(this) };
    let args: &[AnyView<'_>] = match usize::try_from(num_args) {
        // SAFETY: the caller passes `num_args` valid views at `args` (the C ABI's rule).
        Ok(n) if n > 0 && !args.is_null() => unsafe { core::slice::from_raw_parts(args, n) },
        _ => &[],
    };
    // SAFETY: as above; `ret` is the caller's slot.
    unsafe { finish(this, catch_unwind(AssertUnwindSafe(|| f(args))), ret) }
}

/// The entry point for a typed callable `F` stored (itself) in the object's tail.
unsafe extern "C" fn call_typed_entry<F, Args, R>(
    this: *const FunctionObj,
    args: *const AnyView<'static>,
    num_args: i32,
    ret: *mut Any,
) -> i32
where
    F: TypedCallable<Args, R>,
{
    // SAFETY: installed only by `Function::from_typed_named::<Args, R, F>`, whose object
    // is a `WithExtra<FunctionObj, F>` (see `call_packed`).
    let f: &F = unsafe { extra_of::<FunctionObj, F>(this) };
    let args: &[AnyView<'_>] = match usize::try_from(num_args) {
        // SAFETY: the caller passes `num_args` valid views at `args` (the C ABI's rule).
        Ok(n) if n > 0 && !args.is_null() => unsafe { core::slice::from_raw_parts(args, n) },
        _ => &[],
    };
    match catch_unwind(AssertUnwindSafe(|| f.call_quick(args))) {
        // SAFETY: as above; `ret` is the caller's slot.
        Ok(Some(r)) => unsafe { finish(this, Ok(r), ret) },
        // SAFETY: as above.
        Ok(None) => unsafe { call_typed_slow::<F, Args, R>(this, args, ret) },
        // SAFETY: as above.
        Err(panic) => unsafe { finish(this, Err(panic), ret) },
    }
}

/// [`call_typed_entry`] when the quick conversions fail: the full conversions, which
/// name the bad argument or count.
///
/// # Safety
///
/// As for [`call_typed_entry`], with the views already in a slice.
#[cold]
#[inline(never)]
unsafe fn call_typed_slow<F, Args, R>(
    this: *const FunctionObj,
    args: &[AnyView<'_>],
    ret: *mut Any,
) -> i32
where
    F: TypedCallable<Args, R>,
{
    // SAFETY: the caller's guarantees.
    let f: &F = unsafe { extra_of::<FunctionObj, F>(this) };
    // SAFETY: as above; `ret` is the caller's slot.
    unsafe {
        finish(
            this,
            catch_unwind(AssertUnwindSafe(|| f.call_typed(args))),
            ret,
        )
    }
}

/// The end of every entry point: the value into the caller's slot (0), or the error into
/// the error slot (-1, or -2 for a panic).
///
/// # Safety
///
/// `this` is the live function being called; `ret` is the caller's slot, initialized to
/// `None`.
#[inline(always)]
unsafe fn finish(
    this: *const FunctionObj,
    r: std::thread::Result<Result<Any, Error>>,
    ret: *mut Any,
) -> i32 {
    match r {
        Ok(Ok(value)) => {
            // SAFETY: the caller passes a valid return slot initialized to `None` (the C
            // ABI's rule), which owns nothing: overwriting it without a drop leaks nothing
            // and keeps a call off this path.
            unsafe { ret.write(value) };
            0
        }
        Ok(Err(e)) => {
            fail_with(this, e);
            -1
        }
        Err(panic) => {
            fail_with_panic(this, panic);
            -2
        }
    }
}

/// The end of a fast entry (see [`RawRet`]).
///
/// # Safety
///
/// `this` is the live function being called.
#[inline(always)]
unsafe fn finish_fast(
    this: *const FunctionObj,
    r: std::thread::Result<Result<Any, Error>>,
) -> RawRet {
    match r {
        Ok(Ok(value)) => RawRet::ok(value),
        Ok(Err(e)) => {
            fail_with(this, e);
            RawRet::failed(-1)
        }
        Err(panic) => {
            fail_with_panic(this, panic);
            RawRet::failed(-2)
        }
    }
}

/// The error path of every entry point, out of line: adds the function's frame to `e`
/// and leaves it in the error slot. Never unwinds (it runs inside `extern "C"`
/// functions): should anything in it panic, the error is lost and the caller reports a
/// failure whose error could not be delivered.
#[cold]
#[inline(never)]
fn fail_with(this: *const FunctionObj, e: Error) {
    never_unwind(|| set_last_error(e.with_frame(frame_name(this))));
}

/// The panic path of every entry point, out of line: a `Panic` error with the payload's
/// message, in the error slot. The payload is dropped here, where a panic in its own
/// `Drop` is caught too (see [`drop_payload`]). Never unwinds.
#[cold]
#[inline(never)]
fn fail_with_panic(this: *const FunctionObj, payload: Box<dyn core::any::Any + Send>) {
    let message = panic_message(&*payload);
    drop_payload(payload);
    never_unwind(|| set_last_error(Error::new("Panic", message).with_frame(frame_name(this))));
}

/// The name of the function being called, for its error frame.
fn frame_name(this: *const FunctionObj) -> std::string::String {
    // SAFETY: `this` is alive for the call (see `call_packed`).
    unsafe {
        (*this)
            .name
            .as_ref()
            .map_or("<anonymous function>", |s| s.as_str())
            .to_owned()
    }
}

/// Runs `f`, catching a panic (whose payload is dropped with [`drop_payload`]): for the
/// work an `extern "C"` entry point does after its callable returned, so that nothing
/// unwinds through the C ABI (which would abort the process).
fn never_unwind(f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        drop_payload(payload);
    }
}

/// Drops a caught panic's payload without unwinding: a payload whose `Drop` panics
/// would otherwise unwind out of the entry point that caught it. The payload of that
/// second panic is forgotten (leaked) rather than dropped, since its `Drop` may panic
/// too.
fn drop_payload(payload: Box<dyn core::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        core::mem::forget(again);
    }
}

/// A packed function: an object holding a callable behind a C entry point. Cloning is a
/// count increment; it can be stored in an `Any`, an `Array`, a `Map` or a field, returned
/// from another function, and called from any thread.
///
/// Callables must be `Send + Sync + 'static`: a `Function` is an object, and objects are
/// shared across threads and type-erased into containers, so a callable that is not
/// thread-safe cannot be made into one.
///
/// ```
/// use object_containers::Function;
/// use object_core::{Any, AnyView};
///
/// let add = Function::from_typed(|a: i64, b: i64| a + b);
/// assert_eq!(add.call(&[AnyView::from(2), AnyView::from(3)]).unwrap(), Any::from(5));
/// let typed = add.typed::<(i64, i64), i64>();
/// assert_eq!(typed.call((40, 2)).unwrap(), 42);
/// let err = add.call(&[AnyView::from("x"), AnyView::from(1)]).unwrap_err();
/// assert_eq!(err.message(), "argument 0: expected int, got const char*");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Function(ObjectPtr<FunctionObj>);

impl Function {
    /// A function from a packed callable: it receives the arguments as views and returns
    /// a value or an error.
    pub fn from_packed<F>(f: F) -> Self
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
    {
        Self::from_packed_named(None, f)
    }

    /// [`Function::from_packed`] with a name, used in error frames.
    pub fn from_packed_named<F>(name: Option<&str>, f: F) -> Self
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
    {
        let obj = FunctionObj {
            base: Object::new(),
            call: call_packed::<F>,
            name: name.map(String::from),
            fast: None,
        };
        Function(make_object_with_extra(obj, f))
    }

    /// A function from a closure of 0 to 8 arguments of types convertible from an
    /// argument view ([`FromArg`]), returning a value convertible into `Any` or a
    /// `Result` of one ([`IntoRet`]). Wrong argument counts and types are errors naming
    /// the argument.
    pub fn from_typed<Args, R, F: TypedCallable<Args, R>>(f: F) -> Self {
        Self::typed_named(None, f)
    }

    /// [`Function::from_typed`] with a name, used in error frames.
    pub fn from_typed_named<Args, R, F: TypedCallable<Args, R>>(name: &str, f: F) -> Self {
        Self::typed_named(Some(name), f)
    }

    fn typed_named<Args, R, F: TypedCallable<Args, R>>(name: Option<&str>, f: F) -> Self {
        let obj = FunctionObj {
            base: Object::new(),
            call: call_typed_entry::<F, Args, R>,
            name: name.map(String::from),
            fast: F::fast_entry(),
        };
        Function(make_object_with_extra(obj, f))
    }

    /// The name given at construction, if any.
    pub fn name(&self) -> Option<&str> {
        self.0.name.as_ref().map(|s| s.as_str())
    }

    /// Calls through the C entry point.
    ///
    /// # Errors
    ///
    /// The callee's [`Error`] (with the frames it crossed), including argument count and
    /// type errors and panics caught at the boundary.
    #[inline]
    pub fn call(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
        let Ok(n) = i32::try_from(args.len()) else {
            return Err(Error::value_error(format!(
                "too many arguments: {}",
                args.len()
            )));
        };
        let mut ret = Any::NONE;
        let this = ObjectPtr::as_ptr(&self.0);
        // SAFETY: `this` is a live function object (we hold a handle); `args` is `n` valid
        // views that outlive the call (the lifetime is only erased for the C signature);
        // `ret` is an initialized slot we own.
        let rc = unsafe { (self.0.call)(this, args.as_ptr().cast(), n, &mut ret) };
        if rc == 0 {
            Ok(ret)
        } else {
            Err(call_failed(rc))
        }
    }

    /// Calls with arguments given as anything convertible to views.
    ///
    /// ```
    /// use object_containers::Function;
    /// let concat = Function::from_typed(|a: String, b: String| a + &b);
    /// let out = concat.call_with(["con", "cat"]).unwrap();
    /// assert_eq!(out.as_str(), Some("concat"));
    /// ```
    pub fn call_with<'a, I>(&self, args: I) -> Result<Any, Error>
    where
        I: IntoIterator,
        I::Item: Into<AnyView<'a>>,
    {
        let views: Vec<AnyView<'a>> = args.into_iter().map(Into::into).collect();
        self.call(&views)
    }

    /// A typed view: `f.typed::<(i64, i64), i64>().call((1, 2))`. Calls allocate
    /// nothing for plain-data arguments (the views live on the stack).
    pub fn typed<Args: IntoArgs, R: FromRet>(&self) -> TypedFunction<Args, R> {
        TypedFunction {
            f: self.clone(),
            _sig: PhantomData,
        }
    }

    /// The underlying object.
    pub fn as_object_ptr(&self) -> &ObjectPtr<FunctionObj> {
        &self.0
    }

    /// Whether two handles share one function object.
    pub fn ptr_eq(&self, other: &Function) -> bool {
        ObjectPtr::ptr_eq(&self.0, &other.0)
    }
}

/// The error a failed call left, out of line.
#[cold]
#[inline(never)]
fn call_failed(rc: i32) -> Error {
    take_last_error().unwrap_or_else(|| {
        Error::new(
            "Error",
            format!(
                "call failed with code {rc}, and its error could not be delivered \
                 (the thread's error slot is gone or was emptied)"
            ),
        )
    })
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Function({})", self.name().unwrap_or("<anonymous>"))
    }
}

/// A typed view of a [`Function`] (see [`Function::typed`]).
pub struct TypedFunction<Args, R> {
    f: Function,
    _sig: PhantomData<fn(Args) -> R>,
}

impl<Args, R> Clone for TypedFunction<Args, R> {
    fn clone(&self) -> Self {
        TypedFunction {
            f: self.f.clone(),
            _sig: PhantomData,
        }
    }
}

impl<Args, R> fmt::Debug for TypedFunction<Args, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypedFunction({:?})", self.f)
    }
}

impl<Args: IntoArgs, R: FromRet> TypedFunction<Args, R> {
    /// Calls the function.
    ///
    /// # Errors
    ///
    /// The callee's error, or a `TypeError` if the result is not an `R`.
    #[inline]
    pub fn call(&self, args: Args) -> Result<R, Error> {
        let ret = args.call_function(&self.f)?;
        R::from_ret(ret).map_err(|e| Error::type_error(format!("return value: {e}")))
    }

    /// The untyped function.
    pub fn function(&self) -> &Function {
        &self.f
    }
}

// ---------------------------------------------------------------------------------
// Argument and return conversions.
// ---------------------------------------------------------------------------------

/// A type a typed function can take as an argument.
pub trait FromArg: Sized {
    /// Converts an argument view.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the expected and actual type.
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError>;

    /// [`FromArg::from_arg`] without the error: `None` may also mean "not sure", after
    /// which the caller takes the full conversion. What a typed function's fast entry
    /// tries first, so that its common path builds no error and calls nothing.
    #[doc(hidden)]
    #[inline]
    fn from_arg_quick(v: AnyView<'_>) -> Option<Self> {
        Self::from_arg(v).ok()
    }
}

/// A type a typed function can return.
pub trait IntoRet {
    /// Converts into the call's result.
    ///
    /// # Errors
    ///
    /// The error a `Result` carried.
    fn into_ret(self) -> Result<Any, Error>;
}

/// A type a typed view can produce from a call's result.
pub trait FromRet: Sized {
    /// Converts a result.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the expected and actual type.
    fn from_ret(v: Any) -> Result<Self, TypeError>;
}

macro_rules! via_view {
    ($($t:ty $(=> $get:ident)?),*) => {$(
        impl FromArg for $t {
            #[inline]
            fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
                <$t>::try_from(v)
            }
            $(
                #[inline]
                fn from_arg_quick(v: AnyView<'_>) -> Option<Self> {
                    v.$get().and_then(|x| <$t>::try_from(x).ok())
                }
            )?
        }
        impl IntoRet for $t {
            #[inline]
            fn into_ret(self) -> Result<Any, Error> {
                Ok(Any::from(self))
            }
        }
        impl FromRet for $t {
            #[inline]
            fn from_ret(v: Any) -> Result<Self, TypeError> {
                <$t>::try_from(v)
            }
        }
    )*};
}
via_view!(
    i64 => as_int,
    i32 => as_int,
    u32 => as_int,
    i16 => as_int,
    u16 => as_int,
    i8 => as_int,
    u8 => as_int,
    bool => as_bool,
    f64 => as_float,
    DataType,
    Device,
    std::string::String,
    String
);

macro_rules! via_any {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
                <$t>::try_from(v.to_any())
            }
        }
        impl IntoRet for $t {
            fn into_ret(self) -> Result<Any, Error> {
                Ok(Any::from(self))
            }
        }
        impl FromRet for $t {
            fn from_ret(v: Any) -> Result<Self, TypeError> {
                <$t>::try_from(v)
            }
        }
    )*};
}
via_any!(Shape, Error, Function, crate::Module);

impl FromArg for Any {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        Ok(v.to_any())
    }
}
impl IntoRet for Any {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(self)
    }
}
impl FromRet for Any {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        Ok(v)
    }
}
impl IntoRet for () {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::NONE)
    }
}
impl FromRet for () {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        <()>::try_from(v)
    }
}
impl IntoRet for &str {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl<T: ObjectType> FromArg for ObjectPtr<T> {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        ObjectPtr::try_from(v)
    }
}
impl<T: ObjectType> IntoRet for ObjectPtr<T> {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl<T: ObjectType> FromRet for ObjectPtr<T> {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        ObjectPtr::try_from(v)
    }
}
/// Array objects only: a raw `DLTensor*` argument is refused (an owning array cannot be
/// made from a borrowed pointer without copying; take a [`TensorView`](crate::TensorView)
/// in a packed function, or a `*mut DLTensor`, to accept both).
impl FromArg for NDArray {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        ObjectPtr::<NDArrayObj>::try_from(v).map(NDArray::from_object_ptr)
    }
    #[inline]
    fn from_arg_quick(v: AnyView<'_>) -> Option<Self> {
        v.as_object_of::<NDArrayObj>()
            .map(|o| NDArray::from_object_ptr(o.clone()))
    }
}
impl IntoRet for NDArray {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl FromRet for NDArray {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        NDArray::try_from(v)
    }
}
/// The RFC's `DLTensor*` argument: an array object's embedded tensor or a caller's raw
/// `DLTensor*`, as a raw pointer valid for the duration of the call (read it with
/// `unsafe { TensorView::from_raw(p) }`; do not keep it).
impl FromArg for *mut DLTensor {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        crate::ndarray::dl_tensor_arg(v)
            .ok_or_else(|| TypeError::new("DLTensor* or ffi.Tensor", v.type_key()))
    }
}

impl<T: AnyItem> FromArg for Array<T> {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        Array::try_from(v.to_any())
    }
}
impl<T: AnyItem> IntoRet for Array<T> {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl<T: AnyItem> FromRet for Array<T> {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        Array::try_from(v)
    }
}
impl<K: AnyItem, V: AnyItem> FromArg for Map<K, V> {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        Map::try_from(v.to_any())
    }
}
impl<K: AnyItem, V: AnyItem> IntoRet for Map<K, V> {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl<K: AnyItem, V: AnyItem> FromRet for Map<K, V> {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        Map::try_from(v)
    }
}
impl<T: FromArg> FromArg for Option<T> {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        if v.is_none() {
            Ok(None)
        } else {
            T::from_arg(v).map(Some)
        }
    }
}
impl<T: IntoRet> IntoRet for Option<T> {
    fn into_ret(self) -> Result<Any, Error> {
        self.map_or(Ok(Any::NONE), IntoRet::into_ret)
    }
}
impl<T: FromRet> FromRet for Option<T> {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        if v.is_none() {
            Ok(None)
        } else {
            T::from_ret(v).map(Some)
        }
    }
}
impl<T: IntoRet, E: Into<Error>> IntoRet for Result<T, E> {
    #[inline]
    fn into_ret(self) -> Result<Any, Error> {
        self.map_err(Into::into).and_then(IntoRet::into_ret)
    }
}

/// A closure that [`Function::from_typed`] accepts: `Fn(A0, …, An) -> R` for up to 8
/// arguments. Implemented for every such closure; there is nothing to implement.
pub trait TypedCallable<Args, R>: Send + Sync + 'static {
    /// Converts the arguments, calls, converts the result.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming a bad argument or a wrong count, or the closure's error.
    fn call_typed(&self, args: &[AnyView<'_>]) -> Result<Any, Error>;

    /// [`TypedCallable::call_typed`] with the quick conversions: `None` if the count is
    /// wrong or a quick conversion fails, and nothing was called.
    #[doc(hidden)]
    fn call_quick(&self, args: &[AnyView<'_>]) -> Option<Result<Any, Error>> {
        Some(self.call_typed(args))
    }

    /// The second entry point, for typed callers.
    #[doc(hidden)]
    fn fast_entry() -> Option<FastEntry> {
        None
    }
}

/// Argument tuples a [`TypedFunction`] takes: `(A0, …, An)` for up to 8 arguments, each
/// convertible into a view.
pub trait IntoArgs {
    /// Calls `f` with the arguments as views (on the stack, no allocation).
    fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> T;

    /// Calls `f` with these arguments: through its fast entry if it has one of this
    /// arity, else through the C entry point.
    #[doc(hidden)]
    fn call_function(self, f: &Function) -> Result<Any, Error>
    where
        Self: Sized,
    {
        self.with_views(|views| f.call(views))
    }
}

/// A fast entry's way out when a quick conversion fails: the packed entry, which converts
/// in full (and names the bad argument).
///
/// # Safety
///
/// `this` is the live function being called.
#[cold]
#[inline(never)]
unsafe fn through_packed<const N: usize>(
    this: *const FunctionObj,
    views: [AnyView<'_>; N],
) -> RawRet {
    let mut ret = Any::NONE;
    // SAFETY: the caller's guarantees; `N` views live in `views` for the call; `ret` is
    // initialized to `None`.
    let rc = unsafe { ((*this).call)(this, views.as_ptr().cast(), N as i32, &mut ret) };
    if rc == 0 {
        RawRet::ok(ret)
    } else {
        RawRet::failed(rc)
    }
}

#[inline]
fn arg<T: FromArg>(args: &[AnyView<'_>], i: usize) -> Result<T, Error> {
    match T::from_arg(args[i]) {
        Ok(v) => Ok(v),
        Err(e) => Err(arg_error(i, e)),
    }
}

/// The error for a bad argument, out of line.
#[cold]
#[inline(never)]
fn arg_error(i: usize, e: TypeError) -> Error {
    Error::type_error(format!("argument {i}: {e}"))
}

/// The error for a wrong argument count, out of line.
#[cold]
#[inline(never)]
fn arity_error(expected: usize, got: usize) -> Error {
    Error::type_error(format!(
        "expected {} argument{}, got {}",
        expected,
        if expected == 1 { "" } else { "s" },
        got
    ))
}

macro_rules! arity {
    ($n:literal, $fast:ident; $($a:ident $i:tt $v:ident $x:ident),*) => {
        /// The fast entry for a typed callable of this arity (see [`FastEntry`]).
        unsafe extern "C" fn $fast<F, R, $($a,)*>(
            this: *const FunctionObj,
            $($v: AnyView<'_>,)*
        ) -> RawRet
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: IntoRet,
            $($a: FromArg,)*
        {
            // One `catch_unwind` around everything that runs user code: the quick
            // conversions (`FromArg`), the drops of converted arguments when a later
            // one does not convert, the call, and `IntoRet`. Nothing may unwind out of
            // this `extern "C"` function.
            #[allow(unreachable_patterns)]
            let r = catch_unwind(AssertUnwindSafe(|| {
                match ($(<$a as FromArg>::from_arg_quick($v),)*) {
                    ($(Some($x),)*) => {
                        // SAFETY: installed only by `Function::from_typed_named` for
                        // this `F`, whose object is a `WithExtra<FunctionObj, F>` (see
                        // `call_packed`).
                        let f: &F = unsafe { extra_of::<FunctionObj, F>(this) };
                        Some((f)($($x),*).into_ret())
                    }
                    _ => None,
                }
            }));
            match r {
                // SAFETY: `this` is live for the call.
                Ok(Some(r)) => unsafe { finish_fast(this, Ok(r)) },
                // SAFETY: as above.
                Ok(None) => unsafe { through_packed(this, [$($v),*]) },
                // SAFETY: as above.
                Err(panic) => unsafe { finish_fast(this, Err(panic)) },
            }
        }

        impl<F, R, $($a,)*> TypedCallable<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: IntoRet,
            $($a: FromArg,)*
        {
            #[inline]
            fn call_typed(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
                if args.len() != $n {
                    return Err(arity_error($n, args.len()));
                }
                (self)($(arg::<$a>(args, $i)?),*).into_ret()
            }

            #[inline]
            #[allow(unreachable_patterns)]
            fn call_quick(&self, args: &[AnyView<'_>]) -> Option<Result<Any, Error>> {
                if args.len() != $n {
                    return None;
                }
                match ($(<$a as FromArg>::from_arg_quick(args[$i]),)*) {
                    ($(Some($x),)*) => Some((self)($($x),*).into_ret()),
                    _ => None,
                }
            }

            #[inline]
            fn fast_entry() -> Option<FastEntry> {
                let entry: for<'x> unsafe extern "C" fn(
                    *const FunctionObj,
                    $(view_of!($a, 'x),)*
                ) -> RawRet = $fast::<F, R, $($a,)*>;
                Some(FastEntry {
                    arity: $n,
                    // SAFETY: a function pointer to a function pointer of another
                    // signature (same size); `call_function` casts it back to exactly
                    // this signature after checking the arity.
                    entry: unsafe {
                        core::mem::transmute::<
                            for<'x> unsafe extern "C" fn(
                                *const FunctionObj,
                                $(view_of!($a, 'x),)*
                            ) -> RawRet,
                            unsafe extern "C" fn(),
                        >(entry)
                    },
                })
            }
        }

        impl<'v, $($a: Into<AnyView<'v>>,)*> IntoArgs for ($($a,)*) {
            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> T {
                let views: [AnyView<'v>; $n] = [$(self.$i.into()),*];
                f(&views)
            }

            #[inline]
            fn call_function(self, f: &Function) -> Result<Any, Error> {
                let obj: &FunctionObj = &f.0;
                match obj.fast {
                    Some(fast) if fast.arity == $n => {
                        // SAFETY: a fast entry of arity `$n` has exactly this signature
                        // (see `TypedCallable::fast_entry`).
                        let entry = unsafe {
                            core::mem::transmute::<
                                unsafe extern "C" fn(),
                                for<'x> unsafe extern "C" fn(
                                    *const FunctionObj,
                                    $(view_of!($a, 'x),)*
                                ) -> RawRet,
                            >(fast.entry)
                        };
                        // The handle's pointer (provenance over the whole block: the
                        // entry reads the callable after the object), not `obj`'s.
                        let this = ObjectPtr::as_ptr(&f.0);
                        // SAFETY: the function is live (we hold a handle); the views
                        // borrow `self`'s values for the call.
                        unsafe { entry(this, $(self.$i.into(),)*) }.into_result()
                    }
                    _ => self.with_views(|views| f.call(views)),
                }
            }
        }
    };
}

arity!(0, fast0;);
arity!(1, fast1; A0 0 v0 x0);
arity!(2, fast2; A0 0 v0 x0, A1 1 v1 x1);
arity!(3, fast3; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2);
arity!(4, fast4; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3);
arity!(5, fast5; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4);
arity!(6, fast6; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5);
arity!(7, fast7; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5, A6 6 v6 x6);
arity!(8, fast8; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5, A6 6 v6 x6, A7 7 v7 x7);

// ---------------------------------------------------------------------------------
// Functions as values.
// ---------------------------------------------------------------------------------

crate::handle::object_handle!(@values Function, FunctionObj, "ffi.Function");

// ---------------------------------------------------------------------------------
// The global registry.
// ---------------------------------------------------------------------------------

fn globals() -> &'static RwLock<BTreeMap<std::string::String, Function>> {
    static GLOBALS: OnceLock<RwLock<BTreeMap<std::string::String, Function>>> = OnceLock::new();
    GLOBALS.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// Registers `f` under `name` for [`get_global`].
///
/// # Errors
///
/// An `Error` (kind `"KeyError"`) naming `name` if it is taken; use
/// [`register_global_override`] to replace on purpose.
///
/// ```
/// use object_containers::{get_global, register_global, remove_global, Function};
/// register_global("doc.twice", Function::from_typed(|x: i64| 2 * x)).unwrap();
/// assert!(register_global("doc.twice", Function::from_typed(|x: i64| x)).is_err());
/// let f = get_global("doc.twice").unwrap();
/// assert_eq!(f.typed::<(i64,), i64>().call((21,)).unwrap(), 42);
/// remove_global("doc.twice");
/// ```
pub fn register_global(name: &str, f: Function) -> Result<(), Error> {
    let mut g = globals().write().unwrap_or_else(|e| e.into_inner());
    if g.contains_key(name) {
        return Err(Error::new(
            "KeyError",
            format!("global function `{name}` is already registered"),
        ));
    }
    g.insert(name.to_owned(), f);
    Ok(())
}

/// Registers `f` under `name`, replacing and returning any previous function.
pub fn register_global_override(name: &str, f: Function) -> Option<Function> {
    globals()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_owned(), f)
}

/// The global function registered under `name`.
#[inline]
pub fn get_global(name: &str) -> Option<Function> {
    globals()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned()
}

/// The names of all global functions, sorted.
pub fn list_globals() -> Vec<std::string::String> {
    globals()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect()
}

/// Removes and returns the global function registered under `name`.
pub fn remove_global(name: &str) -> Option<Function> {
    globals()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(name)
}
object_core::__object_handle_field!(Function, "ffi.Function");
