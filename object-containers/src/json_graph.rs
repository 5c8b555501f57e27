//! The JSON graph format of the tvm-ffi ecosystem (`ToJSONGraph` / `FromJSONGraph`):
//! any value, including any graph of reflected objects, with no per-type code.
//!
//! ```json
//! {"root_index": 3, "nodes": [
//!   {"type": "int", "data": 1},
//!   {"type": "ffi.String", "data": "x"},
//!   {"type": "tour.Var", "data": {"name": 1}},
//!   {"type": "ffi.Array", "data": [0, 2, 2]}
//! ]}
//! ```
//!
//! - `nodes` lists every distinct value once, children before parents; `root_index`
//!   names the value itself. A value reached twice (the same object, or an equal
//!   string or number) is one node, and after loading it is one object again.
//! - `data` is a literal for `int`, `float` and `bool` (`None` has none), a string for
//!   `ffi.String` and `DataType`, base64 for `ffi.Bytes`, `[type, id]` for `Device`,
//!   node indices for `ffi.Array`, a flat `[k0, v0, k1, v1, …]` of node indices for
//!   `ffi.Map`, integers for `ffi.Shape`, `{"dtype", "shape", "device", "data"}` for an
//!   `ffi.Tensor` (`NDArray`; the bytes contiguous, little-endian, in base64: the one
//!   node kind the C++ peer has no form for; the device is always `cpu:0`, that of the
//!   copy loading makes), and `{field: value}` for a reflected object,
//!   where non-optional `bool`, `int`, `float` and `DataType` fields are written inline
//!   and every other field is a node index.
//! - Strings load as `ffi.String` objects (short ones too), so that a map or array
//!   of them fits a typed field such as `Map<String, Any>`.
//! - Loading looks types up by key and builds objects through
//!   [`reflection::create`](object_core::reflection::create); every problem is an
//!   `Error` naming the node (and field), never a panic, and nothing half-built leaks.
//!
//! ```
//! use object_containers::{from_json_graph, to_json_graph, Array, Any};
//!
//! let s = Any::from("shared");
//! let value = Any::from(Array::<Any>::from(vec![Any::from(1), s.clone(), s]));
//! let text = to_json_graph(&value).unwrap();
//! assert_eq!(
//!     text,
//!     "{\"root_index\": 2, \"nodes\": [\n  \
//!      {\"type\": \"int\", \"data\": 1},\n  \
//!      {\"type\": \"ffi.String\", \"data\": \"shared\"},\n  \
//!      {\"type\": \"ffi.Array\", \"data\": [0, 1, 1]}\n]}"
//! );
//! assert_eq!(format!("{:?}", from_json_graph(&text).unwrap()), r#"Any([1, "shared", "shared"])"#);
//! ```

use std::borrow::Cow;
use std::collections::HashMap;

use base64::Engine as _;
use object_core::reflection::{self, FieldInfo, FieldKind, FieldSource};
use object_core::registry::{self, TypeInfo};
use object_core::type_index as ti;
use object_core::{Any, Bytes, DataType, Device, Error, ObjectPtr, ObjectRef};

use crate::json::{self, Json};
use crate::{Array, Map, NDArray, NDArrayError, Shape};

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn graph_error(message: impl Into<std::string::String>) -> Error {
    Error::value_error(message)
}

// ---------------------------------------------------------------------------------
// Saving.
// ---------------------------------------------------------------------------------

/// Writes `value` and everything it reaches as a JSON graph (see the
/// [module docs](self)).
///
/// # Errors
///
/// A `TypeError` for a value that has no graph form: functions, modules, errors,
/// opaque pointers, an object type declared `opaque` that is not a core container, or
/// an unsigned field beyond `i64::MAX`, or a `DataType` whose text does not read back as
/// it (a custom type code, zero bits or lanes).
pub fn to_json_graph(value: &Any) -> Result<std::string::String, Error> {
    save(value, None)
}

/// As [`to_json_graph`], with a `"metadata"` object holding `metadata`'s entries
/// (values that are `None`, booleans, numbers or strings).
///
/// ```
/// use object_containers::{to_json_graph_with_metadata, Any, Map, String};
/// let meta: Map<String, Any> = [(String::from("producer"), Any::from("doc"))].into_iter().collect();
/// let text = to_json_graph_with_metadata(&Any::from(1), &meta).unwrap();
/// assert!(text.ends_with("\"metadata\": {\"producer\": \"doc\"}}"));
/// ```
///
/// # Errors
///
/// As [`to_json_graph`], and a `TypeError` for a metadata value of another kind.
pub fn to_json_graph_with_metadata(
    value: &Any,
    metadata: &Map<object_core::String, Any>,
) -> Result<std::string::String, Error> {
    save(value, Some(metadata))
}

