//! Run-time field tables: object types registered at run time *with fields* (by
//! Python's `@py_class`, C's `obj_type_register_fields`, or Rust's
//! [`TypeSpec::fields`](crate::registry::TypeSpec::fields)), whose objects every pass
//! reads through the table alone, as it reads a derive type's.
//!
//! # Layout
//!
//! Such a type extends its nearest ancestor that a Rust struct owns (`ffi.Object`, or
//! any creatable derive type that is not final, `T`): its objects start with a `T` (so
//! a down-cast to `T` or to any of its ancestors reads them correctly), then one *cell*
//! per run-time field, the ancestors' cells first. The word just before the object
//! holds the address of the type's [`RuntimeFields`]: what the deleter, which is the same
//! for every such type and may not read the header, finds the table through (it lies
//! before the object because only the table knows how large the `T` is):
//!
//! ```text
//! | (padding) | &RuntimeFields | T (header, T's fields) | cell 0 | cell 1 | … |
//!                              ^ the object's address; every field's offset is from here
//! ```
//!
//! A cell holds its field as the Rust type a derive struct would hold it in
//! ([`FieldType`] → storage): `bool`, `i64`, `f64`, `DataType`, `Device`, an enum's
//! integer (of the enum's `#[repr]`), an `object_core::String` (a 16-byte `Any` cell),
//! an `Option<ObjectRef>` (one pointer, null for `None`) for object fields, an `Any` for
//! `Any` fields and for optional scalars. So the field table's entries are the derive's
//! own (made by [`reflected_field`](super::raw::reflected_field) for the storage type,
//! with the declared kind, static type key and flags), and every reader — `get_attr`,
//! the printer, structural equality's in-place plans, the JSON graph, `transform`, C's
//! `obj_type_fields` — reads the cells as it reads a struct's fields.
//!
//! Objects are built through the table as a derived type's are (`reflection::build`,
//! with no code of any Rust type's own): the whole block is allocated (the table's
//! [`TypeAlloc`], from the size-class pool when it fits), the word written, the Rust
//! ancestor's fields taken from the source through their entries' own steps (the
//! ancestor's table is the prefix of this one), then each cell from the source or its
//! default, checked against its declared type, and last the header, with the fields
//! deleter. A rebuild (`transform::mutate`) copies the Rust part through the same
//! steps (taking the children of its fields) and each cell, taking the new children
//! in table order, each checked again. A failure part-way drops what was written and
//! gives the block back.
//!
//! The deleter (`alloc::fields`) reads the table from the word, drops the cells, drops
//! the `T` as `drop_in_place::<T>` does (the ancestor's `TypeAlloc::drop_value`, kept in
//! the table: a derived type may implement `Drop` itself), and frees the block.
//!
//! Fenced: the cells are written, read and dropped in place, at the offsets the table
//! gives, and the word before the object is written and read.

use core::alloc::Layout;
use core::fmt;
use std::borrow::Cow;

use super::build;
use super::create::FieldSource;
use super::enums::{EnumInfo, EnumRepr};
use super::error::ReflectError;
use super::field::{FieldFlags, FieldInfo, FieldKind, TypeReflection};
use super::per_table::Kept;
use super::raw::reflected_field;
use super::{AttrVisitor, FieldValue, ValueRef};
use crate::alloc::{DropValue, TypeAlloc};
use crate::any::{Any, TypeError};
use crate::builtin::{BuiltinHooks, Contents, Parts};
use crate::dtype::{DataType, Device};
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::{self, RegistryError, TypeInfo, TypeRegistration};
use crate::string::String as ObjString;
use crate::transform::{Children, TransformError};
use crate::type_index as ti;

/// How deeply a declared field type may nest (`Array[Map[str, Array[int]]]` is 3).
pub const MAX_FIELD_TYPE_DEPTH: usize = 16;

/// The declared type of a run-time field ([`FieldSpec`]): what its values are checked
/// against on construction (and on a rebuild), and how the field is stored.
///
/// ```
/// use object_core::reflection::FieldType;
///
/// let t = FieldType::Array(Box::new(FieldType::Optional(Box::new(FieldType::Int))));
/// assert_eq!(t.to_string(), "Array[Optional[int]]");
/// assert_eq!(FieldType::Object("tour.Expr".into()).to_string(), "tour.Expr");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldType {
    /// `bool`.
    Bool,
    /// A 64-bit integer.
    Int,
    /// A 64-bit float (an `int` is taken too, as for a Rust `f64` field).
    Float,
    /// A string.
    Str,
    /// A [`DataType`].
    DataType,
    /// A [`Device`].
    Device,
    /// Any value, unchecked.
    Any,
    /// An object of the type with this key or of a subtype (`"ffi.Object"`: any
    /// object). The key must be registered, or be the key of the type being registered
    /// (a field of its own type).
    Object(std::string::String),
    /// An `ffi.Array` whose items are all of this type (`Any`: unchecked).
    Array(Box<FieldType>),
    /// An `ffi.Map` whose keys and values are of these types.
    Map(Box<FieldType>, Box<FieldType>),
    /// A field-less enum (`#[derive(ObjectEnum)]`): a variant by name or value, stored
    /// as its integer.
    Enum(&'static EnumInfo),
    /// The type, or `None`.
    Optional(Box<FieldType>),
}

impl FieldType {
    /// The kind the field table reports (an optional type: its inner type's).
    pub fn kind(&self) -> FieldKind {
        match self {
            FieldType::Bool => FieldKind::Bool,
            FieldType::Int => FieldKind::Int,
            FieldType::Float => FieldKind::Float,
            FieldType::Str => FieldKind::Str,
            FieldType::DataType => FieldKind::DataType,
            FieldType::Device => FieldKind::Device,
            FieldType::Any => FieldKind::Any,
            FieldType::Object(_) | FieldType::Array(_) | FieldType::Map(..) => FieldKind::Object,
            FieldType::Enum(_) => FieldKind::Enum,
            FieldType::Optional(inner) => inner.kind(),
        }
    }

