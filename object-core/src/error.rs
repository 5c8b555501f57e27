//! `Error` (`ffi.Error`, static index 67): an error that is an object, so it crosses the
//! function ABI (through a thread-local slot) and can be stored like any value; its
//! kind is an [`ErrorKind`].

use core::fmt;
use core::hash::{Hash, Hasher};

use crate::{make_object, Object, ObjectPtr, ObjectRef, TypeError};

macro_rules! error_kinds {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// The kind of an [`Error`]: one of the well-known kinds the library, C and
        /// Python raise, or [`Other`](ErrorKind::Other) for any other name (C, Python and
        /// plugins raise kinds of their own). Its text form ([`as_str`](Self::as_str),
        /// `Display`) is the variant's name, and it is what crosses the C ABI
        /// (`obj_error_kind`, `obj_error_raise`) and reaches Python (`.kind`).
        ///
        /// [`from_name`](Self::from_name) (and `From<&str>`, so `Error::new("TypeError",
        /// …)` works) maps a well-known name to its variant, so `Other` never holds one;
        /// equality and hashing compare the text form, so even a hand-built
        /// `Other("TypeError".into())` equals `TypeError`. A kind compares equal to its
        /// name as a `str`. The enum is `#[non_exhaustive]`: a later version may give a
        /// name that is `Other` today a variant of its own, so test a kind of your own
        /// by its name (`kind == "MyError"`) rather than with an `Other(…)` pattern.
        ///
        /// ```
        /// use object_core::{Error, ErrorKind};
        /// let e = Error::new(ErrorKind::KeyError, "no such key");
        /// match e.kind() {
        ///     ErrorKind::KeyError | ErrorKind::IndexError => {}
        ///     other => panic!("unexpected {other}"),
        /// }
        /// assert_eq!(e.kind(), "KeyError"); // against the text form
        /// assert_eq!(ErrorKind::from_name("TypeError"), ErrorKind::TypeError);
        /// let mine = ErrorKind::from_name("MyError");
        /// assert_eq!(mine, ErrorKind::Other("MyError".into()));
        /// assert_eq!((mine.as_str(), mine.is_other()), ("MyError", true));
        /// assert_eq!(ErrorKind::Other("TypeError".into()), ErrorKind::TypeError);
        /// assert_eq!(Error::new("ValueError", "x").kind(), &ErrorKind::ValueError);
        /// ```
        #[non_exhaustive]
        #[derive(Clone)]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
            /// Any other kind, by name (never one of the names above when made by
            /// [`from_name`](ErrorKind::from_name), `From<&str>` or [`Error::new`]).
            Other(std::string::String),
        }

        impl ErrorKind {
            /// Every well-known kind (all variants but `Other`), in declaration order.
            pub const KNOWN: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// The kind named `name`: its variant if it is a well-known one, else
            /// `Other(name)`.
            pub fn from_name(name: &str) -> Self {
                Self::known(name).unwrap_or_else(|| ErrorKind::Other(name.to_owned()))
            }

            /// The well-known kind named `name`, if it is one.
            fn known(name: &str) -> Option<Self> {
                match name {
                    $(stringify!($variant) => Some(ErrorKind::$variant),)*
                    _ => None,
                }
            }

            /// The kind's name: the variant's, or the one `Other` holds.
            pub fn as_str(&self) -> &str {
                match self {
                    $(ErrorKind::$variant => stringify!($variant),)*
                    ErrorKind::Other(name) => name,
                }
            }
        }
    };
}

error_kinds! {
    /// A kind-less error: a plain message (`Error::from("…")`, a C error raised without
    /// a kind, a failure that left no error of its own).
    Error,
    /// A wrong argument type or count, a failed conversion.
    TypeError,
    /// A right type with a wrong value.
    ValueError,
    /// A missing key: no such type, global function or map entry; a name already taken.
    KeyError,
    /// An index out of range.
    IndexError,
    /// No field (attribute) of that name.
    AttributeError,
    /// A failure at run time that fits no other kind.
    RuntimeError,
    /// An operation a type does not implement.
    NotImplementedError,
    /// An arithmetic result out of range.
    OverflowError,
    /// An allocation failed.
    MemoryError,
    /// A failed check of an invariant the caller asserted.
    AssertionError,
    /// A broken invariant inside the library or a foreign runtime.
    InternalError,
    /// Reading or writing failed (`obj_any_print`).
    IOError,
    /// Rust code panicked; the panic was caught at the ABI boundary.
    Panic,
    /// A plugin could not be loaded (see `object_capi::LoadError`).
    PluginError,
    /// Run-time type registration was refused (a `RegistryError`).
    RegistryError,
    /// A library of the tvm-ffi convention failed to load or call.
    TvmFfiError,
}

impl ErrorKind {
    /// Whether this is [`Other`](ErrorKind::Other): a kind the library does not know.
    pub fn is_other(&self) -> bool {
        matches!(self, ErrorKind::Other(_))
    }

