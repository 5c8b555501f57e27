//! Reflection: what `#[derive(Object)]` records about every object type's fields, and
//! the generic access built on it.
//!
//! - Every object type has a static **field table** ([`FieldInfo`]: name, `offset_of!`
//!   offset, [`FieldKind`], static type key, [`FieldFlags`]), the parent's fields first,
//!   reachable from its [`TypeInfo`] through [`TypeInfo::reflection`]. The table is
//!   plain data: a foreign front-end reads a field from its offset and kind without
//!   calling Rust.
//! - Rust passes (the printer, JSON graph, structural comparisons) walk an object with
//!   an [`AttrVisitor`] through [`Reflect::visit_attrs`] or [`visit_object_attrs`].
//! - Generic access by name on a type-erased [`ObjectRef`]: [`field_names`],
//!   [`get_attr`], and [`create`], which builds an object from its type key and field
//!   values (what deserializers and foreign front-ends use).
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::reflection::{create, field_names, get_attr};
//! use object_core::Any;
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.refl.Point")]
//! struct Point {
//!     base: Object,
//!     x: i64,
//!     #[object(rename = "y_coord")]
//!     y: f64,
//! }
//!
//! let p: ObjectRef = make_object(Point { base: Object::new(), x: 3, y: 0.5 }).into_object_ref();
//! assert_eq!(field_names(&p), ["x", "y_coord"]);
//! assert_eq!(get_attr(&p, "x").unwrap().as_int(), Some(3));
//! assert!(get_attr(&p, "z").is_err());
//!
//! let q = create("doc.refl.Point", [("x", Any::from(1)), ("y_coord", Any::from(2.5))]).unwrap();
//! assert_eq!(q.downcast_ref::<Point>().unwrap().y, 2.5);
//! assert_eq!(format!("{q:?}"), "doc.refl.Point { x: 1, y_coord: 2.5 }");
//!
//! let err = create("doc.refl.Point", [("x", Any::from("one"))]).unwrap_err();
//! assert_eq!(err.to_string(), "TypeError: field `x` of `doc.refl.Point`: expected int, got ffi.String");
//! ```

use core::cell::{Cell, RefCell};
use core::fmt;
use std::collections::HashMap;

use crate::any::{Any, AnyView, TypeError};
use crate::dtype::{DataType, Device};
use crate::error::Error;
use crate::header::Object;
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::{self, TypeInfo};
use crate::string::String as ObjString;
use crate::type_index as ti;

// ---------------------------------------------------------------------------------
// The field table.
// ---------------------------------------------------------------------------------

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
    /// A [`DataType`].
    DataType,
    /// A [`Device`].
    Device,
    /// An object handle (`ObjectPtr<T>`, `ObjectRef`, `Array`, `Map`, …) of the static
    /// type named by [`FieldInfo::static_type_key`].
    Object,
    /// Any value ([`Any`]).
    Any,
    /// A field left out of reflection with `#[object(skip)]`: only its name, offset and
    /// Rust type are recorded.
    Opaque,
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
}

impl fmt::Debug for FieldFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (FieldFlags::READ_ONLY, "READ_ONLY"),
            (FieldFlags::NO_EQUALITY, "NO_EQUALITY"),
            (FieldFlags::SKIPPED, "SKIPPED"),
            (FieldFlags::OPTIONAL, "OPTIONAL"),
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

type GetFn = unsafe fn(*const u8) -> Result<Any, TypeError>;
type VisitFn = unsafe fn(*const u8, &FieldInfo, &mut dyn AttrVisitor);

/// One reflected field: plain data, built by the derive in a `static` table.
#[derive(Clone, Copy)]
pub struct FieldInfo {
    name: &'static str,
    offset: usize,
    kind: FieldKind,
    static_type_key: &'static str,
    rust_type: &'static str,
    flags: FieldFlags,
    get: Option<GetFn>,
    visit: Option<VisitFn>,
}

impl FieldInfo {
    /// A reflected field of Rust type `F` at `offset` in its object. Used by the derive.
    #[doc(hidden)]
    pub const fn new<F: FieldValue>(
        name: &'static str,
        offset: usize,
        rust_type: &'static str,
        flags: FieldFlags,
    ) -> FieldInfo {
        let flags = if F::OPTIONAL {
            flags.union(FieldFlags::OPTIONAL)
        } else {
            flags
        };
        FieldInfo {
            name,
            offset,
            kind: F::KIND,
            static_type_key: F::STATIC_TYPE_KEY,
            rust_type,
            flags,
            get: Some(get_erased::<F>),
            visit: Some(visit_erased::<F>),
        }
    }