    /// Whether the type admits `None` (`Optional[…]`, `Any`). (A field of type `Any`
    /// must still be given, as a derive type's `Any` field must; an `Optional` one left
    /// out is `None`.)
    pub fn is_optional(&self) -> bool {
        matches!(self, FieldType::Optional(_) | FieldType::Any)
    }

    /// The type without its `Optional`s.
    fn inner(&self) -> &FieldType {
        let mut t = self;
        while let FieldType::Optional(inner) = t {
            t = inner;
        }
        t
    }

    /// How deeply the type nests (a scalar is 1).
    fn depth(&self) -> usize {
        match self {
            FieldType::Array(t) | FieldType::Optional(t) => 1 + t.depth(),
            FieldType::Map(k, v) => 1 + k.depth().max(v.depth()),
            _ => 1,
        }
    }

    /// The static type key the table reports: `"int"`, `"ffi.String"`, an object
    /// type's key, `"ffi.Array"`, an enum's key, `"Any"`.
    fn static_key(&self) -> Cow<'static, str> {
        match self.inner() {
            FieldType::Bool => "bool".into(),
            FieldType::Int => "int".into(),
            FieldType::Float => "float".into(),
            FieldType::Str => "ffi.String".into(),
            FieldType::DataType => "DataType".into(),
            FieldType::Device => "Device".into(),
            FieldType::Any | FieldType::Optional(_) => "Any".into(),
            FieldType::Object(key) => Cow::Owned(key.clone()),
            FieldType::Array(_) => "ffi.Array".into(),
            FieldType::Map(..) => "ffi.Map".into(),
            FieldType::Enum(e) => e.key().into(),
        }
    }

    /// Every object type key the type names (to check that they are registered).
    fn object_keys<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            FieldType::Object(k) => out.push(k),
            FieldType::Array(t) | FieldType::Optional(t) => t.object_keys(out),
            FieldType::Map(k, v) => {
                k.object_keys(out);
                v.object_keys(out);
            }
            _ => {}
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldType::Bool => f.write_str("bool"),
            FieldType::Int => f.write_str("int"),
            FieldType::Float => f.write_str("float"),
            FieldType::Str => f.write_str("str"),
            FieldType::DataType => f.write_str("DataType"),
            FieldType::Device => f.write_str("Device"),
            FieldType::Any => f.write_str("Any"),
            FieldType::Object(key) => f.write_str(key),
            FieldType::Array(t) => write!(f, "Array[{t}]"),
            FieldType::Map(k, v) => write!(f, "Map[{k}, {v}]"),
            FieldType::Enum(e) => f.write_str(e.key()),
            FieldType::Optional(t) => write!(f, "Optional[{t}]"),
        }
    }
}

/// One field of a type registered at run time with fields
/// ([`TypeSpec::fields`](crate::registry::TypeSpec::fields)): its name, declared type,
/// default and flags.
///
/// ```
/// use object_core::reflection::{FieldSpec, FieldType};
/// use object_core::Any;
///
/// let f = FieldSpec::new("scale", FieldType::Float).default(1.0).no_eq(true);
/// assert_eq!(f.name(), "scale");
/// assert_eq!(f.default_value().and_then(Any::as_float), Some(1.0));
/// ```
#[derive(Debug, Clone)]
pub struct FieldSpec {
    name: std::string::String,
    ty: FieldType,
    default: Option<Any>,
    flags: FieldFlags,
}

impl FieldSpec {
    /// A field `name` of type `ty`, without a default.
    pub fn new(name: impl Into<std::string::String>, ty: FieldType) -> Self {
        FieldSpec {
            name: name.into(),
            ty,
            default: None,
            flags: FieldFlags::NONE,
        }
    }

    /// The field with a declared default: a value left out of construction (and of a
    /// JSON graph's node) takes it. It is checked against the type when the type is
    /// registered.
    #[must_use]
    pub fn default(mut self, value: impl Into<Any>) -> Self {
        self.default = Some(value.into());
        self
    }

    /// Leaves the field out of structural equality and hashing (`#[object(no_eq)]`).
    #[must_use]
    pub fn no_eq(mut self, yes: bool) -> Self {
        self.flags = set(self.flags, FieldFlags::NO_EQUALITY, yes);
        self
    }

    /// Makes the field a definition site for structural equality (`#[object(def)]`).
    #[must_use]
    pub fn def(mut self, yes: bool) -> Self {
        self.flags = set(self.flags, FieldFlags::DEFINITION, yes);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared type.
    pub fn field_type(&self) -> &FieldType {
        &self.ty
    }

    /// The declared default, if any.
    pub fn default_value(&self) -> Option<&Any> {
        self.default.as_ref()
    }

    /// The flags given (`NO_EQUALITY`, `DEFINITION`).
    pub fn flags(&self) -> FieldFlags {
        self.flags
    }
}

fn set(flags: FieldFlags, flag: FieldFlags, yes: bool) -> FieldFlags {
    if yes {
        flags.union(flag)
    } else {
        flags.without(flag)
    }
}

impl PartialEq for FieldSpec {
    /// The same name, type and flags, and defaults that are structurally equal (a
    /// class body run again makes new default objects).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.ty == other.ty
            && self.flags == other.flags
            && match (&self.default, &other.default) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b || crate::structural::structural_equal(a, b),
                _ => false,
            }
    }
}

impl Eq for FieldSpec {}

impl fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.ty)?;
        if let Some(d) = &self.default {
            write!(f, " = {d:?}")?;
        }
        Ok(())
    }
}

