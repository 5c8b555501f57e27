//! `impl_call_traits!`: the typed-call conversions ([`FromArg`], [`IntoRet`],
//! [`FromRet`], defined in `object-core` beside `Any` and re-exported here) for this
//! crate's value types, invoked beside each type in its own file.

#[allow(unused_imports)] // for the docs' links
use object_core::{Any, FromArg, FromRet, IntoRet, TypeError};

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
        impl<$($g: $bound),+> ::object_core::FromArg for $t {
            fn from_arg(
                v: ::object_core::AnyView<'_>,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v.to_any())
            }
            fn type_str() -> ::std::borrow::Cow<'static, str> {
                <$t as ::object_core::AnyItem>::expected()
            }
        }
        impl<$($g: $bound),+> ::object_core::IntoRet for $t {
            fn into_ret(self) -> ::core::result::Result<::object_core::Any, ::object_core::Error> {
                ::core::result::Result::Ok(::object_core::Any::from(self))
            }
            fn type_str() -> ::std::borrow::Cow<'static, str> {
                <$t as ::object_core::AnyItem>::expected()
            }
        }
        impl<$($g: $bound),+> ::object_core::FromRet for $t {
            fn from_ret(
                v: ::object_core::Any,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v)
            }
        }
    };
    ($t:ty) => {
        impl ::object_core::FromArg for $t {
            fn from_arg(
                v: ::object_core::AnyView<'_>,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v.to_any())
            }
            fn type_str() -> ::std::borrow::Cow<'static, str> {
                <$t as ::object_core::AnyItem>::expected()
            }
        }
        impl ::object_core::IntoRet for $t {
            fn into_ret(self) -> ::core::result::Result<::object_core::Any, ::object_core::Error> {
                ::core::result::Result::Ok(::object_core::Any::from(self))
            }
            fn type_str() -> ::std::borrow::Cow<'static, str> {
                <$t as ::object_core::AnyItem>::expected()
            }
        }
        impl ::object_core::FromRet for $t {
            fn from_ret(
                v: ::object_core::Any,
            ) -> ::core::result::Result<Self, ::object_core::TypeError> {
                <$t as ::core::convert::TryFrom<::object_core::Any>>::try_from(v)
            }
        }
    };
}
pub(crate) use impl_call_traits;