    /// A skipped field: recorded for layout readers, invisible to reflection passes.
    #[doc(hidden)]
    pub const fn skipped(name: &'static str, offset: usize, rust_type: &'static str) -> Self {
        FieldInfo {
            name,
            offset,
            kind: FieldKind::Opaque,
            static_type_key: "",
            rust_type,
            flags: FieldFlags::SKIPPED,
            get: None,
            visit: None,
        }
    }

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
    /// `"Device"`, an object type's key (`"ffi.Array"`, `"tour.Expr"`, …), or `"Any"`.
    pub fn static_type_key(&self) -> &'static str {
        self.static_type_key
    }

    /// The static type index of the field: the value kind's index for POD kinds, the
    /// object type's index for objects, `None` for `Any` and skipped fields.
    pub fn static_type_index(&self) -> Option<u32> {
        match self.kind {
            FieldKind::Bool => Some(ti::BOOL),
            FieldKind::Int => Some(ti::INT),
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

    /// The flags.
    pub fn flags(&self) -> FieldFlags {
        self.flags
    }

    /// Whether the field takes part in reflection (is not `#[object(skip)]`).
    pub const fn is_reflected(&self) -> bool {
        !self.flags.contains(FieldFlags::SKIPPED)
    }

    /// Whether the field is written inline (a literal, not a node index) in the JSON
    /// graph: non-optional `bool`, `int`, `float` and `DataType` fields.
    pub fn is_inline_pod(&self) -> bool {
        !self.flags.contains(FieldFlags::OPTIONAL)
            && matches!(
                self.kind,
                FieldKind::Bool | FieldKind::Int | FieldKind::Float | FieldKind::DataType
            )
    }

    /// Reads the field of the object at `base` as a value.
    ///
    /// # Safety
    ///
    /// `base` points to a live object whose type has this field in its table.
    unsafe fn read(&self, base: *const u8) -> Result<Any, TypeError> {
        match self.get {
            // SAFETY: the caller guarantees the object has this field at `offset`.
            Some(get) => unsafe { get(base.add(self.offset)) },
            None => Err(TypeError::new("a reflected field", "a skipped field")),
        }
    }
}

impl fmt::Debug for FieldInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldInfo")
            .field("name", &self.name)
            .field("offset", &self.offset)
            .field("kind", &self.kind)
            .field("static_type_key", &self.static_type_key)
            .field("rust_type", &self.rust_type)
            .field("flags", &self.flags)
            .finish()
    }
}

/// # Safety
///
/// `p` points to a live, initialized `F`.
unsafe fn get_erased<F: FieldValue>(p: *const u8) -> Result<Any, TypeError> {
    // SAFETY: guaranteed by the caller.
    unsafe { &*p.cast::<F>() }.to_any()
}

/// # Safety
///
/// `p` points to a live, initialized `F`.
unsafe fn visit_erased<F: FieldValue>(p: *const u8, field: &FieldInfo, v: &mut dyn AttrVisitor) {
    // SAFETY: guaranteed by the caller.
    unsafe { &*p.cast::<F>() }.visit(field, v);
}

/// What the derive registers for a type: its field table (parents first) and the
/// type-erased entry points generic passes use.
pub struct TypeReflection {
    fields: &'static [FieldInfo],
    opaque: bool,
    /// `#[object(custom_debug)]`: objects print through the type's own `Debug`.
    custom_debug: bool,
    create: Option<CreateFn>,
    debug: unsafe fn(*const Object, &mut fmt::Formatter<'_>) -> fmt::Result,
}

type CreateFn = fn(&mut FieldSource<'_, '_>, &'static TypeInfo) -> Result<ObjectRef, Error>;

impl TypeReflection {
    /// Used by the derive.
    #[doc(hidden)]
    pub const fn new(
        fields: &'static [FieldInfo],
        opaque: bool,
        custom_debug: bool,
        create: Option<CreateFn>,
        debug: unsafe fn(*const Object, &mut fmt::Formatter<'_>) -> fmt::Result,
    ) -> Self {
        TypeReflection {
            fields,
            opaque,
            custom_debug,
            create,
            debug,
        }
    }

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

    /// Whether [`create`] can build objects of this type.
    pub fn can_create(&self) -> bool {
        self.create.is_some()
    }
}

impl fmt::Debug for TypeReflection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeReflection")
            .field("fields", &self.fields)
            .field("opaque", &self.opaque)
            .field("can_create", &self.create.is_some())
            .finish()
    }
}

/// Builds a table `parent ++ own` in a constant. Used by the derive, which checks
/// each own reflected field with [`has_reflected_field`] (spanned at the field).
#[doc(hidden)]
pub const fn concat_fields<const N: usize>(
    parent: &[FieldInfo],
    own: &[FieldInfo],
) -> [FieldInfo; N] {
    assert!(parent.len() + own.len() == N);
    let mut out = [FieldInfo::skipped("", 0, ""); N];
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
#[doc(hidden)]
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

// ---------------------------------------------------------------------------------
// Field values.
// ---------------------------------------------------------------------------------

/// A Rust type that can be a reflected object field: integers, floats, `bool`,
/// strings, `DataType`, `Device`, `Any`, object handles (`ObjectPtr<T>`, `ObjectRef`,
/// and in `object-containers` `Array`, `Map`, `Shape`, `Function`, `Module`, …), and
/// `Option` of any of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a reflected object field",
    label = "unsupported field type",
    note = "reflected fields are integers, floats, `bool`, `String`, `DataType`, `Device`, `Any`, object handles (`ObjectPtr<T>`, `ObjectRef`, `Array<_>`, `Map<_, _>`, …) or `Option` of one",
    note = "mark the field `#[object(skip)]` to leave it out of reflection (it then needs `Default`)"
)]
pub trait FieldValue: Sized + 'static {
    /// The value kind.
    const KIND: FieldKind;
    /// The static type key (see [`FieldInfo::static_type_key`]).
    const STATIC_TYPE_KEY: &'static str;
    /// Whether the field may hold `None`.
    const OPTIONAL: bool = false;

    /// The field as a value.
    ///
    /// # Errors
    ///
    /// Only for unsigned integers beyond `i64::MAX`, which an `int` cannot hold.
    fn to_any(&self) -> Result<Any, TypeError>;

    /// A field from a value, checked.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the expected and actual type.
    fn from_any(value: Any) -> Result<Self, TypeError>;

    /// Calls the visitor's method for this kind.
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor);
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            const KIND: FieldKind = FieldKind::Int;
            const STATIC_TYPE_KEY: &'static str = "int";
            fn to_any(&self) -> Result<Any, TypeError> {
                i64::try_from(*self)
                    .map(Any::from)
                    .map_err(|_| TypeError::new("int (an i64)", concat!(stringify!($t), " beyond i64::MAX")))
            }
            fn from_any(value: Any) -> Result<Self, TypeError> {
                <$t>::try_from(value)
            }
            fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
                match i64::try_from(*self) {
                    Ok(i) => v.visit_i64(field, i),
                    Err(_) => v.visit_u64(field, *self as u64),
                }
            }
        }
    )*};
}
int_field!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl FieldValue for isize {
    const KIND: FieldKind = FieldKind::Int;
    const STATIC_TYPE_KEY: &'static str = "int";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self as i64))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        let i = i64::try_from(value)?;
        isize::try_from(i).map_err(|_| TypeError::new("isize (in range)", "int"))
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_i64(field, *self as i64);
    }
}