/// How a cell holds its field (the Rust type a derive struct would use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    F64,
    DataType,
    Device,
    /// `object_core::String` (an `Any` cell).
    Str,
    /// `Option<ObjectRef>`.
    Object,
    /// `Any`.
    Any,
}

impl Storage {
    /// The storage of a field of type `ty`.
    fn of(ty: &FieldType) -> Storage {
        match ty {
            FieldType::Bool => Storage::Bool,
            FieldType::Int => Storage::I64,
            FieldType::Float => Storage::F64,
            FieldType::Str => Storage::Str,
            FieldType::DataType => Storage::DataType,
            FieldType::Device => Storage::Device,
            FieldType::Any => Storage::Any,
            FieldType::Object(_) | FieldType::Array(_) | FieldType::Map(..) => Storage::Object,
            FieldType::Enum(e) => match e.repr() {
                EnumRepr::Int { size: 1, signed } => {
                    if signed {
                        Storage::I8
                    } else {
                        Storage::U8
                    }
                }
                EnumRepr::Int { size: 2, signed } => {
                    if signed {
                        Storage::I16
                    } else {
                        Storage::U16
                    }
                }
                EnumRepr::Int { size: 4, signed } => {
                    if signed {
                        Storage::I32
                    } else {
                        Storage::U32
                    }
                }
                _ => Storage::I64,
            },
            // An optional object is the same pointer (null for `None`); any other
            // optional value an `Any` cell.
            FieldType::Optional(inner) => match Storage::of(inner.inner()) {
                Storage::Object => Storage::Object,
                _ => Storage::Any,
            },
        }
    }

    fn layout(self) -> Layout {
        match self {
            Storage::Bool => Layout::new::<bool>(),
            Storage::I8 | Storage::U8 => Layout::new::<u8>(),
            Storage::I16 | Storage::U16 => Layout::new::<u16>(),
            Storage::I32 | Storage::U32 => Layout::new::<u32>(),
            Storage::I64 => Layout::new::<i64>(),
            Storage::F64 => Layout::new::<f64>(),
            Storage::DataType => Layout::new::<DataType>(),
            Storage::Device => Layout::new::<Device>(),
            Storage::Str => Layout::new::<ObjString>(),
            Storage::Object => Layout::new::<Option<ObjectRef>>(),
            Storage::Any => Layout::new::<Any>(),
        }
    }

    /// The table entry of a field of this storage at `offset` (the derive's entry for
    /// the storage type).
    fn entry(self, name: &'static str, offset: usize) -> FieldInfo {
        let none = FieldFlags::NONE;
        // The cells are laid out at these offsets (`RuntimeFields::build`), written once
        // with a value of their storage type when the object is built (`write_cell`,
        // never changed afterwards) and dropped by its deleter.
        // SAFETY: so every object of a type whose table holds the entry has an
        // initialized value of the entry's Rust type at `offset` while it lives.
        unsafe {
            match self {
                Storage::Bool => reflected_field::<bool>(name, offset, "bool", none),
                Storage::I8 => reflected_field::<i8>(name, offset, "i8", none),
                Storage::U8 => reflected_field::<u8>(name, offset, "u8", none),
                Storage::I16 => reflected_field::<i16>(name, offset, "i16", none),
                Storage::U16 => reflected_field::<u16>(name, offset, "u16", none),
                Storage::I32 => reflected_field::<i32>(name, offset, "i32", none),
                Storage::U32 => reflected_field::<u32>(name, offset, "u32", none),
                Storage::I64 => reflected_field::<i64>(name, offset, "i64", none),
                Storage::F64 => reflected_field::<f64>(name, offset, "f64", none),
                Storage::DataType => reflected_field::<DataType>(name, offset, "DataType", none),
                Storage::Device => reflected_field::<Device>(name, offset, "Device", none),
                Storage::Str => reflected_field::<ObjString>(name, offset, "String", none),
                Storage::Object => {
                    reflected_field::<Option<ObjectRef>>(name, offset, "Option<ObjectRef>", none)
                }
                Storage::Any => reflected_field::<Any>(name, offset, "Any", none),
            }
        }
    }
}

/// One run-time field of a type's objects.
#[derive(Debug)]
struct Cell {
    name: &'static str,
    offset: usize,
    storage: Storage,
    ty: FieldType,
    /// The index of its entry in the type's table.
    at: usize,
}

/// The run-time field table of a type registered with fields: the table every pass
/// reads ([`TypeInfo::reflection`](crate::TypeInfo::reflection) returns it), the
/// declared types of the run-time fields, and the layout of the type's objects: the
/// nearest Rust ancestor's struct, then one cell per run-time field (each held as the
/// Rust type a derive struct would hold it in), with the table's address in the word
/// before the object. Made once, when the type is registered, and kept for the process
/// ([`TypeInfo::runtime_fields`](crate::TypeInfo::runtime_fields)).
///
/// ```
/// use object_core::reflection::{create, get_attr, FieldSpec, FieldType};
/// use object_core::registry::{register_type, TypeSpec};
/// use object_core::Any;
///
/// let info = register_type(&TypeSpec::new("doc.rt.Point", "ffi.Object").fields(vec![
///     FieldSpec::new("x", FieldType::Int),
///     FieldSpec::new("y", FieldType::Float).default(0.5),
/// ]))
/// .unwrap();
/// let fields = info.runtime_fields().unwrap();
/// assert_eq!(fields.own_fields().len(), 2);
/// let p = create("doc.rt.Point", [("x", Any::from(3))]).unwrap();
/// assert_eq!(get_attr(&p, "y").unwrap().as_float(), Some(0.5));
/// assert_eq!(format!("{p:?}"), "doc.rt.Point { x: 3, y: 0.5 }");
/// let e = create("doc.rt.Point", [("x", Any::from("three"))]).unwrap_err();
/// assert_eq!(e.to_string(), "field `x` of `doc.rt.Point`: expected int, got ffi.String");
/// ```
pub struct RuntimeFields {
    key: &'static str,
    /// The nearest ancestor whose layout a Rust struct owns.
    rust: &'static TypeRegistration,
    reflection: TypeReflection,
    /// Every run-time field, the ancestors' first.
    cells: Box<[Cell]>,
    /// This type's own fields, as registered (the last `own.len()` cells).
    own: Box<[FieldSpec]>,
    /// How many entries of the table are the Rust ancestor's (its whole table, the
    /// prefix of this one); the cells' entries follow, in `cells`' order.
    rust_fields: usize,
    /// The end of the last cell, from the object's address (where a subtype's cells
    /// start).
    end: usize,
    /// The block of an object: its layout, the bytes before the object (the word and
    /// padding to the alignment), the fields deleters.
    alloc: TypeAlloc,
    /// Drops the Rust ancestor's value in place (its `TypeAlloc::drop_value`).
    drop_rust: DropValue,
    is_abstract: bool,
}

