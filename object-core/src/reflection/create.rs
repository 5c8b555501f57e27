//! Building objects from named field values: [`FieldSource`], [`FieldFeed`], [`create`]
//! and [`create_from_source`].

use core::fmt;

use super::{FieldValue, ReflectError};
use crate::any::Any;
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::{self, TypeInfo};

/// The named field values a type-erased constructor takes them from. Each field is
/// taken once; what is left over at the end is an error ("extra field").
///
/// The values come from a list of `(name, value)` entries ([`new`](Self::new)), or
/// from a reader that produces each as the constructor asks for it
/// ([`from_feed`](Self::from_feed)).
pub struct FieldSource<'s, 'n> {
    type_key: &'static str,
    values: Values<'s, 'n>,
}

/// Where a [`FieldSource`] takes its values from.
enum Values<'s, 'n> {
    Entries(&'s mut [(&'n str, Option<Any>)]),
    Feed(&'s mut dyn FieldFeed),
}

/// A reader that hands a constructor its field values one at a time, in the order the
/// constructor asks for them: the order of the type's field table
/// ([`TypeReflection::reflected_fields`](super::TypeReflection::reflected_fields),
/// the parent's fields first), skipping none but the fields a source may leave out
/// (`Option` fields and fields with a declared default).
///
/// A reader of a text written in that order (the JSON graph's loader) builds each
/// object straight from the text this way, with no list of values in between.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{create_from_source, FieldFeed, FieldSource, ReflectErrorKind};
/// use object_core::{registry, Any};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.feed.Span")]
/// struct Span { base: Object, lo: i64, hi: i64 }
///
/// /// Values in table order, from a list.
/// struct InOrder { names: Vec<&'static str>, values: Vec<i64>, next: usize }
///
/// impl FieldFeed for InOrder {
///     fn take(&mut self, name: &'static str) -> Option<Any> {
///         (self.names.get(self.next) == Some(&name)).then(|| {
///             self.next += 1;
///             Any::from(self.values[self.next - 1])
///         })
///     }
///     fn rest(&mut self) -> Option<&str> {
///         self.names.get(self.next).copied()
///     }
/// }
///
/// let info = registry::type_info_by_key("doc.feed.Span").unwrap();
/// let mut feed = InOrder { names: vec!["lo", "hi"], values: vec![1, 5], next: 0 };
/// let span = create_from_source(info, &mut FieldSource::from_feed(info.key(), &mut feed)).unwrap();
/// assert_eq!(span.downcast_ref::<Span>().map(|s| (s.lo, s.hi)), Some((1, 5)));
///
/// let mut feed = InOrder { names: vec!["lo", "hi", "mid"], values: vec![1, 5, 3], next: 0 };
/// let e = create_from_source(info, &mut FieldSource::from_feed(info.key(), &mut feed)).unwrap_err();
/// assert_eq!((e.kind(), e.field()), (ReflectErrorKind::ExtraField, Some("mid")));
/// ```
pub trait FieldFeed {
    /// The value of the field `name`, which the constructor asks for now; `None` if
    /// the source does not give it here (the constructor then takes the field's
    /// default, leaves an `Option` empty, or fails with
    /// [`MissingField`](super::ReflectErrorKind::MissingField)).
    fn take(&mut self, name: &'static str) -> Option<Any>;

    /// Asked once the constructor has taken its fields: the name of a field the source
    /// gives that was not taken, if there is one (an
    /// [`ExtraField`](super::ReflectErrorKind::ExtraField) error).
    fn rest(&mut self) -> Option<&str>;
}

impl fmt::Debug for FieldSource<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("FieldSource");
        d.field("type_key", &self.type_key);
        match &self.values {
            Values::Entries(entries) => d.field("entries", entries),
            Values::Feed(_) => d.field("feed", &format_args!("..")),
        };
        d.finish()
    }
}