impl FieldValue for f64 {
    const KIND: FieldKind = FieldKind::Float;
    const STATIC_TYPE_KEY: &'static str = "float";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        // An int is accepted for a float field (JSON writes `2.0` as `2` in some tools).
        match value.as_int() {
            Some(i) => Ok(i as f64),
            None => f64::try_from(value),
        }
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_f64(field, *self);
    }
}

impl FieldValue for f32 {
    const KIND: FieldKind = FieldKind::Float;
    const STATIC_TYPE_KEY: &'static str = "float";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(f64::from(*self)))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        f64::from_any(value).map(|x| x as f32)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_f64(field, f64::from(*self));
    }
}

impl FieldValue for bool {
    const KIND: FieldKind = FieldKind::Bool;
    const STATIC_TYPE_KEY: &'static str = "bool";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        bool::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_bool(field, *self);
    }
}

impl FieldValue for std::string::String {
    const KIND: FieldKind = FieldKind::Str;
    const STATIC_TYPE_KEY: &'static str = "ffi.String";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self.as_str()))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        std::string::String::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_str(field, self);
    }
}

impl FieldValue for ObjString {
    const KIND: FieldKind = FieldKind::Str;
    const STATIC_TYPE_KEY: &'static str = "ffi.String";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self.clone()))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        ObjString::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_str(field, self.as_str());
    }
}

impl FieldValue for DataType {
    const KIND: FieldKind = FieldKind::DataType;
    const STATIC_TYPE_KEY: &'static str = "DataType";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        DataType::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_data_type(field, *self);
    }
}

impl FieldValue for Device {
    const KIND: FieldKind = FieldKind::Device;
    const STATIC_TYPE_KEY: &'static str = "Device";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        Device::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_device(field, *self);
    }
}

impl FieldValue for Any {
    const KIND: FieldKind = FieldKind::Any;
    const STATIC_TYPE_KEY: &'static str = "Any";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(self.clone())
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        Ok(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_any(field, self.view());
    }
}

impl<T: ObjectType> FieldValue for ObjectPtr<T> {
    const KIND: FieldKind = FieldKind::Object;
    const STATIC_TYPE_KEY: &'static str = T::TYPE_KEY;
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        ObjectPtr::<T>::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_object(field, Some(self.as_object_ref()));
    }
}

impl<F: FieldValue> FieldValue for Option<F> {
    const KIND: FieldKind = F::KIND;
    const STATIC_TYPE_KEY: &'static str = F::STATIC_TYPE_KEY;
    const OPTIONAL: bool = true;
    fn to_any(&self) -> Result<Any, TypeError> {
        match self {
            Some(x) => x.to_any(),
            None => Ok(Any::default()),
        }
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        if value.is_none() {
            Ok(None)
        } else {
            F::from_any(value).map(Some)
        }
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        match self {
            Some(x) => x.visit(field, v),
            None => v.visit_none(field),
        }
    }
}