impl fmt::Debug for RuntimeFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeFields")
            .field("key", &self.key)
            .field("rust_ancestor", &self.rust.key)
            .field("own", &self.own)
            .field("size", &self.object_size())
            .field("align", &self.object_align())
            .field("is_abstract", &self.is_abstract)
            .finish_non_exhaustive()
    }
}

/// `n` rounded up to a multiple of `align` (a power of two).
fn align_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// The size of the word before an object of a run-time table (its table's address).
const WORD: usize = core::mem::size_of::<*const RuntimeFields>();

/// One run-time field checked and placed, not yet kept.
struct PendingCell {
    spec: FieldSpec,
    storage: Storage,
    offset: usize,
    /// The default, checked (converted) for the field's type.
    default: Option<Any>,
}

/// A run-time field table checked and laid out ([`RuntimeFields::build`]), kept for the
/// process by [`publish`](Self::publish) once its type is placed; dropped, it leaves
/// nothing behind (its defaults are released).
pub(crate) struct PendingFields {
    rust: &'static TypeRegistration,
    drop_rust: DropValue,
    inherited: Vec<FieldInfo>,
    inherited_cells: Vec<Cell>,
    own: Vec<PendingCell>,
    end: usize,
    /// The block's layout, and where the object starts in it.
    layout: Layout,
    lead: usize,
    is_abstract: bool,
}