    /// The same kind with a well-known name held by `Other` turned into its variant.
    fn normalized(self) -> Self {
        match self {
            ErrorKind::Other(name) => Self::known(&name).unwrap_or(ErrorKind::Other(name)),
            known => known,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Other(name) => f.debug_tuple("Other").field(name).finish(),
            known => f.write_str(known.as_str()),
        }
    }
}

impl PartialEq for ErrorKind {
    /// The same name (so `Other("TypeError")` equals `TypeError`).
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ErrorKind {}

impl Hash for ErrorKind {
    /// Hashes the name, as equality compares it.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorKind> for str {
    fn eq(&self, other: &ErrorKind) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ErrorKind> for &str {
    fn eq(&self, other: &ErrorKind) -> bool {
        *self == other.as_str()
    }
}

impl AsRef<str> for ErrorKind {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for ErrorKind {
    /// [`ErrorKind::from_name`].
    fn from(name: &str) -> Self {
        ErrorKind::from_name(name)
    }
}

impl From<std::string::String> for ErrorKind {
    /// [`ErrorKind::from_name`], keeping the string for `Other`.
    fn from(name: std::string::String) -> Self {
        ErrorKind::Other(name).normalized()
    }
}

impl From<&std::string::String> for ErrorKind {
    fn from(name: &std::string::String) -> Self {
        ErrorKind::from_name(name)
    }
}

impl From<std::borrow::Cow<'_, str>> for ErrorKind {
    fn from(name: std::borrow::Cow<'_, str>) -> Self {
        match name {
            std::borrow::Cow::Borrowed(name) => ErrorKind::from_name(name),
            std::borrow::Cow::Owned(name) => name.into(),
        }
    }
}

impl From<&ErrorKind> for ErrorKind {
    fn from(kind: &ErrorKind) -> Self {
        kind.clone()
    }
}

impl core::str::FromStr for ErrorKind {
    type Err = core::convert::Infallible;
    /// [`ErrorKind::from_name`]: every name is a kind.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(ErrorKind::from_name(name))
    }
}

/// The object behind [`Error`]: a kind, a message, the call frames it crossed, and an
/// optional payload object (see [`Error::with_payload`]).
#[derive(crate::Object)]
#[repr(C)]
#[object(key = "ffi.Error", index = 67, final, opaque)]
pub struct ErrorObj {
    base: Object,
    kind: ErrorKind,
    message: std::string::String,
    frames: Vec<std::string::String>,
    /// Carried along (the type is opaque: not reflected, printed or saved).
    payload: Option<ObjectRef>,
}

impl fmt::Debug for ErrorObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorObj")
            .field("kind", &self.kind.as_str())
            .field("message", &self.message)
            .field("frames", &self.frames)
            .finish()
    }
}

/// An error raised by a packed function (`object_containers::Function`) or anything
/// else: a kind ([`ErrorKind`], such as `TypeError`), a message, and the chain of call frames it
/// crossed on its way up, innermost first. It is an object (`ffi.Error`), cheap to
/// clone, and implements `std::error::Error`.
///
/// ```
/// use object_core::{Error, ErrorKind};
/// let e = Error::new(ErrorKind::ValueError, "x must be positive").with_frame("check");
/// assert_eq!(e.kind(), &ErrorKind::ValueError);
/// assert_eq!(e.kind(), "ValueError");
/// assert_eq!(Error::new("MyError", "m").kind().as_str(), "MyError"); // any name
/// assert_eq!(e.to_string(), "ValueError: x must be positive\n  in check");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Error(ObjectPtr<ErrorObj>);

impl Error {
    /// An error of `kind` (an [`ErrorKind`], or its name: a well-known name becomes its
    /// variant) with `message`.
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<std::string::String>) -> Self {
        Error(make_object(ErrorObj {
            base: Object::new(),
            kind: kind.into().normalized(),
            message: message.into(),
            frames: Vec::new(),
            payload: None,
        }))
    }

    /// A `TypeError` (wrong argument type or count, failed conversion).
    pub fn type_error(message: impl Into<std::string::String>) -> Self {
        Error::new(ErrorKind::TypeError, message)
    }

    /// A `ValueError`.
    pub fn value_error(message: impl Into<std::string::String>) -> Self {
        Error::new(ErrorKind::ValueError, message)
    }

    /// The kind (its text form: `kind().as_str()`).
    pub fn kind(&self) -> &ErrorKind {
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
            .field("kind", &self.kind().as_str())
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
        Error::new(ErrorKind::Error, message)
    }
}

impl From<std::string::String> for Error {
    fn from(message: std::string::String) -> Self {
        Error::new(ErrorKind::Error, message)
    }
}

crate::__object_handle!(Error, ErrorObj, "ffi.Error");
