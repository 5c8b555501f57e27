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
//! - Field-less enums are fields too (`#[derive(ObjectEnum)]`, [`ObjectEnum`]): stored
//!   in place, valued as their variant's integer, named through their [`EnumInfo`].
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::reflection::{create, field_names, get_attr, ReflectErrorKind};
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
//! let p: ObjectRef = Point::new(3, 0.5).into_object_ref();
//! assert_eq!(field_names(&p), ["x", "y_coord"]);
//! assert_eq!(get_attr(&p, "x").unwrap().as_int(), Some(3));
//! assert!(get_attr(&p, "z").is_err());
//!
//! let q = create("doc.refl.Point", [("x", Any::from(1)), ("y_coord", Any::from(2.5))]).unwrap();
//! assert_eq!(q.downcast_ref::<Point>().unwrap().y, 2.5);
//! assert_eq!(format!("{q:?}"), "doc.refl.Point { x: 1, y_coord: 2.5 }");
//!
//! let err = create("doc.refl.Point", [("x", Any::from("one"))]).unwrap_err();
//! assert_eq!(err.kind(), ReflectErrorKind::WrongType);
//! assert_eq!(err.field(), Some("x"));
//! assert_eq!(err.to_string(), "field `x` of `doc.refl.Point`: expected int, got ffi.String");
//! ```
//!
//! Errors are [`ReflectError`]s, whose [`kind`](ReflectError::kind) a caller can
//! match; across the packed-call boundary they become [`Error`](crate::Error)s with the
//! `KeyError` / `AttributeError` / `ValueError` / `TypeError` kinds of tvm-ffi.

use core::fmt;

use crate::any::Any;
use crate::ptr::ObjectRef;
use crate::TypeInfo;

// (`pub(crate)` where `__private` re-exports what generated code uses.)
// Objects built field by field through their table: fields written into raw memory at
// the table's offsets.
#[allow(unsafe_code)]
pub(crate) mod build;
pub(crate) mod create;
mod enums;
mod error;
pub(crate) mod field;
// A table's slot for a value kept through it: read as the value it was given.
#[allow(unsafe_code)]
pub(crate) mod per_table;
pub(crate) mod print;
// Field access by offset through the derive's tables, and the tables' constructors.
#[allow(unsafe_code)]
pub(crate) mod raw;
// The printer's per-thread pointer to its state on the stack of the outermost print.
#[allow(unsafe_code)]
mod print_slot;
// Run-time field tables: their cells written, read and dropped in place, at the offsets
// the table gives.
#[allow(unsafe_code)]
pub(crate) mod runtime;
mod value;
mod visit;

pub use self::create::{create, create_from_source, FieldFeed, FieldSource};
pub use self::enums::{EnumInfo, EnumRepr, EnumVariant};
pub use self::error::{ReflectError, ReflectErrorKind};
pub use self::field::{DefaultFn, FieldFlags, FieldInfo, FieldKind, TypeReflection};
pub use self::print::{debug_object, print_snapshot};
pub use self::raw::{ObjectEnum, Reflect};
pub use self::runtime::{FieldSpec, FieldType, RuntimeFields, MAX_FIELD_TYPE_DEPTH};
#[doc(hidden)]
pub use self::value::FieldLayout;
pub use self::value::{ByHandle, ByInto, FieldValue, IntoField, TakeAs, ValueRef};
pub use self::visit::AttrVisitor;

pub(crate) use self::raw::{NO_REFLECTION, ROOT_REFLECTION};
pub(crate) use self::value::{
    LAYOUT_I16, LAYOUT_I32, LAYOUT_I64, LAYOUT_I8, LAYOUT_OBJECT_POINTER,
    LAYOUT_OPTIONAL_OBJECT_POINTER, LAYOUT_U16, LAYOUT_U32, LAYOUT_U64, LAYOUT_U8,
};

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
/// let p = Pair::new(7, true).into_object_ref();
/// let mut names = Names(Vec::new());
/// visit_object_attrs(&p, &mut names);
/// assert_eq!(names.0, ["a=7", "b=true"]);
/// ```
pub fn visit_object_attrs(obj: &ObjectRef, v: &mut dyn AttrVisitor) {
    raw::describe(obj).visit(v);
}

