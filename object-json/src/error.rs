//! [`GraphError`]: what went wrong while saving or loading a JSON graph, as data — a
//! [`GraphErrorKind`] to match on, and the line, column, node, field and type key
//! where the error has them — beside the message a person reads.

use std::fmt;

use object_core::{Error, ErrorKind};

/// The class of a [`GraphError`]: what a caller can act on.
///
/// ```
/// use object_json::{from_json_graph, GraphErrorKind};
///
/// let e = from_json_graph(r#"{"root_index": 0, "nodes": [{"type": "nope.Missing"}]}"#).unwrap_err();
/// assert_eq!(e.kind(), GraphErrorKind::UnknownType);
/// assert_eq!((e.node(), e.type_key()), (Some(0), Some("nope.Missing")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GraphErrorKind {
    /// The text is not JSON (or nests deeper than 128 levels, or has a number beyond
    /// `f64`): [`GraphError::line`] and [`GraphError::column`] say where.
    Syntax,
    /// JSON, but not a graph document: not an object, a missing or ill-typed
    /// `root_index` or `nodes`, a node that is not an object or has no string `type`.
    Document,
    /// A node index (the root's, an array item, a map entry, a field) that is not an
    /// integer naming a node of the graph.
    NodeIndex,
    /// A node that reaches itself (loading), or a value that contains itself (saving).
    Cycle,
    /// A `type` that names no registered type.
    UnknownType,
    /// A node's `data` does not have its type's form (a string for an `int`, bad
    /// base64, an odd-length map, a tensor whose bytes do not fit its shape, …).
    Data,
    /// A reflected object's fields: missing, extra, given twice, or of the wrong kind
    /// ([`GraphError::field`] names it).
    Field,
    /// A value or type with no graph form: functions, modules, errors, opaque
    /// pointers and opaque objects; a `DataType` whose text does not read back; an
    /// unsigned field beyond `i64::MAX`; an array the host cannot read.
    Unsupported,
    /// A metadata value that is not `None`, a boolean, a number or a string
    /// ([`GraphError::field`] is its key).
    Metadata,
    /// Memory for a tensor's copy could not be had (or its size overflows).
    Memory,
    /// A member name given twice in one JSON object of the graph's structure: the
    /// document's (`root_index`, `nodes`, `metadata`), a node's (`type`, `data`) or a
    /// tensor's data ([`GraphError::member`] names it; [`GraphError::node`] is the node
    /// for a node's member). A field given twice in an object's `data` is a
    /// [`Field`](Self::Field) error instead.
    DuplicateMember,
    /// A node whose type is declared `#[object(abstract)]`: a base that only its
    /// subtypes instantiate.
    Abstract,
}

/// An error of [`to_json_graph`](crate::to_json_graph) or
/// [`from_json_graph`](crate::from_json_graph): its [`kind`](Self::kind), and where it
/// happened — the [`line`](Self::line) and [`column`](Self::column) of a syntax error,
/// the [`node`](Self::node), its [`type_key`](Self::type_key) and the
/// [`field`](Self::field) — as accessors, the way `serde_json::Error` has `line()`,
/// `column()` and `classify()`. `Display` is the message, which names the same things
/// for a person (`node 3 (`tour.Add`): field `lhs`: node index 9 is out of range (the
/// graph has 4 nodes)`).
///
/// Packed functions report errors as [`object_core::Error`]: the `From` conversion
/// gives the kind string a Python caller sees (`ValueError`, `KeyError`, `TypeError`,
/// `MemoryError`) and the same message, so `?` works in a function that returns
/// `Result<_, Error>`.
///
/// ```
/// use object_json::{from_json_graph, GraphErrorKind};
///
/// let e = from_json_graph("{\"root_index\": 0,\n \"nodes\": [}").unwrap_err();
/// assert_eq!(e.kind(), GraphErrorKind::Syntax);
/// assert_eq!((e.line(), e.column()), (Some(2), Some(12)));
/// assert_eq!(e.to_string(), "invalid JSON at line 2, column 12: unexpected character `}`, expected a value");
///
/// let e = from_json_graph(
///     r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [0, 7]}]}"#,
/// )
/// .unwrap_err();
/// assert_eq!(e.kind(), GraphErrorKind::NodeIndex);
/// assert_eq!((e.node(), e.type_key()), (Some(0), Some("ffi.Array")));
/// let e = object_core::Error::from(e);
/// assert_eq!(e.kind(), "ValueError");
/// assert_eq!(e.message(), "node 0 (`ffi.Array`): node index 7 is out of range (the graph has 1 nodes)");
/// ```
pub struct GraphError(Box<Inner>);

