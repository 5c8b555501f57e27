//! Saving: [`to_json_graph`] walks the value with its own work list (any depth),
//! numbers every distinct value once, children before parents, and writes each node's
//! line as soon as its children have indices.

use object_containers::Map;
use object_core::builtin::{self, BuiltinHooks, BuiltinShape, Contents};
use object_core::reflection::{self, FieldInfo, FieldKind, FieldReader, ReflectError, ValueRef};
use object_core::type_index as ti;
use object_core::{Any, AnyView, DataType, Device, Error, ObjectPtr, ObjectRef};

use crate::data::{
    data_type_text, graph_key, write_device, write_inline, write_ints, write_literal, Style, B64,
};
use crate::error::{GraphError, GraphErrorKind};
use crate::json;
use crate::tensor::write_tensor;
use crate::text::{push_i64, push_u64, Piece};
use base64::Engine as _;

/// Writes `value` and everything it reaches as a JSON graph (see the
/// [crate docs](crate) for the format), in the compact form tvm-ffi writes (no white
/// space; [`to_json_graph_pretty`] writes one node a line). A value reached twice —
/// the same object, or an equal string or number — is written once.
///
/// # Examples
///
/// ```
/// use object_containers::{Any, Array};
/// use object_json::to_json_graph;
///
/// let s = Any::from("shared");
/// let value = Any::from(Array::<Any>::from(vec![Any::from(1), s.clone(), s]));
/// assert_eq!(
///     to_json_graph(&value).unwrap(),
///     r#"{"root_index":2,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"shared"},{"type":"ffi.Array","data":[0,1,1]}]}"#
/// );
/// ```
///
/// # Errors
///
/// - [`Unsupported`](GraphErrorKind::Unsupported) for a value that has no graph form:
///   functions, modules, errors, opaque pointers, an object type declared `opaque` that
///   is not a core container, an unsigned field beyond `i64::MAX` (with
///   [`field`](GraphError::field)), a `DataType` whose text does not read back as it (a
///   custom type code, zero bits or lanes), an array the host cannot read;
/// - [`Cycle`](GraphErrorKind::Cycle) for a value that contains itself (possible
///   only through the mutable containers `ffi.List` and `ffi.Dict`, or a type whose
///   fields are changed through interior mutability);
/// - [`Memory`](GraphErrorKind::Memory) when an array's bytes cannot be copied.
///
/// [`type_key`](GraphError::type_key) is the type of the value refused.
pub fn to_json_graph(value: &Any) -> Result<String, GraphError> {
    save(value, None, SaveOptions::compact())
}

/// As [`to_json_graph`], in the readable form: one node a line, a space after each
/// `,` and `:`. Both forms load alike.
///
/// # Examples
///
/// ```
/// use object_containers::{Any, Array};
/// use object_json::to_json_graph_pretty;
///
/// let value = Any::from(Array::<Any>::from(vec![Any::from(1), Any::from("x")]));
/// assert_eq!(
///     to_json_graph_pretty(&value).unwrap(),
///     "{\"root_index\": 2, \"nodes\": [\n  \
///      {\"type\": \"int\", \"data\": 1},\n  \
///      {\"type\": \"ffi.String\", \"data\": \"x\"},\n  \
///      {\"type\": \"ffi.Array\", \"data\": [0, 1]}\n]}"
/// );
/// ```
///
/// # Errors
///
/// As [`to_json_graph`].
pub fn to_json_graph_pretty(value: &Any) -> Result<String, GraphError> {
    save(value, None, SaveOptions::pretty())
}

/// As [`to_json_graph`], with a `"metadata"` object holding `metadata`'s entries
/// (values that are `None`, booleans, numbers or strings), which loading ignores.
///
/// # Examples
///
/// ```
/// use object_containers::{Any, Map, String};
/// use object_json::{to_json_graph_with_metadata, GraphErrorKind};
///
/// let mut meta: Map<String, Any> = Map::new();
/// meta.insert(String::from("producer"), Any::from("doc"));
/// let text = to_json_graph_with_metadata(&Any::from(1), &meta).unwrap();
/// assert!(text.ends_with(r#""metadata":{"producer":"doc"}}"#));
///
/// meta.insert(String::from("shape"), Any::from(object_containers::Shape::from([2])));
/// let e = to_json_graph_with_metadata(&Any::from(1), &meta).unwrap_err();
/// assert_eq!((e.kind(), e.field()), (GraphErrorKind::Metadata, Some("shape")));
/// ```
///
/// # Errors
///
/// As [`to_json_graph`], and [`Metadata`](GraphErrorKind::Metadata) for a metadata
/// value of another kind ([`field`](GraphError::field) is its key).
pub fn to_json_graph_with_metadata(
    value: &Any,
    metadata: &Map<object_core::String, Any>,
) -> Result<String, GraphError> {
    save(value, Some(metadata), SaveOptions::compact())
}

/// How [`to_json_graph_with_options`] writes the text.
///
/// ```
/// use object_json::SaveOptions;
/// assert!(!SaveOptions::default().is_pretty(), "compact by default, as tvm-ffi");
/// assert!(SaveOptions::pretty().is_pretty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SaveOptions {
    pretty: bool,
}

impl SaveOptions {
    /// No white space: tvm-ffi's compact form (the default).
    pub const fn compact() -> Self {
        SaveOptions { pretty: false }
    }

