//! Loading: [`from_json_graph`] builds each node once, children first, through
//! reflection for objects. Graphs written children first (as `to_json_graph` writes
//! them) take a fast path that builds each node as it is read; any other graph, and
//! every error, takes the general path, which reads the whole document and walks the
//! nodes the root reaches with its own work list (any depth).
//!
//! On the fast path, an object node whose text reads exactly as the saver writes its
//! type (compact, fields in table order: the type's [`Template`]) is built straight
//! from the text: its constructor takes each field from an [`InPlace`] feed, which
//! checks the text before the value and reads the value then. A node that reads
//! otherwise is read again into a list of members (a tensor's `shape` and `device`
//! arrays among them) and built from that; a node in any other form is read again,
//! alone, as one JSON value, and reading goes on at the next. Only a graph that cannot
//! be built so (an error, a reference to a later node) is left to the general path,
//! which reports what is wrong.

use std::borrow::Cow;
use std::collections::HashMap;

use base64::Engine as _;
use object_core::builtin::{BuiltinError, BuiltinErrorKind, BuiltinHooks, BuiltinShape, Parts};
use object_core::reflection::{
    self, FieldFeed, FieldInfo, FieldSource, ReflectError, ReflectErrorKind,
};
use object_core::registry::{self, TypeInfo};
use object_core::{Any, Error};

