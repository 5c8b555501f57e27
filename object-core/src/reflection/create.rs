//! Building objects from named field values: [`FieldSource`], [`create`] and
//! [`create_from_source`].

use core::fmt;

use super::FieldValue;
use crate::any::Any;
use crate::error::Error;
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::{self, TypeInfo};

/// The named field values a type-erased constructor takes them from. Each field is
/// taken once; what is left over at the end is an error ("extra field").
pub struct FieldSource<'s, 'n> {
    type_key: &'static str,
    entries: &'s mut [(&'n str, Option<Any>)],
}

impl fmt::Debug for FieldSource<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldSource")
            .field("type_key", &self.type_key)
            .field("entries", &self.entries)
            .finish()
    }
}

impl<'s, 'n> FieldSource<'s, 'n> {
    /// A source over `entries` for building a `type_key`.
    pub fn new(type_key: &'static str, entries: &'s mut [(&'n str, Option<Any>)]) -> Self {
        FieldSource { type_key, entries }
    }

    /// Takes the field `name`, converted to `F`. Used by the derive.
    ///
    /// # Errors
    ///
    /// A `ValueError` if it is missing, a `TypeError` if it has the wrong kind; both
    /// name the field and the type.
    pub fn take<F: FieldValue>(&mut self, name: &'static str) -> Result<F, Error> {
        let slot = self
            .entries
            .iter_mut()
            .find(|(n, v)| *n == name && v.is_some())
            .and_then(|(_, v)| v.take());
        match slot {
            Some(value) => F::from_any(value).map_err(|e| {
                Error::type_error(format!("field `{name}` of `{}`: {e}", self.type_key))
            }),
            None if F::OPTIONAL => F::from_any(Any::default()).map_err(Error::from),
            None => Err(Error::value_error(format!(
                "missing field `{name}` ({}) of `{}`",
                F::STATIC_TYPE_KEY,
                self.type_key
            ))),
        }
    }

    pub(super) fn finish(&self) -> Result<(), Error> {
        let Some((name, _)) = self.entries.iter().find(|(_, v)| v.is_some()) else {
            return Ok(());
        };
        // A name whose other entry was taken is a field given twice, not an unknown one.
        if self.entries.iter().any(|(n, v)| n == name && v.is_none()) {
            return Err(Error::value_error(format!(
                "field `{name}` of `{}` is given twice",
                self.type_key
            )));
        }
        Err(Error::value_error(format!(
            "`{}` has no field `{name}`",
            self.type_key
        )))
    }
}

/// Builds an object of type `info` from `src`, checking that every entry was used.
///
/// # Errors
///
/// As [`create`].
pub fn create_from_source(
    info: &'static TypeInfo,
    src: &mut FieldSource<'_, '_>,
) -> Result<ObjectRef, Error> {
    let refl = info.reflection();
    let Some(create) = refl.create else {
        return Err(Error::type_error(format!(
            "`{}` cannot be created from fields",
            info.key()
        )));
    };
    let obj = create(src, info)?;
    src.finish()?;
    Ok(obj)
}

/// Builds an object from its type key and field values (in any order; an `Option`
/// field may be left out). The type may also be a run-time registered descendant of a
/// Rust type without fields of its own.
///
/// # Errors
///
/// A `KeyError` for an unknown type key, a `ValueError` for a missing, extra or
/// duplicate field, a `TypeError` for a field of the wrong kind or a type that cannot
/// be built from fields (`#[object(opaque)]` built-ins); each names the field and the
/// type.
pub fn create<'n>(
    key: &str,
    fields: impl IntoIterator<Item = (&'n str, Any)>,
) -> Result<ObjectRef, Error> {
    let info = registry::type_info_by_key(key)
        .filter(|i| i.is_object())
        .ok_or_else(|| Error::new("KeyError", format!("unknown type key `{key}`")))?;
    let mut entries: Vec<(&'n str, Option<Any>)> =
        fields.into_iter().map(|(n, v)| (n, Some(v))).collect();
    let mut src = FieldSource::new(info.key(), &mut entries);
    create_from_source(info, &mut src)
}

/// Finishes a derive-generated creator: a plain `make_object`, or for a run-time
/// descendant, `make_object_as` with its index. Used by the derive.
#[doc(hidden)]
pub fn finish_create<T: ObjectType>(value: T, info: &'static TypeInfo) -> Result<ObjectRef, Error> {
    if info.index() == T::type_index() {
        Ok(crate::make_object(value).into_object_ref())
    } else {
        crate::make_object_as(value, info.index())
            .map(ObjectPtr::into_object_ref)
            .map_err(|e| Error::type_error(e.to_string()))
    }
}

/// Autoref-based dispatch for generated code: the first impl applies when the type
/// has what it needs, the fallback (one more `&`) otherwise, so a parent or field type
/// that fails its own check is reported once, at that check, not again here. Not
/// public API.
#[doc(hidden)]
#[allow(clippy::new_without_default)]
pub mod probe {
    use core::marker::PhantomData;

    use super::FieldSource;
    use crate::error::Error;
    use crate::reflection::{FieldInfo, FieldValue, Reflect};

    fn unbuildable<T>() -> Error {
        Error::type_error(format!(
            "`{}` cannot be built from fields",
            core::any::type_name::<T>()
        ))
    }

    /// Builds a parent; call `(&ParentProbe::<T>::new()).parent_from_fields(src)`.
    #[derive(Debug)]
    pub struct ParentProbe<T>(PhantomData<T>);

    impl<T> ParentProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            ParentProbe(PhantomData)
        }
    }

    impl<T: Reflect> ParentProbe<T> {
        /// The parent's fields.
        pub const FIELDS: &'static [FieldInfo] = T::FIELDS;
    }

    /// The fallback for a parent that fails its own check: no fields.
    pub trait ParentFieldsFallback {
        /// No fields.
        const FIELDS: &'static [FieldInfo] = &[];
    }

    impl<T> ParentFieldsFallback for ParentProbe<T> {}

    /// The real entry point.
    pub trait Parent<T> {
        /// The parent built from fields.
        fn parent_from_fields(&self, src: &mut FieldSource<'_, '_>) -> Result<T, Error>;
    }

    impl<T: Reflect> Parent<T> for ParentProbe<T> {
        fn parent_from_fields(&self, src: &mut FieldSource<'_, '_>) -> Result<T, Error> {
            T::from_fields(src)
        }
    }

    /// The fallback, reached only for a first field that fails its own check.
    pub trait ParentFallback<T> {
        /// An error.
        fn parent_from_fields(&self, _: &mut FieldSource<'_, '_>) -> Result<T, Error> {
            Err(unbuildable::<T>())
        }
    }

    impl<T> ParentFallback<T> for &ParentProbe<T> {}

    /// Takes a field; call `(&FieldProbe::<T>::new()).take_field(src, name)`.
    #[derive(Debug)]
    pub struct FieldProbe<T>(PhantomData<T>);

    impl<T> FieldProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            FieldProbe(PhantomData)
        }
    }

    /// The real entry point.
    pub trait Field<T> {
        /// A field taken from `src`.
        fn take_field(&self, src: &mut FieldSource<'_, '_>, name: &'static str)
            -> Result<T, Error>;
    }

    impl<T: FieldValue> Field<T> for FieldProbe<T> {
        fn take_field(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
        ) -> Result<T, Error> {
            src.take(name)
        }
    }

    /// The fallback, reached only for a field type that fails its own check.
    pub trait FieldFallback<T> {
        /// An error.
        fn take_field(&self, _: &mut FieldSource<'_, '_>, _: &'static str) -> Result<T, Error> {
            Err(unbuildable::<T>())
        }
    }

    impl<T> FieldFallback<T> for &FieldProbe<T> {}
}