impl PendingFields {
    /// Keeps the table for the process, as the table of the type `key`: its names, type
    /// keys and defaults become `'static`.
    pub(crate) fn publish(self, key: &'static str) -> &'static RuntimeFields {
        let base = self.rust.reflection;
        let rust_fields = base.fields().len();
        let mut fields = self.inherited;
        let mut cells = self.inherited_cells;
        let mut own = Vec::with_capacity(self.own.len());
        for p in self.own {
            let spec = p.spec;
            let name: &'static str = Box::leak(spec.name.clone().into_boxed_str());
            let mut entry = p.storage.entry(name, p.offset);
            entry.kind = spec.ty.kind();
            entry.static_type_key = match spec.ty.static_key() {
                Cow::Borrowed(s) => s,
                Cow::Owned(s) => Box::leak(s.into_boxed_str()),
            };
            // (`Option<ObjectRef>` storage says optional; the declared type decides.)
            let mut flags = entry.flags.without(FieldFlags::OPTIONAL).union(spec.flags);
            if spec.ty.is_optional() && spec.ty != FieldType::Any {
                flags = flags.union(FieldFlags::OPTIONAL);
            }
            if let FieldType::Enum(e) = spec.ty.inner() {
                entry.enum_info = Some(e);
                entry.visit = Some(match p.storage {
                    Storage::Any => visit_enum_any,
                    _ => visit_enum_int,
                });
            }
            if let Some(d) = p.default {
                entry.kept_default = Some(Box::leak(Box::new(d)));
                flags = flags.union(FieldFlags::HAS_DEFAULT);
            }
            entry.flags = flags;
            debug_assert_eq!(fields.len(), rust_fields + cells.len());
            cells.push(Cell {
                name,
                offset: p.offset,
                storage: p.storage,
                ty: spec.ty.clone(),
                at: fields.len(),
            });
            fields.push(entry);
            own.push(spec);
        }
        let fields: &'static [FieldInfo] = Box::leak(fields.into_boxed_slice());
        let reflection = TypeReflection {
            fields,
            opaque: false,
            custom_debug: false,
            create: Some(runtime_create),
            debug: base.debug,
            table: None,
            structural: base.structural,
            builtin: None,
            is_abstract: self.is_abstract,
            rebuild: Some(runtime_rebuild),
            eq_plan: Kept::new(),
            child_fields: Kept::new(),
        };
        Box::leak(Box::new(RuntimeFields {
            key,
            rust: self.rust,
            reflection,
            cells: cells.into_boxed_slice(),
            own: own.into_boxed_slice(),
            rust_fields,
            end: self.end,
            alloc: TypeAlloc::fields(self.layout, self.lead),
            drop_rust: self.drop_rust,
            is_abstract: self.is_abstract,
        }))
    }
}

impl RuntimeFields {
    /// The table of a type `key` registered under `parent` with the fields `own`, checked
    /// and laid out but not yet kept: [`PendingFields::publish`] keeps it once the type
    /// is placed (a registration refused later leaves nothing behind).
    ///
    /// # Errors
    ///
    /// [`RegistryError::BadField`] for a field that cannot be declared (an empty or
    /// repeated name, a type nesting too deep, an unregistered object type, a default
    /// of the wrong type), or for a parent whose objects cannot be extended (a built-in).
    pub(crate) fn build(
        key: &str,
        parent: &'static TypeInfo,
        own: &[FieldSpec],
        is_abstract: bool,
    ) -> Result<PendingFields, RegistryError> {
        let bad = |field: &str, reason: std::string::String| RegistryError::BadField {
            key: key.to_owned(),
            field: field.to_owned(),
            reason,
        };
        let parent_fields = parent.runtime_fields();
        let rust = match parent_fields {
            Some(p) => p.rust,
            None => parent.rust_layout_ancestor().ok_or_else(|| {
                bad(
                    "",
                    format!("its parent `{}` has no Rust ancestor", parent.key()),
                )
            })?,
        };
        let base = rust.reflection;
        if base.is_opaque() || !base.can_create() || base.builtin().is_some() {
            return Err(bad(
                "",
                format!(
                    "its Rust ancestor `{}` is a built-in with contents of its own, which a \
                     run-time type cannot extend",
                    rust.key
                ),
            ));
        }
        // The ancestor's objects are built through its table (every field with its
        // steps), and its values can be dropped apart from its own deleter.
        let drop_rust = base
            .table
            .as_ref()
            .filter(|t| core::ptr::eq(t.registration, rust) && build::all_buildable(base.fields))
            .and_then(|t| t.alloc.drop_value())
            .ok_or_else(|| {
                bad(
                    "",
                    format!(
                        "its Rust ancestor `{}` is not built through its field table, so a \
                         run-time type cannot extend it",
                        rust.key
                    ),
                )
            })?;
        // The fields so far: the Rust ancestor's and the run-time ancestors'.
        let inherited: Vec<FieldInfo> = match parent_fields {
            Some(p) => p.reflection.fields().to_vec(),
            None => base.fields().to_vec(),
        };
        let mut inherited_cells: Vec<Cell> = Vec::new();
        // Where the cells start (from the object's address), and the objects' alignment
        // (at least the word's, which lies just before the object).
        let (mut end, mut align) = match parent_fields {
            Some(p) => {
                for c in p.cells.iter() {
                    inherited_cells.push(Cell {
                        name: c.name,
                        offset: c.offset,
                        storage: c.storage,
                        ty: c.ty.clone(),
                        at: c.at,
                    });
                }
                (p.end, p.object_align())
            }
            None => (
                rust.size as usize,
                (rust.align as usize).max(core::mem::align_of::<*const RuntimeFields>()),
            ),
        };
        let mut pending: Vec<PendingCell> = Vec::with_capacity(own.len());
        for spec in own {
            let name = spec.name.as_str();
            if name.is_empty() {
                return Err(bad(name, "a field needs a name".into()));
            }
            let taken = inherited
                .iter()
                .any(|f| f.is_reflected() && f.name() == name)
                || pending.iter().any(|p| p.spec.name == name);
            if taken {
                return Err(bad(
                    name,
                    "the name is taken (by an ancestor's field or an earlier one)".into(),
                ));
            }
            if spec.ty.depth() > MAX_FIELD_TYPE_DEPTH {
                return Err(bad(
                    name,
                    format!("its type nests deeper than {MAX_FIELD_TYPE_DEPTH} levels"),
                ));
            }
            let mut keys = Vec::new();
            spec.ty.object_keys(&mut keys);
            for k in keys {
                let known = registry::type_info_by_key(k).is_some_and(TypeInfo::is_object);
                if !known && k != key {
                    return Err(bad(name, format!("no object type is registered as `{k}`")));
                }
            }
            let default = match &spec.default {
                Some(d) => Some(
                    check(&spec.ty, d.clone(), Some(key))
                        .map_err(|e| bad(name, format!("its default does not fit: {e}")))?,
                ),
                None => None,
            };
            let storage = Storage::of(&spec.ty);
            let l = storage.layout();
            let offset = align_up(end, l.align());
            end = offset + l.size();
            align = align.max(l.align());
            pending.push(PendingCell {
                spec: spec.clone(),
                storage,
                offset,
                default,
            });
        }
        // The block: the word (padded to the alignment, so that the object is aligned),
        // then the object.
        let lead = align_up(WORD, align);
        let layout = lead
            .checked_add(end)
            .and_then(|size| Layout::from_size_align(size, align).ok())
            .ok_or_else(|| bad("", "its objects cannot be laid out".into()))?
            .pad_to_align();
        Ok(PendingFields {
            rust,
            drop_rust,
            inherited,
            inherited_cells,
            own: pending,
            end,
            layout,
            lead,
            is_abstract,
        })
    }

    /// The type's key.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The table every pass reads (what `TypeInfo::reflection` returns for the type).
    pub fn reflection(&'static self) -> &'static TypeReflection {
        &self.reflection
    }

    /// The fields this type declared, as registered (its ancestors' are theirs).
    pub fn own_fields(&self) -> &[FieldSpec] {
        &self.own
    }

    /// The declared type of the run-time field `name` (this type's or a run-time
    /// ancestor's); `None` for a Rust ancestor's field or no field.
    pub fn field_type(&self, name: &str) -> Option<&FieldType> {
        self.cells.iter().find(|c| c.name == name).map(|c| &c.ty)
    }

    /// The key of the nearest ancestor a Rust struct owns: the part of the objects Rust
    /// code reads (a down-cast to it is sound).
    pub fn rust_ancestor_key(&self) -> &'static str {
        self.rust.key
    }

    /// The size of the type's objects in bytes: the Rust ancestor's struct and the
    /// cells, from the object's address (its block also holds the word before it).
    pub fn object_size(&self) -> usize {
        self.alloc.layout().size() - self.alloc.lead()
    }

    /// The alignment of the type's objects.
    pub fn object_align(&self) -> usize {
        self.alloc.layout().align()
    }