/// Implements [`FieldValue`] for a `#[repr(transparent)]` handle over
/// `ObjectPtr<$obj>` (`Array`, `Map`, `Function`, …). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_handle_field {
    ($handle:ty, $key:expr) => {
        impl $crate::reflection::FieldValue for $handle {
            const KIND: $crate::reflection::FieldKind = $crate::reflection::FieldKind::Object;
            const STATIC_TYPE_KEY: &'static str = $key;
            fn to_any(&self) -> Result<$crate::Any, $crate::TypeError> {
                Ok($crate::Any::from(self.clone()))
            }
            fn from_any(value: $crate::Any) -> Result<Self, $crate::TypeError> {
                <$handle as TryFrom<$crate::Any>>::try_from(value)
            }
            fn visit(
                &self,
                field: &$crate::reflection::FieldInfo,
                v: &mut dyn $crate::reflection::AttrVisitor,
            ) {
                let any = $crate::AnyView::from(self);
                v.visit_object(field, any.as_object());
            }
        }
    };
}

__object_handle_field!(crate::Error, "ffi.Error");

// ---------------------------------------------------------------------------------
// Visitors.
// ---------------------------------------------------------------------------------

/// Receives an object's reflected fields, in table order (the parent's first). Every
/// typed method defaults to [`visit_any`](AttrVisitor::visit_any), the only one a
/// visitor must write.
pub trait AttrVisitor {
    /// Any field, as a value view.
    fn visit_any(&mut self, field: &FieldInfo, value: AnyView<'_>);

    /// An integer field that fits in `i64`.
    fn visit_i64(&mut self, field: &FieldInfo, value: i64) {
        self.visit_any(field, AnyView::from(value));
    }
    /// An unsigned field beyond `i64::MAX`.
    fn visit_u64(&mut self, field: &FieldInfo, value: u64) {
        self.visit_any(field, AnyView::from(value as f64));
    }
    /// A float field.
    fn visit_f64(&mut self, field: &FieldInfo, value: f64) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `bool` field.
    fn visit_bool(&mut self, field: &FieldInfo, value: bool) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A string field.
    fn visit_str(&mut self, field: &FieldInfo, value: &str) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `DataType` field.
    fn visit_data_type(&mut self, field: &FieldInfo, value: DataType) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `Device` field.
    fn visit_device(&mut self, field: &FieldInfo, value: Device) {
        self.visit_any(field, AnyView::from(value));
    }
    /// An object field (`None` only through an `Option`).
    fn visit_object(&mut self, field: &FieldInfo, value: Option<&ObjectRef>) {
        match value {
            Some(o) => self.visit_any(field, AnyView::from(o)),
            None => self.visit_none(field),
        }
    }
    /// An `Option` field holding `None`.
    fn visit_none(&mut self, field: &FieldInfo) {
        self.visit_any(field, AnyView::NONE);
    }
}

/// An object type whose fields the derive reflected. `#[derive(Object)]` implements it.
///
/// (Not a subtrait of [`ObjectType`], so that a type that fails `ObjectType`'s checks
/// reports that once, not again for every use of its reflection.)
pub trait Reflect: Sized {
    /// Every field, the parent's first (skipped ones flagged).
    const FIELDS: &'static [FieldInfo];

    /// Builds a value from named fields (parents first), taking each from `src`.
    ///
    /// # Errors
    ///
    /// A missing field, or a field of the wrong kind.
    #[doc(hidden)]
    fn from_fields(src: &mut FieldSource<'_, '_>) -> Result<Self, Error>;

    /// Calls `v` for every reflected field, the parent's first.
    fn visit_attrs(&self, v: &mut dyn AttrVisitor) {
        // SAFETY: `Self::FIELDS` describes `Self`'s layout (the derive built it with
        // `offset_of!`), and `self` is a live `Self`.
        unsafe { visit_table(Self::FIELDS, (self as *const Self).cast(), v) }
    }
}

/// # Safety
///
/// `fields` describes the layout of the live object at `base`.
unsafe fn visit_table(fields: &[FieldInfo], base: *const u8, v: &mut dyn AttrVisitor) {
    for field in fields {
        if let Some(visit) = field.visit {
            // SAFETY: the field lies at `offset` in the object (caller's guarantee).
            unsafe { visit(base.add(field.offset), field, v) };
        }
    }
}

/// The reflection of an object's run-time type, and the type itself.
fn reflection_of(obj: &ObjectRef) -> (&'static TypeInfo, &'static TypeReflection) {
    let info = obj.type_info();
    (info, info.reflection())
}

/// Calls `v` for every reflected field of `obj`, found from its run-time type.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{visit_object_attrs, AttrVisitor, FieldInfo};
/// use object_core::AnyView;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.visit.Pair")]
/// struct Pair { base: Object, a: i64, b: bool }
///
/// struct Names(Vec<String>);
/// impl AttrVisitor for Names {
///     fn visit_any(&mut self, field: &FieldInfo, value: AnyView<'_>) {
///         self.0.push(format!("{}={value:?}", field.name()));
///     }
/// }
/// let p = make_object(Pair { base: Object::new(), a: 7, b: true }).into_object_ref();
/// let mut names = Names(Vec::new());
/// visit_object_attrs(&p, &mut names);
/// assert_eq!(names.0, ["a=7", "b=true"]);
/// ```
pub fn visit_object_attrs(obj: &ObjectRef, v: &mut dyn AttrVisitor) {
    let (_, refl) = reflection_of(obj);
    // SAFETY: the run-time type's table describes the object's layout: a Rust type's
    // own table, or (for a run-time type made with `make_object_as`) the table of the
    // Rust ancestor whose layout the object has.
    unsafe { visit_table(refl.fields, ObjectPtr::as_ptr(obj).cast(), v) }
}

/// The names of `obj`'s reflected fields, the parent's first.
pub fn field_names(obj: &ObjectRef) -> Vec<&'static str> {
    reflection_of(obj)
        .1
        .reflected_fields()
        .map(|f| f.name)
        .collect()
}

