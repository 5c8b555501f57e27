//! What every `repr(transparent)` handle over an object pointer (`Error`, and in
//! `object-containers` `Function`, `Module`, `Shape`, `NDArray`) needs to be a value:
//! conversions to and from `Any`, a borrowed view, and the `AnyItem` impl that lets typed
//! containers hold it.

/// Implements the value conversions for `$handle`, a `#[repr(transparent)]` tuple struct
/// over `ObjectPtr<$obj>`, whose type key is `$key`. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_handle {
    ($handle:ident, $obj:ty, $key:literal) => {
        impl From<$handle> for $crate::Any {
            fn from(h: $handle) -> $crate::Any {
                $crate::Any::from(h.0)
            }
        }

        impl<'a> From<&'a $handle> for $crate::AnyView<'a> {
            fn from(h: &'a $handle) -> Self {
                $crate::AnyView::from(&h.0)
            }
        }

        impl TryFrom<$crate::Any> for $handle {
            type Error = $crate::TypeError;
            fn try_from(a: $crate::Any) -> Result<Self, $crate::TypeError> {
                $crate::ObjectPtr::<$obj>::try_from(a).map($handle)
            }
        }

        // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`, so a slot
        // holding such an object is read through that handle.
        // (The one fenced piece of a handle: allowed here, wherever the macro is used.)
        #[allow(unsafe_code)]
        unsafe impl $crate::AnyItem for $handle {
            fn expected() -> std::borrow::Cow<'static, str> {
                $key.into()
            }
            fn into_any(self) -> $crate::Any {
                $crate::Any::from(self)
            }
            fn matches(slot: &$crate::Any) -> bool {
                slot.as_object_of::<$obj>().is_some()
            }
            fn from_slot(slot: &$crate::Any) -> Option<&Self> {
                let p = slot.as_object_of::<$obj>()?;
                // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`.
                Some(unsafe { &*(p as *const $crate::ObjectPtr<$obj> as *const $handle) })
            }
            fn try_from_any(slot: $crate::Any) -> Result<Self, $crate::TypeError> {
                $handle::try_from(slot)
            }
        }
    };
}