use crate::data::{inline_value, read_data_type, read_device, read_ints, Style, B64};
use crate::error::{GraphError, GraphErrorKind};
use crate::json::{self, Json, Parser};
use crate::tensor::read_tensor;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Reads a JSON graph back into the value it describes (see the [crate docs](crate)
/// for the format). Objects reached through one node are one object (pointer-equal)
/// after loading.
///
/// # Examples
///
/// ```
/// use object_json::{from_json_graph, GraphErrorKind};
///
/// let v = from_json_graph(r#"{"root_index": 1, "nodes": [{"type": "int", "data": 7},
///                             {"type": "ffi.Array", "data": [0, 0]}]}"#).unwrap();
/// assert_eq!(format!("{v:?}"), "Any([7, 7])");
///
/// let err = from_json_graph(r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [0]}]}"#)
///     .unwrap_err();
/// assert_eq!((err.kind(), err.node()), (GraphErrorKind::Cycle, Some(0)));
/// assert_eq!(err.to_string(), "node 0 (`ffi.Array`) refers to node 0, which refers back to it (a cycle)");
/// ```
///
/// # Errors
///
/// A [`GraphError`] whose [`kind`](GraphError::kind) is
///
/// - [`Syntax`](GraphErrorKind::Syntax) for text that is not JSON (with
///   [`line`](GraphError::line) and [`column`](GraphError::column));
/// - [`Document`](GraphErrorKind::Document) for a document without the graph's keys, or
///   a node that is not an object with a string `type`;
/// - [`DuplicateMember`](GraphErrorKind::DuplicateMember) for a member given twice in
///   the document, a node or a tensor's data ([`member`](GraphError::member) names it);
/// - [`NodeIndex`](GraphErrorKind::NodeIndex) for a node index that is not an integer
///   naming a node;
/// - [`Cycle`](GraphErrorKind::Cycle) for a node that reaches itself;
/// - [`UnknownType`](GraphErrorKind::UnknownType) for a type key that is not registered,
///   [`Unsupported`](GraphErrorKind::Unsupported) for one that cannot be loaded
///   (functions, modules, errors, opaque types);
/// - [`Data`](GraphErrorKind::Data) for node data that does not match its type (an odd
///   count for an `ffi.Map` or `ffi.Dict`, text that is not an integer for an
///   `ffi.BigInt`, …);
/// - [`Field`](GraphErrorKind::Field) for a reflected object's field that is missing,
///   extra, given twice or of the wrong kind (the errors of
///   [`create`](object_core::reflection::create), with [`field`](GraphError::field));
///   a field left out that has a declared default (`#[object(default)]`) takes it;
/// - [`Abstract`](GraphErrorKind::Abstract) for a node of an `#[object(abstract)]`
///   type;
/// - [`Memory`](GraphErrorKind::Memory) when a tensor cannot be allocated.
///
/// Every error after the JSON is read names the [`node`](GraphError::node) (and its
/// [`type_key`](GraphError::type_key)); nothing half-built leaks.
///
/// The graph may be of any depth (the loader keeps its own work list, and releasing
/// what it built does not recurse); only the JSON *text* may not nest deeper than 128
/// levels (arrays within objects within …), which no graph document needs: its nodes
/// are a flat list, each at most four levels deep.
pub fn from_json_graph(text: &str) -> Result<Any, GraphError> {
    match load_in_order(text) {
        Some(v) => Ok(v),
        None => load_general(text),
    }
}

/// A document-level error (no node to name).
fn document_error(message: impl Into<String>) -> GraphError {
    GraphError::new(GraphErrorKind::Document, message)
}

/// The general path of `from_json_graph`: the whole document, then the nodes the root
/// reaches, depth first, with every check.
pub(crate) fn load_general(text: &str) -> Result<Any, GraphError> {
    let doc = json::parse(text).map_err(|e| GraphError::syntax(&e.message, e.line, e.column))?;
    let Json::Object(_) = &doc else {
        return Err(document_error(format!(
            "a JSON graph is an object, got {}",
            doc.kind()
        )));
    };
    if let Some(name) = doc.duplicate_member() {
        return Err(GraphError::duplicate_member(name, "the document"));
    }
    let nodes = match doc.get("nodes") {
        Some(Json::Array(nodes)) => nodes,
        Some(other) => {
            return Err(document_error(format!(
                "`nodes` must be an array, got {}",
                other.kind()
            )))
        }
        None => return Err(document_error("missing `nodes`")),
    };
    let root = match doc.get("root_index") {
        Some(Json::Int(i)) => *i,
        Some(other) => {
            return Err(document_error(format!(
                "`root_index` must be an integer, got {}",
                other.kind()
            )))
        }
        None => return Err(document_error("missing `root_index`")),
    };
    let root = usize::try_from(root)
        .ok()
        .filter(|&r| r < nodes.len())
        .ok_or_else(|| {
            GraphError::new(
                GraphErrorKind::NodeIndex,
                format!(
                    "`root_index` {root} is out of range (the graph has {} nodes)",
                    nodes.len()
                ),
            )
        })?;
    Loader::new(nodes).load(root)
}

/// The fast path of `from_json_graph`, for graphs whose nodes come children first (as
/// `to_json_graph` writes them): each node is built as soon as it is read, so the
/// document is never held whole. Gives up (`None`) at the first thing out of the
/// ordinary: an error of any kind, a reference to a later node, a `type` that is not
/// a string; the general path then loads the graph again, and reports the error.
///
/// When it succeeds, the general path would have built the same value: it builds the
/// nodes the root reaches, each from the same data by the same code (`children` and
/// `build`), and every node here is built after its children, so there is no cycle and
/// no error to find.
pub(crate) fn load_in_order(text: &str) -> Option<Any> {
    let mut loader = Loader::new(&[]);
    loader.count = usize::MAX; // not known yet: `build_in_order` checks `c < i`
                               // Room for the nodes, guessed from the text (a compact node is rarely under 32
                               // bytes): growing the table by copying cost about 5% of a load. Pages of the guess
                               // that go unused are never touched.
    loader.values.reserve(text.len() / BYTES_PER_NODE_GUESS);
    let (doc, count) = json::stream_graph(text, &mut loader)?;
    let Some(Json::Array(_)) = doc.get("nodes") else {
        return None;
    };
    let root = match doc.get("root_index") {
        Some(Json::Int(r)) => usize::try_from(*r).ok().filter(|&r| r < count)?,
        _ => return None,
    };
    Some(std::mem::take(loader.values.get_mut(root)?))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    New,
    Active,
    Done,
}

/// What a node is, decided once when it is first reached: one of the data model's
/// scalars, a built-in of some shape, or a reflected object.
#[derive(Clone, Copy)]
enum Kind {
    None,
    Int,
    Bool,
    Float,
    DataType,
    Device,
    Builtin(&'static TypeInfo, &'static BuiltinHooks),
    Object(&'static TypeInfo),
}

impl Kind {
    /// Whether the node's data lists child node indices (items, or keys and values).
    #[inline]
    fn has_children(self) -> Option<BuiltinShape> {
        match self {
            Kind::Builtin(_, h)
                if matches!(h.shape, BuiltinShape::Items | BuiltinShape::Entries) =>
            {
                Some(h.shape)
            }
            _ => None,
        }
    }
}

struct Frame {
    // (The node's data is `nodes[node].get("data")`.)
    node: usize,
    kind: Kind,
    /// Children: `arena[start..start + len]`.
    start: usize,
    len: usize,
    cursor: usize,
}

/// The text a node takes, at least in most graphs, for sizing the nodes table.
const BYTES_PER_NODE_GUESS: usize = 32;

/// How many keys [`Loader::kind_of`] remembers before it hashes one.
const RECENT: usize = 4;

struct Loader<'d, 'a> {
    nodes: &'d [Json<'a>],
    /// How many nodes the graph has: child indices are below.
    count: usize,
    /// The nodes built so far, by index (a `None` value for one not built yet: every reader
    /// checks the node's state or order first).
    values: Vec<Any>,
    state: Vec<State>,
    arena: Vec<usize>,
    /// Kinds by type key (keys read without escapes only: they borrow the text).
    types: FastMap<&'a str, Kind>,
    /// The kinds of the last few keys looked up (a graph has few types, and a text
    /// repeats them): compared before the map is hashed into.
    recent: [Option<(&'a str, Kind)>; RECENT],
    /// Where the next key goes in `recent`.
    next_recent: usize,
    entries: Vec<(&'d str, Option<Any>)>,
    /// The kind of the node being streamed, looked up when its type was read (see
    /// `NodeSink::expected_fields`).
    streamed: Option<(usize, Kind)>,
    /// Reflected types' node texts ([`Template`]), and their positions by type index
    /// (`UNSEEN` for none yet; type indices are dense).
    templates: Vec<Template>,
    template_index: Vec<u32>,
}

/// In `Loader::template_index`: no template made for the type yet.
const UNSEEN: u32 = u32::MAX;

/// How the nodes of a reflected type read as `to_json_graph` writes them (compact): the
/// text before each field's value, worked out once per type (the saver's `TypeForm`,
/// read back). A node that reads so is built straight from the text ([`InPlace`]).
struct Template {
    /// The reflected fields, in table order (the order a constructor takes them in).
    fields: Vec<TemplateField>,
    /// The text after the last value: `}` (`,"data":{}` without fields).
    close: Box<[u8]>,
}

/// A field of a [`Template`].
struct TemplateField {
    info: &'static FieldInfo,
    /// The text before its value: `,"name":`, or for the first field the data's start
    /// too (`,"data":{"name":`).
    before: Box<[u8]>,
    /// A literal in the node (else a child's node index).
    inline: bool,
}

impl Template {
    fn new(info: &'static TypeInfo) -> Self {
        let style = Style::COMPACT;
        let fields: Vec<TemplateField> = info
            .reflection()
            .reflected_fields()
            .enumerate()
            .map(|(k, f)| {
                let mut before = String::new();
                if k == 0 {
                    before.push_str(style.data);
                    before.push('{');
                }
                style.field_key(&mut before, k == 0, f.name());
                TemplateField {
                    info: f,
                    before: before.into_bytes().into(),
                    inline: f.is_inline_pod(),
                }
            })
            .collect();
        let close = if fields.is_empty() {
            format!("{}{{}}", style.data)
        } else {
            "}".to_owned()
        };
        Template {
            fields,
            close: close.into_bytes().into(),
        }
    }
}

/// A node's field values read from the text as its type's constructor asks for them,
/// each checked against the node's [`Template`]: what `build_object_in_order` builds
/// from the same text, without a list of members or of values in between. Anything
/// else (other spacing or order, a value of the wrong form) fails the build, and the
/// node is read again the general way.
struct InPlace<'l, 'a> {
    p: &'l mut Parser<'a>,
    template: &'l Template,
    /// The nodes built so far.
    values: &'l [Any],
    /// The node's index (its children come before it).
    node: usize,
    /// The next field of the template.
    next: usize,
    failed: bool,
}

impl InPlace<'_, '_> {
    /// The value of `field`, read from the text, as `build_object_in_order` makes it.
    #[inline]
    fn read(&mut self, field: &TemplateField) -> Option<Any> {
        if !self.p.eat_text(&field.before) {
            return None;
        }
        if field.inline {
            let value = self.p.literal()?;
            return inline_value(field.info, &value).ok();
        }
        let c = usize::try_from(self.p.plain_int()?).ok()?;
        Some(self.values.get(c).filter(|_| c < self.node)?.clone())
    }
}

impl FieldFeed for InPlace<'_, '_> {
    #[inline]
    fn take(&mut self, name: &'static str) -> Option<Any> {
        let template = self.template;
        let value = match template.fields.get(self.next) {
            Some(f)
                if !self.failed
                    && (core::ptr::eq(f.info.name(), name) || f.info.name() == name) =>
            {
                self.read(f)
            }
            _ => None,
        };
        // (The text has every field: one not given is a failure.)
        match value {
            Some(_) => self.next += 1,
            None => self.failed = true,
        }
        value
    }

    fn rest(&mut self) -> Option<&str> {
        if !self.failed
            && self.next == self.template.fields.len()
            && self.p.eat_text(&self.template.close)
        {
            return None;
        }
        Some(
            self.template
                .fields
                .get(self.next)
                .map_or("data", |f| f.info.name()),
        )
    }
}

impl<'a> json::NodeSink<'a> for Loader<'_, 'a> {
    fn expected_fields(&mut self, i: usize, ty: &Cow<'a, str>) -> &'static [FieldInfo] {
        let Ok(kind) = self.kind_of(i, ty) else {
            return &[];
        };
        self.streamed = Some((i, kind));
        match kind {
            Kind::Object(info) => info.reflection().fields(),
            _ => &[],
        }
    }

    fn node(&mut self, i: usize, ty: &Cow<'a, str>, data: Option<&Json<'a>>) -> bool {
        self.build_in_order(i, ty, data).is_some()
    }

    fn node_in_place(&mut self, i: usize, ty: &Cow<'a, str>, p: &mut Parser<'a>) -> Option<bool> {
        let Ok(kind) = self.kind_of(i, ty) else {
            return Some(false);
        };
        let Kind::Object(info) = kind else {
            self.streamed = Some((i, kind));
            return None;
        };
        let template = self.template(info);
        let start = p.position();
        let mut feed = InPlace {
            p,
            template: &self.templates[template],
            values: &self.values,
            node: i,
            next: 0,
            failed: false,
        };
        match reflection::create_from_source(
            info,
            &mut FieldSource::from_feed(info.key(), &mut feed),
        ) {
            Ok(obj) => {
                self.values.push(Any::from(obj));
                Some(true)
            }
            Err(_) => {
                p.rewind(start);
                self.streamed = Some((i, kind));
                None
            }
        }
    }
}

impl<'d, 'a> Loader<'d, 'a> {
    fn new(nodes: &'d [Json<'a>]) -> Self {
        let n = nodes.len();
        Loader {
            nodes,
            count: n,
            values: vec![Any::default(); n],
            state: vec![State::New; n],
            arena: Vec::new(),
            types: FastMap::default(),
            recent: [None; RECENT],
            next_recent: 0,
            entries: Vec::new(),
            streamed: None,
            templates: Vec::new(),
            template_index: Vec::new(),
        }
    }

    /// The position of `info`'s [`Template`] in `templates`, made the first time.
    #[inline]
    fn template(&mut self, info: &'static TypeInfo) -> usize {
        let at = info.index() as usize;
        match self.template_index.get(at) {
            Some(&t) if t != UNSEEN => t as usize,
            _ => self.new_template(info),
        }
    }

    #[cold]
    fn new_template(&mut self, info: &'static TypeInfo) -> usize {
        let at = info.index() as usize;
        if self.template_index.len() <= at {
            self.template_index.resize(at + 1, UNSEEN);
        }
        self.templates.push(Template::new(info));
        let t = self.templates.len() - 1;
        self.template_index[at] = t as u32;
        t
    }

    /// The `type` of node `node`, if it has a string one.
    fn type_of(&self, node: usize) -> Option<&'d str> {
        let nodes: &'d [Json<'a>] = self.nodes;
        match nodes.get(node).and_then(|n| n.get("type")) {
            Some(Json::Str(k)) => Some(&**k),
            _ => None,
        }
    }

    /// `e`, in node `node`: its message names the node (``node 3 (`tour.Add`): …``).
    fn in_node(&self, node: usize, e: GraphError) -> GraphError {
        e.in_node(node, self.type_of(node))
    }

    fn load(mut self, root: usize) -> Result<Any, GraphError> {
        let mut stack = vec![self.open(root)?];
        while let Some(top) = stack.last_mut() {
            if top.cursor < top.len {
                let child = self.arena[top.start + top.cursor];
                top.cursor += 1;
                match self.state[child] {
                    State::Done => {}
                    State::Active => {
                        let node = top.node;
                        return Err(self.cycle(node, child));
                    }
                    State::New => {
                        let frame = self.open(child)?;
                        stack.push(frame);
                    }
                }
                continue;
            }
            let Some(frame) = stack.pop() else { break };
            let nodes = self.nodes;
            let data = nodes[frame.node].get("data");
            let value = self.build(frame.node, frame.kind, data, frame.start)?;
            self.values[frame.node] = value;
            self.state[frame.node] = State::Done;
            self.arena.truncate(frame.start);
        }
        if self.state[root] != State::Done {
            return Err(document_error("the root was not decoded"));
        }
        Ok(std::mem::take(&mut self.values[root]))
    }

    /// Node `node` refers to `child`, which is being built: a cycle.
    fn cycle(&self, node: usize, child: usize) -> GraphError {
        let label = match self.type_of(node) {
            Some(key) => format!("node {node} (`{key}`)"),
            None => format!("node {node}"),
        };
        let e = GraphError::new(
            GraphErrorKind::Cycle,
            format!("{label} refers to node {child}, which refers back to it (a cycle)"),
        )
        .with_node(node);
        match self.type_of(node) {
            Some(key) => e.with_type_key(key),
            None => e,
        }
    }

    /// Reads node `i`'s type and child indices; marks it active.
    fn open(&mut self, i: usize) -> Result<Frame, GraphError> {
        let nodes: &'d [Json<'a>] = self.nodes;
        let node = &nodes[i];
        let Json::Object(_) = node else {
            return Err(
                document_error(format!("a node is an object, got {}", node.kind()))
                    .in_node(i, None),
            );
        };
        if let Some(name) = node.duplicate_member() {
            let key = match node.get("type") {
                Some(Json::Str(k)) => Some(&**k),
                _ => None,
            };
            return Err(GraphError::duplicate_member(name, "a node").in_node(i, key));
        }
        let key = match node.get("type") {
            Some(Json::Str(k)) => k,
            Some(other) => {
                return Err(document_error(format!(
                    "`type` must be a string, got {}",
                    other.kind()
                ))
                .in_node(i, None))
            }
            None => return Err(document_error("missing `type`").in_node(i, None)),
        };
        let kind = self.kind_of(i, key)?;
        let start = self.arena.len();
        self.children(kind, node.get("data"))
            .map_err(|e| self.in_node(i, e))?;
        self.state[i] = State::Active;
        Ok(Frame {
            node: i,
            kind,
            start,
            len: self.arena.len() - start,
            cursor: 0,
        })
    }

    /// Builds node `i`, of type `key` with `data`, whose children (all before it) are built: the
    /// fast path. `None` for anything `load` would have to look at.
    #[allow(clippy::ptr_arg)] // as in `kind_of`
    fn build_in_order(
        &mut self,
        i: usize,
        key: &Cow<'a, str>,
        data: Option<&Json<'a>>,
    ) -> Option<()> {
        let kind = match self.streamed.take() {
            Some((at, kind)) if at == i => kind,
            _ => self.kind_of(i, key).ok()?,
        };
        if let (Kind::Object(info), Some(Json::Object(members))) = (kind, data) {
            return self.build_object_in_order(i, info, members);
        }
        self.arena.clear();
        self.children(kind, data).ok()?;
        if self.arena.iter().any(|&c| c >= i) {
            return None;
        }
        let value = self.build(i, kind, data, 0).ok()?;
        self.values.push(value);
        Some(())
    }

    /// `build_in_order` for a reflected object: `children` and `build` in one pass over
    /// the members, with the same result.
    fn build_object_in_order(
        &mut self,
        i: usize,
        info: &'static TypeInfo,
        members: &[(Cow<'a, str>, Json<'a>)],
    ) -> Option<()> {
        let refl = info.reflection();
        // Members usually come in the order of the fields: try the next one first.
        let mut in_order = refl.reflected_fields();
        let mut entries = std::mem::take(&mut self.entries);
        entries.clear();
        let mut ok = true;
        for (name, value) in members {
            let field = match in_order.next() {
                // (A key the reader matched to the field is the field's own name.)
                Some(f) if core::ptr::eq(f.name(), name.as_ref()) || f.name() == name => f,
                _ => match refl.field(name) {
                    Some(f) => f,
                    None => {
                        ok = false;
                        break;
                    }
                },
            };
            let v = if field.is_inline_pod() {
                match inline_value(field, value) {
                    Ok(v) => v,
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            } else {
                match value {
                    Json::Int(c) if (0..i as i64).contains(c) => self.child(*c as usize),
                    _ => {
                        ok = false;
                        break;
                    }
                }
            };
            entries.push((field.name(), Some(v)));
        }
        let built = if ok {
            let mut src = FieldSource::new(info.key(), &mut entries);
            reflection::create_from_source(info, &mut src).ok()
        } else {
            None
        };
        entries.clear();
        self.entries = entries;
        self.values.push(Any::from(built?));
        Some(())
    }

    /// Pushes the child indices of a node of kind `kind` with `data` on the arena.
    ///
    /// # Errors
    ///
    /// As the node's data requires; the caller names the node.
    fn children(&mut self, kind: Kind, data: Option<&Json<'_>>) -> Result<(), GraphError> {
        match kind {
            _ if kind.has_children().is_some() => {
                let Some(Json::Array(items)) = data else {
                    return Err(GraphError::new(
                        GraphErrorKind::Data,
                        "`data` must be an array of node indices",
                    ));
                };
                if kind.has_children() == Some(BuiltinShape::Entries) && items.len() % 2 != 0 {
                    return Err(GraphError::new(
                        GraphErrorKind::Data,
                        "`data` must list keys and values in pairs (an even count)",
                    ));
                }
                for item in items {
                    let c = self.index(item)?;
                    self.arena.push(c);
                }
            }
            Kind::Object(info) => {
                let Some(Json::Object(members)) = data else {
                    return Err(GraphError::new(
                        GraphErrorKind::Data,
                        "`data` must be an object of fields",
                    ));
                };
                let refl = info.reflection();
                for (name, value) in members {
                    let field = refl.field(name).ok_or_else(|| no_field(info, name))?;
                    if !field.is_inline_pod() {
                        let c = self.index(value).map_err(|e| e.in_field(name))?;
                        self.arena.push(c);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A child index, checked; the caller names the node (and field).
    fn index(&self, item: &Json<'_>) -> Result<usize, GraphError> {
        let message = match item {
            Json::Int(c) => match usize::try_from(*c) {
                Ok(c) if c < self.count => return Ok(c),
                _ => format!(
                    "node index {c} is out of range (the graph has {} nodes)",
                    self.nodes.len()
                ),
            },
            other => format!("expected a node index, got {}", other.kind()),
        };
        Err(GraphError::new(GraphErrorKind::NodeIndex, message))
    }

    #[allow(clippy::ptr_arg)] // a key borrowed from the text is cached, others are not
    fn kind_of(&mut self, i: usize, key: &Cow<'a, str>) -> Result<Kind, GraphError> {
        let recent = self.recent.iter().flatten();
        let bytes = key.as_bytes();
        if let Some(&(_, k)) = recent
            .into_iter()
            .find(|(r, _)| json::short_eq(r.as_bytes(), bytes))
        {
            return Ok(k);
        }
        if let Some(&k) = self.types.get(key.as_ref()) {
            if let Cow::Borrowed(key) = key {
                self.remember(key, k);
            }
            return Ok(k);
        }
        let cow = key;
        let key: &str = key;
        let kind = match key {
            "None" => Kind::None,
            "int" => Kind::Int,
            "bool" => Kind::Bool,
            "float" => Kind::Float,
            "DataType" => Kind::DataType,
            "Device" => Kind::Device,
            _ => loadable_type(key).map_err(|e| e.in_node(i, None))?,
        };
        if let Cow::Borrowed(key) = cow {
            self.types.insert(key, kind);
            self.remember(key, kind);
        }
        Ok(kind)
    }

    /// Enters a key (borrowed from the text) in `recent`, over the oldest.
    #[inline]
    fn remember(&mut self, key: &'a str, kind: Kind) {
        self.recent[self.next_recent] = Some((key, kind));
        self.next_recent = (self.next_recent + 1) % RECENT;
    }

    fn child(&self, c: usize) -> Any {
        self.values[c].clone()
    }

    /// Builds node `i` of kind `kind` from `data`; its children are built, and listed
    /// on the arena from `start`.
    fn build(
        &mut self,
        i: usize,
        kind: Kind,
        data: Option<&Json<'_>>,
        start: usize,
    ) -> Result<Any, GraphError> {
        match kind {
            Kind::None | Kind::Int | Kind::Bool | Kind::Float | Kind::DataType | Kind::Device => {
                build_literal(kind, data)
            }
            Kind::Builtin(info, hooks) => self.build_builtin(info, hooks, data, start),
            Kind::Object(info) => self.build_object(info, data, start),
        }
        .map_err(|e| self.in_node(i, e))
    }

    /// A built-in of type `info` from its data (of the shape its hooks say), with its
    /// children (items, or keys and values in turn) listed from `start`.
    fn build_builtin(
        &self,
        info: &'static TypeInfo,
        hooks: &'static BuiltinHooks,
        data: Option<&Json<'_>>,
        start: usize,
    ) -> Result<Any, GraphError> {
        let kids = &self.arena[start..];
        // (The children go to the built-in straight from the built nodes.)
        let mut items = kids.iter().map(|&c| self.child(c));
        let mut entries = kids
            .chunks_exact(2)
            .map(|pair| (self.child(pair[0]), self.child(pair[1])));
        let parts = match hooks.shape {
            BuiltinShape::Items => Parts::Items(&mut items),
            BuiltinShape::Entries => Parts::Entries(&mut entries),
            BuiltinShape::Ints => Parts::Ints(Cow::Owned(
                data.and_then(read_ints)
                    .ok_or_else(|| bad_data("an array of integers", data))?,
            )),
            BuiltinShape::Text => match data {
                Some(Json::Str(s)) => Parts::Text(Cow::Borrowed(s)),
                _ => return Err(bad_data("a string", data)),
            },
            BuiltinShape::Bytes => match data {
                Some(Json::Str(s)) => {
                    Parts::Bytes(Cow::Owned(B64.decode(s.as_bytes()).map_err(|e| {
                        GraphError::new(GraphErrorKind::Data, format!("bad base64: {e}"))
                            .with_source(e)
                    })?))
                }
                _ => return Err(bad_data("a base64 string", data)),
            },
            BuiltinShape::Integer => match data {
                Some(Json::Str(s)) => Parts::Integer(Cow::Borrowed(s)),
                _ => return Err(bad_data("a decimal integer string", data)),
            },
            BuiltinShape::Tensor => Parts::Tensor(read_tensor(data, info.key())?),
            _ => return Err(cannot_load(info.key())),
        };
        (hooks.build)(parts).map_err(|e| built_error(info.key(), hooks.shape, e))
    }

    /// A reflected object of type `info` from its `{field: value}` data, with its
    /// node-valued fields' children listed from `start` (in the members' order), through
    /// [`create_from_source`](reflection::create_from_source).
    ///
    /// # Errors
    ///
    /// [`Data`](GraphErrorKind::Data) for data that is not an object,
    /// [`Field`](GraphErrorKind::Field) for a field that is unknown, of the wrong kind,
    /// missing or given twice.
    fn build_object(
        &mut self,
        info: &'static TypeInfo,
        data: Option<&Json<'_>>,
        start: usize,
    ) -> Result<Any, GraphError> {
        let Some(Json::Object(members)) = data else {
            return Err(bad_data("an object of fields", data));
        };
        let refl = info.reflection();
        let kids = &self.arena[start..];
        let mut entries = std::mem::take(&mut self.entries);
        entries.clear();
        let mut next_kid = 0;
        for (name, value) in members {
            let Some(field) = refl.field(name) else {
                return Err(no_field(info, name));
            };
            let v = if field.is_inline_pod() {
                inline_value(field, value).map_err(|e| e.in_field(name))?
            } else {
                let c = kids[next_kid];
                next_kid += 1;
                self.child(c)
            };
            entries.push((field.name(), Some(v)));
        }
        let mut src = FieldSource::new(info.key(), &mut entries);
        let built = reflection::create_from_source(info, &mut src);
        entries.clear();
        self.entries = entries;
        built.map(Any::from).map_err(field_error)
    }
}

/// The registered type `key` names, if it is an object type that loading can build.
///
/// # Errors
///
/// [`UnknownType`](GraphErrorKind::UnknownType) for a key that is not registered,
/// [`Unsupported`](GraphErrorKind::Unsupported) for a type that cannot be built from
/// fields (functions, modules, errors, opaque types), [`Abstract`](GraphErrorKind::Abstract)
/// for an `#[object(abstract)]` type; the caller names the node.
fn loadable_type(key: &str) -> Result<Kind, GraphError> {
    let Some(info) = registry::type_info_by_key(key) else {
        return Err(GraphError::new(
            GraphErrorKind::UnknownType,
            format!("unknown type key `{key}`"),
        )
        .with_type_key(key));
    };
    let refl = info.reflection();
    if let (true, Some(hooks)) = (info.is_object(), refl.builtin()) {
        return Ok(Kind::Builtin(info, hooks));
    }
    if !info.is_object() || refl.is_opaque() || !refl.can_create() {
        return Err(cannot_load(key));
    }
    if info.is_abstract() {
        return Err(GraphError::new(
            GraphErrorKind::Abstract,
            format!("`{key}` is abstract: a graph holds only its subtypes"),
        )
        .with_type_key(key));
    }
    Ok(Kind::Object(info))
}

/// `` `{key}` cannot be loaded from a JSON graph ``.
fn cannot_load(key: &str) -> GraphError {
    GraphError::new(
        GraphErrorKind::Unsupported,
        format!("`{key}` cannot be loaded from a JSON graph"),
    )
    .with_type_key(key)
}

/// A built-in's refusal of its parts, as a graph error: memory as memory, parts it
/// cannot hold as data (``bad `ffi.BigInt` text: …``).
fn built_error(key: &str, shape: BuiltinShape, e: BuiltinError) -> GraphError {
    let kind = match e.kind() {
        BuiltinErrorKind::Memory => GraphErrorKind::Memory,
        BuiltinErrorKind::Unsupported | BuiltinErrorKind::NotBuiltin => GraphErrorKind::Unsupported,
        _ => GraphErrorKind::Data,
    };
    let what = match shape {
        BuiltinShape::Integer | BuiltinShape::Text => "text",
        _ => "data",
    };
    GraphError::builtin(kind, Some(format!("bad `{key}` {what}: ")), e)
}

/// `` `data` must be {what}, got {kind} ``.
fn bad_data(what: &str, data: Option<&Json<'_>>) -> GraphError {
    GraphError::new(
        GraphErrorKind::Data,
        format!(
            "`data` must be {what}, got {}",
            data.map_or("nothing", Json::kind)
        ),
    )
}

/// The node of a literal: `None`, `int`, `bool`, `float`, `DataType`, `Device`.
fn build_literal(kind: Kind, data: Option<&Json<'_>>) -> Result<Any, GraphError> {
    Ok(match (kind, data) {
        (Kind::None, _) => Any::default(),
        (Kind::Int, Some(Json::Int(v))) => Any::from(*v),
        (Kind::Int, _) => return Err(bad_data("an integer (in the i64 range)", data)),
        (Kind::Bool, Some(Json::Bool(v))) => Any::from(*v),
        (Kind::Bool, _) => return Err(bad_data("a boolean", data)),
        (Kind::Float, Some(Json::Float(v))) => Any::from(*v),
        (Kind::Float, Some(Json::Int(v))) => Any::from(*v as f64),
        (Kind::Float, _) => return Err(bad_data("a number", data)),
        (Kind::DataType, Some(Json::Str(s))) => Any::from(read_data_type(s)?),
        (Kind::DataType, _) => return Err(bad_data("a data type string", data)),
        (Kind::Device, _) => Any::from(
            data.and_then(read_device)
                .ok_or_else(|| bad_data("[device_type, device_id]", data))?,
        ),
        _ => unreachable!("build_literal is called for literal kinds only"),
    })
}

/// `` `{type}` has no field `{name}` ``.
fn no_field(info: &TypeInfo, name: &str) -> GraphError {
    GraphError::new(
        GraphErrorKind::Field,
        format!("`{}` has no field `{name}`", info.key()),
    )
    .with_field(name)
}

/// An error of [`create_from_source`](reflection::create_from_source): a field missing,
/// extra, given twice or of the wrong kind, or a type that cannot be built. The message
/// stays the reflection's, and so does the `Error` kind it converts into.
fn field_error(e: ReflectError) -> GraphError {
    let kind = match e.kind() {
        ReflectErrorKind::UnknownType => GraphErrorKind::UnknownType,
        ReflectErrorKind::Abstract => GraphErrorKind::Abstract,
        _ => GraphErrorKind::Field,
    };
    let field = e.field().map(str::to_owned);
    let e = GraphError::wrap(kind, Error::from(e));
    match field {
        Some(name) => e.with_field(&name),
        None => e,
    }
}
