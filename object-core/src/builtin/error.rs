//! [`BuiltinError`]: what reading or building a built-in can fail with.

use core::fmt;

use super::{BuiltinShape, Parts};
use crate::error::{Error, ErrorKind};

/// What kind of failure a [`BuiltinError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuiltinErrorKind {
    /// Parts of another shape than the type's.
    WrongShape,
    /// Parts of the right shape that the type cannot hold (a tensor's bytes that do not
    /// match its shape, text that is not an integer).
    Data,
    /// Contents that cannot be read here (a tensor not on the host).
    Unsupported,
    /// Memory for the contents could not be had.
    Memory,
    /// The type is not a built-in.
    NotBuiltin,
}

/// Reading or building a built-in failed: a kind to match and a message, and the
/// container's own error it came from, if any ([`with_cause`](Self::with_cause)).
#[derive(Debug)]
pub struct BuiltinError {
    kind: BuiltinErrorKind,
    message: String,
    /// The packed-call error the cause converts into.
    error: Option<Error>,
    cause: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl PartialEq for BuiltinError {
    /// Errors are equal if their kinds and messages are.
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for BuiltinError {}

impl BuiltinError {
    /// An error of `kind`.
    pub fn new(kind: BuiltinErrorKind, message: impl Into<String>) -> Self {
        BuiltinError {
            kind,
            message: message.into(),
            error: None,
            cause: None,
        }
    }

    /// An error of `kind` caused by the container's own error `cause`: its message,
    /// and it converts into the packed-call [`Error`] that `cause` does.
    ///
    /// ```
    /// use object_core::builtin::{BuiltinError, BuiltinErrorKind};
    /// use object_core::{Error, TypeError};
    ///
    /// let cause = TypeError::new("an int", "a string");
    /// let e = BuiltinError::with_cause(BuiltinErrorKind::Data, cause.clone());
    /// assert_eq!(e.message(), cause.to_string());
    /// assert_eq!(Error::from(e), Error::from(cause));
    /// ```
    pub fn with_cause<E>(kind: BuiltinErrorKind, cause: E) -> Self
    where
        E: std::error::Error + Clone + Send + Sync + 'static,
        Error: From<E>,
    {
        BuiltinError {
            kind,
            message: cause.to_string(),
            error: Some(Error::from(cause.clone())),
            cause: Some(Box::new(cause)),
        }
    }

    /// The container's own error this one came from, taken out (a caller that reports
    /// it as its own source).
    pub fn take_cause(&mut self) -> Option<Box<dyn std::error::Error + Send + Sync + 'static>> {
        self.cause.take()
    }

    /// A [`Data`](BuiltinErrorKind::Data) error.
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(BuiltinErrorKind::Data, message)
    }

    /// A [`WrongShape`](BuiltinErrorKind::WrongShape) error: `expected` parts, `got`
    /// others.
    pub fn wrong_shape(expected: BuiltinShape, got: &Parts<'_>) -> Self {
        Self::new(
            BuiltinErrorKind::WrongShape,
            format!(
                "expected {} to build from, got {}",
                expected.name(),
                got.shape().name()
            ),
        )
    }

    /// A [`NotBuiltin`](BuiltinErrorKind::NotBuiltin) error for the type `key`.
    pub fn not_builtin(key: &str) -> Self {
        Self::new(
            BuiltinErrorKind::NotBuiltin,
            format!("`{key}` is not a built-in type"),
        )
    }

    /// The kind.
    pub fn kind(&self) -> BuiltinErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BuiltinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuiltinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// The cause's packed-call error (see [`BuiltinError::with_cause`]), else a
/// `MemoryError` for [`Memory`](BuiltinErrorKind::Memory), a `TypeError` for
/// [`WrongShape`](BuiltinErrorKind::WrongShape) and
/// [`NotBuiltin`](BuiltinErrorKind::NotBuiltin), a `ValueError` for the others.
impl From<BuiltinError> for Error {
    fn from(e: BuiltinError) -> Error {
        if let Some(error) = e.error {
            return error;
        }
        let kind = match e.kind {
            BuiltinErrorKind::Memory => ErrorKind::MemoryError,
            BuiltinErrorKind::WrongShape | BuiltinErrorKind::NotBuiltin => ErrorKind::TypeError,
            _ => ErrorKind::ValueError,
        };
        Error::new(kind, e.message)
    }
}