/// The names of `obj`'s reflected fields, the parent's first (`#[object(rename)]`d
/// where renamed; skipped fields left out).
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::field_names;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.names.Base")]
/// struct Base { base: Object, id: i64 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.names.Leaf", parent = Base)]
/// struct Leaf {
///     base: Base,
///     #[object(rename = "text")]
///     label: String,
///     #[object(skip)]
///     cache: u64,
/// }
///
/// let l = Leaf::new(1, "a"); // `cache`, skipped, is `Default::default()`
/// assert_eq!(field_names(l.as_object_ref()), ["id", "text"]);
/// ```
pub fn field_names(obj: &ObjectRef) -> Vec<&'static str> {
    obj.type_info()
        .reflection()
        .reflected_fields()
        .map(|f| f.name)
        .collect()
}

/// The field `name` of `obj`, as a value, found through `obj`'s run-time type.
///
/// # Errors
///
/// A [`ReflectError`] of kind [`NoSuchField`](ReflectErrorKind::NoSuchField) if the
/// object's type has no reflected field `name` (an `AttributeError` as an
/// [`Error`](crate::Error)), or [`OutOfRange`](ReflectErrorKind::OutOfRange) for an
/// unsigned field beyond `i64::MAX` (a `TypeError`).
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{get_attr, ReflectErrorKind};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.attr.Point")]
/// struct Point { base: Object, x: i64, big: u64 }
///
/// let p = Point::new(3, u64::MAX).into_object_ref();
/// assert_eq!(get_attr(&p, "x").unwrap().as_int(), Some(3));
/// assert_eq!(get_attr(&p, "z").unwrap_err().kind(), ReflectErrorKind::NoSuchField);
/// assert_eq!(get_attr(&p, "big").unwrap_err().kind(), ReflectErrorKind::OutOfRange);
/// ```
pub fn get_attr(obj: &ObjectRef, name: &str) -> Result<Any, ReflectError> {
    raw::describe(obj).read_named(name)
}

/// The reflected `field` of `obj`, where `field` is an entry of the table of `obj`'s
/// run-time type (as found by iterating [`TypeReflection::reflected_fields`] of
/// `obj.type_info().reflection()`): the fast path for passes that walk tables.
///
/// # Errors
///
/// A [`ReflectError`] (a `TypeError` as an [`Error`](crate::Error)) of kind
/// [`NotInTable`](ReflectErrorKind::NotInTable) if `field` is not an entry of that
/// table, [`SkippedField`](ReflectErrorKind::SkippedField) if it is skipped, or
/// [`OutOfRange`](ReflectErrorKind::OutOfRange) for an unsigned value beyond
/// `i64::MAX`.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{get_field, ReflectErrorKind};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.field.Pair")]
/// struct Pair { base: Object, a: i64, b: bool }
///
/// let p = Pair::new(1, true).into_object_ref();
/// let values: Vec<_> = p
///     .type_info()
///     .reflection()
///     .reflected_fields()
///     .map(|f| get_field(&p, f).unwrap())
///     .collect();
/// assert_eq!(values[0].as_int(), Some(1));
/// assert_eq!(values[1].as_bool(), Some(true));
///
/// let other = make_object(Object::new()).into_object_ref();
/// let a = p.type_info().reflection().field("a").unwrap();
/// assert_eq!(get_field(&other, a).unwrap_err().kind(), ReflectErrorKind::NotInTable);
/// ```
pub fn get_field(obj: &ObjectRef, field: &FieldInfo) -> Result<Any, ReflectError> {
    raw::describe(obj).read(field)
}