/// The field `name` of `obj`, as a value.
///
/// # Errors
///
/// An `AttributeError` if the object's type has no reflected field `name`; a
/// `TypeError` for an unsigned field beyond `i64::MAX`.
pub fn get_attr(obj: &ObjectRef, name: &str) -> Result<Any, Error> {
    let (info, refl) = reflection_of(obj);
    let field = refl.field(name).ok_or_else(|| {
        Error::new(
            "AttributeError",
            format!("`{}` has no field `{name}`", info.key()),
        )
    })?;
    // SAFETY: as in `visit_object_attrs`.
    unsafe { field.read(ObjectPtr::as_ptr(obj).cast()) }
        .map_err(|e| Error::type_error(format!("field `{name}` of `{}`: {e}", info.key())))
}

/// The reflected `field` of `obj`, where `field` is an entry of the table of `obj`'s
/// run-time type (as found by iterating [`TypeReflection::reflected_fields`] of
/// `obj.type_info().reflection()`): the fast path for passes that walk tables.
///
/// # Errors
///
/// A `TypeError` if `field` is not an entry of that table, is skipped, or is an
/// unsigned value beyond `i64::MAX`.
pub fn get_field(obj: &ObjectRef, field: &FieldInfo) -> Result<Any, Error> {
    let (info, refl) = reflection_of(obj);
    let table = refl.fields.as_ptr_range();
    let p = field as *const FieldInfo;
    if !table.contains(&p) {
        return Err(Error::type_error(format!(
            "field `{}` is not a field of `{}`",
            field.name,
            info.key()
        )));
    }
    // SAFETY: `field` is an entry of the table describing `obj`'s layout.
    unsafe { field.read(ObjectPtr::as_ptr(obj).cast()) }
        .map_err(|e| Error::type_error(format!("field `{}` of `{}`: {e}", field.name, info.key())))
}

// ---------------------------------------------------------------------------------
// Construction.
// ---------------------------------------------------------------------------------

/// The named field values a type-erased constructor takes them from. Each field is
/// taken once; what is left over at the end is an error ("extra field").
pub struct FieldSource<'s, 'n> {
    type_key: &'static str,
    entries: &'s mut [(&'n str, Option<Any>)],
}

impl fmt::Debug for FieldSource<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldSource")
            .field("type_key", &self.type_key)
            .field("entries", &self.entries)
            .finish()
    }
}

