//! `Error` (`ffi.Error`, static index 67): an error that is an object, so it crosses the
//! function ABI (through a thread-local slot) and can be stored like any value.

use core::fmt;

use crate::{make_object, Object, ObjectPtr, ObjectRef, TypeError};

/// The object behind [`Error`]: a kind, a message, the call frames it crossed, and an
/// optional payload object (see [`Error::with_payload`]).
#[derive(crate::Object)]
#[repr(C)]
#[object(key = "ffi.Error", index = 67, final, opaque)]
pub struct ErrorObj {
    base: Object,
    kind: std::string::String,
    message: std::string::String,
    frames: Vec<std::string::String>,
    /// Carried along (the type is opaque: not reflected, printed or saved).
    payload: Option<ObjectRef>,
}

impl fmt::Debug for ErrorObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorObj")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("frames", &self.frames)
            .finish()
    }
}

/// An error raised by a packed function (`object_containers::Function`) or anything
/// else: a kind such as `"TypeError"`, a message, and the chain of call frames it
/// crossed on its way up, innermost first. It is an object (`ffi.Error`), cheap to
/// clone, and implements `std::error::Error`.
///
/// ```
/// use object_core::Error;
/// let e = Error::new("ValueError", "x must be positive").with_frame("check");
/// assert_eq!(e.kind(), "ValueError");
/// assert_eq!(e.to_string(), "ValueError: x must be positive\n  in check");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Error(ObjectPtr<ErrorObj>);

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(
        kind: impl Into<std::string::String>,
        message: impl Into<std::string::String>,
    ) -> Self {
        Error(make_object(ErrorObj {
            base: Object::new(),
            kind: kind.into(),
            message: message.into(),
            frames: Vec::new(),
            payload: None,
        }))
    }

    /// A `TypeError` (wrong argument type or count, failed conversion).
    pub fn type_error(message: impl Into<std::string::String>) -> Self {
        Error::new("TypeError", message)
    }

    /// A `ValueError`.
    pub fn value_error(message: impl Into<std::string::String>) -> Self {
        Error::new("ValueError", message)
    }

    /// The kind.
    pub fn kind(&self) -> &str {
        &self.0.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The call frames the error crossed, innermost first.
    pub fn frames(&self) -> &[std::string::String] {
        &self.0.frames
    }

    /// The same error with one more frame (copied first if shared).
    pub fn with_frame(mut self, frame: impl Into<std::string::String>) -> Self {
        let copy = |e: &ErrorObj| ErrorObj {
            base: Object::new(),
            kind: e.kind.clone(),
            message: e.message.clone(),
            frames: e.frames.clone(),
            payload: e.payload.clone(),
        };
        match ObjectPtr::make_mut_with(&mut self.0, copy) {
            Some(obj) => obj.frames.push(frame.into()),
            None => unreachable!("ErrorObj is final, so copy-on-write always succeeds"),
        }
        self
    }

    /// The same error carrying `payload`, an object that travels with it wherever the
    /// error goes (through the function ABI's error slot, into containers, across
    /// plugins) and is released with it. A front-end keeps there what it needs back when
    /// the error returns to it: the Python extension keeps the original exception
    /// object, so no side table has to outlive errors that never return.
    ///
    /// ```
    /// use object_core::{Error, String};
    /// let note = String::from("the original exception");
    /// let e = Error::new("KeyError", "k").with_payload(note.into_object_ptr().into_object_ref());
    /// let e = e.with_frame("lookup"); // frames keep the payload
    /// let back = e.payload().and_then(|p| p.downcast_ref::<object_core::StringObj>());
    /// assert_eq!(back.map(|s| s.as_str()), Some("the original exception"));
    /// assert!(Error::new("KeyError", "k").payload().is_none());
    /// ```
    pub fn with_payload(mut self, payload: ObjectRef) -> Self {
        let copy = |e: &ErrorObj| ErrorObj {
            base: Object::new(),
            kind: e.kind.clone(),
            message: e.message.clone(),
            frames: e.frames.clone(),
            payload: None,
        };
        match ObjectPtr::make_mut_with(&mut self.0, copy) {
            Some(obj) => *obj.payload = Some(payload),
            None => unreachable!("ErrorObj is final, so copy-on-write always succeeds"),
        }
        self
    }

    /// The payload set by [`with_payload`](Self::with_payload), if any.
    pub fn payload(&self) -> Option<&ObjectRef> {
        self.0.payload.as_ref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())?;
        for frame in self.frames() {
            write!(f, "\n  in {frame}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind())
            .field("message", &self.message())
            .field("frames", &self.frames())
            .finish()
    }
}

impl std::error::Error for Error {}

impl PartialEq for Error {
    /// Same kind, message and frames.
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind()
            && self.message() == other.message()
            && self.frames() == other.frames()
    }
}

impl From<TypeError> for Error {
    fn from(e: TypeError) -> Self {
        Error::type_error(e.to_string())
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::new("Error", message)
    }
}

impl From<std::string::String> for Error {
    fn from(message: std::string::String) -> Self {
        Error::new("Error", message)
    }
}

crate::__object_handle!(Error, ErrorObj, "ffi.Error");
