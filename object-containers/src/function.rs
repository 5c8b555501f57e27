//! `Function` (`ffi.Function`, static index 68): the packed function, an ABI-stable
//! object. Its first field after the header is a C entry point
//! `unsafe extern "C" fn(this, args: *const AnyView, num_args: i32, ret: *mut Any) -> i32`;
//! the callable lives in a generic tail after it (dropped by the deleter). A nonzero
//! return means an [`Error`] waits in a thread-local slot for the caller to take.
//!
//! This module holds the FFI entry points, hence its `unsafe` blocks.

use core::cell::RefCell;
use core::fmt;
use core::marker::PhantomData;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{OnceLock, RwLock};

use object_core::{
    extra_of, make_object_with_extra, Any, AnyItem, AnyView, DataType, Device, Object, ObjectPtr,
    ObjectType, String, TypeError,
};

use crate::{Array, Error, Map, Shape};

/// The C ABI of a packed call: `this`, `num_args` arguments, the return slot. The caller
/// initializes `*ret` to `None`; the callee owns what it writes there. Returns 0 on
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
#[object(key = "ffi.Function", index = 68, final)]
pub struct FunctionObj {
    base: Object,
    call: PackedCall,
    name: Option<String>,
}

impl fmt::Debug for FunctionObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionObj")
            .field("name", &self.name)
            .finish()
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
    let name = || {
        // SAFETY: `this` is alive for the call (see above).
        unsafe {
            (*this)
                .name
                .as_ref()
                .map_or("<anonymous function>", |s| s.as_str())
                .to_owned()
        }
    };
    match catch_unwind(AssertUnwindSafe(|| f(args))) {
        Ok(Ok(value)) => {
            // SAFETY: the caller passes a valid, initialized return slot.
            unsafe { *ret = value };
            0
        }
        Ok(Err(e)) => {
            set_last_error(e.with_frame(name()));
            -1
        }
        Err(panic) => {
            set_last_error(Error::new("Panic", panic_message(&*panic)).with_frame(name()));
            -2
        }
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
        };
        Function(make_object_with_extra(obj, f))
    }

    /// A function from a closure of 0 to 8 arguments of types convertible from an
    /// argument view ([`FromArg`]), returning a value convertible into `Any` or a
    /// `Result` of one ([`IntoRet`]). Wrong argument counts and types are errors naming
    /// the argument.
    pub fn from_typed<Args, R, F: TypedCallable<Args, R>>(f: F) -> Self {
        Self::from_packed(move |args: &[AnyView<'_>]| f.call_typed(args))
    }

    /// [`Function::from_typed`] with a name, used in error frames.
    pub fn from_typed_named<Args, R, F: TypedCallable<Args, R>>(name: &str, f: F) -> Self {
        Self::from_packed_named(Some(name), move |args: &[AnyView<'_>]| f.call_typed(args))
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
            Err(take_last_error().unwrap_or_else(|| {
                Error::new("Error", format!("call failed with code {rc} and no error"))
            }))
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
        let ret = args.with_views(|views| self.f.call(views))?;
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
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            #[inline]
            fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
                <$t>::try_from(v)
            }
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
    i64,
    i32,
    u32,
    i16,
    u16,
    i8,
    u8,
    bool,
    f64,
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
}

/// Argument tuples a [`TypedFunction`] takes: `(A0, …, An)` for up to 8 arguments, each
/// convertible into a view.
pub trait IntoArgs {
    /// Calls `f` with the arguments as views (on the stack, no allocation).
    fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> T;
}

fn arg<T: FromArg>(args: &[AnyView<'_>], i: usize) -> Result<T, Error> {
    T::from_arg(args[i]).map_err(|e| Error::type_error(format!("argument {i}: {e}")))
}

macro_rules! arity {
    ($n:literal; $($a:ident $i:tt),*) => {
        impl<F, R, $($a,)*> TypedCallable<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: IntoRet,
            $($a: FromArg,)*
        {
            #[inline]
            fn call_typed(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
                if args.len() != $n {
                    return Err(Error::type_error(format!(
                        "expected {} argument{}, got {}",
                        $n,
                        if $n == 1 { "" } else { "s" },
                        args.len()
                    )));
                }
                (self)($(arg::<$a>(args, $i)?),*).into_ret()
            }
        }

        impl<'v, $($a: Into<AnyView<'v>>,)*> IntoArgs for ($($a,)*) {
            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> T {
                let views: [AnyView<'v>; $n] = [$(self.$i.into()),*];
                f(&views)
            }
        }
    };
}

arity!(0;);
arity!(1; A0 0);
arity!(2; A0 0, A1 1);
arity!(3; A0 0, A1 1, A2 2);
arity!(4; A0 0, A1 1, A2 2, A3 3);
arity!(5; A0 0, A1 1, A2 2, A3 3, A4 4);
arity!(6; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5);
arity!(7; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6);
arity!(8; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7);

// ---------------------------------------------------------------------------------
// Functions as values.
// ---------------------------------------------------------------------------------

impl From<Function> for Any {
    fn from(f: Function) -> Any {
        Any::from(f.0)
    }
}

impl<'a> From<&'a Function> for AnyView<'a> {
    fn from(f: &'a Function) -> Self {
        AnyView::from(&f.0)
    }
}

macro_rules! borrowed_view {
    ($($t:ty),*) => {$(
        impl<'a> From<&'a $t> for AnyView<'a> {
            fn from(v: &'a $t) -> Self {
                AnyView::from(v.as_object_ptr())
            }
        }
    )*};
}
borrowed_view!(crate::Module, Error, Shape);

impl<'a, T: AnyItem> From<&'a Array<T>> for AnyView<'a> {
    fn from(v: &'a Array<T>) -> Self {
        AnyView::from(v.as_object_ptr())
    }
}

impl<'a, K: AnyItem, V: AnyItem> From<&'a Map<K, V>> for AnyView<'a> {
    fn from(v: &'a Map<K, V>) -> Self {
        AnyView::from(v.as_object_ptr())
    }
}

impl TryFrom<Any> for Function {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        ObjectPtr::<FunctionObj>::try_from(a).map(Function)
    }
}

// SAFETY: `Function` is `repr(transparent)` over `ObjectPtr<FunctionObj>`; slots holding
// a function object are read through that handle.
unsafe impl AnyItem for Function {
    fn expected() -> std::borrow::Cow<'static, str> {
        "ffi.Function".into()
    }
    fn into_any(self) -> Any {
        Any::from(self)
    }
    fn matches(slot: &Any) -> bool {
        slot.as_object_of::<FunctionObj>().is_some()
    }
    fn from_slot(slot: &Any) -> Option<&Self> {
        let p = slot.as_object_of::<FunctionObj>()?;
        // SAFETY: `Function` is `repr(transparent)` over `ObjectPtr<FunctionObj>`.
        Some(unsafe { &*(p as *const ObjectPtr<FunctionObj> as *const Function) })
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Function::try_from(slot)
    }
}

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
