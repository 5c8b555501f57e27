//! The field table: what `#[derive(Object)]` records about each field ([`FieldInfo`]:
//! name, offset, [`FieldKind`], static type key, [`FieldFlags`]) and about each type
//! ([`TypeReflection`]), as plain data a foreign reader can use without calling Rust.
//! A field's declared default (`#[object(default)]`) is in its entry too
//! ([`FieldInfo::default_value`]).

use core::fmt;

use super::build::{FieldBuild, TableBuild};
use super::create::FieldSource;
use super::enums::EnumInfo;
use super::error::ReflectError;
use super::per_table::Kept;
use super::raw::{DebugFn, GetFn, ViewFn, VisitFn, PLACEHOLDER};
use crate::any::{Any, TypeError};
use crate::builtin::BuiltinHooks;
use crate::ptr::ObjectRef;
use crate::registry::{self, TypeInfo};
use crate::structural::plan::EqPlan;
use crate::structural::StructuralKind;
use crate::transform::children::ChildFields;
use crate::transform::RebuildFn;
use crate::type_index as ti;

/// The value kind of a reflected field, as a foreign reader needs it to interpret the
/// bytes at the field's offset (for Rust-defined layouts, through the getter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum FieldKind {
    /// `bool`.
    Bool,
    /// A signed or unsigned integer (any width), seen as `int` (i64).
    Int,
    /// `f32` or `f64`, seen as `float` (f64).
    Float,
    /// A string (`std::string::String` or `object_core::String`), seen as `ffi.String`.
    Str,
    /// A [`DataType`](crate::DataType).
    DataType,
    /// A [`Device`](crate::Device).
    Device,
    /// An object handle (`ObjectPtr<T>`, `ObjectRef`, `Array`, `Map`, …) of the static
    /// type named by [`FieldInfo::static_type_key`].
    Object,
    /// Any value ([`Any`](crate::Any)).
    Any,
    /// A field left out of reflection with `#[object(skip)]`: only its name, offset and
    /// Rust type are recorded.
    Opaque,
    /// A field-less enum (`#[derive(ObjectEnum)]`), stored in place; its value is the
    /// variant's integer value, seen as `int`, and its names are in the descriptor
    /// [`FieldInfo::enum_info`] gives. [`FieldInfo::static_type_key`] is the enum's key.
    Enum,
}

/// Flags of a reflected field.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldFlags(u32);

impl FieldFlags {
    /// No flags.
    pub const NONE: FieldFlags = FieldFlags(0);
    /// `#[object(read_only)]`: front-ends may read but not assign it.
    pub const READ_ONLY: FieldFlags = FieldFlags(1);
    /// `#[object(no_eq)]`: excluded from structural equality and hashing.
    pub const NO_EQUALITY: FieldFlags = FieldFlags(2);
    /// `#[object(skip)]`: not reflected (absent from visits, names, `get_attr`, JSON and
    /// `create`, which fills it with `Default`).
    pub const SKIPPED: FieldFlags = FieldFlags(4);
    /// The field is an `Option<…>`: it may hold `None`.
    pub const OPTIONAL: FieldFlags = FieldFlags(8);
    /// `#[object(def)]`: a definition site for structural equality: variables reached
    /// through it that are not bound yet are bound there (see [`crate::structural`]).
    pub const DEFINITION: FieldFlags = FieldFlags(16);
    /// `#[object(default)]` / `#[object(default = expr)]`: a value left out of
    /// `create` (and so of a JSON graph's node) takes the declared default
    /// ([`FieldInfo::default_value`]).
    pub const HAS_DEFAULT: FieldFlags = FieldFlags(32);
    /// The field is stored as one 16-byte [`Any`](crate::Any) cell (tvm-ffi's
    /// `TVMFFIAny`): an `Any` field, or an [`object_core::String`](crate::String) (an
    /// inline string or a string object; see its layout). Foreign readers may read it
    /// in place.
    pub const ANY_LAYOUT: FieldFlags = FieldFlags(64);

    /// The raw bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: FieldFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Both sets of flags.
    #[must_use]
    pub const fn union(self, other: FieldFlags) -> FieldFlags {
        FieldFlags(self.0 | other.0)
    }

    /// These flags without those of `other`.
    #[must_use]
    pub const fn without(self, other: FieldFlags) -> FieldFlags {
        FieldFlags(self.0 & !other.0)
    }
}

