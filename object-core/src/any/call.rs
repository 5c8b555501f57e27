//! The conversions of typed calls: [`FromArg`] (an argument view into a parameter),
//! [`IntoRet`] (a closure's result into the call's `Any`), [`FromRet`] (a call's `Any`
//! into a typed caller's result).
//!
//! They live here, beside `Any`, so that every crate's types can take part in typed calls
//! (`object-containers`' `Function` re-exports them): this file implements them for the
//! types of `object-core` (integers, floats, `bool`, [`DataType`], [`Device`], strings,
//! [`Any`], [`ObjectPtr`], [`Error`], `Option`/`Result` of those, and every typed
//! reference, [`TypedRef`](crate::TypedRef)); `object-containers` implements them for
//! its containers, tensors and functions, each in its own file.

use crate::{Any, AnyView, DataType, Device, Error, ObjectPtr, ObjectType, String, TypeError};

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

    /// The parameter's type as a function's signature shows it (`int`, `str`,
    /// `Optional[float]`, a type key such as `ffi.Array`); `Any` unless the type says.
    ///
    /// ```
    /// use object_core::FromArg;
    /// assert_eq!(i64::type_str(), "int");
    /// assert_eq!(<Option<String>>::type_str(), "Optional[str]");
    /// ```
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Any")
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

    /// The result's type as a function's signature shows it (see
    /// [`FromArg::type_str`]); `Any` unless the type says.
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Any")
    }
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

/// The plain values: converted from the view itself (no `Any` made), with a quick path
/// through the view's accessor `$get` where there is one.
macro_rules! via_view {
    ($($t:ty : $name:literal $(=> $get:ident)?),*) => {$(
        impl FromArg for $t {
            #[inline]
            fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
                <$t>::try_from(v)
            }
            fn type_str() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
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
            fn type_str() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
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
    i64: "int" => as_int,
    i32: "int" => as_int,
    u32: "int" => as_int,
    i16: "int" => as_int,
    u16: "int" => as_int,
    i8: "int" => as_int,
    u8: "int" => as_int,
    bool: "bool" => as_bool,
    f64: "float" => as_float,
    DataType: "DataType",
    Device: "Device",
    std::string::String: "str",
    String: "str"
);

impl FromArg for Error {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        Error::try_from(v.to_any())
    }
}
impl IntoRet for Error {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
}
impl FromRet for Error {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        Error::try_from(v)
    }
}

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
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("None")
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
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("str")
    }
}
impl<T: ObjectType> FromArg for ObjectPtr<T> {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        ObjectPtr::try_from(v)
    }
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(T::TYPE_KEY)
    }
}
impl<T: ObjectType> IntoRet for ObjectPtr<T> {
    fn into_ret(self) -> Result<Any, Error> {
        Ok(Any::from(self))
    }
    fn type_str() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(T::TYPE_KEY)
    }
}
impl<T: ObjectType> FromRet for ObjectPtr<T> {
    fn from_ret(v: Any) -> Result<Self, TypeError> {
        ObjectPtr::try_from(v)
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
    fn type_str() -> std::borrow::Cow<'static, str> {
        format!("Optional[{}]", T::type_str()).into()
    }
}
impl<T: IntoRet> IntoRet for Option<T> {
    fn into_ret(self) -> Result<Any, Error> {
        self.map_or(Ok(Any::NONE), IntoRet::into_ret)
    }
    fn type_str() -> std::borrow::Cow<'static, str> {
        format!("Optional[{}]", T::type_str()).into()
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
    fn type_str() -> std::borrow::Cow<'static, str> {
        T::type_str()
    }
}

/// A type whose raw pointer a typed function can take as an argument (`*mut T`): for
/// the crate that defines the pointee (`object-containers`' `DLTensor`, whose
/// `*mut DLTensor` parameter takes a borrowed tensor or a tensor object's embedded
/// one). The pointer is valid for the duration of the call only.
pub trait PtrArg: Sized {
    /// Converts an argument view into a pointer to `Self`.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the expected and actual type.
    fn ptr_from_arg(v: AnyView<'_>) -> Result<*mut Self, TypeError>;
}

impl<T: PtrArg> FromArg for *mut T {
    #[inline]
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        T::ptr_from_arg(v)
    }
}