    /// Whether the type is abstract (only its subtypes are made).
    pub fn is_abstract(&self) -> bool {
        self.is_abstract
    }

    pub(crate) fn rust_registration(&self) -> &'static TypeRegistration {
        self.rust
    }

    /// How the type's objects are placed (the block, the fields deleters).
    pub(crate) fn alloc(&self) -> &TypeAlloc {
        &self.alloc
    }

    /// Drops the Rust ancestor's value of a dying object in place.
    pub(crate) fn drop_rust(&self) -> DropValue {
        self.drop_rust
    }

    /// Writes this table's address into the word before a new object.
    ///
    /// # Safety
    ///
    /// `obj` is the address of an object being built in a block from
    /// [`alloc`](Self::alloc)`().allocate()`, with provenance over the whole block.
    pub(super) unsafe fn write_word(&'static self, obj: *mut u8) {
        // SAFETY: the caller's guarantee: the block has `lead` (at least `WORD`) bytes
        // before the object, which is aligned for the table's alignment (at least a
        // pointer's), so the word is in the block and aligned.
        unsafe {
            obj.sub(WORD)
                .cast::<*const RuntimeFields>()
                .write(self as *const RuntimeFields);
        }
    }

    /// Drops every cell of a dying object.
    ///
    /// # Safety
    ///
    /// `base` is an object of a type whose table this is (its cells initialized), on
    /// its last release; its cells are not used afterwards.
    pub(crate) unsafe fn drop_cells(&self, base: *mut u8) {
        for c in self.cells.iter() {
            // SAFETY: the cell holds an initialized value of its storage type (the
            // caller's guarantee), dropped once, here.
            unsafe {
                let p = base.add(c.offset);
                match c.storage {
                    Storage::Str => drop_cell(p.cast::<ObjString>(), self.key),
                    Storage::Object => drop_cell(p.cast::<Option<ObjectRef>>(), self.key),
                    Storage::Any => drop_cell(p.cast::<Any>(), self.key),
                    _ => {}
                }
            }
        }
    }

    /// The table of the object at `obj`, from the word before it.
    ///
    /// # Safety
    ///
    /// `obj` is the address of an object built by [`build`] through a run-time table
    /// (which wrote the word), not yet freed, with provenance over its block.
    pub(crate) unsafe fn of_object(obj: *const u8) -> &'static RuntimeFields {
        // SAFETY: the caller's guarantee: `write_word` wrote the address of the
        // `'static` table into the word, which nothing changes afterwards.
        unsafe { &*obj.sub(WORD).cast::<*const RuntimeFields>().read() }
    }
}

/// Drops the value at `p` (aborting, naming the type, if its `Drop` panics).
///
/// # Safety
///
/// As for `drop_in_place`.
unsafe fn drop_cell<V>(p: *mut V, key: &'static str) {
    // SAFETY: the caller's guarantee.
    unsafe { crate::alloc::drop_or_abort(p, key) }
}

/// The value of a cell, converted and checked for its storage.
enum CellValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    DataType(DataType),
    Device(Device),
    Str(ObjString),
    Object(Option<ObjectRef>),
    Any(Any),
}

impl CellValue {
    /// `value` (checked against the cell's declared type) in the form its storage takes.
    fn of(storage: Storage, value: Any) -> Result<CellValue, TypeError> {
        Ok(match storage {
            Storage::Bool => CellValue::Bool(bool::from_any(value)?),
            Storage::I8
            | Storage::U8
            | Storage::I16
            | Storage::U16
            | Storage::I32
            | Storage::U32
            | Storage::I64 => CellValue::Int(i64::from_any(value)?),
            Storage::F64 => CellValue::Float(f64::from_any(value)?),
            Storage::DataType => CellValue::DataType(DataType::from_any(value)?),
            Storage::Device => CellValue::Device(Device::from_any(value)?),
            Storage::Str => CellValue::Str(ObjString::from_any(value)?),
            Storage::Object => CellValue::Object(Option::<ObjectRef>::from_any(value)?),
            Storage::Any => CellValue::Any(value),
        })
    }
}

/// Writes `value` (checked against the cell's declared type) into the cell `c` of an
/// object being built, at `at`.
///
/// # Errors
///
/// A `TypeError` if the value does not fit the storage (then nothing is written).
///
/// # Safety
///
/// `at` is valid for writes of `c`'s storage type, aligned for it, and holds nothing to
/// drop (the cell's place in a block being built).
unsafe fn write_cell(at: *mut u8, c: &Cell, value: Any) -> Result<(), TypeError> {
    let value = CellValue::of(c.storage, value)?;
    // SAFETY: the caller's guarantee. Each arm writes a value of the storage's type (the
    // one `CellValue::of` made for the storage), and nothing is overwritten.
    unsafe {
        match value {
            CellValue::Bool(b) => at.cast::<bool>().write(b),
            CellValue::Int(i) => match c.storage {
                Storage::I8 => at.cast::<i8>().write(i as i8),
                Storage::U8 => at.write(i as u8),
                Storage::I16 => at.cast::<i16>().write(i as i16),
                Storage::U16 => at.cast::<u16>().write(i as u16),
                Storage::I32 => at.cast::<i32>().write(i as i32),
                Storage::U32 => at.cast::<u32>().write(i as u32),
                _ => at.cast::<i64>().write(i),
            },
            CellValue::Float(x) => at.cast::<f64>().write(x),
            CellValue::DataType(d) => at.cast::<DataType>().write(d),
            CellValue::Device(d) => at.cast::<Device>().write(d),
            CellValue::Str(s) => at.cast::<ObjString>().write(s),
            CellValue::Object(o) => at.cast::<Option<ObjectRef>>().write(o),
            CellValue::Any(a) => at.cast::<Any>().write(a),
        }
    }
    Ok(())
}