/// The reflected `field` of `obj` borrowed from the object, as [`get_field`] finds it
/// but without making an `Any`: an object field is lent as the object's handle (no
/// reference count taken), a string as `&str`, a plain value as an
/// [`AnyView`](crate::AnyView). The fast path for walks that only look at values, or
/// clone the few they keep.
///
/// # Errors
///
/// As [`get_field`]: [`NotInTable`](ReflectErrorKind::NotInTable) if `field` is not an
/// entry of the table of `obj`'s run-time type, [`SkippedField`](ReflectErrorKind::SkippedField)
/// if it is skipped, [`OutOfRange`](ReflectErrorKind::OutOfRange) for an unsigned value
/// beyond `i64::MAX`.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{field_ref, ValueRef};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.field_ref.Pair")]
/// struct Pair { base: Object, n: i64, next: Option<ObjectPtr<Pair>> }
///
/// let tail = Pair::new(2, None);
/// let head = Pair::new(1, Some(tail.clone()));
/// let head = head.into_object_ref();
/// let refl = head.type_info().reflection();
///
/// let ValueRef::Value(n) = field_ref(&head, refl.field("n").unwrap()).unwrap() else {
///     panic!("an int is a plain value")
/// };
/// assert_eq!(n.as_int(), Some(1));
/// let ValueRef::Object(next) = field_ref(&head, refl.field("next").unwrap()).unwrap() else {
///     panic!("an object field lends the object")
/// };
/// assert!(std::ptr::eq(ObjectPtr::as_ptr(next).cast::<u8>(), ObjectPtr::as_ptr(&tail).cast::<u8>()));
/// assert_eq!(ObjectPtr::strong_count(&tail), 2); // nothing taken by the read
/// ```
pub fn field_ref<'a>(obj: &'a ObjectRef, field: &FieldInfo) -> Result<ValueRef<'a>, ReflectError> {
    raw::describe(obj).read_ref(field)
}

/// The fields of one type, resolved once for reading many objects of exactly that type
/// in place: a check of the object's type index, then each field by its position in
/// [`TypeReflection::fields`], with no registry look-up or table search per read. What
/// serializers and other walks over many objects of few types keep per type.
///
/// Reads are as [`field_ref`]'s, with `None` where that gives an error.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{FieldReader, ValueRef};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.reader.Point")]
/// struct Point { base: Object, x: i64, y: i64 }
///
/// let points: Vec<ObjectRef> = (0..3)
///     .map(|i| Point::new(i, 10 * i).into_object_ref())
///     .collect();
/// let reader = FieldReader::new(points[0].type_info());
/// let y = reader.type_info().reflection().fields().iter().position(|f| f.name() == "y").unwrap();
/// let ys: Vec<i64> = points
///     .iter()
///     .map(|p| match reader.read(p).unwrap().get(y) {
///         Some(ValueRef::Value(v)) => v.as_int().unwrap(),
///         _ => unreachable!(),
///     })
///     .collect();
/// assert_eq!(ys, [0, 10, 20]);
/// // An object of another type is not read through this reader.
/// assert!(reader.read(&make_object(Object::new()).into_object_ref()).is_none());
/// ```
#[derive(Clone, Copy)]
pub struct FieldReader {
    desc: raw::TypeDescriber,
}

impl FieldReader {
    /// The reader of objects whose run-time type is `info`.
    pub fn new(info: &'static TypeInfo) -> Self {
        FieldReader {
            desc: raw::TypeDescriber::of(info),
        }
    }

    /// The type read.
    pub fn type_info(&self) -> &'static TypeInfo {
        self.desc.info()
    }

    /// The fields of `obj`, if its run-time type is exactly the reader's (one compare).
    #[inline]
    pub fn read<'a>(&self, obj: &'a ObjectRef) -> Option<ObjectFields<'a>> {
        self.desc.describe(obj).map(|d| ObjectFields { desc: d })
    }
}

impl fmt::Debug for FieldReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldReader")
            .field(&self.type_info().key())
            .finish()
    }
}

/// An object's fields, borrowed through a [`FieldReader`].
#[derive(Clone, Copy)]
pub struct ObjectFields<'a> {
    desc: raw::Described<'a>,
}

impl<'a> ObjectFields<'a> {
    /// The value of the `k`-th entry of [`TypeReflection::fields`] of the object's
    /// type, borrowed from the object; `None` where [`get_field`] fails (a skipped
    /// field, an unsigned value beyond `i64::MAX`) and for `k` past the end. The hot
    /// path carries no error: ask [`get_field`] or [`field_ref`] for it.
    #[inline]
    pub fn get(&self, k: usize) -> Option<ValueRef<'a>> {
        self.desc.read_at(k)
    }
}

impl fmt::Debug for ObjectFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ObjectFields")
            .field(&self.desc.info().key())
            .finish()
    }
}
