//! [`TransformError`]: what the visitor and mutator report.

use core::fmt;

use super::dispatch::DispatchError;
use crate::any::TypeError;

/// What went wrong in a walk or a rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransformErrorKind {
    /// A replacement child does not fit its field (a `Stmt` for an `ObjectPtr<Expr>`
    /// field, a non-object where an object was held).
    WrongChildType,
    /// A node whose children changed cannot be rebuilt: an opaque type without
    /// container hooks.
    NotRebuildable,
    /// A type-dispatch table had no entry (see [`DispatchError`]).
    Dispatch,
    /// A pass reported an error of its own ([`TransformError::custom`]).
    Custom,
    /// The graph has a cycle (only mutable containers, `ffi.List` and `ffi.Dict`, can
    /// make one): a container was reached again while its items were being rewritten.
    /// [`mutate`](super::mutate) reports it instead of walking forever.
    Cycle,
}

/// The error of the [`transform`](super) walkers: a [`kind`](Self::kind) to match, the
/// type (and field) concerned, and the underlying error where there is one.
#[derive(Debug, Clone)]
pub struct TransformError {
    kind: TransformErrorKind,
    type_key: std::string::String,
    field: Option<&'static str>,
    detail: Detail,
}

#[derive(Debug, Clone)]
enum Detail {
    None,
    Type(TypeError),
    Dispatch(DispatchError),
    Message(std::string::String),
}

impl TransformError {
    pub(crate) fn wrong_child(key: &str, field: &'static str, e: TypeError) -> Self {
        TransformError {
            kind: TransformErrorKind::WrongChildType,
            type_key: key.to_owned(),
            field: Some(field),
            detail: Detail::Type(e),
        }
    }

    pub(crate) fn wrong_item(key: &str, e: TypeError) -> Self {
        TransformError {
            kind: TransformErrorKind::WrongChildType,
            type_key: key.to_owned(),
            field: None,
            detail: Detail::Type(e),
        }
    }

    pub(crate) fn cycle(key: &str) -> Self {
        TransformError {
            kind: TransformErrorKind::Cycle,
            type_key: key.to_owned(),
            field: None,
            detail: Detail::Message(
                "reached again while its items were being rewritten: the graph has a cycle"
                    .to_owned(),
            ),
        }
    }

    pub(crate) fn not_rebuildable(key: &str) -> Self {
        TransformError {
            kind: TransformErrorKind::NotRebuildable,
            type_key: key.to_owned(),
            field: None,
            detail: Detail::None,
        }
    }

    /// A container's rebuild hook found an item that does not fit (for container
    /// implementations: `Map` keys that collide, a typed view's item type).
    pub fn item_type(container_key: &str, e: TypeError) -> Self {
        Self::wrong_item(container_key, e)
    }

    /// An error of a pass's own, about a node of type `type_key`.
    ///
    /// ```
    /// use object_core::transform::{TransformError, TransformErrorKind};
    /// let e = TransformError::custom("tour.Div", "division by zero");
    /// assert_eq!(e.kind(), TransformErrorKind::Custom);
    /// assert_eq!(e.to_string(), "`tour.Div`: division by zero");
    /// ```
    pub fn custom(type_key: &str, message: impl Into<std::string::String>) -> Self {
        TransformError {
            kind: TransformErrorKind::Custom,
            type_key: type_key.to_owned(),
            field: None,
            detail: Detail::Message(message.into()),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> TransformErrorKind {
        self.kind
    }

    /// The key of the type concerned: the run-time type of the node being rebuilt.
    pub fn type_key(&self) -> &str {
        &self.type_key
    }

    /// The field concerned, for [`WrongChildType`](TransformErrorKind::WrongChildType)
    /// in a reflected field.
    pub fn field(&self) -> Option<&'static str> {
        self.field
    }

    /// The type mismatch, for [`WrongChildType`](TransformErrorKind::WrongChildType).
    pub fn type_error(&self) -> Option<&TypeError> {
        match &self.detail {
            Detail::Type(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DispatchError> for TransformError {
    fn from(e: DispatchError) -> Self {
        TransformError {
            kind: TransformErrorKind::Dispatch,
            type_key: e.type_key().to_owned(),
            field: None,
            detail: Detail::Dispatch(e),
        }
    }
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.detail, self.field) {
            (Detail::Type(e), Some(field)) => write!(
                f,
                "field `{field}` of `{}`: the new child does not fit: {e}",
                self.type_key
            ),
            (Detail::Type(e), None) => {
                write!(f, "`{}`: the new item does not fit: {e}", self.type_key)
            }
            (Detail::Dispatch(e), _) => write!(f, "{e}"),
            (Detail::Message(m), _) => write!(f, "`{}`: {m}", self.type_key),
            (Detail::None, _) => write!(
                f,
                "cannot rebuild `{}` with new children (an opaque type without container hooks)",
                self.type_key
            ),
        }
    }
}

impl std::error::Error for TransformError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.detail {
            Detail::Type(e) => Some(e),
            Detail::Dispatch(e) => Some(e),
            _ => None,
        }
    }
}