/// Visits an enum field held as an integer (its storage's width), by name.
///
/// # Safety
///
/// `p` points to the cell of an enum field (`field.enum_info` set) whose storage is an
/// integer of the width `field.layout_tag()` says.
unsafe fn visit_enum_int(p: *const u8, field: &FieldInfo, v: &mut dyn AttrVisitor) {
    // SAFETY: the caller's guarantee: the field's own view entry reads it.
    let value = field
        .view
        .map(|view| unsafe { super::raw::read_field(field.layout, view, p) });
    visit_enum_value(field, value, v);
}

/// Visits an optional enum field held in an `Any` cell, by name.
///
/// # Safety
///
/// `p` points to an initialized `Any`.
unsafe fn visit_enum_any(p: *const u8, field: &FieldInfo, v: &mut dyn AttrVisitor) {
    // SAFETY: the caller's guarantee.
    let any = unsafe { &*p.cast::<Any>() };
    visit_enum_value(field, Some(ValueRef::from_any(any)), v);
}

fn visit_enum_value(field: &FieldInfo, value: Option<ValueRef<'_>>, v: &mut dyn AttrVisitor) {
    match value {
        Some(ValueRef::Value(x)) if x.is_none() => v.visit_none(field),
        Some(ValueRef::Value(x)) => match (x.as_int(), field.enum_info) {
            (Some(i), Some(e)) => match e.name_of(i) {
                Some(name) => v.visit_enum(field, i, name),
                None => v.visit_i64(field, i),
            },
            _ => v.visit_any(field, x),
        },
        _ => v.visit_none(field),
    }
}

/// `value` checked against `ty` (and converted: an `int` for a `float`, a variant's name
/// for an enum, the items of an array of floats): the value a field of that type holds.
/// `own_key` is the key of the type being made (a field of its own type), if any.
fn check(ty: &FieldType, value: Any, own_key: Option<&str>) -> Result<Any, TypeError> {
    match ty {
        FieldType::Any => Ok(value),
        FieldType::Optional(inner) => {
            if value.is_none() {
                Ok(value)
            } else {
                check(inner, value, own_key)
            }
        }
        FieldType::Bool => bool::from_any(value).map(Any::from),
        FieldType::Int => i64::from_any(value).map(Any::from),
        FieldType::Float => f64::from_any(value).map(Any::from),
        FieldType::Str => ObjString::from_any(value).map(Any::from),
        FieldType::DataType => DataType::from_any(value).map(Any::from),
        FieldType::Device => Device::from_any(value).map(Any::from),
        FieldType::Enum(e) => {
            let at = e.position(value.view())?;
            Ok(Any::from(e.variants()[at].value()))
        }
        FieldType::Object(key) => {
            let o = object_of(&value, key)?;
            let wanted = registry::type_info_by_key(key);
            let fits = match wanted {
                Some(t) => t.is_ancestor_or_self_of(o.type_index()),
                // (Only the type being registered is not yet found: a default of its own
                // type cannot exist yet.)
                None => own_key == Some(key.as_str()),
            };
            if fits {
                Ok(value)
            } else {
                Err(TypeError::new(key.clone(), o.type_key()))
            }
        }
        FieldType::Array(item) => {
            let o = object_of(&value, "ffi.Array")?;
            if !registry::is_instance_of_index(o.type_index(), ti::ARRAY) {
                return Err(TypeError::new(ty.to_string(), o.type_key()));
            }
            if **item == FieldType::Any {
                return Ok(value);
            }
            let hooks = BuiltinHooks::of_object(o).ok_or_else(|| not_items(ty, o))?;
            let Contents::Items(items) = (hooks.contents)(o) else {
                return Err(not_items(ty, o));
            };
            let mut out = Vec::with_capacity(items.len());
            let mut changed = false;
            for (i, v) in items.iter().enumerate() {
                let c = check(item, v.clone(), own_key).map_err(|e| in_item(ty, i, &e, o))?;
                changed |= c != *v;
                out.push(c);
            }
            if !changed {
                return Ok(value);
            }
            (hooks.build)(Parts::Items(&mut out.into_iter()))
                .map_err(|e| TypeError::new(format!("{ty} ({e})"), o.type_key()))
        }
        FieldType::Map(k, v) => {
            let o = object_of(&value, "ffi.Map")?;
            if !registry::is_instance_of_index(o.type_index(), ti::MAP) {
                return Err(TypeError::new(ty.to_string(), o.type_key()));
            }
            if **k == FieldType::Any && **v == FieldType::Any {
                return Ok(value);
            }
            let hooks = BuiltinHooks::of_object(o).ok_or_else(|| not_items(ty, o))?;
            let Contents::Entries(entries) = (hooks.contents)(o) else {
                return Err(not_items(ty, o));
            };
            let mut out = Vec::new();
            let mut changed = false;
            for (i, (key, val)) in entries.enumerate() {
                let ck = check(k, key.clone(), own_key).map_err(|e| in_item(ty, i, &e, o))?;
                let cv = check(v, val.clone(), own_key).map_err(|e| in_item(ty, i, &e, o))?;
                changed |= ck != *key || cv != *val;
                out.push((ck, cv));
            }
            if !changed {
                return Ok(value);
            }
            (hooks.build)(Parts::Entries(&mut out.into_iter()))
                .map_err(|e| TypeError::new(format!("{ty} ({e})"), o.type_key()))
        }
    }
}

/// The object `value` holds, or the error naming `expected`.
fn object_of<'a>(value: &'a Any, expected: &str) -> Result<&'a ObjectRef, TypeError> {
    match value.as_object() {
        // (A string is a value here, however it is stored.)
        Some(o) if value.as_str().is_none() => Ok(o),
        _ => Err(TypeError::new(expected.to_owned(), value.type_key())),
    }
}