    /// One node a line, a space after each `,` and `:`.
    pub const fn pretty() -> Self {
        SaveOptions { pretty: true }
    }

    /// Whether this is the readable form.
    pub const fn is_pretty(&self) -> bool {
        self.pretty
    }

    fn style(self) -> Style {
        if self.pretty {
            Style::PRETTY
        } else {
            Style::COMPACT
        }
    }
}

/// [`to_json_graph`] with every choice: `metadata` (if any) and the layout.
///
/// # Examples
///
/// ```
/// use object_containers::{Any, Map, String};
/// use object_json::{to_json_graph_with_options, SaveOptions};
///
/// let mut meta: Map<String, Any> = Map::new();
/// meta.insert(String::from("v"), Any::from(1));
/// let text = to_json_graph_with_options(&Any::from(true), Some(&meta), SaveOptions::pretty()).unwrap();
/// assert_eq!(text, "{\"root_index\": 0, \"nodes\": [\n  {\"type\": \"bool\", \"data\": true}\n], \"metadata\": {\"v\": 1}}");
/// ```
///
/// # Errors
///
/// As [`to_json_graph_with_metadata`].
pub fn to_json_graph_with_options(
    value: &Any,
    metadata: Option<&Map<object_core::String, Any>>,
    options: SaveOptions,
) -> Result<String, GraphError> {
    save(value, metadata, options)
}

fn save(
    value: &Any,
    metadata: Option<&Map<object_core::String, Any>>,
    options: SaveOptions,
) -> Result<String, GraphError> {
    // The nodes are written after room for the longest header, which is written when
    // the root's index is known (shifting the nodes back over the room left): one
    // buffer, not a second copy of the whole text.
    const ROOM: usize = "{\"root_index\": , \"nodes\": [".len() + 20;
    let style = options.style();
    let mut w = Saver::new(style);
    let mut out = " ".repeat(ROOM);
    let root = w.add(value, &mut out)?;
    let mut head = String::with_capacity(ROOM);
    head.push('{');
    style.key(&mut head, "root_index");
    push_u64(&mut head, root as u64);
    head.push_str(style.comma);
    style.key(&mut head, "nodes");
    head.push('[');
    drop(w);
    out.replace_range(..ROOM, &head);
    out.push_str(style.end);
    out.push(']');
    if let Some(meta) = metadata {
        write_metadata(&mut out, meta, style)?;
    }
    out.push('}');
    Ok(out)
}

/// `, "metadata": {…}`.
fn write_metadata(
    out: &mut String,
    meta: &Map<object_core::String, Any>,
    style: Style,
) -> Result<(), GraphError> {
    out.push_str(style.comma);
    style.key(out, "metadata");
    out.push('{');
    for (i, (k, v)) in meta.iter().enumerate() {
        if i > 0 {
            out.push_str(style.comma);
        }
        json::write_str(out, k.as_str());
        out.push_str(style.colon);
        write_literal(out, v.view()).ok_or_else(|| {
            GraphError::new(
                GraphErrorKind::Metadata,
                format!(
                    "metadata `{}`: expected None, bool, int, float or string, got {}",
                    k.as_str(),
                    v.type_key()
                ),
            )
            .with_field(k.as_str())
            .with_type_key(v.type_key())
        })?;
    }
    out.push('}');
    Ok(())
}

/// A slot's state before it is written: reached but not yet visited, or visited with
/// its children being written. A written slot holds its node index instead.
const QUEUED: usize = usize::MAX;
const ACTIVE: usize = usize::MAX - 1;

/// How a reflected type's nodes are written, worked out once per type: the text
/// between the values, so that a node is a few appends.
struct TypeForm {
    /// The separator and the node up to its first field's value:
    /// `,{"type":"key","data":{"name":` (`,{"type":"key","data":{` without fields); the
    /// first node of a graph is written without the `,`.
    head: Piece,
    /// Every reflected field, with the text before its value.
    fields: Vec<FormField>,
    /// The fields written as node indices, in order: their positions in the type's
    /// whole table, and their entries.
    kids: Vec<(usize, &'static FieldInfo)>,
    /// Reads the type's fields in place.
    reader: FieldReader,
}

/// A reflected field of a [`TypeForm`].
struct FormField {
    info: &'static FieldInfo,
    /// Its position in the type's whole table (`TypeReflection::fields`).
    at: usize,
    /// How its value is written.
    how: Written,
    /// The text before its value: for the first field, nothing (`head` has it); for
    /// the others, `,"name":`.
    before: Piece,
}

/// How a field's value is written in its object's node.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// An integer literal (an `int` field: the common case, written without a look at
    /// the field's kind).
    Int,
    /// Another literal: a `bool`, `float` or `DataType` field.
    Literal,
    /// The node index of the value, a node of its own.
    Node,
}