impl<'s, 'n> FieldSource<'s, 'n> {
    /// A source over `entries` for building a `type_key`.
    pub fn new(type_key: &'static str, entries: &'s mut [(&'n str, Option<Any>)]) -> Self {
        FieldSource {
            type_key,
            values: Values::Entries(entries),
        }
    }

    /// A source for building a `type_key` that takes each value from `feed` as the
    /// constructor asks for it (see [`FieldFeed`]).
    pub fn from_feed(type_key: &'static str, feed: &'s mut dyn FieldFeed) -> Self {
        FieldSource {
            type_key,
            values: Values::Feed(feed),
        }
    }

    /// The value given for `name`, taken out (each value is taken once). Callers that
    /// fill the entries from a type's field table (the JSON graph's loader) pass the
    /// table's own `&'static str`s, so the names are compared by address first.
    #[inline]
    fn take_entry(&mut self, name: &'static str) -> Option<Any> {
        let entries = match &mut self.values {
            Values::Entries(entries) => entries,
            Values::Feed(feed) => return feed.take(name),
        };
        entries
            .iter_mut()
            .find(|(n, v)| {
                v.is_some()
                    && ((n.as_ptr() == name.as_ptr() && n.len() == name.len()) || *n == name)
            })
            .and_then(|(_, v)| v.take())
    }

    /// The value given for `name`, taken out, unconverted (a run-time table's
    /// constructor converts it for the field's declared type).
    #[inline]
    pub(crate) fn take_value(&mut self, name: &'static str) -> Option<Any> {
        self.take_entry(name)
    }

    /// Takes the field `name`, converted to `F`. Used by the derive.
    ///
    /// # Errors
    ///
    /// [`MissingField`](super::ReflectErrorKind::MissingField) if it is not there (and
    /// `F` is not an `Option`), [`WrongType`](super::ReflectErrorKind::WrongType) if
    /// its value does not convert to `F`.
    ///
    /// ```
    /// use object_core::reflection::{FieldSource, ReflectErrorKind};
    /// use object_core::Any;
    ///
    /// let mut entries = [("n", Some(Any::from(3))), ("s", Some(Any::from(4)))];
    /// let mut src = FieldSource::new("doc.Pair", &mut entries);
    /// assert_eq!(src.take::<i64>("n").unwrap(), 3);
    /// assert_eq!(src.take::<Option<f64>>("m").unwrap(), None); // optional, absent
    /// assert_eq!(src.take::<i64>("n").unwrap_err().kind(), ReflectErrorKind::MissingField);
    /// assert_eq!(src.take::<bool>("s").unwrap_err().kind(), ReflectErrorKind::WrongType);
    /// ```
    pub fn take<F: FieldValue>(&mut self, name: &'static str) -> Result<F, ReflectError> {
        let slot = self.take_entry(name);
        match slot {
            Some(value) => {
                F::from_any(value).map_err(|e| ReflectError::wrong_type(self.type_key, name, e))
            }
            None if F::OPTIONAL => F::from_any(Any::default())
                .map_err(|e| ReflectError::wrong_type(self.type_key, name, e)),
            None => Err(ReflectError::missing_field(
                self.type_key,
                name,
                F::STATIC_TYPE_KEY,
            )),
        }
    }

    /// Takes the field `name` as [`take`](Self::take) does, but a field that is not
    /// there is `default()` (the field's declared default). Used by the derive for
    /// `#[object(default)]` fields.
    ///
    /// # Errors
    ///
    /// [`WrongType`](super::ReflectErrorKind::WrongType) if the value given does not
    /// convert to `F`.
    ///
    /// ```
    /// use object_core::reflection::FieldSource;
    /// use object_core::Any;
    ///
    /// let mut entries = [("n", Some(Any::from(3)))];
    /// let mut src = FieldSource::new("doc.Pair", &mut entries);
    /// assert_eq!(src.take_or_else("n", || 7i64).unwrap(), 3);
    /// assert_eq!(src.take_or_else("m", || 7i64).unwrap(), 7);
    /// ```
    pub fn take_or_else<F: FieldValue>(
        &mut self,
        name: &'static str,
        default: impl FnOnce() -> F,
    ) -> Result<F, ReflectError> {
        let slot = self.take_entry(name);
        match slot {
            Some(value) => {
                F::from_any(value).map_err(|e| ReflectError::wrong_type(self.type_key, name, e))
            }
            // Not given (or given twice and taken already: `finish` reports that).
            None => Ok(default()),
        }
    }

    /// Takes the field `name` as [`take`](Self::take) does, but a field that is not
    /// there is the declared default `make` makes (in its `Any` form, as the field
    /// table keeps it).
    pub(super) fn take_or_default<F: FieldValue>(
        &mut self,
        name: &'static str,
        make: super::DefaultFn,
    ) -> Result<F, ReflectError> {
        let value = match self.take_entry(name) {
            Some(value) => value,
            // Not given (or given twice and taken already: `finish` reports that).
            None => make().map_err(|e| ReflectError::wrong_type(self.type_key, name, e))?,
        };
        F::from_any(value).map_err(|e| ReflectError::wrong_type(self.type_key, name, e))
    }

    pub(super) fn finish(&mut self) -> Result<(), ReflectError> {
        let entries = match &mut self.values {
            Values::Entries(entries) => entries,
            Values::Feed(feed) => {
                return match feed.rest() {
                    None => Ok(()),
                    Some(name) => Err(ReflectError::extra_field(self.type_key, name)),
                }
            }
        };
        let Some((name, _)) = entries.iter().find(|(_, v)| v.is_some()) else {
            return Ok(());
        };
        // A name whose other entry was taken is a field given twice, not an unknown one.
        if entries.iter().any(|(n, v)| n == name && v.is_none()) {
            return Err(ReflectError::duplicate_field(self.type_key, name));
        }
        Err(ReflectError::extra_field(self.type_key, name))
    }
}

/// Builds an object of type `info` from `src`, checking that every entry was used: what
/// [`create`] does once it has found the type, for readers (the JSON graph) that look
/// types up and collect fields themselves.
///
/// # Errors
///
/// As [`create`], except [`UnknownType`](super::ReflectErrorKind::UnknownType).
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{create_from_source, FieldSource, ReflectErrorKind};
/// use object_core::{registry, Any};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.source.Point")]
/// struct Point { base: Object, x: i64 }
///
/// let info = registry::type_info_by_key("doc.source.Point").unwrap();
/// let mut entries = vec![("x", Some(Any::from(1)))];
/// let p = create_from_source(info, &mut FieldSource::new(info.key(), &mut entries)).unwrap();
/// assert_eq!(p.downcast_ref::<Point>().unwrap().x, 1);
///
/// let mut entries = vec![("x", Some(Any::from(1))), ("y", Some(Any::from(2)))];
/// let e = create_from_source(info, &mut FieldSource::new(info.key(), &mut entries)).unwrap_err();
/// assert_eq!((e.kind(), e.field()), (ReflectErrorKind::ExtraField, Some("y")));
/// ```
pub fn create_from_source(
    info: &'static TypeInfo,
    src: &mut FieldSource<'_, '_>,
) -> Result<ObjectRef, ReflectError> {
    if info.is_abstract() {
        return Err(ReflectError::abstract_type(info.key()));
    }
    let refl = info.reflection();
    let Some(create) = refl.create else {
        return Err(ReflectError::not_creatable(info.key()));
    };
    let obj = create(src, info)?;
    src.finish()?;
    Ok(obj)
}

/// Builds an object from its type key and field values (in any order; an `Option`
/// field may be left out, and so may a field with a declared default,
/// `#[object(default)]` / `#[object(default = expr)]`, which then takes it). The type may also be a run-time registered descendant of a
/// Rust type without fields of its own.
///
/// # Errors
///
/// A [`ReflectError`] naming the type and the field, of kind
/// [`UnknownType`](super::ReflectErrorKind::UnknownType) (no object type has the key),
/// [`MissingField`](super::ReflectErrorKind::MissingField),
/// [`ExtraField`](super::ReflectErrorKind::ExtraField),
/// [`DuplicateField`](super::ReflectErrorKind::DuplicateField),
/// [`WrongType`](super::ReflectErrorKind::WrongType) (a value that does not convert to
/// the field's type), [`NotCreatable`](super::ReflectErrorKind::NotCreatable)
/// (`#[object(opaque)]` built-ins such as containers),
/// [`Abstract`](super::ReflectErrorKind::Abstract) (an `#[object(abstract)]` base) or
/// [`LayoutMismatch`](super::ReflectErrorKind::LayoutMismatch) (a run-time type that
/// adds a layout of its own). As an [`Error`](crate::Error) (`From`), these are the
/// `KeyError`, `ValueError` and `TypeError` reflection has always reported.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{create, ReflectErrorKind};
/// use object_core::Any;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.create.Node")]
/// struct Node { base: Object, id: i64, label: Option<String> }
///
/// let n = create("doc.create.Node", [("id", Any::from(7))]).unwrap();
/// assert_eq!(n.downcast_ref::<Node>().map(|n| (n.id, n.label.is_none())), Some((7, true)));
///
/// let e = create("doc.create.Node", []).unwrap_err();
/// assert_eq!((e.kind(), e.field()), (ReflectErrorKind::MissingField, Some("id")));
/// let e = create("doc.create.Nope", []).unwrap_err();
/// assert_eq!(e.kind(), ReflectErrorKind::UnknownType);
/// ```
pub fn create<'n>(
    key: &str,
    fields: impl IntoIterator<Item = (&'n str, Any)>,
) -> Result<ObjectRef, ReflectError> {
    let info = registry::type_info_by_key(key)
        .filter(|i| i.is_object())
        .ok_or_else(|| ReflectError::unknown_type(key))?;
    let mut entries: Vec<(&'n str, Option<Any>)> =
        fields.into_iter().map(|(n, v)| (n, Some(v))).collect();
    let mut src = FieldSource::new(info.key(), &mut entries);
    create_from_source(info, &mut src)
}

/// Finishes a creator that built a `T` by hand (the root's `create`: derived types and
/// run-time field tables build through their tables, `reflection::build`):
/// `make_object_as` with `info`'s index, `T`'s own or a run-time descendant's without a
/// layout of its own.
///
/// # Errors
///
/// [`LayoutMismatch`](super::ReflectErrorKind::LayoutMismatch) if `info` is not `T`
/// or a run-time descendant of `T` without a layout of its own.
pub fn finish_create<T: ObjectType>(
    value: T,
    info: &'static TypeInfo,
) -> Result<ObjectRef, ReflectError> {
    crate::make_object_as(value, info.index())
        .map(ObjectPtr::into_object_ref)
        .map_err(|e| ReflectError::layout_mismatch(info.key(), e))
}

/// The [`NotCreatable`](super::ReflectErrorKind::NotCreatable) error of the type `key`
/// (an `#[object(opaque)]` type's objects are not built from fields).
pub fn not_creatable(key: &str) -> ReflectError {
    ReflectError::not_creatable(key)
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
    use crate::any::{Any, TypeError};
    use crate::reflection::{FieldInfo, FieldValue, Reflect, ReflectError};
    use crate::structural::StructuralKind;

    fn unbuildable<T>() -> ReflectError {
        ReflectError::not_creatable(core::any::type_name::<T>())
    }

    /// A parent's table and structural kind for a child's derive
    /// (`ParentProbe::<T>::FIELDS`, `ParentProbe::<T>::STRUCTURAL`).
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
        /// The parent's structural kind.
        pub const STRUCTURAL: StructuralKind = T::STRUCTURAL;
    }

    /// The fallback for a parent that fails its own check: no fields.
    pub trait ParentFieldsFallback {
        /// No fields.
        const FIELDS: &'static [FieldInfo] = &[];
        /// The default kind.
        const STRUCTURAL: StructuralKind = StructuralKind::Tree;
    }

    impl<T> ParentFieldsFallback for ParentProbe<T> {}

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
        fn take_field(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
        ) -> Result<T, ReflectError>;
        /// A field with a declared default (`#[object(default)]`), made by `default`
        /// when `src` does not have it.
        fn take_field_or(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
            default: impl FnOnce() -> T,
        ) -> Result<T, ReflectError>;
        /// A default value in its `Any` form (for the field table).
        fn default_to_any(&self, value: T) -> Result<Any, TypeError>;
    }

    impl<T: FieldValue> Field<T> for FieldProbe<T> {
        fn take_field(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
        ) -> Result<T, ReflectError> {
            src.take(name)
        }
        fn take_field_or(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
            default: impl FnOnce() -> T,
        ) -> Result<T, ReflectError> {
            src.take_or_else(name, default)
        }
        fn default_to_any(&self, value: T) -> Result<Any, TypeError> {
            value.to_any()
        }
    }

    /// The fallback, reached only for a field type that fails its own check.
    pub trait FieldFallback<T> {
        /// An error.
        fn take_field(
            &self,
            _: &mut FieldSource<'_, '_>,
            _: &'static str,
        ) -> Result<T, ReflectError> {
            Err(unbuildable::<T>())
        }
        /// An error.
        fn take_field_or(
            &self,
            _: &mut FieldSource<'_, '_>,
            _: &'static str,
            _: impl FnOnce() -> T,
        ) -> Result<T, ReflectError> {
            Err(unbuildable::<T>())
        }
        /// An error.
        fn default_to_any(&self, _: T) -> Result<Any, TypeError> {
            Err(TypeError::new(
                "a reflected field type",
                core::any::type_name::<T>(),
            ))
        }
    }

    impl<T> FieldFallback<T> for &FieldProbe<T> {}

    /// A skipped field's value in a generated constructor; call
    /// `(&SkipProbe::<T>::new()).skipped_value()`.
    #[derive(Debug)]
    pub struct SkipProbe<T>(PhantomData<T>);

    impl<T> SkipProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            SkipProbe(PhantomData)
        }
    }

    /// The real entry point.
    pub trait Skip<T> {
        /// The field's `Default`.
        fn skipped_value(&self) -> T;
    }

    impl<T: Default> Skip<T> for SkipProbe<T> {
        #[inline(always)]
        fn skipped_value(&self) -> T {
            T::default()
        }
    }

    /// The fallback, for a type without `Default`: the field table's own bound fails
    /// the build then, so this is never part of a program that compiles.
    pub trait SkipFallback<T> {
        /// Not reached.
        fn skipped_value(&self) -> T {
            unreachable!("a skipped field without `Default` fails the build")
        }
    }

    impl<T> SkipFallback<T> for &SkipProbe<T> {}
}
