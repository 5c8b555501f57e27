//! The conversions of typed calls: [`FromArg`] (an argument view into a parameter),
//! [`IntoRet`] (a closure's result into the call's `Any`), [`FromRet`] (a call's `Any`
//! into a typed caller's result).
//!
//! This file implements them for the types of `object-core` only: integers, floats,
//! `bool`, [`DataType`], [`Device`], strings, [`Any`], [`ObjectPtr`], [`Error`], and
//! `Option`/`Result` of those. Every other type implements them in its own file, most
//! with [`impl_call_traits!`](crate::function::impl_call_traits) (the containers, the
//! tensor, [`Function`](super::Function), [`Module`](super::Module)), so that this
//! module knows no type above it.

use object_core::{
    Any, AnyView, DataType, Device, Error, ObjectPtr, ObjectType, String, TypeError,
};

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

/// Implements [`FromArg`], [`IntoRet`] and [`FromRet`] for a value type that converts
/// into an [`Any`] (`From`) and back (`TryFrom<Any>`, with a [`TypeError`]): an object
/// handle or a typed container. Invoked beside each type, in its own file:
///
/// ```ignore
/// crate::function::impl_call_traits!(Handle);
/// crate::function::impl_call_traits!(impl<T: AnyItem> TypedView<T>);
/// ```
macro_rules! impl_call_traits {
    (impl<$($g:ident: $bound:path),+> $t:ty) => {
        impl<$($g: $bound),+> $crate::function::FromArg for $t {
            fn from_arg(
                v: ::object_core::AnyView<'_>,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v.to_any())
            }
        }
        impl<$($g: $bound),+> $crate::function::IntoRet for $t {
            fn into_ret(self) -> ::core::result::Result<::object_core::Any, ::object_core::Error> {
                ::core::result::Result::Ok(::object_core::Any::from(self))
            }
        }
        impl<$($g: $bound),+> $crate::function::FromRet for $t {
            fn from_ret(
                v: ::object_core::Any,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v)
            }
        }
    };
    ($t:ty) => {
        impl $crate::function::FromArg for $t {
            fn from_arg(
                v: ::object_core::AnyView<'_>,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v.to_any())
            }
        }
        impl $crate::function::IntoRet for $t {
            fn into_ret(self) -> ::core::result::Result<::object_core::Any, ::object_core::Error> {
                ::core::result::Result::Ok(::object_core::Any::from(self))
            }
        }
        impl $crate::function::FromRet for $t {
            fn from_ret(
                v: ::object_core::Any,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v)
            }
        }
    };
}
pub(crate) use impl_call_traits;

/// The plain values: converted from the view itself (no `Any` made), with a quick path
/// through the view's accessor `$get` where there is one.
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

impl_call_traits!(Error);

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