/// A value the walk reached: borrowed for the whole save where it is stored in place
/// (the root, an object's field read in place, an array's or map's slot), else a copy
/// (an item of a mutable container's snapshot, a value read out of its field).
///
/// Borrowing is sound by the types alone: a field read in place through
/// [`FieldReader`] is borrowed for as long as its object is, and every object reached
/// is borrowed, link by link, from the root, which the caller lends for the whole
/// save. What borrowing saves is a reference-count increment and decrement (two
/// atomic operations, and a write to the object) for every object of a tree.
#[derive(Clone)]
enum Val<'r> {
    Obj(&'r ObjectRef),
    Any(&'r Any),
    Own(Any),
}

impl<'r> Val<'r> {
    /// The object, if the value is one.
    #[inline]
    fn object(&self) -> Option<&ObjectRef> {
        match self {
            Val::Obj(o) => Some(o),
            Val::Any(a) => a.as_object(),
            Val::Own(a) => a.as_object(),
        }
    }

    /// The object, borrowed for the whole save, if the value is one that is borrowed.
    #[inline]
    fn lent_object(&self) -> Option<&'r ObjectRef> {
        match *self {
            Val::Obj(o) => Some(o),
            Val::Any(a) => a.as_object(),
            Val::Own(_) => None,
        }
    }

    fn type_key(&self) -> &'static str {
        self.view().type_key()
    }

    fn view(&self) -> AnyView<'_> {
        match self {
            Val::Obj(o) => AnyView::from(*o),
            Val::Any(a) => a.view(),
            Val::Own(a) => a.view(),
        }
    }

    /// Runs `f` on the value as an `Any` (a borrowed object is cloned for it).
    fn with_any<R>(&self, f: impl FnOnce(&Any) -> R) -> R {
        match self {
            Val::Obj(o) => f(&Any::from((*o).clone())),
            Val::Any(a) => f(a),
            Val::Own(a) => f(a),
        }
    }

    /// The value itself, but the canonical NaN for any NaN. NaNs read back as that one
    /// NaN, so NaNs that differ in sign or payload must be one node, or the loaded
    /// value would save to different text.
    fn canonical_nan(self) -> Self {
        if self.view().as_float().is_some_and(f64::is_nan) {
            Val::Own(Any::from(f64::NAN))
        } else {
            self
        }
    }
}

/// A value the table holds (reached through more than one position, or compared by
/// value: strings, numbers), or a copy reached through one position, and where its
/// node stands.
struct Slot<'r> {
    value: Val<'r>,
    /// Its node index once written, else `QUEUED` or `ACTIVE`.
    state: usize,
    /// Whether the table has it (else it is a copy, released once written).
    in_table: bool,
}

/// A child's entry in `Saver::arena`: `SLOT | s` for the slot `s` (its node index read
/// from the slot when the parent is written), else the node index of an object
/// borrowed for the save and reached through this position only, `PENDING` until
/// that is written.
const SLOT: usize = 1 << (usize::BITS - 1);
const PENDING: usize = SLOT - 1;

/// A task of the walk, two words (so that pushing one is two stores): visit the
/// borrowed object `obj`, whose node index goes to `arena[word]` (an object reached
/// through one position: most objects of a tree, which get no slot and no entry in
/// the table); with no object, visit the slot `word`, or, for `EMIT`, write the node
/// of the top frame.
#[derive(Clone, Copy)]
struct Task<'r> {
    obj: Option<&'r ObjectRef>,
    word: usize,
}

/// In a task with no object: write the top frame's node.
const EMIT: usize = usize::MAX;

impl<'r> Task<'r> {
    const EMIT: Task<'r> = Task {
        obj: None,
        word: EMIT,
    };

    fn slot(slot: usize) -> Self {
        Task {
            obj: None,
            word: slot,
        }
    }
}

/// A node waiting for its children's nodes: a borrowed object (`obj`, whose node
/// index goes to `arena[word]`) or the slot `word`, its children's entries
/// `arena[start..]`, and its form (`NO_FORM` for a value that is not a reflected
/// object).
struct Frame<'r> {
    obj: Option<&'r ObjectRef>,
    word: usize,
    start: usize,
    form: u32,
}

struct Saver<'r> {
    /// The layout.
    style: Style,
    /// The values the table holds, by slot (in the order first reached).
    slots: Vec<Slot<'r>>,
    /// The slots (with their hashes), found by value (see `hash_value` and
    /// `same_value`). Objects reached through one position only are not entered.
    table: hashbrown::HashTable<(usize, u64)>,
    hasher: foldhash::fast::FixedState,
    /// The children of the nodes being written, as `SLOT`/`PENDING`/node-index
    /// entries: one range per node on the stack (pushed when it is visited, popped
    /// when it is written).
    arena: Vec<usize>,
    /// The nodes waiting for their children's.
    frames: Vec<Frame<'r>>,
    /// Reflected types' forms, and their positions by type index (`NO_FORM` for none
    /// yet; type indices are dense, so a table beats a hash map here).
    forms: Vec<TypeForm>,
    form_index: Vec<u32>,
    /// The built-ins met, by position (`BUILTIN | position` in `form_index`).
    builtins: Vec<&'static BuiltinHooks>,
    count: usize,
    /// The slot whose children are being entered (its value is out of the slot
    /// meanwhile, see `visit_slot`), else `NONE_ENTERING`.
    entering: usize,
}

/// In `Saver::entering`: no slot's children are being entered.
const NONE_ENTERING: usize = usize::MAX;

impl Saver<'_> {
    fn new(style: Style) -> Self {
        Saver {
            style,
            slots: Vec::new(),
            table: hashbrown::HashTable::new(),
            hasher: foldhash::fast::FixedState::default(),
            arena: Vec::new(),
            frames: Vec::new(),
            forms: Vec::new(),
            form_index: Vec::new(),
            builtins: Vec::new(),
            count: 0,
            entering: NONE_ENTERING,
        }
    }
}

