//! What every `repr(transparent)` handle over an object pointer (`Error`, `Function`,
//! `Module`, `Shape`) needs to be a value: conversions to and from `Any`, a borrowed
//! view, and the `AnyItem` impl that lets typed containers hold it.

/// Implements the value conversions for `$handle`, a `#[repr(transparent)]` tuple struct
/// over `ObjectPtr<$obj>`, whose type key is `$key`.
macro_rules! object_handle {
    ($handle:ident, $obj:ty, $key:literal) => {
        impl From<$handle> for object_core::Any {
            fn from(h: $handle) -> object_core::Any {
                object_core::Any::from(h.0)
            }
        }

        impl<'a> From<&'a $handle> for object_core::AnyView<'a> {
            fn from(h: &'a $handle) -> Self {
                object_core::AnyView::from(&h.0)
            }
        }

        impl TryFrom<object_core::Any> for $handle {
            type Error = object_core::TypeError;
            fn try_from(a: object_core::Any) -> Result<Self, object_core::TypeError> {
                object_core::ObjectPtr::<$obj>::try_from(a).map($handle)
            }
        }

        // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`, so a slot
        // holding such an object is read through that handle.
        unsafe impl object_core::AnyItem for $handle {
            fn expected() -> std::borrow::Cow<'static, str> {
                $key.into()
            }
            fn into_any(self) -> object_core::Any {
                object_core::Any::from(self)
            }
            fn matches(slot: &object_core::Any) -> bool {
                slot.as_object_of::<$obj>().is_some()
            }
            fn from_slot(slot: &object_core::Any) -> Option<&Self> {
                let p = slot.as_object_of::<$obj>()?;
                // SAFETY: `$handle` is `repr(transparent)` over `ObjectPtr<$obj>`.
                Some(unsafe { &*(p as *const object_core::ObjectPtr<$obj> as *const $handle) })
            }
            fn try_from_any(slot: object_core::Any) -> Result<Self, object_core::TypeError> {
                $handle::try_from(slot)
            }
        }
    };
}

pub(crate) use object_handle;
