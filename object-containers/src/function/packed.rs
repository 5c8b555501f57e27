//! [`Function`], the handle of a packed function: made from a packed or a typed
//! closure, called with views, viewed as typed.

use core::fmt;

use object_core::{Any, AnyView, Error, ObjectPtr};

use super::abi::{self, FunctionObj};
use super::signature::Signature;
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

    /// Marks the function *long-running*: it may compute for long, block on I/O, or wait
    /// for other threads. A hint for front-ends whose callers hold a global lock:
    /// Python's bindings keep the GIL during a call (as a plain pyo3 function does: a
    /// call is the cheaper for it) unless the function is marked so; around a call of a
    /// long-running one they let it go, so that other Python threads run meanwhile and
    /// a function that waits for threads calling back into Python does not deadlock.
    /// Marking changes nothing else; it is meant for a function just made, before it
    /// is shared (front-ends may also set it later: the hint is read once per call).
    ///
    /// ```
    /// use object_containers::Function;
    /// let solve = Function::from_typed(|n: i64| (0..n).sum::<i64>()).long_running();
    /// assert!(solve.is_long_running());
    /// assert!(!Function::from_typed(|a: i64| a).is_long_running());
    /// ```
    #[must_use]
    pub fn long_running(self) -> Self {
        self.0.set_long_running(true);
        self
    }

    /// Sets or clears the [long-running](Function::long_running) hint of a function
    /// already shared (a front-end's setting; calls under way keep what they read).
    ///
    /// ```
    /// use object_containers::Function;
    /// let f = Function::from_typed(|a: i64| a);
    /// f.set_long_running(true);
    /// assert!(f.is_long_running());
    /// ```
    #[inline]
    pub fn set_long_running(&self, long_running: bool) {
        self.0.set_long_running(long_running);
    }

    /// Whether the function is marked [long-running](Function::long_running).
    #[inline]
    pub fn is_long_running(&self) -> bool {
        self.0.is_long_running()
    }

    /// Declares the function's signature: its parameters' names, defaults and types,
    /// its result's type, its documentation (see [`Signature`]). A typed closure's
    /// types fill in what the signature leaves out, and the signature must name as many
    /// parameters as the closure takes. Set once, on a function just made: the function
    /// keeps it for its life.
    ///
    /// Then a call that leaves out trailing parameters takes their defaults (from Rust,
    /// C or Python), [`call_kw`](Self::call_kw) and Python bind arguments by name, and
    /// errors name the parameter.
    ///
    /// ```
    /// use object_containers::{Function, Signature};
    /// let scale = Function::from_packed_named(Some("doc.scale"), |args| {
    ///     Ok((args[0].as_float().unwrap_or(0.0) * args[1].as_float().unwrap_or(0.0)).into())
    /// })
    /// .with_signature(Signature::new().param_typed("x", "float").param_default("by", 2.0))
    /// .unwrap();
    /// assert_eq!(scale.call_with([1.5]).unwrap().as_float(), Some(3.0));
    /// let err = scale.call_with(Vec::<i64>::new()).unwrap_err();
    /// assert_eq!(err.message(), "missing argument `x` of `doc.scale`");
    /// assert!(scale.clone().with_signature(Signature::new()).is_err());   // set once
    /// ```
    ///
    /// # Errors
    ///
    /// A `ValueError` when the signature is malformed ([`Signature::check`]), names
    /// another number of parameters than a typed closure takes, or the function already
    /// has one.
    pub fn with_signature(self, sig: Signature) -> Result<Self, Error> {
        sig.check()?;
        let sig = match self.0.typed_signature() {
            Some(types) => sig.typed_by(types, self.name())?,
            None => sig,
        };
        if self.0.set_signature(sig).is_err() {
            return Err(Error::value_error(format!(
                "{} already has a signature",
                self.name()
                    .map_or_else(|| "the function".to_owned(), |n| format!("`{n}`"))
            )));
        }
        Ok(self)
    }

    /// The signature declared with [`with_signature`](Self::with_signature), if any.
    #[inline]
    pub fn declared_signature(&self) -> Option<&Signature> {
        self.0.declared_signature()
    }

    /// What the function says of its parameters: the declared signature, else, for a
    /// typed closure, its types as positional-only parameters `arg0`, `arg1`, …; `None`
    /// for a packed function without one (it takes any arguments).
    ///
    /// ```
    /// use object_containers::Function;
    /// let f = Function::from_typed(|a: i64, _b: Option<String>| a);
    /// assert_eq!(f.signature().unwrap().to_string(), "(arg0: int, arg1: Optional[str], /) -> int");
    /// assert!(Function::from_packed(|_| Ok(().into())).signature().is_none());
    /// ```
    pub fn signature(&self) -> Option<&Signature> {
        self.declared_signature()
            .or_else(|| self.0.typed_signature())
    }

    /// Calls with positional arguments and keyword arguments (name, value), bound to the
    /// parameters by the declared signature (defaults fill what neither gives). With no
    /// keywords this is [`call`](Self::call).
    ///
    /// ```
    /// use object_containers::{Function, Signature};
    /// let sub = Function::from_typed_named("doc.sub", |a: i64, b: i64| a - b)
    ///     .with_signature(Signature::new().params(["a", "b"]))
    ///     .unwrap();
    /// assert_eq!(sub.call_kw(&[10.into()], &[("b", 3.into())]).unwrap().as_int(), Some(7));
    /// let err = sub.call_kw(&[], &[("c", 1.into())]).unwrap_err();
    /// assert_eq!(err.message(), "`doc.sub` got an unexpected keyword argument `c`");
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`call`](Self::call); a `TypeError` for a keyword the signature does not
    /// name, an argument given twice, one missing, or any keyword at all when the
    /// function declares no signature.
    pub fn call_kw(
        &self,
        args: &[AnyView<'_>],
        kwargs: &[(&str, AnyView<'_>)],
    ) -> Result<Any, Error> {
        if kwargs.is_empty() {
            return self.call(args);
        }
        match self.declared_signature() {
            Some(sig) => sig.bind(self.name(), args, kwargs, |all| self.call(all))?,
            None => Err(Error::type_error(format!(
                "{} got an unexpected keyword argument `{}` (it declares no parameter names)",
                self.name()
                    .map_or_else(|| "The function".to_owned(), |n| format!("`{n}`")),
                kwargs[0].0
            ))),
        }
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