fn save(
    value: &Any,
    metadata: Option<&Map<object_core::String, Any>>,
) -> Result<std::string::String, Error> {
    // The nodes are written after room for the longest header, which is written when
    // the root's index is known (shifting the nodes back over the room left): one
    // buffer, not a second copy of the whole text.
    const ROOM: usize = "{\"root_index\": , \"nodes\": [".len() + 20;
    let mut w = Saver::default();
    w.nodes.push_str(&" ".repeat(ROOM));
    let root = w.add(value)?;
    let mut head = std::string::String::with_capacity(ROOM);
    head.push_str("{\"root_index\": ");
    json::write_i64(&mut head, root as i64);
    head.push_str(", \"nodes\": [");
    let mut out = std::mem::take(&mut w.nodes);
    drop(w);
    out.replace_range(..ROOM, &head);
    out.push_str("\n]");
    if let Some(meta) = metadata {
        out.push_str(", \"metadata\": {");
        for (i, (k, v)) in meta.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            json::write_str(&mut out, k.as_str());
            out.push_str(": ");
            write_literal(&mut out, v).ok_or_else(|| {
                Error::type_error(format!(
                    "metadata `{}`: expected None, bool, int, float or string, got {}",
                    k.as_str(),
                    v.type_key()
                ))
            })?;
        }
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// `None`, booleans, numbers and strings as JSON literals.
fn write_literal(out: &mut std::string::String, v: &Any) -> Option<()> {
    match v.type_index() {
        ti::NONE => out.push_str("null"),
        ti::BOOL => out.push_str(if v.as_bool()? { "true" } else { "false" }),
        ti::INT => json::write_i64(out, v.as_int()?),
        ti::FLOAT => json::write_f64(out, v.as_float()?),
        _ => json::write_str(out, v.as_str()?),
    }
    Some(())
}

/// A slot's state before it is written: reached but not yet visited, or visited with
/// its children being written. A written slot holds its node index instead.
const QUEUED: usize = usize::MAX;
const ACTIVE: usize = usize::MAX - 1;

/// How a reflected type's nodes are written, worked out once per type.
struct TypeForm {
    /// The escaped type key.
    key: std::string::String,
    /// Every reflected field, with its escaped name and `: `.
    fields: Vec<(&'static FieldInfo, std::string::String)>,
}

#[derive(Default)]
struct Saver {
    /// Every distinct value reached, by slot (in the order first reached).
    values: Vec<Any>,
    /// Per slot: its node index once written, else `QUEUED` or `ACTIVE`.
    state: Vec<usize>,
    /// Per slot: whether the table has it (else it is reached through one position).
    in_table: Vec<bool>,
    /// The slots (with their hashes), found by value (see `hash_value` and
    /// `same_value`). Objects reached through one position only are not entered.
    table: hashbrown::HashTable<(usize, u64)>,
    hasher: foldhash::fast::FixedState,
    /// The child slots of the nodes being written: one range per node on the stack
    /// (pushed when it is visited, popped when it is written).
    arena: Vec<usize>,
    /// Reflected types' forms, and their positions by type index.
    forms: Vec<TypeForm>,
    form_index: FastMap<u32, usize>,
    /// The node lines written so far.
    nodes: std::string::String,
    count: usize,
    /// Scratch for child lists.
    children: Vec<Any>,
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

/// The form of `v`'s reflected type (made on first use), or an error if `v` is not a
/// reflected object.
/// The position in `forms` of the form of `v`'s reflected type (made on first use), or
/// an error if `v` is not a reflected object.
fn form_of(
    forms: &mut Vec<TypeForm>,
    index: &mut FastMap<u32, usize>,
    v: &Any,
) -> Result<usize, Error> {
    match index.entry(v.type_index()) {
        std::collections::hash_map::Entry::Occupied(e) => Ok(*e.get()),
        std::collections::hash_map::Entry::Vacant(e) => {
            let obj = reflected(v)?;
            let mut key = std::string::String::new();
            json::write_str(&mut key, graph_key(v));
            let fields = obj
                .type_info()
                .reflection()
                .reflected_fields()
                .map(|f| {
                    let mut name = std::string::String::new();
                    json::write_str(&mut name, f.name());
                    name.push_str(": ");
                    (f, name)
                })
                .collect();
            forms.push(TypeForm { key, fields });
            Ok(*e.insert(forms.len() - 1))
        }
    }
}

impl Saver {
    /// Writes `root` and what it reaches, children first; returns the root's index.
    fn add(&mut self, root: &Any) -> Result<usize, Error> {
        let root = self.intern(root.clone());
        let mut stack = vec![Task::Visit(root)];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(slot) => match self.state[slot] {
                    ACTIVE => {
                        return Err(Error::value_error(format!(
                            "cannot save a cycle: a `{}` contains itself",
                            self.values[slot].type_key()
                        )))
                    }
                    QUEUED => {
                        self.state[slot] = ACTIVE;
                        let mut kids = std::mem::take(&mut self.children);
                        kids.clear();
                        let form = self.list_children(slot, &mut kids);
                        let start = self.arena.len();
                        for kid in kids.drain(..) {
                            let s = self.intern(kid);
                            self.arena.push(s);
                        }
                        self.children = kids;
                        let form = form?;
                        stack.push(Task::Emit { slot, start, form });
                        // Reversed, so children are written in order; those written
                        // already need no visit.
                        for &kid in self.arena[start..].iter().rev() {
                            if self.state[kid] >= ACTIVE {
                                stack.push(Task::Visit(kid));
                            }
                        }
                    }
                    _ => {}
                },
                Task::Emit { slot, start, form } => {
                    self.emit(slot, start, form)?;
                    self.arena.truncate(start);
                    self.state[slot] = self.count;
                    self.count += 1;
                }
            }
        }
        match self.state[root] {
            i if i < ACTIVE => Ok(i),
            _ => Err(Error::value_error("the root was not written")),
        }
    }

    /// The slot of `v`, new (and queued) if it was not reached before.
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
        let v = canonical_nan(v);
        let hash = hash_value(&self.hasher, &v);
        let values = &self.values;
        if let Some(&(slot, _)) = self.table.find(hash, |&(s, _)| same_value(&values[s], &v)) {
            return slot;
        }
        let slot = self.values.len();
        self.table.insert_unique(hash, (slot, hash), |&(_, h)| h);
        self.new_slot(v, true)
    }

    fn new_slot(&mut self, v: Any, in_table: bool) -> usize {
        let slot = self.values.len();
        self.values.push(v);
        self.state.push(QUEUED);
        self.in_table.push(in_table);
        slot
    }

    /// The node index of a child slot, which must be written already.
    fn node_of(&self, slot: usize) -> Result<usize, Error> {
        match self.state[slot] {
            i if i < ACTIVE => Ok(i),
            _ => Err(Error::value_error(format!(
                "cannot save a cycle through a `{}`",
                self.values[slot].type_key()
            ))),
        }
    }

    /// The values the node of `slot` refers to, in the order its data lists them; and
    /// the form of a reflected object.
    fn list_children(&mut self, slot: usize, out: &mut Vec<Any>) -> Result<Option<usize>, Error> {
        let v = &self.values[slot];
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
            | ti::TENSOR => Ok(None),
            ti::ARRAY => {
                out.extend(Array::<Any>::try_from(v.clone())?.iter().cloned());
                Ok(None)
            }
            ti::MAP => {
                for (k, val) in Map::<Any, Any>::try_from(v.clone())?.iter() {
                    out.push(k.clone());
                    out.push(val.clone());
                }
                Ok(None)
            }
            _ => {
                let index = form_of(&mut self.forms, &mut self.form_index, v)?;
                let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
                for (field, _) in &self.forms[index].fields {
                    if !field.is_inline_pod() {
                        out.push(reflection::get_field(obj, field)?);
                    }
                }
                Ok(Some(index))
            }
        }
    }

    fn emit(&mut self, slot: usize, start: usize, form: Option<usize>) -> Result<(), Error> {
        let mut out = std::mem::take(&mut self.nodes);
        if self.count > 0 {
            out.push(',');
        }
        out.push_str("\n  {\"type\": ");
        let form = form.map(|i| &self.forms[i]);
        let r = self.emit_body(&mut out, &self.values[slot], &self.arena[start..], form);
        self.nodes = out;
        if !self.in_table[slot] {
            // Reached through one position only, so done with: released while it is
            // in the cache, rather than in a sweep over every object at the end.
            self.values[slot] = Any::default();
        }
        r
    }

    fn emit_body(
        &self,
        out: &mut std::string::String,
        v: &Any,
        kids: &[usize],
        form: Option<&TypeForm>,
    ) -> Result<(), Error> {
        let type_index = v.type_index();
        if let Some(form) = form {
            // A reflected object (the form was made when it was visited).
            let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
            out.push_str(&form.key);
            out.push_str(", \"data\": {");
            let mut kids = kids.iter();
            for (i, (field, name)) in form.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                if field.is_inline_pod() {
                    let value = reflection::get_field(obj, field)?;
                    write_inline(out, field, &value).map_err(|e| {
                        Error::type_error(format!(
                            "field `{}` of `{}`: {}",
                            field.name(),
                            obj.type_key(),
                            e.message()
                        ))
                    })?;
                } else {
                    let kid = kids
                        .next()
                        .ok_or_else(|| Error::value_error("a field changed while saving"))?;
                    json::write_u64(out, self.node_of(*kid)? as u64);
                }
            }
            out.push_str("}}");
            return Ok(());
        }
        json::write_str(out, graph_key(v));
        if type_index == ti::NONE {
            out.push('}');
            return Ok(());
        }
        out.push_str(", \"data\": ");
        match type_index {
            ti::INT | ti::BOOL | ti::FLOAT => {
                write_literal(out, v);
            }
            ti::DATA_TYPE => {
                let d = v.as_data_type().unwrap_or(DataType::new(0, 0, 0));
                json::write_str(out, &data_type_text(d)?);
            }
            ti::DEVICE => write_device(out, v.as_device().unwrap_or(Device::cpu())),
            ti::SMALL_STR | ti::STRING => json::write_str(out, v.as_str().unwrap_or("")),
            ti::BYTES => {
                let b = Bytes::try_from(v.clone())?;
                json::write_str(out, &B64.encode(b.as_bytes()));
            }
            ti::ARRAY | ti::MAP => {
                // Array items, or map keys and values in turn.
                out.push('[');
                for (i, &kid) in kids.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json::write_u64(out, self.node_of(kid)? as u64);
                }
                out.push(']');
            }
            ti::SHAPE => {
                let s = Shape::try_from(v.clone())?;
                write_ints(out, s.as_slice());
            }
            ti::TENSOR => write_tensor(out, &NDArray::try_from(v.clone())?)?,
            _ => return Err(cannot_save(v)),
        }
        out.push('}');
        Ok(())
    }
}