impl<'s, 'n> FieldSource<'s, 'n> {
    /// A source over `entries` for building a `type_key`.
    pub fn new(type_key: &'static str, entries: &'s mut [(&'n str, Option<Any>)]) -> Self {
        FieldSource { type_key, entries }
    }

    /// Takes the field `name`, converted to `F`. Used by the derive.
    ///
    /// # Errors
    ///
    /// A `ValueError` if it is missing, a `TypeError` if it has the wrong kind; both
    /// name the field and the type.
    pub fn take<F: FieldValue>(&mut self, name: &'static str) -> Result<F, Error> {
        let slot = self
            .entries
            .iter_mut()
            .find(|(n, v)| *n == name && v.is_some())
            .and_then(|(_, v)| v.take());
        match slot {
            Some(value) => F::from_any(value).map_err(|e| {
                Error::type_error(format!("field `{name}` of `{}`: {e}", self.type_key))
            }),
            None if F::OPTIONAL => F::from_any(Any::default()).map_err(Error::from),
            None => Err(Error::value_error(format!(
                "missing field `{name}` ({}) of `{}`",
                F::STATIC_TYPE_KEY,
                self.type_key
            ))),
        }
    }

    fn finish(&self) -> Result<(), Error> {
        let Some((name, _)) = self.entries.iter().find(|(_, v)| v.is_some()) else {
            return Ok(());
        };
        // A name whose other entry was taken is a field given twice, not an unknown one.
        if self.entries.iter().any(|(n, v)| n == name && v.is_none()) {
            return Err(Error::value_error(format!(
                "field `{name}` of `{}` is given twice",
                self.type_key
            )));
        }
        Err(Error::value_error(format!(
            "`{}` has no field `{name}`",
            self.type_key
        )))
    }
}

/// Builds an object of type `info` from `src`, checking that every entry was used.
///
/// # Errors
///
/// As [`create`].
pub fn create_from_source(
    info: &'static TypeInfo,
    src: &mut FieldSource<'_, '_>,
) -> Result<ObjectRef, Error> {
    let refl = info.reflection();
    let Some(create) = refl.create else {
        return Err(Error::type_error(format!(
            "`{}` cannot be created from fields",
            info.key()
        )));
    };
    let obj = create(src, info)?;
    src.finish()?;
    Ok(obj)
}

/// Builds an object from its type key and field values (in any order; an `Option`
/// field may be left out). The type may also be a run-time registered descendant of a
/// Rust type without fields of its own.
///
/// # Errors
///
/// A `KeyError` for an unknown type key, a `ValueError` for a missing, extra or
/// duplicate field, a `TypeError` for a field of the wrong kind or a type that cannot
/// be built from fields (`#[object(opaque)]` built-ins); each names the field and the
/// type.
pub fn create<'n>(
    key: &str,
    fields: impl IntoIterator<Item = (&'n str, Any)>,
) -> Result<ObjectRef, Error> {
    let info = registry::type_info_by_key(key)
        .filter(|i| i.is_object())
        .ok_or_else(|| Error::new("KeyError", format!("unknown type key `{key}`")))?;
    let mut entries: Vec<(&'n str, Option<Any>)> =
        fields.into_iter().map(|(n, v)| (n, Some(v))).collect();
    let mut src = FieldSource::new(info.key(), &mut entries);
    create_from_source(info, &mut src)
}

/// Finishes a derive-generated creator: a plain `make_object`, or for a run-time
/// descendant, `make_object_as` with its index. Used by the derive.
#[doc(hidden)]
pub fn finish_create<T: ObjectType>(value: T, info: &'static TypeInfo) -> Result<ObjectRef, Error> {
    if info.index() == T::type_index() {
        Ok(crate::make_object(value).into_object_ref())
    } else {
        crate::make_object_as(value, info.index())
            .map(ObjectPtr::into_object_ref)
            .map_err(|e| Error::type_error(e.to_string()))
    }
}

// ---------------------------------------------------------------------------------
// The printer.
// ---------------------------------------------------------------------------------

/// How deep the printer descends before writing `…`.
const MAX_PRINT_DEPTH: usize = 96;

#[derive(Default)]
struct PrintState {
    /// Objects seen in the counting pass, and how often.
    seen: HashMap<usize, u32>,
    /// Labels of shared objects already printed in full.
    labels: HashMap<usize, usize>,
    next_label: usize,
    counting: bool,
    depth: usize,
}

thread_local! {
    /// The print in progress on this thread: the state on the stack of the outermost
    /// [`print_graph`], or null. A `Cell` of a raw pointer has no destructor, so this
    /// slot is never torn down: printing works at any point of a thread's life, also
    /// from other thread-locals' destructors (a slot with a destructor may already be
    /// gone then, and `with` on it panics, which aborts in a destructor).
    static PRINT: Cell<*const RefCell<PrintState>> = const { Cell::new(core::ptr::null()) };
}

/// Runs `f` on the state of the print in progress: `Some(None)` if there is none,
/// `None` if this thread's slot cannot be reached (not expected on any platform with
/// native thread-locals; the printer then degrades to a plain `key { … }`).
fn with_state<R>(f: impl FnOnce(Option<&mut PrintState>) -> R) -> Option<R> {
    let p = PRINT.try_with(Cell::get).ok()?;
    if p.is_null() {
        return Some(f(None));
    }
    // SAFETY: a non-null pointer is set only by `print_graph`, to state on its own stack
    // frame, and reset to null before that frame ends (on unwinding too); everything
    // that reaches here runs inside that call, on the same thread. The state is only
    // borrowed here, for `f`, which calls no `Debug` impl.
    let state = unsafe { &*p };
    let mut s = state.borrow_mut();
    Some(f(Some(&mut s)))
}

/// Discards output (the counting pass).
struct Sink;
impl fmt::Write for Sink {
    fn write_str(&mut self, _: &str) -> fmt::Result {
        Ok(())
    }
}

/// Formats an object through its run-time type: reflected types as
/// `key { field: value, … }` (pretty with `{:#?}`), built-ins through their own
/// `Debug`. An object reached more than once in the printed graph is printed in full
/// the first time, labelled (`tour.Var #1 { … }`, `ffi.Array #1 [1, 2]`), and as `#1`
/// afterwards. Nesting deeper than 96 objects is elided as `key { … }`.
pub fn debug_object(obj: &ObjectRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    print_graph(&DynObject(obj), f)
}

/// Prints `root` with graph state: a counting pass, then the printing pass. Nested
/// calls (an object inside a container inside an object) join the outermost print.
fn print_graph(root: &dyn fmt::Debug, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match PRINT.try_with(Cell::get) {
        // Join the print in progress.
        Ok(p) if !p.is_null() => return root.fmt(f),
        Ok(_) => {}
        // No slot: `reach` degrades every object to `key { … }`.
        Err(_) => return root.fmt(f),
    }
    let state = RefCell::new(PrintState {
        counting: true,
        ..PrintState::default()
    });
    /// Clears the slot before `state` goes, even if a `Debug` impl panics.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = PRINT.try_with(|p| p.set(core::ptr::null()));
        }
    }
    let _ = PRINT.try_with(|p| p.set(&state));
    let _reset = Reset;
    let _ = fmt::write(&mut Sink, format_args!("{root:?}"));
    {
        let mut s = state.borrow_mut();
        s.counting = false;
        s.depth = 0;
    }
    root.fmt(f)
}

/// What the printer does on reaching an object.
enum Reach {
    Full(Option<usize>),
    BackRef(usize),
    TooDeep,
}

fn reach(addr: usize) -> Reach {
    with_state(|s| {
        let Some(s) = s else {
            return Reach::Full(None);
        };
        if s.depth >= MAX_PRINT_DEPTH {
            return Reach::TooDeep;
        }
        if s.counting {
            let n = s.seen.entry(addr).or_insert(0);
            *n += 1;
            return if *n > 1 {
                Reach::BackRef(0)
            } else {
                Reach::Full(None)
            };
        }
        if let Some(&label) = s.labels.get(&addr) {
            return Reach::BackRef(label);
        }
        if s.seen.get(&addr).copied().unwrap_or(0) > 1 {
            s.next_label += 1;
            let label = s.next_label;
            s.labels.insert(addr, label);
            return Reach::Full(Some(label));
        }
        Reach::Full(None)
    })
    .unwrap_or(Reach::TooDeep)
}

fn enter() {
    with_state(|s| {
        if let Some(s) = s {
            s.depth += 1;
        }
    });
}

fn leave() {
    with_state(|s| {
        if let Some(s) = s {
            s.depth -= 1;
        }
    });
}

struct DynObject<'a>(&'a ObjectRef);