#[cold]
fn not_items(ty: &FieldType, o: &ObjectRef) -> TypeError {
    TypeError::new(ty.to_string(), o.type_key())
}

#[cold]
fn in_item(ty: &FieldType, i: usize, e: &TypeError, container: &ObjectRef) -> TypeError {
    TypeError::new(format!("{ty} (at {i}: {e})"), container.type_key())
}

/// The run-time table of `info`, or the error of a type that has none.
fn fields_of(info: &'static TypeInfo) -> Result<&'static RuntimeFields, ReflectError> {
    info.runtime_fields()
        .ok_or_else(|| ReflectError::not_creatable(info.key()))
}

/// The `create` entry of every run-time table: the object built through the table
/// (`reflection::build`), the Rust ancestor's fields taken from `src` through their own
/// steps first (in table order, as the ancestor's own `create` takes them), then each
/// cell from `src`, its default, or `None` for an optional field, checked against its
/// declared type.
fn runtime_create(
    src: &mut FieldSource<'_, '_>,
    info: &'static TypeInfo,
) -> Result<ObjectRef, ReflectError> {
    let rt = fields_of(info)?;
    let fields = rt.reflection.fields;
    let key = info.key();
    // `fields` is this table, which describes the objects `rt.alloc` places: the Rust
    // ancestor's table (its fields at its struct's offsets) then the cells (at their own
    // offsets after it), every entry with its steps (`build` checked the ancestor's, the
    // cells' are their storage types'). The object's index is the table's own type's.
    // Each write below writes a value of the entry's type at the address given, or fails
    // having written nothing: a Rust field through its own steps, a cell through
    // `write_cell` (the storage type, whose steps the entry holds).
    // SAFETY: as just said: `build`'s contract holds for this table and placement.
    unsafe {
        build::build(
            fields,
            &rt.alloc,
            Some(rt),
            info.index(),
            |i, f, steps, at| match i.checked_sub(rt.rust_fields) {
                None => (steps.take)(at, src, f),
                Some(j) => {
                    let c = &rt.cells[j];
                    let value = cell_from_source(src, key, c, f)?;
                    check(&c.ty, value, None)
                        .and_then(|v| write_cell(at, c, v))
                        .map_err(|e| ReflectError::wrong_type(key, c.name, e))
                }
            },
        )
    }
}

/// The value for the cell `c` (whose entry is `f`): given in `src`, else its default,
/// else `None` for an optional field.
fn cell_from_source(
    src: &mut FieldSource<'_, '_>,
    key: &'static str,
    c: &Cell,
    f: &FieldInfo,
) -> Result<Any, ReflectError> {
    if let Some(v) = src.take_value(c.name) {
        return Ok(v);
    }
    match f.default_value() {
        Some(d) => d.map_err(|e| ReflectError::wrong_type(key, c.name, e)),
        // (As for a derive type's fields: an `Any` one must be given too.)
        None if matches!(c.ty, FieldType::Optional(_)) => Ok(Any::default()),
        None => Err(ReflectError::missing_field(
            key,
            c.name,
            f.static_type_key(),
        )),
    }
}

/// The `rebuild` entry of every run-time table: a copy of `obj` built through its
/// type's table (`reflection::build`), the Rust ancestor's fields copied through their
/// own steps (taking the children of their fields), then each cell copied, a cell that
/// holds an object of kind `Object` or `Any` taking the next child instead (the order
/// the walkers list children in: table order), checked against its declared type.
fn runtime_rebuild(
    obj: &ObjectRef,
    children: &mut Children<'_>,
    _: &'static TypeInfo,
) -> Result<ObjectRef, TransformError> {
    // The object's own type, whatever the caller passed: its table describes `obj`.
    let info = obj.type_info();
    let key = info.key();
    let rt = info
        .runtime_fields()
        .ok_or_else(|| TransformError::not_rebuildable(key))?;
    let fields = rt.reflection.fields;
    let from = ObjectPtr::as_ptr(obj).cast::<u8>();
    // SAFETY: as in `runtime_create` for the new object, of `obj`'s own type; `obj` is
    // an object of that type, so each Rust field lies at its offset from `from` (read
    // by its own steps), and the new block does not overlap it.
    unsafe {
        build::build(
            fields,
            &rt.alloc,
            Some(rt),
            obj.type_index(),
            |i, f, steps, at| match i.checked_sub(rt.rust_fields) {
                None => (steps.rebuild)(from.add(f.offset), at, children)
                    .map_err(|e| TransformError::wrong_child(key, f.name, e)),
                Some(j) => {
                    let c = &rt.cells[j];
                    let value = cell_rebuilt(obj, key, c, f, children)?;
                    check(&c.ty, value, None)
                        .and_then(|v| write_cell(at, c, v))
                        .map_err(|e| TransformError::wrong_child(key, c.name, e))
                }
            },
        )
    }
}

/// The new value of the cell `c` (whose entry is `f`) in a copy of `obj` of type
/// `key`: the next child if the cell holds an object in a field of kind `Object` or
/// `Any` (what the walkers list as a child), else the value itself.
fn cell_rebuilt(
    obj: &ObjectRef,
    key: &'static str,
    c: &Cell,
    f: &FieldInfo,
    children: &mut Children<'_>,
) -> Result<Any, TransformError> {
    // (The object's own table's field: reading it does not fail.)
    let unreadable = |_| TransformError::not_rebuildable(key);
    let old = super::field_ref(obj, f).map_err(unreadable)?;
    if matches!(f.kind(), FieldKind::Object | FieldKind::Any) && matches!(old, ValueRef::Object(_))
    {
        return children
            .next_child()
            .map(Any::from)
            .map_err(|e| TransformError::wrong_child(key, c.name, e));
    }
    super::get_field(obj, f).map_err(unreadable)
}
