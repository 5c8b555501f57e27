//! [`ReflectError`]: what went wrong in a reflection call, as data.

use core::fmt;

use crate::any::TypeError;
use crate::error::{Error, ErrorKind};
use crate::registry::RegistryError;

/// What kind of reflection error it is: what to match on. Each kind has the
/// [`Error`] kind string it becomes at the packed-call boundary
/// ([`error_kind`](ReflectErrorKind::error_kind)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReflectErrorKind {
    /// [`create`](super::create) was given a key that names no object type
    /// (`KeyError`).
    UnknownType,
    /// [`get_attr`](super::get_attr) was asked for a name the object's type has no
    /// reflected field for (`AttributeError`).
    NoSuchField,
    /// [`get_field`](super::get_field) was given an entry that is not in the table of
    /// the object's run-time type (`TypeError`).
    NotInTable,
    /// [`get_field`](super::get_field) was given a skipped (`#[object(skip)]`) entry,
    /// which has no value to read (`TypeError`).
    SkippedField,
    /// A field's value has no `Any` form: an unsigned integer beyond `i64::MAX`
    /// (`TypeError`). [`type_error`](ReflectError::type_error) says what was there.
    OutOfRange,
    /// A field required to build an object was not given (`ValueError`).
    MissingField,
    /// A field was given that the type does not have (`ValueError`).
    ExtraField,
    /// A field was given twice (`ValueError`).
    DuplicateField,
    /// A field was given a value of the wrong type (`TypeError`).
    /// [`type_error`](ReflectError::type_error) says what was expected and what was
    /// there.
    WrongType,
    /// The type cannot be built from fields (`#[object(opaque)]` built-ins such as
    /// containers; `TypeError`).
    NotCreatable,
    /// The type is a run-time type whose objects cannot be made with the layout of the
    /// Rust type that builds them (`TypeError`); the error's `source` is the
    /// [`RegistryError`].
    LayoutMismatch,
    /// The type is declared `#[object(abstract)]`: a base that only its subtypes
    /// instantiate (`TypeError`).
    Abstract,
}

impl ReflectErrorKind {
    /// The kind of the [`Error`] this becomes ([`KeyError`](ErrorKind::KeyError),
    /// [`AttributeError`](ErrorKind::AttributeError), [`ValueError`](ErrorKind::ValueError)
    /// or [`TypeError`](ErrorKind::TypeError)), as reflection errors have always been
    /// reported across the packed-call boundary.
    ///
    /// ```
    /// use object_core::reflection::ReflectErrorKind;
    /// use object_core::ErrorKind;
    /// assert_eq!(ReflectErrorKind::MissingField.error_kind(), ErrorKind::ValueError);
    /// assert_eq!(ReflectErrorKind::MissingField.error_kind(), "ValueError");
    /// ```
    pub fn error_kind(self) -> ErrorKind {
        match self {
            ReflectErrorKind::UnknownType => ErrorKind::KeyError,
            ReflectErrorKind::NoSuchField => ErrorKind::AttributeError,
            ReflectErrorKind::MissingField
            | ReflectErrorKind::ExtraField
            | ReflectErrorKind::DuplicateField => ErrorKind::ValueError,
            ReflectErrorKind::NotInTable
            | ReflectErrorKind::SkippedField
            | ReflectErrorKind::OutOfRange
            | ReflectErrorKind::WrongType
            | ReflectErrorKind::NotCreatable
            | ReflectErrorKind::LayoutMismatch
            | ReflectErrorKind::Abstract => ErrorKind::TypeError,
        }
    }
}

/// A reflection error: its [`kind`](ReflectError::kind), the type and (where there is
/// one) the field it is about, and the underlying [`TypeError`] or [`RegistryError`].
///
/// It displays the message reflection has always given, and converts into an
/// [`Error`] (`From`) with that message and the kind's
/// [`error_kind`](ReflectErrorKind::error_kind) string, which is how it crosses the
/// packed-call boundary.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{create, ReflectErrorKind};
/// use object_core::{Any, Error};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.refl_err.Point")]
/// struct Point { base: Object, x: i64 }
///
/// let e = create("doc.refl_err.Point", [("x", Any::from("one"))]).unwrap_err();
/// assert_eq!(e.kind(), ReflectErrorKind::WrongType);
/// assert_eq!((e.type_key(), e.field()), ("doc.refl_err.Point", Some("x")));
/// assert_eq!(e.type_error().map(|t| t.actual), Some("ffi.String"));
/// assert_eq!(e.to_string(), "field `x` of `doc.refl_err.Point`: expected int, got ffi.String");
///
/// let e = Error::from(e);
/// assert_eq!(e.kind(), "TypeError");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ReflectError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ReflectErrorKind,
    type_key: String,
    field: Option<String>,
    detail: Detail,
}

#[derive(Clone, PartialEq, Eq)]
enum Detail {
    None,
    /// The static type key of a missing field.
    Expected(&'static str),
    Type(TypeError),
    Registry(RegistryError),
}

impl ReflectError {
    fn new(
        kind: ReflectErrorKind,
        type_key: impl Into<String>,
        field: Option<&str>,
        detail: Detail,
    ) -> Self {
        ReflectError(Box::new(Inner {
            kind,
            type_key: type_key.into(),
            field: field.map(str::to_owned),
            detail,
        }))
    }