struct Inner {
    kind: GraphErrorKind,
    message: String,
    /// 1-based, for syntax errors.
    position: Option<(usize, usize)>,
    node: Option<usize>,
    field: Option<String>,
    member: Option<String>,
    type_key: Option<String>,
    /// The kind of the [`Error`] this converts into.
    error_kind: ErrorKind,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl GraphError {
    /// An error of `kind` with `message`, converting into an `Error` of the kind
    /// usual for `kind` (see [`default_error_kind`]).
    pub(crate) fn new(kind: GraphErrorKind, message: impl Into<String>) -> Self {
        GraphError(Box::new(Inner {
            kind,
            message: message.into(),
            position: None,
            node: None,
            field: None,
            member: None,
            type_key: None,
            error_kind: default_error_kind(kind),
            source: None,
        }))
    }

    /// A syntax error at `line` and `column` (1-based).
    pub(crate) fn syntax(message: &str, line: usize, column: usize) -> Self {
        let mut e = GraphError::new(
            GraphErrorKind::Syntax,
            format!("invalid JSON at line {line}, column {column}: {message}"),
        );
        e.0.position = Some((line, column));
        e
    }

    /// An error that wraps `source`, an [`Error`] from reflection or a container:
    /// the same message, and it converts back into an `Error` of the same kind.
    pub(crate) fn wrap(kind: GraphErrorKind, source: Error) -> Self {
        let mut e = GraphError::new(kind, source.message());
        e.0.error_kind = source.kind().clone();
        e.with_source(source)
    }

    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// A built-in's error (see `object_core::builtin`), as a graph error of `kind`
    /// (its message prefixed by `context`, if any): it converts into the `Error` the
    /// built-in's does, and its source is the container's own error where there is
    /// one.
    pub(crate) fn builtin(
        kind: GraphErrorKind,
        context: Option<String>,
        mut e: object_core::builtin::BuiltinError,
    ) -> Self {
        let cause = e.take_cause();
        let message = match context {
            Some(c) => format!("{c}{}", e.message()),
            None => e.message().to_owned(),
        };
        let mut g = GraphError::wrap(kind, Error::from(e));
        g.0.message = message;
        g.0.source = cause;
        g
    }

    /// The same error, in node `node` (whose `type` is `type_key`, when it has one):
    /// the message gets the prefix ``node 3 (`tour.Add`): ``.
    pub(crate) fn in_node(mut self, node: usize, type_key: Option<&str>) -> Self {
        self.0.message = match type_key {
            Some(key) => format!("node {node} (`{key}`): {}", self.0.message),
            None => format!("node {node}: {}", self.0.message),
        };
        self.0.node = Some(node);
        if let Some(key) = type_key {
            self.0.type_key = Some(key.to_owned());
        }
        self
    }

    /// The same error, in the field `name`: the message gets the prefix
    /// ``field `name`: ``.
    pub(crate) fn in_field(mut self, name: &str) -> Self {
        self.0.message = format!("field `{name}`: {}", self.0.message);
        self.with_field(name)
    }

    /// The same error, in node `node` (the message already names it).
    pub(crate) fn with_node(mut self, node: usize) -> Self {
        self.0.node = Some(node);
        self
    }

    /// The same error, naming the field `name` (the message already does).
    pub(crate) fn with_field(mut self, name: &str) -> Self {
        self.0.field = Some(name.to_owned());
        self
    }

    /// A [`DuplicateMember`](GraphErrorKind::DuplicateMember) error for `name`, in
    /// `place` (`the document`, `a node`, …).
    pub(crate) fn duplicate_member(name: &str, place: &str) -> Self {
        let mut e = GraphError::new(
            GraphErrorKind::DuplicateMember,
            format!("`{name}` is given twice in {place}"),
        );
        e.0.member = Some(name.to_owned());
        e
    }

    /// The same error, naming the type key `key` (the message already does).
    pub(crate) fn with_type_key(mut self, key: &str) -> Self {
        self.0.type_key = Some(key.to_owned());
        self
    }

    /// The class of the error.
    pub fn kind(&self) -> GraphErrorKind {
        self.0.kind
    }

    /// The line (1-based) of a [`Syntax`](GraphErrorKind::Syntax) error; `None` for
    /// the others (the JSON was read; [`node`](Self::node) says where).
    pub fn line(&self) -> Option<usize> {
        self.0.position.map(|(line, _)| line)
    }

    /// The column (1-based, in bytes) of a [`Syntax`](GraphErrorKind::Syntax) error.
    pub fn column(&self) -> Option<usize> {
        self.0.position.map(|(_, column)| column)
    }

    /// The index of the node the error is in, when loading found it in one.
    pub fn node(&self) -> Option<usize> {
        self.0.node
    }

    /// The field of a reflected object the error is about (loading or saving), or the
    /// key of a [`Metadata`](GraphErrorKind::Metadata) entry.
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// The JSON member named twice, for a
    /// [`DuplicateMember`](GraphErrorKind::DuplicateMember) error.
    ///
    /// ```
    /// use object_json::{from_json_graph, GraphErrorKind};
    ///
    /// let e = from_json_graph(r#"{"root_index":0,"root_index":0,"nodes":[{"type":"None"}]}"#)
    ///     .unwrap_err();
    /// assert_eq!((e.kind(), e.member()), (GraphErrorKind::DuplicateMember, Some("root_index")));
    /// ```
    pub fn member(&self) -> Option<&str> {
        self.0.member.as_deref()
    }

    /// The type key involved: the node's `type` when loading, the type of the value
    /// (or of the object whose field it is) when saving; `None` where there is none.
    pub fn type_key(&self) -> Option<&str> {
        self.0.type_key.as_deref()
    }

    /// The message, as `Display` writes it.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

/// The kind of the [`Error`] a [`GraphError`] of `kind` converts into, unless
/// the site that made it says otherwise: what `from_json_graph` and `to_json_graph`
/// reported before they had a typed error.
fn default_error_kind(kind: GraphErrorKind) -> ErrorKind {
    match kind {
        GraphErrorKind::UnknownType => ErrorKind::KeyError,
        GraphErrorKind::Unsupported | GraphErrorKind::Metadata | GraphErrorKind::Abstract => {
            ErrorKind::TypeError
        }
        GraphErrorKind::Memory => ErrorKind::MemoryError,
        GraphErrorKind::Syntax
        | GraphErrorKind::Document
        | GraphErrorKind::NodeIndex
        | GraphErrorKind::Cycle
        | GraphErrorKind::Data
        | GraphErrorKind::Field
        | GraphErrorKind::DuplicateMember => ErrorKind::ValueError,
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("GraphError");
        d.field("kind", &self.0.kind)
            .field("message", &self.0.message);
        if let Some((line, column)) = self.0.position {
            d.field("line", &line).field("column", &column);
        }
        if let Some(node) = self.0.node {
            d.field("node", &node);
        }
        if let Some(field) = &self.0.field {
            d.field("field", field);
        }
        if let Some(key) = &self.0.type_key {
            d.field("type_key", key);
        }
        d.finish()
    }
}

impl std::error::Error for GraphError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<GraphError> for Error {
    /// The error a packed function reports: the kind `from_json_graph` and
    /// `to_json_graph` reported before they had a typed error, and the message.
    fn from(e: GraphError) -> Self {
        Error::new(e.0.error_kind, e.0.message)
    }
}