impl fmt::Debug for DynObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let obj = self.0;
        let (info, refl) = reflection_of(obj);
        if matches!(info.index(), ti::STRING | ti::BYTES) {
            // Strings and bytes are values: printed by content every time, never labelled.
            // SAFETY: the debug entry of the object's own (Rust) type.
            return unsafe { (refl.debug)(ObjectPtr::as_ptr(obj), f) };
        }
        let label = match reach(ObjectPtr::as_ptr(obj) as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::TooDeep => return write!(f, "{} {{ … }}", info.key()),
            Reach::Full(label) => label,
        };
        enter();
        let result = if refl.opaque || refl.custom_debug {
            // A shared opaque object (a container reached twice) is labelled too, so
            // that its later `#n` refers to something.
            let labelled = match label {
                Some(n) => write!(f, "{} #{n} ", info.key()),
                None => Ok(()),
            };
            // SAFETY: the debug entry is the one of the Rust type whose layout the
            // object has (its own, or its Rust ancestor's for a run-time type).
            labelled.and_then(|()| unsafe { (refl.debug)(ObjectPtr::as_ptr(obj), f) })
        } else {
            // SAFETY: as in `visit_object_attrs`.
            unsafe {
                fmt_fields(
                    info.key(),
                    label,
                    refl.fields,
                    ObjectPtr::as_ptr(obj).cast(),
                    f,
                )
            }
        };
        leave();
        result
    }
}

/// The `Debug` of a reflected (non-opaque) `#[derive(Object)]` type. Used by the
/// derive.
#[doc(hidden)]
pub fn debug_reflected<T: Reflect>(
    this: &T,
    key: &'static str,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    print_graph(&StaticObject(this, key), f)
}

struct StaticObject<'a, T>(&'a T, &'static str);

impl<T: Reflect> fmt::Debug for StaticObject<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match reach(self.0 as *const T as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::TooDeep => return write!(f, "{} {{ … }}", self.1),
            Reach::Full(label) => label,
        };
        enter();
        // SAFETY: `T::FIELDS` describes `T`, and `self.0` is a live `T`.
        let result =
            unsafe { fmt_fields(self.1, label, T::FIELDS, (self.0 as *const T).cast(), f) };
        leave();
        result
    }
}

