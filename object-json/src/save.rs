//! Saving: [`to_json_graph`] walks the value with its own work list (any depth),
//! numbers every distinct value once, children before parents, and writes each node's
//! line as soon as its children have indices.

use object_containers::{Array, BigInt, Dict, List, Map, NDArray, Shape};
use object_core::reflection::{self, FieldInfo, FieldReader, ObjectFields, ReflectError, ValueRef};
use object_core::type_index as ti;
use object_core::{Any, Bytes, DataType, Device, Error, ObjectPtr, ObjectRef, TypeError};

use crate::data::{
    data_type_text, graph_key, write_device, write_inline, write_ints, write_literal, Style, B64,
};
use crate::error::{GraphError, GraphErrorKind};
use crate::json;
use crate::tensor::write_tensor;
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
    let mut w = Saver {
        style,
        ..Saver::default()
    };
    let mut out = " ".repeat(ROOM);
    let root = w.add(value, &mut out)?;
    let mut head = String::with_capacity(ROOM);
    head.push('{');
    style.key(&mut head, "root_index");
    json::write_u64(&mut head, root as u64);
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
    /// The node up to its first field's value: `{"type":"key","data":{"name":`
    /// (`{"type":"key","data":{` without fields).
    head: String,
    /// Every reflected field, with the text before its value.
    fields: Vec<FormField>,
    /// Reads the type's fields in place.
    reader: FieldReader,
}

/// A reflected field of a [`TypeForm`].
struct FormField {
    info: &'static FieldInfo,
    /// Its position in the type's whole table (`TypeReflection::fields`).
    at: usize,
    /// Written as a literal in the node (else as a child's node index).
    inline: bool,
    /// The text before its value: for the first field, nothing (`head` has it); for
    /// the others, `,"name":`.
    before: String,
}

/// A distinct value reached, and where its node stands.
struct Slot {
    value: Any,
    /// Its node index once written, else `QUEUED` or `ACTIVE`.
    state: usize,
    /// Whether the table has it (else it is reached through one position).
    in_table: bool,
}

struct Saver {
    /// The layout.
    style: Style,
    /// Every distinct value reached, by slot (in the order first reached).
    slots: Vec<Slot>,
    /// The slots (with their hashes), found by value (see `hash_value` and
    /// `same_value`). Objects reached through one position only are not entered.
    table: hashbrown::HashTable<(usize, u64)>,
    hasher: foldhash::fast::FixedState,
    /// The child slots of the nodes being written: one range per node on the stack
    /// (pushed when it is visited, popped when it is written).
    arena: Vec<usize>,
    /// Reflected types' forms, and their positions by type index (`NO_FORM` for none
    /// yet; type indices are dense, so a table beats a hash map here).
    forms: Vec<TypeForm>,
    form_index: Vec<u32>,
    count: usize,
    /// The slot whose children are being entered (its value is out of the slot
    /// meanwhile, see `visit`), else `NONE_ENTERING`.
    entering: usize,
}

/// In `Saver::entering`: no slot's children are being entered.
const NONE_ENTERING: usize = usize::MAX;

impl Default for Saver {
    fn default() -> Self {
        Saver {
            style: Style::COMPACT,
            slots: Vec::new(),
            table: hashbrown::HashTable::new(),
            hasher: foldhash::fast::FixedState::default(),
            arena: Vec::new(),
            forms: Vec::new(),
            form_index: Vec::new(),
            count: 0,
            entering: NONE_ENTERING,
        }
    }
}

enum Task {
    Visit(usize),
    /// Write the node of `slot`, whose child slots are `arena[start..]`, with the
    /// form `form` if it is a reflected object.
    Emit {
        slot: usize,
        start: usize,
        form: Option<usize>,
    },
}

/// The hash of a value, consistent with `same_value`: objects other than strings and
/// bytes (which compare by content) by address, everything else as `Any` hashes.
fn hash_value(hasher: &foldhash::fast::FixedState, v: &Any) -> u64 {
    use std::hash::BuildHasher as _;
    match v.as_object() {
        Some(o) if !matches!(v.type_index(), ti::STRING | ti::BYTES) => {
            hasher.hash_one(ObjectPtr::as_ptr(o) as usize)
        }
        _ => hasher.hash_one(v),
    }
}

/// `Any`'s equality, with a shortcut for objects compared by identity.
fn same_value(a: &Any, b: &Any) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y))
            if !matches!(a.type_index(), ti::STRING | ti::BYTES)
                && !matches!(b.type_index(), ti::STRING | ti::BYTES) =>
        {
            ObjectPtr::as_ptr(x) == ObjectPtr::as_ptr(y)
        }
        _ => a == b,
    }
}

