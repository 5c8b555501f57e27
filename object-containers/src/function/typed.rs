//! Typed calls: closures of 0 to 8 converted arguments ([`TypedCallable`], what
//! [`Function::from_typed`] takes), argument tuples ([`IntoArgs`]), and the typed view
//! of a function ([`TypedFunction`], what [`Function::typed`] returns).
//!
//! The `arity!` macro implements both traits for each arity, on top of the fast entries
//! of [`super::abi`].

use core::fmt;
use core::marker::PhantomData;

use object_core::{Any, AnyView, Error, TypeError};

use super::abi::{self, FastEntry};
use super::signature::ArgLabel;
use super::Function;
use object_core::{FromArg, FromRet, IntoRet};

/// A typed view of a [`Function`] (see [`Function::typed`]).
pub struct TypedFunction<Args, R> {
    f: Function,
    _sig: PhantomData<fn(Args) -> R>,
}

impl<Args, R> TypedFunction<Args, R> {
    pub(super) fn new(f: Function) -> Self {
        TypedFunction {
            f,
            _sig: PhantomData,
        }
    }
}

impl<Args, R> Clone for TypedFunction<Args, R> {
    fn clone(&self) -> Self {
        TypedFunction::new(self.f.clone())
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
    /// ```
    /// use object_containers::Function;
    /// let add = Function::from_typed(|a: i64, b: i64| a + b).typed::<(i64, i64), i64>();
    /// assert_eq!(add.call((40, 2)).unwrap(), 42);
    /// let as_string = add.function().typed::<(i64, i64), String>();
    /// assert_eq!(as_string.call((1, 2)).unwrap_err().kind(), "TypeError");
    /// ```
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

/// A closure that [`Function::from_typed`] accepts: `Fn(A0, …, An) -> R` for up to 8
/// arguments. Implemented for every such closure; there is nothing to implement.
pub trait TypedCallable<Args, R>: Send + Sync + 'static {
    /// Converts the arguments, calls, converts the result.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming a bad argument or a wrong count, or the closure's error.
    fn call_typed(&self, args: &[AnyView<'_>]) -> Result<Any, Error>;

    /// [`TypedCallable::call_typed`] whose errors name the arguments as `label` says
    /// (by the declared signature's names).
    #[doc(hidden)]
    fn call_typed_labeled(&self, args: &[AnyView<'_>], label: &ArgLabel<'_>) -> Result<Any, Error> {
        let _ = label;
        self.call_typed(args)
    }

    /// The parameters' types, as signatures show them ([`FromArg::type_str`]).
    #[doc(hidden)]
    fn param_types() -> Vec<std::borrow::Cow<'static, str>> {
        Vec::new()
    }

    /// The result's type ([`IntoRet::type_str`]).
    #[doc(hidden)]
    fn return_type() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Any")
    }

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

    /// How many arguments the callable takes, when that is fixed: the packed entry
    /// then checks the count once and hands on a slice of that constant length.
    #[doc(hidden)]
    const ARITY: Option<usize> = None;
}

/// Argument tuples a [`TypedFunction`] takes: `(A0, …, An)` for up to 8 arguments, each
/// convertible into a view.
pub trait IntoArgs {
    /// Calls `f` with the arguments as views (on the stack, no allocation).
    fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> T;

    /// Calls `f` with these arguments: through its fast entry if it has one of this
    /// arity, else through the C entry point.
    ///
    /// # Errors
    ///
    /// As for [`Function::call`].
    #[doc(hidden)]
    fn call_function(self, f: &Function) -> Result<Any, Error>
    where
        Self: Sized,
    {
        self.with_views(|views| f.call(views))
    }
}

#[inline]
fn arg<T: FromArg>(args: &[AnyView<'_>], i: usize, label: &ArgLabel<'_>) -> Result<T, Error> {
    match T::from_arg(args[i]) {
        Ok(v) => Ok(v),
        Err(e) => Err(arg_error(label, i, e)),
    }
}

/// The error for a bad argument, out of line.
#[cold]
#[inline(never)]
fn arg_error(label: &ArgLabel<'_>, i: usize, e: TypeError) -> Error {
    label.arg_error(i, e)
}

/// For arity `$n`: [`TypedCallable`] for closures and [`IntoArgs`] for tuples, with the
/// fast entry `abi::$make` / `abi::$call` of that arity.
macro_rules! arity {
    ($n:literal, $make:ident, $call:ident; $($a:ident $i:tt $v:ident $x:ident),*) => {
        impl<F, R, $($a,)*> TypedCallable<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: IntoRet,
            $($a: FromArg,)*
        {
            const ARITY: Option<usize> = Some($n);

            #[inline]
            fn call_typed(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
                self.call_typed_labeled(args, &ArgLabel::NONE)
            }

            #[inline]
            #[allow(unused_variables)]
            fn call_typed_labeled(
                &self,
                args: &[AnyView<'_>],
                label: &ArgLabel<'_>,
            ) -> Result<Any, Error> {
                if args.len() != $n {
                    return Err(label.count_error($n, args.len()));
                }
                (self)($(arg::<$a>(args, $i, label)?),*).into_ret()
            }

            fn param_types() -> Vec<std::borrow::Cow<'static, str>> {
                vec![$(<$a as FromArg>::type_str()),*]
            }

            fn return_type() -> std::borrow::Cow<'static, str> {
                <R as IntoRet>::type_str()
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
                Some(FastEntry::$make::<F, R, $($a,)*>())
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
                $(let $v: AnyView<'v> = self.$i.into();)*
                match abi::$call(f.as_object_ptr(), $($v,)*) {
                    Some(r) => r,
                    None => f.call(&[$($v),*]),
                }
            }
        }
    };
}

arity!(0, arity0, call0;);
arity!(1, arity1, call1; A0 0 v0 x0);
arity!(2, arity2, call2; A0 0 v0 x0, A1 1 v1 x1);
arity!(3, arity3, call3; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2);
arity!(4, arity4, call4; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3);
arity!(5, arity5, call5; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4);
arity!(6, arity6, call6; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5);
arity!(7, arity7, call7; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5, A6 6 v6 x6);
arity!(8, arity8, call8; A0 0 v0 x0, A1 1 v1 x1, A2 2 v2 x2, A3 3 v3 x3, A4 4 v4 x4, A5 5 v5 x5, A6 6 v6 x6, A7 7 v7 x7);