impl fmt::Debug for FieldFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (FieldFlags::READ_ONLY, "READ_ONLY"),
            (FieldFlags::NO_EQUALITY, "NO_EQUALITY"),
            (FieldFlags::SKIPPED, "SKIPPED"),
            (FieldFlags::OPTIONAL, "OPTIONAL"),
            (FieldFlags::DEFINITION, "DEFINITION"),
            (FieldFlags::HAS_DEFAULT, "HAS_DEFAULT"),
            (FieldFlags::ANY_LAYOUT, "ANY_LAYOUT"),
        ];
        let mut list = f.debug_set();
        for (flag, name) in names {
            if self.contains(flag) {
                list.entry(&format_args!("{name}"));
            }
        }
        list.finish()
    }
}

/// One reflected field: plain data, built by the derive in a `static` table.
#[derive(Clone, Copy)]
pub struct FieldInfo {
    pub(super) name: &'static str,
    pub(super) offset: usize,
    pub(super) kind: FieldKind,
    pub(super) static_type_key: &'static str,
    pub(super) rust_type: &'static str,
    pub(super) flags: FieldFlags,
    pub(super) get: Option<GetFn>,
    pub(super) visit: Option<VisitFn>,
    pub(super) view: Option<ViewFn>,
    /// How the structural walk may read the field in place: a `FieldLayout` tag.
    pub(super) layout: u8,
    /// Makes the declared default, as an `Any` (set with [`HAS_DEFAULT`](FieldFlags::HAS_DEFAULT)).
    pub(super) default: Option<DefaultFn>,
    /// The enum's descriptor, for a field of kind [`FieldKind::Enum`].
    pub(super) enum_info: Option<&'static EnumInfo>,
    /// The declared default of a field of a run-time field table (`reflection::runtime`),
    /// a value kept for the process (set with [`HAS_DEFAULT`](FieldFlags::HAS_DEFAULT)).
    pub(super) kept_default: Option<&'static Any>,
    /// How the field is made in place when an object is built through its table
    /// (`None` for a skipped field without a `Default`, an opaque type's fields).
    pub(super) build: Option<&'static FieldBuild>,
}

/// A field's default maker: the declared default, converted as the field's value is.
pub type DefaultFn = fn() -> Result<Any, TypeError>;

impl FieldInfo {
    /// The reflected name (the Rust name, or its `#[object(rename = "…")]`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Byte offset of the field from the start of the object (its header).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The value kind.
    pub fn kind(&self) -> FieldKind {
        self.kind
    }