fn write_ints(out: &mut std::string::String, ints: &[i64]) {
    out.push('[');
    for (i, d) in ints.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        json::write_i64(out, *d);
    }
    out.push(']');
}

/// A device as `[device_type, device_id]`.
fn write_device(out: &mut std::string::String, d: Device) {
    out.push('[');
    json::write_i64(out, d.device_type.into());
    out.push_str(", ");
    json::write_i64(out, d.device_id.into());
    out.push(']');
}

/// A device from `[device_type, device_id]` (both in `i32`).
fn read_device(v: &Json<'_>) -> Option<Device> {
    match v {
        Json::Array(v) => match v.as_slice() {
            [Json::Int(t), Json::Int(i)] => Some(Device::new(
                i32::try_from(*t).ok()?,
                i32::try_from(*i).ok()?,
            )),
            _ => None,
        },
        _ => None,
    }
}

/// An array of integers.
fn read_ints(v: &Json<'_>) -> Option<Vec<i64>> {
    match v {
        Json::Array(items) => items
            .iter()
            .map(|d| match d {
                Json::Int(d) => Some(*d),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// An NDArray's data: `{"dtype": …, "shape": […], "device": [type, id], "data": base64}`,
/// the bytes contiguous, row-major, little-endian.
///
/// The bytes are a host copy (only host-readable arrays — `cpu`, `cuda_host`,
/// `rocm_host`, any device id — give them), and loading makes a CPU array of them, as
/// [`NDArray::deep_copy`] does; so the device written is `cpu:0`, whatever the array's,
/// and saving what was loaded writes the same text.
fn write_tensor(out: &mut std::string::String, a: &NDArray) -> Result<(), Error> {
    if cfg!(target_endian = "big") {
        return Err(Error::type_error(
            "saving an ffi.Tensor writes little-endian bytes, which this big-endian target does not have",
        ));
    }
    let bytes = a.to_bytes().map_err(Error::from)?;
    out.push_str("{\"dtype\": ");
    json::write_str(out, &data_type_text(a.dtype())?);
    out.push_str(", \"shape\": ");
    write_ints(out, a.shape());
    out.push_str(", \"device\": ");
    write_device(out, Device::cpu());
    out.push_str(", \"data\": ");
    // Base64 (no character of it needs escaping) straight into the text, after asking
    // for the room without aborting: the size comes from the array's shape.
    let room = base64::encoded_len(bytes.len(), true)
        .and_then(|n| n.checked_add(2))
        .ok_or(NDArrayError::TooLarge)?;
    out.try_reserve(room)
        .map_err(|_| NDArrayError::AllocationFailed { bytes: room })?;
    out.push('"');
    B64.encode_string(&bytes, out);
    out.push('"');
    out.push('}');
    Ok(())
}

/// An NDArray from its node data (see `write_tensor`): a new CPU array. Any host-readable
/// device (`cpu`, `cuda_host` or `rocm_host`, any id) loads as `cpu:0` (texts saved
/// before the device written was always `cpu:0` may name one); any other device, or a
/// negative id, is an error.
fn read_tensor(data: Option<&Json<'_>>) -> Result<NDArray, std::string::String> {
    let Some(Json::Object(_)) = data else {
        return Err(format!(
            "`data` must be an object with dtype, shape, device and data, got {}",
            data.map_or("nothing", Json::kind)
        ));
    };
    let data = data.ok_or("no data")?;
    if let Json::Object(members) = data {
        if let Some((k, _)) = members
            .iter()
            .find(|(k, _)| !matches!(k.as_ref(), "dtype" | "shape" | "device" | "data"))
        {
            return Err(format!("unknown tensor member `{k}`"));
        }
    }
    let dtype = match data.get("dtype") {
        Some(Json::Str(s)) => s.parse::<DataType>().map_err(|e| format!("dtype: {e}"))?,
        _ => return Err("`dtype` must be a data type string".into()),
    };
    let shape = data
        .get("shape")
        .and_then(read_ints)
        .ok_or("`shape` must be an array of integers")?;
    let device = data
        .get("device")
        .and_then(read_device)
        .ok_or("`device` must be [device_type, device_id] (in the i32 range)")?;
    let bytes = match data.get("data") {
        Some(Json::Str(s)) => B64
            .decode(s.as_bytes())
            .map_err(|e| format!("bad base64: {e}"))?,
        _ => return Err("`data` must be a base64 string".into()),
    };
    if cfg!(target_endian = "big") {
        return Err(
            "an ffi.Tensor holds little-endian bytes, which this big-endian target does not read"
                .into(),
        );
    }
    let device = if crate::ndarray::host_accessible(device) && device.device_id >= 0 {
        Device::cpu()
    } else {
        device // refused by `from_bytes`, with the device in the message
    };
    NDArray::from_bytes(&shape, dtype, device, &bytes).map_err(|e| e.to_string())
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

/// The node type of a value: its type key, with inline strings as `ffi.String`.
fn graph_key(v: &Any) -> &'static str {
    ti::canonical_key(v.type_key())
}

fn cannot_save(v: &Any) -> Error {
    Error::type_error(format!("cannot save a `{}` as a JSON graph", v.type_key()))
}

/// The object behind `v`, if it is a reflected (non-opaque) object.
fn reflected(v: &Any) -> Result<&ObjectRef, Error> {
    let obj = v.as_object().ok_or_else(|| cannot_save(v))?;
    if obj.type_info().reflection().is_opaque() {
        return Err(cannot_save(v));
    }
    Ok(obj)
}

fn write_inline(
    out: &mut std::string::String,
    field: &FieldInfo,
    value: &Any,
) -> Result<(), Error> {
    match field.kind() {
        FieldKind::DataType => {
            let d = value.as_data_type().unwrap_or(DataType::new(0, 0, 0));
            json::write_str(out, &data_type_text(d)?);
        }
        _ => {
            write_literal(out, value);
        }
    }
    Ok(())
}

/// A data type's text, if it reads back as the same type (custom type codes, zero
/// bits or lanes have no such text).
fn data_type_text(d: DataType) -> Result<std::string::String, Error> {
    let text = d.to_string();
    if text.parse::<DataType>() == Ok(d) {
        Ok(text)
    } else {
        Err(Error::type_error(format!(
            "cannot save the DataType {{ code: {}, bits: {}, lanes: {} }}: its text `{text}` does not read back as it",
            d.code, d.bits, d.lanes
        )))
    }
}

// ---------------------------------------------------------------------------------
// Loading.
// ---------------------------------------------------------------------------------

/// Reads a JSON graph back into the value it describes (see the [module docs](self)).
/// Objects reached through one node are one object (pointer-equal) after loading.
///
/// ```
/// use object_containers::{from_json_graph, Any};
/// let v = from_json_graph(r#"{"root_index": 1, "nodes": [{"type": "int", "data": 7},
///                             {"type": "ffi.Array", "data": [0, 0]}]}"#).unwrap();
/// assert_eq!(format!("{v:?}"), "Any([7, 7])");
/// let err = from_json_graph(r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [0]}]}"#)
///     .unwrap_err();
/// assert_eq!(err.message(), "node 0 (`ffi.Array`) refers to node 0, which refers back to it (a cycle)");
/// ```
///
/// # Errors
///
/// A `ValueError` for text that is not JSON (with line and column), a document
/// without the graph's keys, a node index out of range, a cycle, a node whose data does
/// not match its type; a `KeyError` for an unknown type key; and the errors of
/// [`create`](object_core::reflection::create) (missing, extra or wrong-kind field),
/// each naming the node.
///
/// The graph may be of any depth (the loader keeps its own work list, and releasing
/// what it built does not recurse); only the JSON *text* may not nest deeper than 128
/// levels (arrays within objects within …), which no graph document needs: its nodes
/// are a flat list, each at most four levels deep.
pub fn from_json_graph(text: &str) -> Result<Any, Error> {
    match load_in_order(text) {
        Some(v) => Ok(v),
        None => load_general(text),
    }
}

/// The general path of `from_json_graph`: the whole document, then the nodes the root
/// reaches, depth first, with every check.
fn load_general(text: &str) -> Result<Any, Error> {
    let doc = json::parse(text).map_err(|e| {
        graph_error(format!(
            "invalid JSON at line {}, column {}: {}",
            e.line, e.column, e.message
        ))
    })?;
    let Json::Object(_) = &doc else {
        return Err(graph_error(format!(
            "a JSON graph is an object, got {}",
            doc.kind()
        )));
    };
    let nodes = match doc.get("nodes") {
        Some(Json::Array(nodes)) => nodes,
        Some(other) => {
            return Err(graph_error(format!(
                "`nodes` must be an array, got {}",
                other.kind()
            )))
        }
        None => return Err(graph_error("missing `nodes`")),
    };
    let root = match doc.get("root_index") {
        Some(Json::Int(i)) => *i,
        Some(other) => {
            return Err(graph_error(format!(
                "`root_index` must be an integer, got {}",
                other.kind()
            )))
        }
        None => return Err(graph_error("missing `root_index`")),
    };
    let root = usize::try_from(root)
        .ok()
        .filter(|&r| r < nodes.len())
        .ok_or_else(|| {
            graph_error(format!(
                "`root_index` {root} is out of range (the graph has {} nodes)",
                nodes.len()
            ))
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
fn load_in_order(text: &str) -> Option<Any> {
    let mut loader = Loader::new(&[]);
    loader.count = usize::MAX; // not known yet: `build_in_order` checks `c < i`
    let mut ok = true;
    let (doc, count) = json::stream_graph(text, |i, key, data| {
        ok = loader.build_in_order(i, key, data).is_some();
        ok
    })?;
    if !ok {
        return None;
    }
    let Some(Json::Array(_)) = doc.get("nodes") else {
        return None;
    };
    let root = match doc.get("root_index") {
        Some(Json::Int(r)) => usize::try_from(*r).ok().filter(|&r| r < count)?,
        _ => return None,
    };
    loader.values.get_mut(root)?.take()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    New,
    Active,
    Done,
}

/// What a node is, decided once when it is first reached.
#[derive(Clone, Copy)]
enum Kind {
    None,
    Int,
    Bool,
    Float,
    DataType,
    Device,
    Str,
    Bytes,
    Array,
    Map,
    Shape,
    Tensor,
    Object(&'static TypeInfo),
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

struct Loader<'d, 'a> {
    nodes: &'d [Json<'a>],
    /// How many nodes the graph has: child indices are below.
    count: usize,
    values: Vec<Option<Any>>,
    state: Vec<State>,
    arena: Vec<usize>,
    /// Kinds by type key (keys read without escapes only: they borrow the text).
    types: FastMap<&'a str, Kind>,
    entries: Vec<(&'d str, Option<Any>)>,
}

impl<'d, 'a> Loader<'d, 'a> {
    fn new(nodes: &'d [Json<'a>]) -> Self {
        let n = nodes.len();
        Loader {
            nodes,
            count: n,
            values: vec![None; n],
            state: vec![State::New; n],
            arena: Vec::new(),
            types: FastMap::default(),
            entries: Vec::new(),
        }
    }

    /// `node 3 (`tour.Add`)`, or `node 3` when the node has no type string.
    fn node_label(&self, node: usize) -> std::string::String {
        match self.nodes.get(node).and_then(|n| n.get("type")) {
            Some(Json::Str(k)) => format!("node {node} (`{k}`)"),
            _ => format!("node {node}"),
        }
    }

    fn node_error(&self, node: usize, message: impl std::fmt::Display) -> Error {
        graph_error(format!("{}: {message}", self.node_label(node)))
    }

    fn load(mut self, root: usize) -> Result<Any, Error> {
        let mut stack = vec![self.open(root)?];
        while let Some(top) = stack.last_mut() {
            if top.cursor < top.len {
                let child = self.arena[top.start + top.cursor];
                top.cursor += 1;
                match self.state[child] {
                    State::Done => {}
                    State::Active => {
                        return Err(graph_error(format!(
                            "{} refers to node {child}, which refers back to it (a cycle)",
                            self.node_label(top.node)
                        )));
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
            self.values[frame.node] = Some(value);
            self.state[frame.node] = State::Done;
            self.arena.truncate(frame.start);
        }
        self.values[root]
            .take()
            .ok_or_else(|| graph_error("the root was not decoded"))
    }

    /// Reads node `i`'s type and child indices; marks it active.
    fn open(&mut self, i: usize) -> Result<Frame, Error> {
        let nodes: &'d [Json<'a>] = self.nodes;
        let node = &nodes[i];
        let Json::Object(_) = node else {
            return Err(graph_error(format!(
                "node {i}: a node is an object, got {}",
                node.kind()
            )));
        };
        let key = match node.get("type") {
            Some(Json::Str(k)) => k,
            Some(other) => {
                return Err(graph_error(format!(
                    "node {i}: `type` must be a string, got {}",
                    other.kind()
                )))
            }
            None => return Err(graph_error(format!("node {i}: missing `type`"))),
        };
        let kind = self.kind_of(i, key)?;
        let start = self.arena.len();
        self.children(i, kind, node.get("data"))?;
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
        let kind = self.kind_of(i, key).ok()?;
        if let (Kind::Object(info), Some(Json::Object(members))) = (kind, data) {
            return self.build_object_in_order(i, info, members);
        }
        self.arena.clear();
        self.children(i, kind, data).ok()?;
        if self.arena.iter().any(|&c| c >= i) {
            return None;
        }
        let value = self.build(i, kind, data, 0).ok()?;
        self.values.push(Some(value));
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
                Some(f) if f.name() == name => f,
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
        self.values.push(Some(Any::from(built?)));
        Some(())
    }

    /// Pushes the child indices of node `i` (of kind `kind`, with `data`) on the arena.
    fn children(&mut self, i: usize, kind: Kind, data: Option<&Json<'_>>) -> Result<(), Error> {
        let indices = |this: &mut Self, items: &[Json<'_>]| -> Result<(), Error> {
            for item in items {
                let c = this.index(item).map_err(|m| this.node_error(i, m))?;
                this.arena.push(c);
            }
            Ok(())
        };
        match kind {
            Kind::Array | Kind::Map => {
                let Some(Json::Array(items)) = data else {
                    return Err(self.node_error(i, "`data` must be an array of node indices"));
                };
                if matches!(kind, Kind::Map) && items.len() % 2 != 0 {
                    return Err(self.node_error(
                        i,
                        "`data` must list keys and values in pairs (an even count)",
                    ));
                }
                indices(self, items)?;
            }
            Kind::Object(info) => {
                let Some(Json::Object(members)) = data else {
                    return Err(self.node_error(i, "`data` must be an object of fields"));
                };
                let refl = info.reflection();
                for (name, value) in members {
                    let field = refl.field(name).ok_or_else(|| {
                        self.node_error(i, format!("`{}` has no field `{name}`", info.key()))
                    })?;
                    if !field.is_inline_pod() {
                        let c = self
                            .index(value)
                            .map_err(|m| self.node_error(i, format!("field `{name}`: {m}")))?;
                        self.arena.push(c);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A child index, checked; the error names neither node nor field (the caller
    /// adds them).
    fn index(&self, item: &Json<'_>) -> Result<usize, std::string::String> {
        match item {
            Json::Int(c) => usize::try_from(*c)
                .ok()
                .filter(|&c| c < self.count)
                .ok_or_else(|| {
                    format!(
                        "node index {c} is out of range (the graph has {} nodes)",
                        self.nodes.len()
                    )
                }),
            other => Err(format!("expected a node index, got {}", other.kind())),
        }
    }

    #[allow(clippy::ptr_arg)] // a key borrowed from the text is cached, others are not
    fn kind_of(&mut self, i: usize, key: &Cow<'a, str>) -> Result<Kind, Error> {
        if let Some(k) = self.types.get(key.as_ref()) {
            return Ok(*k);
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
            "ffi.String" => Kind::Str,
            "ffi.Bytes" => Kind::Bytes,
            "ffi.Array" => Kind::Array,
            "ffi.Map" => Kind::Map,
            "ffi.Shape" => Kind::Shape,
            "ffi.Tensor" => Kind::Tensor,
            _ => {
                let info = registry::type_info_by_key(key).ok_or_else(|| {
                    Error::new("KeyError", format!("node {i}: unknown type key `{key}`"))
                })?;
                let refl = info.reflection();
                if !info.is_object() || refl.is_opaque() || !refl.can_create() {
                    return Err(Error::type_error(format!(
                        "node {i}: `{key}` cannot be loaded from a JSON graph"
                    )));
                }
                Kind::Object(info)
            }
        };
        if let Cow::Borrowed(key) = cow {
            self.types.insert(key, kind);
        }
        Ok(kind)
    }

    fn child(&self, c: usize) -> Any {
        self.values[c].clone().unwrap_or_default()
    }

    /// Builds node `i` of kind `kind` from `data`; its children are built, and listed
    /// on the arena from `start`.
    fn build(
        &mut self,
        i: usize,
        kind: Kind,
        data: Option<&Json<'_>>,
        start: usize,
    ) -> Result<Any, Error> {
        let bad = |what: &str| {
            self.node_error(
                i,
                format!(
                    "`data` must be {what}, got {}",
                    data.map_or("nothing", Json::kind)
                ),
            )
        };
        let kids = &self.arena[start..];
        Ok(match kind {
            Kind::None => Any::default(),
            Kind::Int => match data {
                Some(Json::Int(v)) => Any::from(*v),
                _ => return Err(bad("an integer (in the i64 range)")),
            },
            Kind::Bool => match data {
                Some(Json::Bool(v)) => Any::from(*v),
                _ => return Err(bad("a boolean")),
            },
            Kind::Float => match data {
                Some(Json::Float(v)) => Any::from(*v),
                Some(Json::Int(v)) => Any::from(*v as f64),
                _ => return Err(bad("a number")),
            },
            Kind::DataType => match data {
                Some(Json::Str(s)) => {
                    Any::from(s.parse::<DataType>().map_err(|e| self.node_error(i, e))?)
                }
                _ => return Err(bad("a data type string")),
            },
            Kind::Device => Any::from(
                data.and_then(read_device)
                    .ok_or_else(|| bad("[device_type, device_id]"))?,
            ),
            // Always an `ffi.String` object, even when short: typed views
            // (`Map<String, _>`, `Array<String>`) take only objects, not inline strings.
            Kind::Str => match data {
                Some(Json::Str(s)) => Any::from(object_core::String::new(s)),
                _ => return Err(bad("a string")),
            },
            Kind::Bytes => match data {
                Some(Json::Str(s)) => {
                    let b = B64
                        .decode(s.as_bytes())
                        .map_err(|e| self.node_error(i, format!("bad base64: {e}")))?;
                    Any::from(Bytes::from(b))
                }
                _ => return Err(bad("a base64 string")),
            },
            Kind::Shape => Any::from(Shape::new(
                &data
                    .and_then(read_ints)
                    .ok_or_else(|| bad("an array of integers"))?,
            )),
            Kind::Tensor => Any::from(read_tensor(data).map_err(|m| self.node_error(i, m))?),
            Kind::Array => {
                let items: Vec<Any> = kids.iter().map(|&c| self.child(c)).collect();
                Any::from(Array::<Any>::from(items))
            }
            Kind::Map => {
                let mut m = Map::<Any, Any>::with_capacity(kids.len() / 2);
                for pair in kids.chunks_exact(2) {
                    m.insert(self.child(pair[0]), self.child(pair[1]));
                }
                Any::from(m)
            }
            Kind::Object(info) => {
                let Some(Json::Object(members)) = data else {
                    return Err(bad("an object of fields"));
                };
                let refl = info.reflection();
                let mut entries = std::mem::take(&mut self.entries);
                entries.clear();
                let mut next_kid = 0;
                for (name, value) in members {
                    let Some(field) = refl.field(name) else {
                        return Err(
                            self.node_error(i, format!("`{}` has no field `{name}`", info.key()))
                        );
                    };
                    let v = if field.is_inline_pod() {
                        inline_value(field, value)
                            .map_err(|m| self.node_error(i, format!("field `{name}`: {m}")))?
                    } else {
                        let c = kids[next_kid];
                        next_kid += 1;
                        self.child(c)
                    };
                    entries.push((field.name(), Some(v)));
                }
                let mut src = FieldSource::new(info.key(), &mut entries);
                let built = reflection::create_from_source(info, &mut src).map_err(Error::from);
                entries.clear();
                self.entries = entries;
                Any::from(
                    built.map_err(|e| {
                        Error::new(e.kind(), self.node_error(i, e.message()).message())
                    })?,
                )
            }
        })
    }
}

/// A field written inline: its literal, checked against the field's kind.
fn inline_value(field: &FieldInfo, value: &Json<'_>) -> Result<Any, std::string::String> {
    match (field.kind(), value) {
        (FieldKind::Bool, Json::Bool(b)) => Ok(Any::from(*b)),
        (FieldKind::Int, Json::Int(v)) => Ok(Any::from(*v)),
        (FieldKind::Float, Json::Float(v)) => Ok(Any::from(*v)),
        (FieldKind::Float, Json::Int(v)) => Ok(Any::from(*v as f64)),
        (FieldKind::DataType, Json::Str(s)) => s
            .parse::<DataType>()
            .map(Any::from)
            .map_err(|e| e.to_string()),
        (_, other) => Err(format!(
            "expected {}, got {}",
            field.static_type_key(),
            other.kind()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_load_as_string_objects() {
        let mut m: Map<object_core::String, Any> = Map::new();
        m.insert(object_core::String::from("k"), Any::from("v"));
        let a: Array<object_core::String> = vec![object_core::String::from("s")].into();
        let root = Any::from(Array::<Any>::from(vec![Any::from(m), Any::from(a)]));
        let loaded = from_json_graph(&to_json_graph(&root).unwrap()).unwrap();
        let items = Array::<Any>::try_from(loaded).unwrap();
        let m = Map::<object_core::String, Any>::try_from(items[0].clone()).unwrap();
        assert_eq!(m.get("k").and_then(|v| v.as_str()), Some("v"));
        let a = Array::<object_core::String>::try_from(items[1].clone()).unwrap();
        assert_eq!(a[0].as_str(), "s");
    }

    #[test]
    fn saved_graphs_take_the_fast_path() {
        let s = Any::from("a string long enough to be an object");
        let inner = Any::from(Array::<Any>::from(vec![Any::from(1), s.clone()]));
        let mut m: Map<Any, Any> = Map::new();
        m.insert(Any::from(2.5), inner.clone());
        m.insert(s.clone(), Any::from(DataType::int(8)));
        let value = Any::from(Array::<Any>::from(vec![
            inner,
            Any::from(m),
            Any::from(Shape::new(&[1, 2])),
            Any::from(Device::cpu()),
            Any::from(Bytes::new(b"xy")),
            Any::default(),
            Any::from(true),
            s,
        ]));
        let text = to_json_graph(&value).unwrap();
        let fast = load_in_order(&text).expect("the fast path");
        assert_eq!(to_json_graph(&fast).unwrap(), text);
        // Forward references and errors take the general path.
        let forward = r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [1]}, {"type": "int", "data": 1}]}"#;
        assert!(load_in_order(forward).is_none());
        assert!(from_json_graph(forward).is_ok());
        assert!(load_in_order(r#"{"root_index": 0, "nodes": [{"type": "nope"}]}"#).is_none());
    }

    /// Mutated graphs: whatever the fast path loads, the general path loads to the
    /// same value (compared by saving both).
    #[test]
    fn the_fast_path_agrees_with_the_general_path() {
        let s = Any::from("a string long enough to be an object");
        let inner = Any::from(Array::<Any>::from(vec![
            Any::from(1),
            s.clone(),
            Any::from(-2.5),
        ]));
        let mut m: Map<Any, Any> = Map::new();
        m.insert(Any::from(2), inner.clone());
        m.insert(s.clone(), Any::from(DataType::int(8)));
        let holder = Any::from(object_core::make_object(Holder {
            base: object_core::Object::new(),
            child: object_core::make_object(object_core::Object::new()),
        }));
        let seeds: Vec<Vec<u8>> = [
            Any::from(Array::<Any>::from(vec![
                inner,
                Any::from(m),
                Any::from(Shape::new(&[1, 2])),
                Any::from(Device::cpu()),
                Any::from(Bytes::new(b"xy")),
                Any::default(),
                Any::from(true),
                holder.clone(),
                s,
            ])),
            holder,
        ]
        .iter()
        .map(|v| to_json_graph(v).unwrap().into_bytes())
        .collect();
        let mut state = 0x1234_5678_u64;
        let mut next = |n: usize| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        };
        // Fewer under valgrind (`OBJECT_TEST_SCALE`, as the integration tests read it).
        let scale = std::env::var("OBJECT_TEST_SCALE")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(1.0);
        let rounds = ((20_000.0 * scale) as usize).max(1_000);
        let mut fast = 0;
        for round in 0..rounds {
            let mut t = seeds[round % seeds.len()].clone();
            for _ in 0..1 + next(2) {
                let at = next(t.len());
                match next(4) {
                    0 => t[at] = b"0123456789"[next(10)],
                    1 => t[at] = b" {}[],:\"-.e1x"[next(13)],
                    2 => {
                        t.remove(at);
                    }
                    _ => t.insert(at, b"0 1,\"[{-"[next(8)]),
                }
            }
            let Ok(text) = std::str::from_utf8(&t) else {
                continue;
            };
            if let Some(v) = load_in_order(text) {
                fast += 1;
                let general = load_general(text).unwrap_or_else(|e| {
                    panic!("the fast path loads, the general path says {e}:\n{text}")
                });
                assert_eq!(
                    to_json_graph(&v).unwrap(),
                    to_json_graph(&general).unwrap(),
                    "{text}"
                );
            }
        }
        assert!(fast > rounds / 50, "{fast} of {rounds}");
    }

    #[test]
    fn nans_are_one_node() {
        let other_nan = f64::from_bits(f64::NAN.to_bits() | 1);
        let values = [f64::NAN, -f64::NAN, other_nan, 1.0].map(Any::from);
        let text = to_json_graph(&Any::from(Array::<Any>::from(values.to_vec()))).unwrap();
        assert_eq!(text.matches("NaN").count(), 1, "{text}");
        let again = to_json_graph(&from_json_graph(&text).unwrap()).unwrap();
        assert_eq!(again, text);
    }

    #[test]
    fn data_types_without_a_text_are_refused() {
        for d in [
            DataType::new(9, 32, 1),
            DataType::new(0, 0, 1),
            DataType::new(2, 32, 0),
        ] {
            let e = to_json_graph(&Any::from(d)).unwrap_err();
            assert_eq!(e.kind(), "TypeError");
            assert!(e.message().contains("does not read back"), "{e}");
        }
        let handle = Any::from(DataType::new(DataType::OPAQUE_HANDLE, 32, 1));
        let text = to_json_graph(&handle).unwrap();
        assert_eq!(from_json_graph(&text).unwrap(), handle);
    }

    #[derive(object_core::Object)]
    #[repr(C)]
    #[object(key = "json_graph.tests.Holder", final)]
    struct Holder {
        base: object_core::Object,
        child: object_core::ObjectRef,
    }

    #[test]
    fn a_bad_field_index_names_the_node_once() {
        let holder = object_core::make_object(Holder {
            base: object_core::Object::new(),
            child: object_core::make_object(object_core::Object::new()),
        });
        assert!(to_json_graph(&Any::from(holder)).is_ok());
        let text = r#"{"root_index": 0, "nodes": [{"type": "json_graph.tests.Holder", "data": {"child": 9}}]}"#;
        assert_eq!(
            from_json_graph(text).unwrap_err().message(),
            "node 0 (`json_graph.tests.Holder`): field `child`: node index 9 is out of range (the graph has 1 nodes)"
        );
        let text = r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [9]}]}"#;
        assert_eq!(
            from_json_graph(text).unwrap_err().message(),
            "node 0 (`ffi.Array`): node index 9 is out of range (the graph has 1 nodes)"
        );
    }
}