/// # Safety
///
/// `fields` describes the live object at `base`.
unsafe fn fmt_fields(
    key: &str,
    label: Option<usize>,
    fields: &[FieldInfo],
    base: *const u8,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let name = match label {
        Some(n) => format!("{key} #{n}"),
        None => key.to_owned(),
    };
    let mut s = f.debug_struct(&name);
    struct Collect<'b, 'c, 'd>(&'b mut fmt::DebugStruct<'c, 'd>);
    impl AttrVisitor for Collect<'_, '_, '_> {
        fn visit_any(&mut self, field: &FieldInfo, value: AnyView<'_>) {
            self.0.field(field.name, &value);
        }
        fn visit_u64(&mut self, field: &FieldInfo, value: u64) {
            self.0.field(field.name, &value);
        }
        fn visit_str(&mut self, field: &FieldInfo, value: &str) {
            self.0.field(field.name, &value);
        }
        fn visit_object(&mut self, field: &FieldInfo, value: Option<&ObjectRef>) {
            match value {
                Some(o) => self.0.field(field.name, &DynObject(o)),
                None => self.0.field(field.name, &format_args!("None")),
            };
        }
    }
    // SAFETY: forwarded from the caller.
    unsafe { visit_table(fields, base, &mut Collect(&mut s)) };
    s.finish()
}

/// The `Debug` entry registered for a type: its own `Debug`. Used by the derive.
///
/// # Safety
///
/// `p` points to a live `T`.
#[doc(hidden)]
pub unsafe fn debug_entry<T: ObjectType + fmt::Debug>(
    p: *const Object,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    // SAFETY: guaranteed by the caller.
    fmt::Debug::fmt(unsafe { &*p.cast::<T>() }, f)
}

/// The reflection of value kinds (not objects): nothing to see.
pub(crate) static NO_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: true,
    custom_debug: false,
    create: None,
    debug: debug_entry::<Object>,
};

/// The root `Object`'s reflection: no fields; `create` makes a plain object.
pub(crate) static ROOT_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: false,
    custom_debug: false,
    create: Some(|_, info| finish_create(Object::new(), info)),
    debug: debug_entry::<Object>,
};

impl Reflect for Object {
    const FIELDS: &'static [FieldInfo] = &[];
    fn from_fields(_: &mut FieldSource<'_, '_>) -> Result<Self, Error> {
        Ok(Object::new())
    }
}

/// Autoref-based dispatch for generated code: the first impl applies when the type
/// has what it needs, the fallback (one more `&`) otherwise, so a parent or field type
/// that fails its own check is reported once, at that check, not again here. Not
/// public API.
#[doc(hidden)]
#[allow(clippy::new_without_default)]
pub mod probe {
    use core::marker::PhantomData;

    use super::{FieldInfo, FieldSource, FieldValue, Reflect};
    use crate::error::Error;

    fn unbuildable<T>() -> Error {
        Error::type_error(format!(
            "`{}` cannot be built from fields",
            core::any::type_name::<T>()
        ))
    }

    /// Builds a parent; call `(&ParentProbe::<T>::new()).parent_from_fields(src)`.
    #[derive(Debug)]
    pub struct ParentProbe<T>(PhantomData<T>);

    impl<T> ParentProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            ParentProbe(PhantomData)
        }
    }

    impl<T: Reflect> ParentProbe<T> {
        /// The parent's fields.
        pub const FIELDS: &'static [FieldInfo] = T::FIELDS;
    }

    /// The fallback for a parent that fails its own check: no fields.
    pub trait ParentFieldsFallback {
        /// No fields.
        const FIELDS: &'static [FieldInfo] = &[];
    }

    impl<T> ParentFieldsFallback for ParentProbe<T> {}

    /// The real entry point.
    pub trait Parent<T> {
        /// The parent built from fields.
        fn parent_from_fields(&self, src: &mut FieldSource<'_, '_>) -> Result<T, Error>;
    }

    impl<T: Reflect> Parent<T> for ParentProbe<T> {
        fn parent_from_fields(&self, src: &mut FieldSource<'_, '_>) -> Result<T, Error> {
            T::from_fields(src)
        }
    }

    /// The fallback, reached only for a first field that fails its own check.
    pub trait ParentFallback<T> {
        /// An error.
        fn parent_from_fields(&self, _: &mut FieldSource<'_, '_>) -> Result<T, Error> {
            Err(unbuildable::<T>())
        }
    }

    impl<T> ParentFallback<T> for &ParentProbe<T> {}

    /// Takes a field; call `(&FieldProbe::<T>::new()).take_field(src, name)`.
    #[derive(Debug)]
    pub struct FieldProbe<T>(PhantomData<T>);

    impl<T> FieldProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            FieldProbe(PhantomData)
        }
    }

    /// The real entry point.
    pub trait Field<T> {
        /// A field taken from `src`.
        fn take_field(&self, src: &mut FieldSource<'_, '_>, name: &'static str)
            -> Result<T, Error>;
    }

    impl<T: FieldValue> Field<T> for FieldProbe<T> {
        fn take_field(
            &self,
            src: &mut FieldSource<'_, '_>,
            name: &'static str,
        ) -> Result<T, Error> {
            src.take(name)
        }
    }

    /// The fallback, reached only for a field type that fails its own check.
    pub trait FieldFallback<T> {
        /// An error.
        fn take_field(&self, _: &mut FieldSource<'_, '_>, _: &'static str) -> Result<T, Error> {
            Err(unbuildable::<T>())
        }
    }

    impl<T> FieldFallback<T> for &FieldProbe<T> {}
}