/// The position in `forms` of the form of `v`'s reflected type (made on first use), or
/// an error if `v` is not a reflected object.
#[inline]
fn form_of(
    forms: &mut Vec<TypeForm>,
    index: &mut Vec<u32>,
    v: &Any,
    style: Style,
) -> Result<usize, GraphError> {
    match index.get(v.type_index() as usize) {
        Some(&i) if i != NO_FORM => Ok(i as usize),
        _ => new_form(forms, index, v, style),
    }
}

/// In `form_index`: no form made yet for that type index.
const NO_FORM: u32 = u32::MAX;

/// Makes the form of `v`'s reflected type and enters it in `index` (see `form_of`).
#[cold]
fn new_form(
    forms: &mut Vec<TypeForm>,
    index: &mut Vec<u32>,
    v: &Any,
    style: Style,
) -> Result<usize, GraphError> {
    let obj = reflected(v)?;
    let mut head = String::from(style.node_type);
    json::write_str(&mut head, graph_key(v));
    head.push_str(style.data);
    head.push('{');
    let info = obj.type_info();
    let fields = info
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
            FormField {
                info: f,
                at,
                inline: f.is_inline_pod(),
                before: name,
            }
        })
        .collect();
    forms.push(TypeForm {
        head,
        fields,
        reader: FieldReader::new(info),
    });
    let (at, form) = (v.type_index() as usize, forms.len() - 1);
    if index.len() <= at {
        index.resize(at + 1, NO_FORM);
    }
    index[at] = form as u32;
    Ok(form)
}