    pub(super) fn unknown_type(key: &str) -> Self {
        Self::new(ReflectErrorKind::UnknownType, key, None, Detail::None)
    }
    pub(super) fn no_such_field(key: &str, field: &str) -> Self {
        Self::new(
            ReflectErrorKind::NoSuchField,
            key,
            Some(field),
            Detail::None,
        )
    }
    pub(super) fn not_in_table(key: &str, field: &str) -> Self {
        Self::new(ReflectErrorKind::NotInTable, key, Some(field), Detail::None)
    }
    /// A field that could not be read: skipped, or out of range.
    pub(super) fn unreadable(key: &str, field: &str, skipped: bool, e: TypeError) -> Self {
        let kind = if skipped {
            ReflectErrorKind::SkippedField
        } else {
            ReflectErrorKind::OutOfRange
        };
        Self::new(kind, key, Some(field), Detail::Type(e))
    }
    pub(super) fn missing_field(key: &str, field: &str, expected: &'static str) -> Self {
        Self::new(
            ReflectErrorKind::MissingField,
            key,
            Some(field),
            Detail::Expected(expected),
        )
    }
    pub(super) fn extra_field(key: &str, field: &str) -> Self {
        Self::new(ReflectErrorKind::ExtraField, key, Some(field), Detail::None)
    }
    pub(super) fn duplicate_field(key: &str, field: &str) -> Self {
        Self::new(
            ReflectErrorKind::DuplicateField,
            key,
            Some(field),
            Detail::None,
        )
    }
    pub(super) fn wrong_type(key: &str, field: &str, e: TypeError) -> Self {
        Self::new(
            ReflectErrorKind::WrongType,
            key,
            Some(field),
            Detail::Type(e),
        )
    }
    pub(super) fn not_creatable(key: &str) -> Self {
        Self::new(ReflectErrorKind::NotCreatable, key, None, Detail::None)
    }
    pub(super) fn abstract_type(key: &str) -> Self {
        Self::new(ReflectErrorKind::Abstract, key, None, Detail::None)
    }
    pub(super) fn layout_mismatch(key: &str, e: RegistryError) -> Self {
        Self::new(
            ReflectErrorKind::LayoutMismatch,
            key,
            None,
            Detail::Registry(e),
        )
    }

    /// What kind of error it is.
    pub fn kind(&self) -> ReflectErrorKind {
        self.0.kind
    }

    /// The key of the type being read or built (for
    /// [`UnknownType`](ReflectErrorKind::UnknownType), the key asked for).
    pub fn type_key(&self) -> &str {
        &self.0.type_key
    }

    /// The field the error is about, if any (the name as given, for fields a type does
    /// not have).
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// The failed value conversion behind a [`WrongType`](ReflectErrorKind::WrongType),
    /// [`OutOfRange`](ReflectErrorKind::OutOfRange) or
    /// [`SkippedField`](ReflectErrorKind::SkippedField) error: the expected and the
    /// actual type.
    pub fn type_error(&self) -> Option<&TypeError> {
        match &self.0.detail {
            Detail::Type(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for ReflectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = &self.0.type_key;
        let field = self.0.field.as_deref().unwrap_or_default();
        match (&self.0.kind, &self.0.detail) {
            (ReflectErrorKind::UnknownType, _) => write!(f, "unknown type key `{key}`"),
            (ReflectErrorKind::NoSuchField | ReflectErrorKind::ExtraField, _) => {
                write!(f, "`{key}` has no field `{field}`")
            }
            (ReflectErrorKind::NotInTable, _) => {
                write!(f, "field `{field}` is not a field of `{key}`")
            }
            (ReflectErrorKind::MissingField, Detail::Expected(expected)) => {
                write!(f, "missing field `{field}` ({expected}) of `{key}`")
            }
            (ReflectErrorKind::DuplicateField, _) => {
                write!(f, "field `{field}` of `{key}` is given twice")
            }
            (ReflectErrorKind::NotCreatable, _) => {
                write!(f, "`{key}` cannot be created from fields")
            }
            (ReflectErrorKind::Abstract, _) => {
                write!(f, "`{key}` is abstract: create one of its subtypes instead")
            }
            (_, Detail::Type(e)) => write!(f, "field `{field}` of `{key}`: {e}"),
            (_, Detail::Registry(e)) => fmt::Display::fmt(e, f),
            (kind, _) => write!(f, "{kind:?} for `{key}`"),
        }
    }
}

impl fmt::Debug for ReflectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectError")
            .field("kind", &self.0.kind)
            .field("type_key", &self.0.type_key)
            .field("field", &self.0.field)
            .field("message", &format_args!("{self}"))
            .finish()
    }
}

impl std::error::Error for ReflectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.detail {
            Detail::Type(e) => Some(e),
            Detail::Registry(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ReflectError> for Error {
    /// An error of the kind's [`error_kind`](ReflectErrorKind::error_kind) string, with
    /// the same message.
    fn from(e: ReflectError) -> Self {
        Error::new(e.kind().error_kind(), e.to_string())
    }
}