    /// The static type key: `"int"`, `"float"`, `"bool"`, `"ffi.String"`, `"DataType"`,
    /// `"Device"`, an object type's key (`"ffi.Array"`, `"tour.Expr"`, …), an enum's
    /// key (`"frontend.BinOpKind"`, for [`FieldKind::Enum`]), or `"Any"`.
    pub fn static_type_key(&self) -> &'static str {
        self.static_type_key
    }

    /// The static type index of the field: the value kind's index for POD kinds (`int`
    /// for an enum), the object type's index for objects, `None` for `Any` and skipped
    /// fields.
    pub fn static_type_index(&self) -> Option<u32> {
        match self.kind {
            FieldKind::Bool => Some(ti::BOOL),
            FieldKind::Int | FieldKind::Enum => Some(ti::INT),
            FieldKind::Float => Some(ti::FLOAT),
            FieldKind::Str => Some(ti::STRING),
            FieldKind::DataType => Some(ti::DATA_TYPE),
            FieldKind::Device => Some(ti::DEVICE),
            FieldKind::Object => registry::type_index_of(self.static_type_key).ok(),
            FieldKind::Any | FieldKind::Opaque => None,
        }
    }

    /// The Rust type as written in the struct.
    pub fn rust_type(&self) -> &'static str {
        self.rust_type
    }

    /// The field's declared default (`#[object(default)]`, `#[object(default =
    /// expr)]`), made afresh as an `Any`; `None` for a field without one.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::registry;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.field.Knob")]
    /// struct Knob { base: Object, #[object(default = 42)] level: i64, name: String }
    ///
    /// let refl = registry::type_info_by_key("doc.field.Knob").unwrap().reflection();
    /// let level = refl.field("level").unwrap();
    /// assert_eq!(level.default_value().unwrap().unwrap().as_int(), Some(42));
    /// assert!(refl.field("name").unwrap().default_value().is_none());
    /// ```
    pub fn default_value(&self) -> Option<Result<Any, TypeError>> {
        if let Some(kept) = self.kept_default {
            return Some(Ok(kept.clone()));
        }
        self.default.map(|f| f())
    }

    /// Whether the field has a declared default.
    pub fn has_default(&self) -> bool {
        self.flags.contains(FieldFlags::HAS_DEFAULT)
    }

    /// This field with a declared default. Used by the derive.
    #[doc(hidden)]
    #[must_use]
    pub const fn with_default(mut self, default: DefaultFn) -> Self {
        self.flags = self.flags.union(FieldFlags::HAS_DEFAULT);
        self.default = Some(default);
        self
    }

    /// The descriptor of the field's enum (its key, its variants' names and values),
    /// for a field of kind [`FieldKind::Enum`]; `None` for every other kind.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::registry;
    /// use object_core::reflection::FieldKind;
    ///
    /// #[derive(ObjectEnum)]
    /// #[object_enum(key = "doc.field.Color")]
    /// enum Color { Red, Green }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.field.Pixel")]
    /// struct Pixel { base: Object, color: Color }
    ///
    /// let f = registry::type_info_by_key("doc.field.Pixel").unwrap().reflection().field("color").unwrap();
    /// assert_eq!((f.kind(), f.static_type_key()), (FieldKind::Enum, "doc.field.Color"));
    /// assert_eq!(f.enum_info().unwrap().name_of(1), Some("Green"));
    /// ```
    pub fn enum_info(&self) -> Option<&'static EnumInfo> {
        self.enum_info
    }

    /// The flags.
    pub fn flags(&self) -> FieldFlags {
        self.flags
    }

    /// The entry point that views the field as a borrowed value (`None` for a skipped
    /// field).
    pub(crate) fn view_entry(&self) -> Option<ViewFn> {
        self.view
    }

    /// The in-place layout tag the structural walk reads the field by (part of the
    /// type's layout fingerprint).
    pub(crate) fn layout_tag(&self) -> u8 {
        self.layout
    }

    /// Whether the field takes part in reflection (is not `#[object(skip)]`).
    pub const fn is_reflected(&self) -> bool {
        !self.flags.contains(FieldFlags::SKIPPED)
    }

    /// Whether the field is written inline (a literal, not a node index) in the JSON
    /// graph: non-optional `bool`, `int`, `float`, `DataType` and enum fields (an enum
    /// by its variant's name).
    pub fn is_inline_pod(&self) -> bool {
        !self.flags.contains(FieldFlags::OPTIONAL)
            && matches!(
                self.kind,
                FieldKind::Bool
                    | FieldKind::Int
                    | FieldKind::Float
                    | FieldKind::DataType
                    | FieldKind::Enum
            )
    }
}

impl fmt::Debug for FieldInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("FieldInfo");
        d.field("name", &self.name)
            .field("offset", &self.offset)
            .field("kind", &self.kind)
            .field("static_type_key", &self.static_type_key)
            .field("rust_type", &self.rust_type)
            .field("flags", &self.flags);
        if let Some(e) = self.enum_info {
            d.field("enum_variants", &e.variants());
        }
        d.finish()
    }
}

/// What the derive registers for a type: its field table (parents first) and the
/// type-erased entry points generic passes use.
pub struct TypeReflection {
    pub(super) fields: &'static [FieldInfo],
    pub(super) opaque: bool,
    /// `#[object(custom_debug)]`: objects print through the type's own `Debug`.
    pub(super) custom_debug: bool,
    pub(super) create: Option<CreateFn>,
    pub(super) debug: DebugFn,
    /// The Rust type's layout and deleters, for building objects through the table.
    pub(super) table: Option<TableBuild>,
    pub(crate) structural: StructuralKind,
    /// `#[object(builtin = PATH)]`: what an opaque built-in holds (see [`crate::builtin`]).
    pub(crate) builtin: Option<&'static BuiltinHooks>,
    /// `#[object(abstract)]`: `create` refuses the type itself.
    pub(super) is_abstract: bool,
    /// Copies an object with new children (see [`crate::transform`]).
    pub(crate) rebuild: Option<RebuildFn>,
    /// The structural walk's field plan, once made (see `structural::plan::eq_plan`):
    /// empty until then, and then a plan kept for the rest of the process.
    pub(crate) eq_plan: Kept<EqPlan>,
    /// The fields that can hold a child object, once listed (see
    /// `transform::children::child_fields`).
    pub(crate) child_fields: Kept<ChildFields>,
}