impl Saver {
    /// Writes `root` and what it reaches to `out`, children first; returns the root's
    /// index.
    fn add(&mut self, root: &Any, out: &mut String) -> Result<usize, GraphError> {
        let root = self.intern(root.clone());
        let mut stack = vec![Task::Visit(root)];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(slot) => self.visit(out, slot, &mut stack)?,
                Task::Emit { slot, start, form } => self.write(out, slot, start, form)?,
            }
        }
        self.node_of(root)
    }

    /// Visits `slot` if it is queued: lists its children (queueing the new ones) and
    /// pushes the tasks that write them, then it.
    fn visit(
        &mut self,
        out: &mut String,
        slot: usize,
        stack: &mut Vec<Task>,
    ) -> Result<(), GraphError> {
        match self.slots[slot].state {
            ACTIVE => {
                let key = self.slots[slot].value.type_key();
                Err(GraphError::new(
                    GraphErrorKind::Cycle,
                    format!("cannot save a cycle: a `{key}` contains itself"),
                )
                .with_type_key(key))
            }
            QUEUED => {
                self.slots[slot].state = ACTIVE;
                let start = self.arena.len();
                // The value is taken out of its slot while its children are entered
                // (which may move the slots), and put back; the table skips the slot
                // meanwhile (`entering`). A child that is the value itself (a cycle)
                // is not found in the table then: it gets a slot of its own, whose
                // visit meets this one, still `ACTIVE`, so the cycle is reported one
                // level down.
                let v = std::mem::take(&mut self.slots[slot].value);
                self.entering = slot;
                let form = self.enter_children(&v);
                self.entering = NONE_ENTERING;
                self.slots[slot].value = v;
                let form = form?;
                if self.arena.len() == start {
                    // A leaf: written now.
                    return self.write(out, slot, start, form);
                }
                stack.push(Task::Emit { slot, start, form });
                // Reversed, so children are written in order; those written already
                // need no visit.
                for &kid in self.arena[start..].iter().rev() {
                    if self.slots[kid].state >= ACTIVE {
                        stack.push(Task::Visit(kid));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Writes the node of `slot` (whose children are written) and numbers it.
    #[inline]
    fn write(
        &mut self,
        out: &mut String,
        slot: usize,
        start: usize,
        form: Option<usize>,
    ) -> Result<(), GraphError> {
        self.emit(out, slot, start, form)?;
        self.arena.truncate(start);
        self.slots[slot].state = self.count;
        self.count += 1;
        Ok(())
    }

    /// The slot of `v`, new (and queued) if it was not reached before.
    #[inline(always)]
    fn intern(&mut self, v: Any) -> usize {
        if let Some(o) = v.as_object() {
            if !matches!(v.type_index(), ti::STRING | ti::BYTES) && ObjectPtr::strong_count(o) == 2
            {
                // Held by `v` and by the one position it was read from: no other
                // position reaches it (the saver holds every object it has reached),
                // so it is new and needs no entry in the table.
                return self.new_slot(v, false);
            }
        }
        self.intern_in_table(v)
    }

    /// The slot of `v`, found in (or entered into) the table.
    #[inline(never)]
    fn intern_in_table(&mut self, v: Any) -> usize {
        let v = canonical_nan(v);
        let hash = hash_value(&self.hasher, &v);
        let (slots, entering) = (&self.slots, self.entering);
        // The slot being entered holds a stand-in (`None`) meanwhile: not compared, or
        // a `None` child met while entering it would be taken for it.
        if let Some(&(slot, _)) = self.table.find(hash, |&(s, _)| {
            s != entering && same_value(&slots[s].value, &v)
        }) {
            return slot;
        }
        let slot = self.slots.len();
        self.table.insert_unique(hash, (slot, hash), |&(_, h)| h);
        self.new_slot(v, true)
    }

    fn new_slot(&mut self, v: Any, in_table: bool) -> usize {
        let slot = self.slots.len();
        self.slots.push(Slot {
            value: v,
            state: QUEUED,
            in_table,
        });
        slot
    }

    /// The node index of a slot, which must be written already (else the value
    /// reaches itself).
    #[inline]
    fn node_of(&self, slot: usize) -> Result<usize, GraphError> {
        match self.slots[slot].state {
            i if i < ACTIVE => Ok(i),
            _ => Err(cycle_through(&self.slots[slot].value)),
        }
    }

    /// Enters one child: its slot, pushed on the arena.
    #[inline]
    fn enter(&mut self, kid: Any) {
        let s = self.intern(kid);
        self.arena.push(s);
    }

    /// Enters the values the node of `v` refers to (queueing the new ones), and pushes
    /// their slots on the arena, in the order its data lists them; returns the form of
    /// a reflected object.
    fn enter_children(&mut self, v: &Any) -> Result<Option<usize>, GraphError> {
        match v.type_index() {
            ti::NONE
            | ti::INT
            | ti::BOOL
            | ti::FLOAT
            | ti::DATA_TYPE
            | ti::DEVICE
            | ti::SMALL_STR
            | ti::STRING
            | ti::BYTES
            | ti::SHAPE
            | ti::BIG_INT
            | ti::TENSOR => Ok(None),
            ti::ARRAY => {
                let a = Array::<Any>::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                for item in a.iter() {
                    self.enter(item.clone());
                }
                Ok(None)
            }
            ti::MAP => {
                let m = Map::<Any, Any>::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                for (k, val) in m.iter() {
                    self.enter(k.clone());
                    self.enter(val.clone());
                }
                Ok(None)
            }
            // The mutable containers: their items as they are now (a snapshot, so the
            // node is written with the children listed here even if another thread
            // changes the container meanwhile).
            ti::LIST => {
                let l = List::<Any>::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                for item in l.to_array().iter() {
                    self.enter(item.clone());
                }
                Ok(None)
            }
            ti::DICT => {
                let d = Dict::<Any, Any>::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                for (k, val) in d.to_map().iter() {
                    self.enter(k.clone());
                    self.enter(val.clone());
                }
                Ok(None)
            }
            _ => {
                let index = form_of(&mut self.forms, &mut self.form_index, v, self.style)?;
                let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
                let fields = self.forms[index].reader.read(obj);
                for k in 0..self.forms[index].fields.len() {
                    let field = &self.forms[index].fields[k];
                    if !field.inline {
                        let kid = read_child(obj, fields, field)?;
                        self.enter(kid);
                    }
                }
                Ok(Some(index))
            }
        }
    }

    fn emit(
        &mut self,
        out: &mut String,
        slot: usize,
        start: usize,
        form: Option<usize>,
    ) -> Result<(), GraphError> {
        if self.count > 0 {
            out.push(',');
        }
        let (v, kids) = (&self.slots[slot].value, &self.arena[start..]);
        let r = match form {
            // A reflected object (the form was made when it was visited).
            Some(i) => self.emit_object(out, v, kids, &self.forms[i]),
            None => self.emit_value(out, v, kids),
        };
        if !self.slots[slot].in_table {
            // Reached through one position only, so done with: released while it is
            // in the cache, rather than in a sweep over every object at the end.
            self.slots[slot].value = Any::default();
        }
        r
    }

    /// The rest of a reflected object's node: its key, and `{field: value}` with
    /// inline fields as literals and the others as the node indices of `kids`.
    fn emit_object(
        &self,
        out: &mut String,
        v: &Any,
        kids: &[usize],
        form: &TypeForm,
    ) -> Result<(), GraphError> {
        let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
        out.push_str(&form.head);
        let mut kids = kids.iter();
        let fields = form.reader.read(obj);
        for FormField {
            info: field,
            at,
            inline,
            before,
        } in &form.fields
        {
            out.push_str(before);
            if *inline {
                let written = match fields.and_then(|f| f.get(*at)) {
                    Some(ValueRef::Value(v)) => write_inline(out, field, v),
                    // (Errors are reported as `get_field` words them.)
                    _ => write_inline(out, field, read_field(obj, field)?.view()),
                };
                written.map_err(|e| {
                    let (name, key) = (field.name(), obj.type_key());
                    GraphError::new(e.kind(), format!("field `{name}` of `{key}`: {e}"))
                        .with_field(name)
                        .with_type_key(key)
                        .with_source(e)
                })?;
            } else {
                let kid = kids.next().ok_or_else(|| {
                    GraphError::new(GraphErrorKind::Field, "a field changed while saving")
                        .with_field(field.name())
                        .with_type_key(obj.type_key())
                })?;
                json::write_u64(out, self.node_of(*kid)? as u64);
            }
        }
        out.push_str("}}");
        Ok(())
    }

    /// The rest of the node of a value that is not a reflected object: its type and
    /// data (node indices of `kids` for arrays and maps).
    fn emit_value(&self, out: &mut String, v: &Any, kids: &[usize]) -> Result<(), GraphError> {
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
            ti::SMALL_STR | ti::STRING => json::write_str(out, v.as_str().unwrap_or("")),
            ti::BYTES => {
                let b = Bytes::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                json::write_str(out, &B64.encode(b.as_bytes()));
            }
            ti::ARRAY | ti::MAP | ti::LIST | ti::DICT => {
                // Array and list items, or map and dict keys and values in turn.
                out.push('[');
                for (i, &kid) in kids.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.style.comma);
                    }
                    json::write_u64(out, self.node_of(kid)? as u64);
                }
                out.push(']');
            }
            ti::SHAPE => {
                let s = Shape::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                write_ints(out, s.as_slice(), self.style);
            }
            ti::BIG_INT => {
                // Decimal text, as tvm-ffi writes it.
                let b = BigInt::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                json::write_str(out, &b.to_string());
            }
            ti::TENSOR => {
                let a = NDArray::try_from(v.clone()).map_err(|e| mismatch(v, e))?;
                write_tensor(out, &a, self.style)?;
            }
            _ => return Err(cannot_save(v)),
        }
        out.push('}');
        Ok(())
    }
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

/// A field that is not written inline (an object, a string, an `Any`), as a value the
/// saver keeps: read in place; a string through `get_field`, which keeps it as its
/// object (not a copy), and so are errors, worded as `get_field` words them.
#[inline]
fn read_child(
    obj: &ObjectRef,
    fields: Option<ObjectFields<'_>>,
    field: &FormField,
) -> Result<Any, GraphError> {
    match fields.and_then(|f| f.get(field.at)) {
        Some(ValueRef::Object(o)) => Ok(Any::from(o.clone())),
        Some(ValueRef::Value(v)) => Ok(v.to_any()),
        _ => read_field(obj, field.info),
    }
}

/// The error for a value met again while its own node is being written.
#[cold]
fn cycle_through(v: &Any) -> GraphError {
    let key = v.type_key();
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

/// The value itself, but the canonical NaN for any NaN. NaNs read back as that one
/// NaN, so NaNs that differ in sign or payload must be one node, or the loaded value
/// would save to different text.
fn canonical_nan(v: Any) -> Any {
    if v.type_index() == ti::FLOAT && v.as_float().is_some_and(f64::is_nan) {
        Any::from(f64::NAN)
    } else {
        v
    }
}

fn cannot_save(v: &Any) -> GraphError {
    let key = v.type_key();
    GraphError::new(
        GraphErrorKind::Unsupported,
        format!("cannot save a `{key}` as a JSON graph"),
    )
    .with_type_key(key)
}

/// A value whose type index says one type and whose conversion says another (which a
/// well-formed value never is).
fn mismatch(v: &Any, e: TypeError) -> GraphError {
    GraphError::new(GraphErrorKind::Unsupported, e.to_string())
        .with_type_key(v.type_key())
        .with_source(e)
}

/// The object behind `v`, if it is a reflected (non-opaque) object.
fn reflected(v: &Any) -> Result<&ObjectRef, GraphError> {
    let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
    if obj.type_info().reflection().is_opaque() {
        return Err(cannot_save(v));
    }
    Ok(obj)
}