/// The hash of a value, consistent with `same_value`: objects other than strings and
/// bytes (which compare by content) by address, everything else as `Any` hashes.
fn hash_value(hasher: &foldhash::fast::FixedState, v: AnyView<'_>) -> u64 {
    use std::hash::BuildHasher as _;
    match v.as_object() {
        Some(o) if !builtin::is_value_object(o) => hasher.hash_one(ObjectPtr::as_ptr(o) as usize),
        _ => hasher.hash_one(v),
    }
}

/// `Any`'s equality, with a shortcut for objects compared by identity.
fn same_value(a: AnyView<'_>, b: AnyView<'_>) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y)) if !builtin::is_value_object(x) && !builtin::is_value_object(y) => {
            ObjectPtr::as_ptr(x) == ObjectPtr::as_ptr(y)
        }
        _ => a == b,
    }
}

/// The position in `forms` of the form of `obj`'s reflected type (made on first use),
/// or an error if `obj` is not a reflected object.
#[inline]
fn form_of(
    forms: &mut Vec<TypeForm>,
    index: &mut Vec<u32>,
    obj: &ObjectRef,
    style: Style,
) -> Result<usize, GraphError> {
    match index.get(obj.type_index() as usize) {
        Some(&i) if i != NO_FORM => Ok(i as usize),
        _ => new_form(forms, index, obj, style),
    }
}

/// In `form_index`: no form made yet for that type index (and in a task: a value that
/// is not an object).
const NO_FORM: u32 = u32::MAX;

/// In `form_index` and a task, with a position in `Saver::builtins`: a built-in (no
/// entry with this bit is a form's position; `NO_FORM` has it too).
const BUILTIN: u32 = 1 << 31;

/// Makes the form of `obj`'s reflected type and enters it in `index` (see `form_of`).
#[cold]
fn new_form(
    forms: &mut Vec<TypeForm>,
    index: &mut Vec<u32>,
    obj: &ObjectRef,
    style: Style,
) -> Result<usize, GraphError> {
    let info = obj.type_info();
    if info.reflection().is_opaque() {
        return Err(cannot_save(obj.type_key()));
    }
    let mut head = String::from(",");
    head.push_str(style.node_type);
    json::write_str(&mut head, ti::canonical_key(obj.type_key()));
    head.push_str(style.data);
    head.push('{');
    let fields: Vec<FormField> = info
        .reflection()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_reflected())
        .enumerate()
        .map(|(i, (at, f))| {
            let mut name = String::new();
            style.field_key(&mut name, i == 0, f.name());
            if i == 0 {
                head.push_str(&name);
                name.clear();
            }
            let how = match f.kind() {
                _ if !f.is_inline_pod() => Written::Node,
                FieldKind::Int => Written::Int,
                _ => Written::Literal,
            };
            FormField {
                info: f,
                at,
                how,
                before: Piece::new(&name),
            }
        })
        .collect();
    let kids = fields
        .iter()
        .filter(|f| f.how == Written::Node)
        .map(|f| (f.at, f.info))
        .collect();
    forms.push(TypeForm {
        head: Piece::new(&head),
        fields,
        kids,
        reader: FieldReader::new(info),
    });
    let (at, form) = (obj.type_index() as usize, forms.len() - 1);
    if index.len() <= at {
        index.resize(at + 1, NO_FORM);
    }
    index[at] = form as u32;
    Ok(form)
}

impl<'r> Saver<'r> {
    /// Writes `root` and what it reaches to `out`, children first; returns the root's
    /// index.
    fn add(&mut self, root: &'r Any, out: &mut String) -> Result<usize, GraphError> {
        let mut tasks = Vec::new();
        // The root's entry is the arena's first.
        self.enter(Val::Any(root), &mut tasks);
        while let Some(task) = tasks.pop() {
            match task.obj {
                Some(obj) => self.visit_lent(out, obj, task.word, &mut tasks)?,
                None if task.word == EMIT => {
                    let frame = self.frames.pop().ok_or_else(changed_while_saving)?;
                    match frame.obj {
                        Some(obj) => {
                            self.write_lent(out, obj, frame.word, frame.start, frame.form)?
                        }
                        None => self.write_slot(out, frame.word, frame.start, frame.form)?,
                    }
                }
                None => self.visit_slot(out, task.word, &mut tasks)?,
            }
        }
        self.node_of(self.arena[0])
    }

    /// Visits a borrowed object reached through one position (its node index goes to
    /// `arena[at]`): enters its children (pushing the tasks that visit the new ones),
    /// then writes it at once if every child is written, or makes it wait for them.
    #[inline(always)]
    fn visit_lent(
        &mut self,
        out: &mut String,
        obj: &'r ObjectRef,
        at: usize,
        tasks: &mut Vec<Task<'r>>,
    ) -> Result<(), GraphError> {
        let start = self.arena.len();
        let known = match self.form_index.get(obj.type_index() as usize) {
            Some(&index) if index & BUILTIN == 0 => Some(index as usize),
            _ => None,
        };
        if let Some(leaf) = known.filter(|&index| self.forms[index].kids.is_empty()) {
            // A leaf of a type met before (an integer node, say): written now.
            return self.write_lent(out, obj, at, start, leaf as u32);
        }
        let first_task = self.expect_children(tasks);
        let form = match known {
            // A reflected object of a type met before: its fields entered in line.
            Some(index) => self.enter_fields(obj, index, tasks, Val::Obj)?,
            None => self.enter_children(&Val::Obj(obj), tasks)?,
        };
        if self.no_children_to_visit(first_task, tasks) {
            return self.write_lent(out, obj, at, start, form);
        }
        self.wait(Some(obj), at, start, form);
        Ok(())
    }