pub(super) type CreateFn =
    fn(&mut FieldSource<'_, '_>, &'static TypeInfo) -> Result<ObjectRef, ReflectError>;

impl TypeReflection {
    /// Every field, the parent's first, including skipped ones (see
    /// [`FieldInfo::is_reflected`]).
    pub fn fields(&self) -> &'static [FieldInfo] {
        self.fields
    }

    /// The reflected fields, the parent's first.
    pub fn reflected_fields(&self) -> impl Iterator<Item = &'static FieldInfo> {
        self.fields.iter().filter(|f| f.is_reflected())
    }

    /// The reflected field called `name`.
    pub fn field(&self, name: &str) -> Option<&'static FieldInfo> {
        self.reflected_fields().find(|f| f.name == name)
    }

    /// Whether the type is `#[object(opaque)]`: its contents are not reflected as
    /// fields (containers and other built-ins with a representation of their own).
    pub fn is_opaque(&self) -> bool {
        self.opaque
    }

    /// Whether the table can build objects from fields (`false` for `opaque`
    /// built-ins). An `abstract` type's table can (for its run-time descendants), while
    /// [`create`](super::create) refuses the abstract type itself.
    pub fn can_create(&self) -> bool {
        self.create.is_some()
    }

    /// Whether the type is declared `#[object(abstract)]`: a base that is never
    /// instantiated itself ([`create`](super::create) refuses it with
    /// [`Abstract`](super::ReflectErrorKind::Abstract), the derive writes no
    /// constructor). A run-time descendant that borrows this table is not abstract:
    /// ask [`TypeInfo::is_abstract`](crate::TypeInfo::is_abstract).
    pub fn is_abstract(&self) -> bool {
        self.is_abstract
    }

    /// Marks the table as an abstract type's. Used by the derive.
    #[doc(hidden)]
    pub const fn with_abstract(mut self, is_abstract: bool) -> TypeReflection {
        self.is_abstract = is_abstract;
        self
    }

    /// How structural equality and hashing treat objects of this type.
    pub fn structural_kind(&self) -> StructuralKind {
        self.structural
    }

    /// What a built-in with a representation of its own (`String`, `Array`, `Map`,
    /// `Shape`, `Tensor` …) holds, if the type is one (see [`crate::builtin`]).
    #[inline]
    pub fn builtin(&self) -> Option<&'static BuiltinHooks> {
        self.builtin
    }

    /// This reflection with structural kind `kind` and built-in hooks `builtin`. Used
    /// by the derive.
    #[must_use]
    pub const fn with_structural(
        mut self,
        kind: StructuralKind,
        builtin: Option<&'static BuiltinHooks>,
    ) -> TypeReflection {
        self.structural = kind;
        self.builtin = builtin;
        self
    }
}

impl TypeReflection {
    /// Whether the mutator can rebuild objects of this type field by field.
    pub fn can_rebuild(&self) -> bool {
        self.rebuild.is_some()
    }
}

impl fmt::Debug for TypeReflection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeReflection")
            .field("fields", &self.fields)
            .field("opaque", &self.opaque)
            .field("can_create", &self.can_create())
            .field("is_abstract", &self.is_abstract)
            .field("structural_kind", &self.structural)
            .field("builtin", &self.builtin.map(|b| b.shape))
            .finish()
    }
}

/// Builds a table `parent ++ own` in a constant. Used by the derive, which checks
/// each own reflected field with [`has_reflected_field`] (spanned at the field).
pub const fn concat_fields<const N: usize>(
    parent: &[FieldInfo],
    own: &[FieldInfo],
) -> [FieldInfo; N] {
    assert!(parent.len() + own.len() == N);
    let mut out = [PLACEHOLDER; N];
    let mut i = 0;
    while i < parent.len() {
        out[i] = parent[i];
        i += 1;
    }
    let mut j = 0;
    while j < own.len() {
        out[i + j] = own[j];
        j += 1;
    }
    out
}

/// Whether `fields` has a reflected field called `name`. Used by the derive.
pub const fn has_reflected_field(fields: &[FieldInfo], name: &str) -> bool {
    let mut k = 0;
    while k < fields.len() {
        if fields[k].is_reflected() && str_eq(fields[k].name, name) {
            return true;
        }
        k += 1;
    }
    false
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
