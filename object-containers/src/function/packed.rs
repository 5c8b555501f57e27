//! [`Function`], the handle of a packed function: made from a packed or a typed
//! closure, called with views, viewed as typed.

use core::fmt;

use object_core::{Any, AnyView, Error, ObjectPtr};

use super::abi::{self, FunctionObj};
use super::typed::{IntoArgs, TypedCallable, TypedFunction};
use object_core::FromRet;

/// A packed function: an object holding a callable behind a C entry point. Cloning is a
/// count increment; it can be stored in an `Any`, a container or a field, returned from
/// another function, and called from any thread.
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
    ///
    /// ```
    /// use object_containers::Function;
    /// use object_core::{Any, Error};
    ///
    /// let count = Function::from_packed(|args| Ok(Any::from(args.len() as i64)));
    /// assert_eq!(count.call_with([1, 2, 3]).unwrap(), Any::from(3));
    /// let fail = Function::from_packed(|_| Err(Error::value_error("no")));
    /// assert_eq!(fail.call(&[]).unwrap_err().kind(), "ValueError");
    /// ```
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
        Function(abi::new_packed(name, f))
    }

    /// A function from a closure of 0 to 8 arguments of types convertible from an
    /// argument view ([`FromArg`](super::FromArg)), returning a value convertible into
    /// `Any` or a `Result` of one ([`IntoRet`](super::IntoRet)). Wrong argument counts
    /// and types are errors naming the argument.
    ///
    /// ```
    /// use object_containers::Function;
    /// let greet = Function::from_typed(|name: String| format!("hello, {name}"));
    /// assert_eq!(greet.call_with(["you"]).unwrap().as_str(), Some("hello, you"));
    /// assert_eq!(greet.call_with([1]).unwrap_err().kind(), "TypeError");
    /// ```
    pub fn from_typed<Args, R, F: TypedCallable<Args, R>>(f: F) -> Self {
        Function(abi::new_typed(None, f))
    }

    /// [`Function::from_typed`] with a name, used in error frames.
    pub fn from_typed_named<Args, R, F: TypedCallable<Args, R>>(name: &str, f: F) -> Self {
        Function(abi::new_typed(Some(name), f))
    }

    /// The name given at construction, if any.
    pub fn name(&self) -> Option<&str> {
        self.0.name()
    }

    /// Marks the function *quick*: it returns in about the time of a call (no long
    /// computation, no I/O) and never waits for another thread. A hint for front-ends
    /// whose callers hold a global lock: Python's bindings keep the GIL during a call of
    /// a quick function, and let it go around any other (which a function that waits
    /// for threads calling back into Python needs, or it deadlocks). Marking changes
    /// nothing else; it is meant for a function just made, before it is shared.
    ///
    /// ```
    /// use object_containers::Function;
    /// let add = Function::from_typed(|a: i64, b: i64| a + b).quick();
    /// assert!(add.is_quick());
    /// assert!(!Function::from_typed(|a: i64| a).is_quick());
    /// ```
    #[must_use]
    pub fn quick(self) -> Self {
        self.0.mark_quick();
        self
    }

    /// Whether the function is marked [quick](Function::quick).
    #[inline]
    pub fn is_quick(&self) -> bool {
        self.0.is_quick()
    }

    /// Calls through the C entry point.
    ///
    /// # Errors
    ///
    /// The callee's [`Error`] (with the frames it crossed), including argument count and
    /// type errors and panics caught at the boundary.
    #[inline]
    pub fn call(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
        abi::call(&self.0, args)
    }

    /// Calls with arguments given as anything convertible to views. Up to
    /// [`INLINE_ARGS`](Self::INLINE_ARGS) (8) arguments, the views live in a buffer on
    /// the stack: no allocation; beyond that they are collected into a `Vec`.
    ///
    /// ```
    /// use object_containers::Function;
    /// let concat = Function::from_typed(|a: String, b: String| a + &b);
    /// let out = concat.call_with(["con", "cat"]).unwrap();
    /// assert_eq!(out.as_str(), Some("concat"));
    ///
    /// // Beyond 8 arguments too (collected into a `Vec`).
    /// let count = Function::from_packed(|args| Ok(object_core::Any::from(args.len() as i64)));
    /// assert_eq!(count.call_with(0..12i64).unwrap().as_int(), Some(12));
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`Function::call`].
    #[inline]
    pub fn call_with<'a, I>(&self, args: I) -> Result<Any, Error>
    where
        I: IntoIterator,
        I::Item: Into<AnyView<'a>>,
    {
        let mut args = args.into_iter();
        let mut inline = [AnyView::NONE; Self::INLINE_ARGS];
        let mut n = 0;
        for arg in args.by_ref() {
            if n == Self::INLINE_ARGS {
                return self.call_spilled(&inline, arg.into(), &mut args.map(Into::into));
            }
            inline[n] = arg.into();
            n += 1;
        }
        self.call(&inline[..n])
    }

    /// How many arguments [`call_with`](Self::call_with) passes without allocating.
    pub const INLINE_ARGS: usize = 8;

    /// `call_with` beyond [`INLINE_ARGS`](Self::INLINE_ARGS) arguments: the first ones,
    /// the next, and the rest, in a `Vec`.
    #[cold]
    #[inline(never)]
    fn call_spilled<'a>(
        &self,
        first: &[AnyView<'a>],
        next: AnyView<'a>,
        rest: &mut dyn Iterator<Item = AnyView<'a>>,
    ) -> Result<Any, Error> {
        let mut views = Vec::with_capacity(first.len() + 1 + rest.size_hint().0);
        views.extend_from_slice(first);
        views.push(next);
        views.extend(rest);
        self.call(&views)
    }

    /// A typed view: `f.typed::<(i64, i64), i64>().call((1, 2))`. Calls allocate
    /// nothing for plain-data arguments (the views live on the stack).
    pub fn typed<Args: IntoArgs, R: FromRet>(&self) -> TypedFunction<Args, R> {
        TypedFunction::new(self.clone())
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Function({})", self.name().unwrap_or("<anonymous>"))
    }
}

crate::handle::object_handle!(Function, FunctionObj, "ffi.Function");
super::impl_call_traits!(Function);