    /// Visits the slot `slot` if its node is still to be written: as `visit_lent`.
    fn visit_slot(
        &mut self,
        out: &mut String,
        slot: usize,
        tasks: &mut Vec<Task<'r>>,
    ) -> Result<(), GraphError> {
        match self.slots[slot].state {
            ACTIVE => return Err(contains_itself(self.slots[slot].value.type_key())),
            QUEUED => {}
            _ => return Ok(()),
        }
        self.slots[slot].state = ACTIVE;
        let start = self.arena.len();
        let first_task = self.expect_children(tasks);
        // The value is taken out of its slot while its children are entered (which
        // may move the slots), and put back; the table skips the slot meanwhile
        // (`entering`). A child that is the value itself (a cycle) is not found in the
        // table then: it gets a slot of its own, whose visit meets this one, still
        // `ACTIVE`, so the cycle is reported one level down.
        let v = std::mem::replace(&mut self.slots[slot].value, Val::Own(Any::NONE));
        self.entering = slot;
        let form = self.enter_children(&v, tasks);
        self.entering = NONE_ENTERING;
        self.slots[slot].value = v;
        let form = form?;
        if self.no_children_to_visit(first_task, tasks) {
            return self.write_slot(out, slot, start, form);
        }
        self.wait(None, slot, start, form);
        Ok(())
    }

    /// Pushes the task that writes a node, before the node's children are entered:
    /// their visits go above it (children are entered last to first, so the first
    /// child's visit ends on top). Returns where they start.
    #[inline(always)]
    fn expect_children(&mut self, tasks: &mut Vec<Task<'r>>) -> usize {
        tasks.push(Task::EMIT);
        tasks.len()
    }

    /// Whether no child was pushed to be visited since `expect_children` (every
    /// child is written already): then the node is written at once, and the task
    /// that would have written it is taken back.
    #[inline(always)]
    fn no_children_to_visit(&mut self, first_task: usize, tasks: &mut Vec<Task<'r>>) -> bool {
        if tasks.len() == first_task {
            tasks.pop();
            return true;
        }
        false
    }

    /// Makes a node wait for its children, whose visits are on the task stack above
    /// the one that writes it (see `expect_children`): its frame is pushed.
    #[inline(always)]
    fn wait(&mut self, obj: Option<&'r ObjectRef>, word: usize, start: usize, form: u32) {
        self.frames.push(Frame {
            obj,
            word,
            start,
            form,
        });
    }

    /// Writes the node of a borrowed object (whose children are written), numbers it
    /// and records its index at `arena[at]`, for its parent.
    #[inline(always)]
    fn write_lent(
        &mut self,
        out: &mut String,
        obj: &'r ObjectRef,
        at: usize,
        start: usize,
        form: u32,
    ) -> Result<(), GraphError> {
        match self.forms.get(form as usize) {
            // A reflected object (the form was made when it was visited), in line.
            Some(form) => self.emit_object(out, obj, &self.arena[start..], form)?,
            None => self.emit(out, &Val::Obj(obj), start, form)?,
        }
        self.arena.truncate(start);
        self.arena[at] = self.count;
        self.count += 1;
        Ok(())
    }

    /// Writes the node of the slot `slot` (whose children are written) and numbers it.
    fn write_slot(
        &mut self,
        out: &mut String,
        slot: usize,
        start: usize,
        form: u32,
    ) -> Result<(), GraphError> {
        self.emit(out, &self.slots[slot].value, start, form)?;
        self.arena.truncate(start);
        let slot = &mut self.slots[slot];
        slot.state = self.count;
        if !slot.in_table {
            // A copy reached through one position only, so done with: released while
            // it is in the cache, rather than in a sweep over every slot at the end.
            slot.value = Val::Own(Any::NONE);
        }
        self.count += 1;
        Ok(())
    }

    /// Enters one child: its entry pushed on the arena, and the task that visits it
    /// if its node is still to be written.
    #[inline(always)]
    fn enter(&mut self, kid: Val<'r>, tasks: &mut Vec<Task<'r>>) {
        match kid {
            Val::Obj(o) => self.enter_lent(o, tasks),
            Val::Any(a) => match a.as_object() {
                Some(o) => self.enter_lent(o, tasks),
                None => self.enter_in_table(kid, tasks),
            },
            Val::Own(value) => match value.as_object() {
                // Counts held by the one position it was read from, and by the copy:
                // a slot of its own, outside the table.
                Some(o) if ObjectPtr::strong_count(o) == 2 && !is_text(o) => {
                    let slot = self.new_slot(Val::Own(value), false);
                    self.arena.push(SLOT | slot);
                    tasks.push(Task::slot(slot));
                }
                _ => self.enter_in_table(Val::Own(value), tasks),
            },
        }
    }

    /// Enters a child object borrowed for the whole save (see `enter`).
    #[inline(always)]
    fn enter_lent(&mut self, obj: &'r ObjectRef, tasks: &mut Vec<Task<'r>>) {
        if ObjectPtr::strong_count(obj) == 1 && !is_text(obj) {
            // Held by the one position it was read from: no other position reaches
            // it (nor does a copy: the walk holds every copy it has made until that
            // node is written, which would count), so it is new and needs no slot or
            // entry in the table.
            let at = self.arena.len();
            self.arena.push(PENDING);
            tasks.push(Task {
                obj: Some(obj),
                word: at,
            });
        } else {
            self.enter_in_table(Val::Obj(obj), tasks);
        }
    }

    /// Enters a child the table holds (see `enter`).
    #[inline]
    fn enter_in_table(&mut self, kid: Val<'r>, tasks: &mut Vec<Task<'r>>) {
        let slot = self.intern_in_table(kid);
        self.arena.push(SLOT | slot);
        if self.slots[slot].state >= ACTIVE {
            tasks.push(Task::slot(slot));
        }
    }

    fn new_slot(&mut self, value: Val<'r>, in_table: bool) -> usize {
        self.slots.push(Slot {
            value,
            state: QUEUED,
            in_table,
        });
        self.slots.len() - 1
    }

    /// The slot of `v`, found in (or entered into) the table.
    #[inline(never)]
    fn intern_in_table(&mut self, v: Val<'r>) -> usize {
        let v = v.canonical_nan();
        let hash = hash_value(&self.hasher, v.view());
        let (slots, entering) = (&self.slots, self.entering);
        // The slot being entered holds a stand-in (`None`) meanwhile: not compared, or
        // a `None` child met while entering it would be taken for it.
        if let Some(&(slot, _)) = self.table.find(hash, |&(s, _)| {
            s != entering && same_value(slots[s].value.view(), v.view())
        }) {
            return slot;
        }
        let slot = self.slots.len();
        self.table.insert_unique(hash, (slot, hash), |&(_, h)| h);
        self.new_slot(v, true)
    }

    /// The node index of a child's arena entry, which must be written already (else
    /// the value reaches itself).
    #[inline]
    fn node_of(&self, entry: usize) -> Result<usize, GraphError> {
        if entry & SLOT == 0 {
            return match entry {
                PENDING => Err(changed_while_saving()),
                node => Ok(node),
            };
        }
        let slot = &self.slots[entry & !SLOT];
        match slot.state {
            i if i < ACTIVE => Ok(i),
            _ => Err(cycle_through(slot.value.type_key())),
        }
    }

    /// Enters the values the node of `v` refers to (queueing the new ones), and pushes
    /// their entries on the arena, last to first (the reverse of the order its data
    /// lists them: the node is written reading them back), and the tasks that visit
    /// the new ones on `tasks` (so that the first child's is on top); returns the form of a reflected object
    /// (else `NO_FORM`). Children of a borrowed value are borrowed too; those of a
    /// copy are copies.
    fn enter_children(
        &mut self,
        v: &Val<'r>,
        tasks: &mut Vec<Task<'r>>,
    ) -> Result<u32, GraphError> {
        // Not an object: a scalar (or a string held in the handle), with no children.
        let Some(obj) = v.object() else {
            return Ok(NO_FORM);
        };
        let entry = match self.form_index.get(obj.type_index() as usize) {
            Some(&e) if e != NO_FORM => e,
            _ => self.classify(obj)?,
        };
        if entry & BUILTIN != 0 {
            let hooks = self.builtins[(entry & !BUILTIN) as usize];
            if matches!(hooks.shape, BuiltinShape::Items | BuiltinShape::Entries) {
                self.enter_values(v, hooks, tasks);
            }
            return Ok(entry);
        }
        match v.lent_object() {
            Some(obj) => self.enter_fields(obj, entry as usize, tasks, Val::Obj),
            None => self.enter_fields(obj, entry as usize, tasks, |o| {
                Val::Own(Any::from(o.clone()))
            }),
        }
    }

    /// What `obj`'s type is to the saver (see `form_index`): a built-in, entered in
    /// `builtins`, or a reflected type, whose form is made.
    #[cold]
    fn classify(&mut self, obj: &ObjectRef) -> Result<u32, GraphError> {
        let Some(hooks) = BuiltinHooks::of_object(obj) else {
            return form_of(&mut self.forms, &mut self.form_index, obj, self.style)
                .map(|i| i as u32);
        };
        let entry = BUILTIN | self.builtins.len() as u32;
        self.builtins.push(hooks);
        let at = obj.type_index() as usize;
        if self.form_index.len() <= at {
            self.form_index.resize(at + 1, NO_FORM);
        }
        self.form_index[at] = entry;
        Ok(entry)
    }

    /// Enters the values a built-in container holds (items; entries' keys and values in
    /// turn), last to first: borrowed if the container is, else copies. A mutable
    /// container's are its values as they are now (a snapshot, so the node is written
    /// with the children listed here even if another thread changes it meanwhile).
    fn enter_values(
        &mut self,
        v: &Val<'r>,
        hooks: &'static BuiltinHooks,
        tasks: &mut Vec<Task<'r>>,
    ) {
        if let Some(lent) = v.lent_object() {
            // (Held without its drop glue: only a snapshot owns anything, and goes to
            // `enter_owned`.)
            let contents = core::mem::ManuallyDrop::new((hooks.contents)(lent));
            match &*contents {
                &Contents::Items(items) => {
                    for item in items.iter().rev() {
                        self.enter(Val::Any(item), tasks);
                    }
                }
                Contents::Entries(entries) => {
                    for (k, val) in entries.clone().rev() {
                        self.enter(Val::Any(val), tasks);
                        self.enter(Val::Any(k), tasks);
                    }
                }
                _ => self.enter_owned(core::mem::ManuallyDrop::into_inner(contents), tasks),
            }
            return;
        }
        let Some(obj) = v.object() else { return };
        match (hooks.contents)(obj) {
            Contents::Items(items) => {
                for item in items.iter().rev() {
                    self.enter(Val::Own(item.clone()), tasks);
                }
            }
            Contents::Entries(entries) => {
                for (k, val) in entries.rev() {
                    self.enter(Val::Own(val.clone()), tasks);
                    self.enter(Val::Own(k.clone()), tasks);
                }
            }
            other => self.enter_owned(other, tasks),
        }
    }

    /// Enters a snapshot's values, last to first (see `enter_values`).
    fn enter_owned(&mut self, contents: Contents<'_>, tasks: &mut Vec<Task<'r>>) {
        match contents {
            Contents::SnapshotItems(items) => {
                for item in items.into_iter().rev() {
                    self.enter(Val::Own(item), tasks);
                }
            }
            Contents::SnapshotEntries(entries) => {
                for (k, val) in entries.into_iter().rev() {
                    self.enter(Val::Own(val), tasks);
                    self.enter(Val::Own(k), tasks);
                }
            }
            _ => {}
        }
    }

    /// Enters the fields of a reflected object that are written as nodes; `lift` makes
    /// the value of a field read in place (borrowed for the whole save if `obj` is, a
    /// copy if not).
    #[inline(always)]
    fn enter_fields<'o>(
        &mut self,
        obj: &'o ObjectRef,
        index: usize,
        tasks: &mut Vec<Task<'r>>,
        lift: impl Fn(&'o ObjectRef) -> Val<'r>,
    ) -> Result<u32, GraphError> {
        let form = &self.forms[index];
        if form.kids.is_empty() {
            return Ok(index as u32);
        }
        let fields = form.reader.read(obj);
        for k in (0..form.kids.len()).rev() {
            let (at, info) = self.forms[index].kids[k];
            let kid = match fields.and_then(|f| f.get(at)) {
                Some(ValueRef::Object(o)) => lift(o),
                Some(ValueRef::Value(v)) => Val::Own(v.to_any()),
                // A string (kept as its object, not a copy), and errors, as `get_field`
                // words them.
                _ => Val::Own(read_field(obj, info)?),
            };
            self.enter(kid, tasks);
        }
        Ok(index as u32)
    }

    /// The node of `v`, whose children's entries are `arena[start..]`: a reflected
    /// object through its form, any other value by its kind.
    #[inline]
    fn emit(
        &self,
        out: &mut String,
        v: &Val<'_>,
        start: usize,
        form: u32,
    ) -> Result<(), GraphError> {
        let kids = &self.arena[start..];
        match (self.forms.get(form as usize), v.object()) {
            // A reflected object (the form was made when it was visited).
            (Some(form), Some(obj)) => self.emit_object(out, obj, kids, form),
            (None, Some(obj)) if form & BUILTIN != 0 && form != NO_FORM => {
                let hooks = self.builtins[(form & !BUILTIN) as usize];
                self.emit_builtin(out, obj, hooks, kids)
            }
            _ => v.with_any(|v| self.emit_value(out, v)),
        }
    }

    /// The rest of a reflected object's node: its key, and `{field: value}` with
    /// inline fields as literals and the others as the node indices of `kids`.
    #[inline(always)]
    fn emit_object(
        &self,
        out: &mut String,
        obj: &ObjectRef,
        kids: &[usize],
        form: &TypeForm,
    ) -> Result<(), GraphError> {
        if self.count == 0 {
            // (The first node has no separator.)
            out.push_str(&form.head.as_str()[1..]);
        } else {
            form.head.push_to(out);
        }
        // (The children's entries are last to first.)
        let mut kids = kids.iter().rev();
        let fields = form.reader.read(obj);
        for FormField {
            info: field,
            at,
            how,
            before,
        } in &form.fields
        {
            if !before.is_empty() {
                before.push_to(out);
            }
            match how {
                Written::Node => {
                    let kid = kids.next().ok_or_else(|| {
                        changed_while_saving()
                            .with_field(field.name())
                            .with_type_key(obj.type_key())
                    })?;
                    push_u64(out, self.node_of(*kid)? as u64);
                }
                how => {
                    let v = fields.and_then(|f| f.get(*at));
                    if let (Written::Int, Some(ValueRef::Value(v))) = (how, v) {
                        if let Some(i) = v.as_int() {
                            push_i64(out, i);
                            continue;
                        }
                    }
                    write_literal_field(out, obj, field, v)?;
                }
            }
        }
        out.push_str("}}");
        Ok(())
    }
    /// The node of a built-in: its type, and its data by its shape (node indices of
    /// `kids` for items and entries).
    fn emit_builtin(
        &self,
        out: &mut String,
        obj: &ObjectRef,
        hooks: &'static BuiltinHooks,
        kids: &[usize],
    ) -> Result<(), GraphError> {
        let key = obj.type_key();
        if self.count > 0 {
            out.push(',');
        }
        out.push_str(self.style.node_type);
        json::write_str(out, key);
        out.push_str(self.style.data);
        if let BuiltinShape::Items | BuiltinShape::Entries = hooks.shape {
            // Items, or keys and values in turn (the contents were read when the
            // children were entered: a mutable container is not read again).
            out.push('[');
            // (The children's entries are last to first.)
            for (i, &kid) in kids.iter().rev().enumerate() {
                if i > 0 {
                    out.push_str(self.style.comma);
                }
                push_u64(out, self.node_of(kid)? as u64);
            }
            out.push(']');
        } else {
            match (hooks.contents)(obj) {
                Contents::Ints(ints) => write_ints(out, ints, self.style),
                Contents::Bytes(bytes) => json::write_str(out, &B64.encode(bytes)),
                // (Decimal digits for an integer, as tvm-ffi writes a `BigInt`.)
                Contents::Text(text) => json::write_str(out, text),
                Contents::Integer(digits) => json::write_str(out, &digits),
                Contents::Tensor(t) => write_tensor(out, &t, key, self.style)?,
                _ => return Err(cannot_save(key)),
            }
        }
        out.push('}');
        Ok(())
    }

    /// The node of a value that is not an object (a scalar, or a string held in the
    /// handle): its type and data.
    fn emit_value(&self, out: &mut String, v: &Any) -> Result<(), GraphError> {
        if self.count > 0 {
            out.push(',');
        }
        let type_index = v.type_index();
        out.push_str(self.style.node_type);
        json::write_str(out, graph_key(v));
        if type_index == ti::NONE {
            out.push('}');
            return Ok(());
        }
        out.push_str(self.style.data);
        match type_index {
            ti::INT | ti::BOOL | ti::FLOAT => {
                write_literal(out, v.view());
            }
            ti::DATA_TYPE => {
                let d = v.as_data_type().unwrap_or(DataType::new(0, 0, 0));
                json::write_str(out, &data_type_text(d)?);
            }
            ti::DEVICE => write_device(out, v.as_device().unwrap_or(Device::cpu()), self.style),
            ti::SMALL_STR => json::write_str(out, v.as_str().unwrap_or("")),
            _ => return Err(cannot_save(v.type_key())),
        }
        out.push('}');
        Ok(())
    }
}

/// A field written as a literal (a `bool`, `float` or `DataType`, or an `int` that was
/// not read in place as one), checked against the field's kind; `v` is its value read
/// in place, if it was (else it is read through `get_field`, which words the error).
fn write_literal_field(
    out: &mut String,
    obj: &ObjectRef,
    field: &'static FieldInfo,
    v: Option<ValueRef<'_>>,
) -> Result<(), GraphError> {
    let written = match v {
        Some(ValueRef::Value(v)) => write_inline(out, field, v),
        _ => write_inline(out, field, read_field(obj, field)?.view()),
    };
    written.map_err(|e| {
        let (name, key) = (field.name(), obj.type_key());
        GraphError::new(e.kind(), format!("field `{name}` of `{key}`: {e}"))
            .with_field(name)
            .with_type_key(key)
            .with_source(e)
    })
}

/// A reflected field's value, read through `get_field`.
///
/// # Errors
///
/// [`Unsupported`](GraphErrorKind::Unsupported) for a value with no `Any` form (an
/// unsigned integer beyond `i64::MAX`), naming the field.
#[inline]
fn read_field(obj: &ObjectRef, field: &'static FieldInfo) -> Result<Any, GraphError> {
    match reflection::get_field(obj, field) {
        Ok(v) => Ok(v),
        Err(e) => Err(unreadable_field(obj, field, e)),
    }
}

/// Whether `obj` is a string or bytes: values the table holds by content.
#[inline(always)]
fn is_text(obj: &ObjectRef) -> bool {
    builtin::is_value_object(obj)
}

/// The error for a node whose children are not what its visit entered: a field with
/// no child entry, or a child not written when its parent is (the walk's order rules
/// both out unless a value changed while it was saved).
#[cold]
fn changed_while_saving() -> GraphError {
    GraphError::new(GraphErrorKind::Field, "a field changed while saving")
}

/// The error for a value visited while its own children are being entered.
#[cold]
fn contains_itself(key: &'static str) -> GraphError {
    GraphError::new(
        GraphErrorKind::Cycle,
        format!("cannot save a cycle: a `{key}` contains itself"),
    )
    .with_type_key(key)
}

/// The error for a value met again while its own node is being written.
#[cold]
fn cycle_through(key: &'static str) -> GraphError {
    GraphError::new(
        GraphErrorKind::Cycle,
        format!("cannot save a cycle through a `{key}`"),
    )
    .with_type_key(key)
}

// Out of line, so that `read_field` (the in-place reads' fallback, for strings: once a
// node in some graphs) stays small.
#[cold]
#[inline(never)]
fn unreadable_field(obj: &ObjectRef, field: &FieldInfo, e: ReflectError) -> GraphError {
    GraphError::wrap(GraphErrorKind::Unsupported, Error::from(e))
        .with_field(field.name())
        .with_type_key(obj.type_key())
}

fn cannot_save(key: &'static str) -> GraphError {
    GraphError::new(
        GraphErrorKind::Unsupported,
        format!("cannot save a `{key}` as a JSON graph"),
    )
    .with_type_key(key)
}
