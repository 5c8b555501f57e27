//! Raw field access: the fenced part of reflection.
//!
//! A field table ([`FieldInfo`]s in a [`TypeReflection`]) says where each field lies in
//! an object (its `offset_of!` offset) and carries the type-erased entries that read it
//! as its Rust type. Here are the tables and the typed reads through them:
//!
//! - the constructors, `unsafe` because a table that does not describe its type would
//!   let safe code read one type's memory as another's (the derive calls them, with
//!   `offset_of!` and the field's own type);
//! - [`Reflect`], an `unsafe` trait for the same reason, implemented here for the root;
//! - the safe entry points the rest of reflection uses, each of which pairs an object
//!   with the table of its own run-time type (or a `&T` with `T::FIELDS`), so the
//!   pairing is right by construction: [`Described`] (one object), [`TypeDescriber`]
//!   (the objects of one type);
//! - [`read_field`], a field at an address as a borrowed value (in place for the
//!   layouts this crate owns), which structural equality's walk plans
//!   (`structural::plan`, fenced on their own) read described objects through.
//!
//! In the public API this access is `reflection::get_field` (a value),
//! `reflection::field_ref` (borrowed) and the per-type `reflection::FieldReader` that
//! serializers keep.

use core::fmt;
use core::marker::PhantomData;

use super::build::{FieldBuild, TableBuild};
use super::create::finish_create;
use super::error::ReflectError;
use super::per_table::Kept;
use super::value::{
    LAYOUT_I16, LAYOUT_I32, LAYOUT_I64, LAYOUT_I8, LAYOUT_OBJECT_POINTER,
    LAYOUT_OPTIONAL_OBJECT_POINTER, LAYOUT_OTHER, LAYOUT_U16, LAYOUT_U32, LAYOUT_U64, LAYOUT_U8,
};
use super::{AttrVisitor, FieldFlags, FieldInfo, FieldKind, FieldValue, TypeReflection, ValueRef};
use crate::any::{Any, AnyView, TypeError};
use crate::header::Object;
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::TypeInfo;
use crate::structural::StructuralKind;

/// Reads a field, given its address, as a value.
pub(super) type GetFn = unsafe fn(*const u8) -> Result<Any, TypeError>;
/// Visits a field, given its address.
pub(super) type VisitFn = unsafe fn(*const u8, &FieldInfo, &mut dyn AttrVisitor);
/// Views a field, given its address, as a borrowed value (for as long as the caller
/// says the field lives).
pub(crate) type ViewFn = for<'a> unsafe fn(*const u8, PhantomData<&'a ()>) -> ValueRef<'a>;
/// Formats an object through its Rust type's own `Debug`.
pub(super) type DebugFn = unsafe fn(*const Object, &mut fmt::Formatter<'_>) -> fmt::Result;

// ---------------------------------------------------------------------------------
// Building tables.
// ---------------------------------------------------------------------------------

/// A reflected field of Rust type `F` called `name`, at `offset` in its object. Used by
/// the derive.
///
/// # Safety
///
/// In every object whose table holds the result, an initialized `F` lies at `offset`
/// from the object's start for as long as the object lives.
pub const unsafe fn reflected_field<F: FieldValue>(
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
    let flags = if F::ANY_LAYOUT {
        flags.union(FieldFlags::ANY_LAYOUT)
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
        view: Some(view_erased::<F>),
        layout: F::LAYOUT.tag(),
        default: None,
        enum_info: F::ENUM,
        kept_default: None,
        build: Some(FieldBuild::reflected::<F>()),
    }
}

/// A skipped field: recorded for layout readers, invisible to reflection passes. Used by
/// the derive.
///
/// # Safety
///
/// As for [`reflected_field`]: `offset` is where the field lies (foreign readers of the
/// table trust it; Rust never reads a skipped field).
pub const unsafe fn skipped_field(
    name: &'static str,
    offset: usize,
    rust_type: &'static str,
) -> FieldInfo {
    FieldInfo {
        name,
        offset,
        kind: FieldKind::Opaque,
        static_type_key: "",
        rust_type,
        flags: FieldFlags::SKIPPED,
        get: None,
        visit: None,
        view: None,
        layout: LAYOUT_OTHER,
        default: None,
        enum_info: None,
        kept_default: None,
        build: None,
    }
}

/// A skipped field of a type `F` with a `Default`, which objects built through their
/// table (and the mutator's copies) take. Used by the derive for the skipped fields of
/// every type that is not `opaque`.
///
/// # Safety
///
/// As for [`reflected_field`]: an `F` lies at `offset`.
pub const unsafe fn skipped_field_default<F: Default>(
    name: &'static str,
    offset: usize,
    rust_type: &'static str,
) -> FieldInfo {
    // SAFETY: the caller's guarantee.
    let mut f = unsafe { skipped_field(name, offset, rust_type) };
    f.build = Some(FieldBuild::skipped::<F>());
    f
}

/// Filler for building tables in constants: a skipped field with no name at offset 0,
/// which nothing reads.
pub(super) const PLACEHOLDER: FieldInfo = FieldInfo {
    name: "",
    offset: 0,
    kind: FieldKind::Opaque,
    static_type_key: "",
    rust_type: "",
    flags: FieldFlags::SKIPPED,
    get: None,
    visit: None,
    view: None,
    layout: LAYOUT_OTHER,
    default: None,
    enum_info: None,
    kept_default: None,
    build: None,
};

/// A type's reflection. Used by the derive, which then adds the table build
/// ([`TypeReflection::with_table`]) of every type whose objects can be built field by
/// field.
///
/// # Safety
///
/// For a type `T`: `fields` describes `T`'s layout (each entry as
/// [`reflected_field`] requires, every field of `T` listed, the parent's first), and
/// `debug` is `debug_entry::<T>` (or `debug_entry::<Object>` for a type that prints
/// through its table: neither `opaque` nor `custom_debug`).
pub const unsafe fn type_reflection(
    fields: &'static [FieldInfo],
    opaque: bool,
    custom_debug: bool,
    debug: DebugFn,
) -> TypeReflection {
    TypeReflection {
        fields,
        opaque,
        custom_debug,
        create: None,
        debug,
        table: None,
        structural: StructuralKind::Tree,
        builtin: None,
        is_abstract: false,
        rebuild: None,
        eq_plan: Kept::new(),
        child_fields: Kept::new(),
    }
}

/// An object type whose fields the derive reflected. `#[derive(Object)]` implements it.
///
/// (Not a subtrait of [`ObjectType`](crate::ObjectType), so that a type that fails
/// `ObjectType`'s checks reports that once, not again for every use of its reflection.)
///
/// # Safety
///
/// `FIELDS` describes `Self`'s layout: each reflected entry's offset is that of a field
/// of the entry's Rust type in every `Self` (the derive builds the table with
/// `offset_of!`). Visits read `Self` values through it.
pub unsafe trait Reflect: Sized {
    /// Every field, the parent's first (skipped ones flagged).
    const FIELDS: &'static [FieldInfo];

    /// How structural equality and hashing treat objects of this type
    /// (`#[object(structural = "…")]`, else the parent's; the root's is `Tree`).
    const STRUCTURAL: crate::structural::StructuralKind = crate::structural::StructuralKind::Tree;

    /// Calls `v` for every reflected field, the parent's first.
    fn visit_attrs(&self, v: &mut dyn AttrVisitor) {
        visit_value(self, v);
    }
}

/// A field-less enum that can be a reflected field, stored in place.
/// `#[derive(ObjectEnum)]` implements it (and [`FieldValue`] for the enum, through
/// it); see the derive for the attributes (`key`, `crate`; `rename` on a variant).
///
/// The field's value is the variant's integer (`Variant as i64`); its name is in the
/// descriptor ([`EnumInfo`](super::EnumInfo)), which the printer, the JSON graph, C and
/// Python read. [`create`](super::create) takes the name or the value:
///
/// ```
/// use object_core::prelude::*;
/// use object_core::reflection::{create, get_attr, ReflectErrorKind};
/// use object_core::structural::structural_equal;
/// use object_core::Any;
///
/// #[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
/// #[repr(u8)]
/// #[object_enum(key = "doc.enum.BinOpKind")]
/// enum BinOpKind { Add, Sub, #[object_enum(rename = "mul")] Mul = 7 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.enum.Binary")]
/// struct Binary { base: Object, op: BinOpKind, lhs: i64, rhs: i64 }
///
/// let e = Binary::new(BinOpKind::Sub, 5, 3);            // the enum itself, in place
/// assert_eq!(format!("{e:?}"), "doc.enum.Binary { op: Sub, lhs: 5, rhs: 3 }");
/// assert_eq!(get_attr(e.as_object_ref(), "op").unwrap().as_int(), Some(1));
///
/// let by_name = create("doc.enum.Binary", [("op", Any::from("mul")), ("lhs", Any::from(1)), ("rhs", Any::from(2))]).unwrap();
/// let by_value = create("doc.enum.Binary", [("op", Any::from(7)), ("lhs", Any::from(1)), ("rhs", Any::from(2))]).unwrap();
/// assert_eq!(by_name.downcast_ref::<Binary>().unwrap().op, BinOpKind::Mul);
/// assert!(structural_equal(&by_name, &by_value));
///
/// let err = create("doc.enum.Binary", [("op", Any::from("Pow")), ("lhs", Any::from(1)), ("rhs", Any::from(2))]).unwrap_err();
/// assert_eq!(err.kind(), ReflectErrorKind::WrongType);
/// assert_eq!(
///     err.to_string(),
///     r#"field `op` of `doc.enum.Binary`: expected doc.enum.BinOpKind (one of Add, Sub, mul, by name or value; "Pow" is none of them), got ffi.String"#
/// );
/// ```
///
/// # Safety
///
/// `Self` is a field-less enum, and [`ENUM_INFO`](Self::ENUM_INFO) describes it:
/// its variants in declaration order, each with the value `Variant as i64`; its
/// [`repr`](super::EnumInfo::repr) is [`EnumRepr::Int`](super::EnumRepr::Int) only if
/// the enum is `#[repr]` of an integer of that size and sign (the in-place reads of
/// structural equality and of C rely on it). [`variant_index`](Self::variant_index),
/// [`from_variant_index`](Self::from_variant_index) and [`value`](Self::value) agree
/// with that list.
pub unsafe trait ObjectEnum: Sized + Send + Sync + 'static {
    /// The enum's descriptor.
    const ENUM_INFO: &'static super::EnumInfo;

    /// The position of this variant in [`EnumInfo::variants`](super::EnumInfo::variants).
    fn variant_index(&self) -> usize;

    /// The variant at `index` in [`EnumInfo::variants`](super::EnumInfo::variants).
    fn from_variant_index(index: usize) -> Option<Self>;

    /// This variant's integer value (`self as i64`, for a `Copy` enum).
    fn value(&self) -> i64;

    /// This variant's reflected name.
    fn variant_name(&self) -> &'static str {
        Self::ENUM_INFO
            .variants()
            .get(self.variant_index())
            .map_or("", |v| v.name())
    }

    /// The variant of value `value`.
    fn from_value(value: i64) -> Option<Self> {
        let at = Self::ENUM_INFO
            .variants()
            .iter()
            .position(|v| v.value() == value)?;
        Self::from_variant_index(at)
    }

    /// The variant called `name` (its reflected name).
    fn from_name(name: &str) -> Option<Self> {
        let at = Self::ENUM_INFO
            .variants()
            .iter()
            .position(|v| v.name() == name)?;
        Self::from_variant_index(at)
    }

    /// The variant `value` names: a string by name, an integer by value (what
    /// [`create`](super::create) and the JSON graph take).
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the enum and its variants (see
    /// [`EnumInfo::position`](super::EnumInfo::position)).
    fn from_view(value: AnyView<'_>) -> Result<Self, TypeError> {
        let at = Self::ENUM_INFO.position(value)?;
        Self::from_variant_index(at).ok_or_else(|| {
            TypeError::new(Self::ENUM_INFO.key(), "a variant the enum does not list")
        })
    }
}

/// The reflection of value kinds (not objects): nothing to see.
pub(crate) static NO_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: true,
    custom_debug: false,
    create: None,
    debug: debug_entry::<Object>,
    table: None,
    structural: StructuralKind::Tree,
    builtin: None,
    is_abstract: false,
    rebuild: None,
    eq_plan: Kept::new(),
    child_fields: Kept::new(),
};

/// The root `Object`'s reflection: no fields; `create` makes a plain object. Its table
/// build (`Object`'s layout, deleters and `drop_value`) is what run-time field tables
/// over the root build their prefix with (none) and drop it with.
pub(crate) static ROOT_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: false,
    custom_debug: false,
    create: Some(|_, info| finish_create(Object::new(), info)),
    debug: debug_entry::<Object>,
    // SAFETY: `Object`'s own registration; the table (none) lists every field.
    table: Some(unsafe { TableBuild::of::<Object>(&crate::root::ROOT_REGISTRATION) }),
    structural: StructuralKind::Tree,
    builtin: None,
    is_abstract: false,
    rebuild: None,
    eq_plan: Kept::new(),
    child_fields: Kept::new(),
};

// SAFETY: the root has no fields.
unsafe impl Reflect for Object {
    const FIELDS: &'static [FieldInfo] = &[];
}

// ---------------------------------------------------------------------------------
// The type-erased entries a table holds.
// ---------------------------------------------------------------------------------

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

/// # Safety
///
/// `p` points to a live, initialized `F` that outlives `'a`.
unsafe fn view_erased<'a, F: FieldValue>(p: *const u8, _: PhantomData<&'a ()>) -> ValueRef<'a> {
    // SAFETY: guaranteed by the caller.
    unsafe { &*p.cast::<F>() }.borrow_value()
}

/// The `Debug` entry registered for a type: its own `Debug`. Used by the derive.
///
/// # Errors
///
/// Only the formatter's.
///
/// # Safety
///
/// `p` points to a live `T`.
pub unsafe fn debug_entry<T: ObjectType + fmt::Debug>(
    p: *const Object,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    // SAFETY: guaranteed by the caller.
    fmt::Debug::fmt(unsafe { &*p.cast::<T>() }, f)
}

// ---------------------------------------------------------------------------------
// Reading objects through their tables (safe: each pairs an object with its own table).
// ---------------------------------------------------------------------------------

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

/// Calls `v` for every reflected field of `this`, through `T::FIELDS`.
pub(super) fn visit_value<T: Reflect>(this: &T, v: &mut dyn AttrVisitor) {
    ValueFields::of(this).visit(v)
}

/// A value (an object's or one not in an object yet) paired with its Rust type's table:
/// what the derived `Debug` prints through, with no code of the type's own beyond
/// making the pair.
#[derive(Clone, Copy)]
pub(super) struct ValueFields<'a> {
    base: *const u8,
    fields: &'static [FieldInfo],
    _value: PhantomData<&'a ()>,
}

impl<'a> ValueFields<'a> {
    /// `this` and `T`'s table.
    #[inline(always)]
    pub(super) fn of<T: Reflect>(this: &'a T) -> Self {
        ValueFields {
            base: (this as *const T).cast(),
            fields: T::FIELDS,
            _value: PhantomData,
        }
    }

    /// The value's address (for the printer's back-references).
    pub(super) fn address(&self) -> usize {
        self.base as usize
    }

    /// Calls `v` for every reflected field.
    pub(super) fn visit(&self, v: &mut dyn AttrVisitor) {
        // SAFETY: `fields` is `T::FIELDS`, which describes `T`'s layout (`Reflect`'s
        // contract), and `base` a live `T`, borrowed for `'a` (`of`).
        unsafe { visit_table(self.fields, self.base, v) }
    }
}

/// An object paired with the reflection of its own run-time type: the pairing every
/// read through a table relies on, made here, once, so the reads below are safe.
#[derive(Clone, Copy)]
pub(crate) struct Described<'a> {
    obj: &'a ObjectRef,
    info: &'static TypeInfo,
    refl: &'static TypeReflection,
}

/// `obj` with its run-time type's entry and reflection: for a Rust type its own table,
/// for a run-time type made with `make_object_as` the table of the Rust ancestor whose
/// layout the object has.
#[inline]
pub(crate) fn describe(obj: &ObjectRef) -> Described<'_> {
    let info = obj.type_info();
    Described {
        obj,
        info,
        refl: info.reflection(),
    }
}

/// A type's entry paired with the reflection that describes its objects, for describing
/// many objects of that type without a registry look-up each (the `transform` walkers
/// keep one per type index for the length of a pass).
#[derive(Clone, Copy)]
pub(crate) struct TypeDescriber {
    info: &'static TypeInfo,
    refl: &'static TypeReflection,
}

impl TypeDescriber {
    /// The describer of objects of type `info`.
    pub(crate) fn of(info: &'static TypeInfo) -> Self {
        TypeDescriber {
            info,
            refl: info.reflection(),
        }
    }

    /// The type's entry.
    #[inline]
    pub(crate) fn info(&self) -> &'static TypeInfo {
        self.info
    }

    /// The reflection describing the type's objects.
    #[inline]
    pub(crate) fn reflection(&self) -> &'static TypeReflection {
        self.refl
    }

    /// `obj` described, if its run-time type is exactly this one (one compare).
    #[inline(always)]
    pub(crate) fn describe<'a>(&self, obj: &'a ObjectRef) -> Option<Described<'a>> {
        (obj.type_index() == self.info.index()).then_some(Described {
            obj,
            info: self.info,
            refl: self.refl,
        })
    }
}

impl<'a> Described<'a> {
    /// The object.
    #[inline(always)]
    pub(crate) fn object(self) -> &'a ObjectRef {
        self.obj
    }

    /// The object's run-time type.
    #[inline]
    pub(crate) fn info(&self) -> &'static TypeInfo {
        self.info
    }

    /// The reflection that describes the object's layout.
    #[inline]
    pub(crate) fn reflection(&self) -> &'static TypeReflection {
        self.refl
    }

    /// Calls `v` for every reflected field.
    pub(super) fn visit(&self, v: &mut dyn AttrVisitor) {
        // SAFETY: `self.refl` describes the object's layout (see `describe`).
        unsafe { visit_table(self.refl.fields, ObjectPtr::as_ptr(self.obj).cast(), v) }
    }

    /// Reads `field`, an entry of the object's table, as a value.
    ///
    /// # Errors
    ///
    /// [`NotInTable`](super::ReflectErrorKind::NotInTable) if `field` is not an entry of the
    /// object's table, [`SkippedField`](super::ReflectErrorKind::SkippedField) if it is
    /// skipped, [`OutOfRange`](super::ReflectErrorKind::OutOfRange) if the value has no `Any`
    /// form.
    #[inline]
    pub(super) fn read(&self, field: &FieldInfo) -> Result<Any, ReflectError> {
        let get = self.entry_point(field, |f| f.get)?;
        // SAFETY: `field` is an entry of the table describing the object's layout
        // (checked by `entry_point`), so its value lies at `offset` in the live object.
        unsafe { get(ObjectPtr::as_ptr(self.obj).cast::<u8>().add(field.offset)) }
            .map_err(|e| ReflectError::unreadable(self.info.key(), field.name, false, e))
    }

    /// The entry point `pick` takes from `field`, once `field` is checked to be an
    /// entry of the object's table (`NotInTable` if not) that is not skipped
    /// (`SkippedField`: no entry point).
    #[inline]
    fn entry_point<F>(
        &self,
        field: &FieldInfo,
        pick: impl FnOnce(&FieldInfo) -> Option<F>,
    ) -> Result<F, ReflectError> {
        let table = self.refl.fields.as_ptr_range();
        if !table.contains(&(field as *const FieldInfo)) {
            return Err(ReflectError::not_in_table(self.info.key(), field.name));
        }
        pick(field).ok_or_else(|| Self::skipped(self.info, field))
    }

    /// Reads `field`, an entry of the object's table, borrowed from the object (see
    /// [`field_ref`](super::field_ref)).
    pub(super) fn read_ref(&self, field: &FieldInfo) -> Result<ValueRef<'a>, ReflectError> {
        let view = self.entry_point(field, |f| f.view)?;
        let base = ObjectPtr::as_ptr(self.obj).cast::<u8>();
        // `field` is an entry of the table describing the object's layout (checked by
        // `entry_point`); `self.obj: &'a ObjectRef` keeps the object alive and unchanged
        // SAFETY: for `'a` (fields change only uniquely), so a value of the field's Rust
        // type lies at `offset` for as long as the borrow.
        let v = unsafe { read_field(field.layout, view, base.add(field.offset)) };
        self.exact(field, v)
    }

    /// The value of the `k`-th entry of the object's table, borrowed from the object,
    /// exactly: `None` for a skipped entry, one past the end, or an unsigned value
    /// beyond `i64::MAX` (read in place as its bits; see [`exact`](Self::exact)).
    #[inline(always)]
    pub(super) fn read_at(self, k: usize) -> Option<ValueRef<'a>> {
        let (field, v) = self.entry_at(k)?;
        (!Self::wraps(field, v)).then_some(v)
    }

    /// `v`, read in place from `field`, or `OutOfRange` if it is an unsigned 8-byte
    /// value beyond `i64::MAX`, as `get_field` reports it.
    #[inline(always)]
    fn exact(&self, field: &FieldInfo, v: ValueRef<'a>) -> Result<ValueRef<'a>, ReflectError> {
        if Self::wraps(field, v) {
            return Err(Self::beyond_i64(self.info, field));
        }
        Ok(v)
    }

    /// Whether `v`, read in place from `field`, is an unsigned 8-byte value beyond
    /// `i64::MAX` (read as its bits: a negative number).
    #[inline(always)]
    fn wraps(field: &FieldInfo, v: ValueRef<'_>) -> bool {
        field.layout == LAYOUT_U64
            && matches!(v, ValueRef::Value(i) if i.as_int().is_some_and(|i| i < 0))
    }

    /// The error for an unsigned value beyond `i64::MAX`.
    #[cold]
    fn beyond_i64(info: &TypeInfo, field: &FieldInfo) -> ReflectError {
        let e = TypeError::new("int (an i64)", "an unsigned value beyond i64::MAX");
        ReflectError::unreadable(info.key(), field.name, false, e)
    }

    /// The error for reading a skipped entry.
    #[cold]
    fn skipped(info: &TypeInfo, field: &FieldInfo) -> ReflectError {
        let e = TypeError::new("a reflected field", "a skipped field");
        ReflectError::unreadable(info.key(), field.name, true, e)
    }

    /// Reads the reflected field called `name`.
    ///
    /// # Errors
    ///
    /// [`NoSuchField`](super::ReflectErrorKind::NoSuchField) if the type has no reflected
    /// field `name`, [`OutOfRange`](super::ReflectErrorKind::OutOfRange) if the value has no
    /// `Any` form.
    #[inline]
    pub(super) fn read_named(&self, name: &str) -> Result<Any, ReflectError> {
        let Some((field, get)) = self.refl.field(name).and_then(|f| Some((f, f.get?))) else {
            return Err(ReflectError::no_such_field(self.info.key(), name));
        };
        // SAFETY: `field` is a reflected entry of the table describing the object's
        // layout (found in it), so its value lies at `offset` in the live object.
        unsafe { get(ObjectPtr::as_ptr(self.obj).cast::<u8>().add(field.offset)) }
            .map_err(|e| ReflectError::unreadable(self.info.key(), name, false, e))
    }

    /// `other` described as an object of the same run-time type as this one (no registry
    /// look-up), or `None` if its type differs.
    #[inline]
    pub(crate) fn same_type(self, other: &'a ObjectRef) -> Option<Described<'a>> {
        (other.type_index() == self.info.index()).then_some(Described {
            obj: other,
            info: self.info,
            refl: self.refl,
        })
    }

    /// The `k`-th entry of the object's table and its value, borrowed from the object
    /// (`None` for a skipped entry or one past the end).
    #[inline(always)]
    pub(crate) fn entry_at(self, k: usize) -> Option<(&'static FieldInfo, ValueRef<'a>)> {
        let field = self.refl.fields.get(k)?;
        let view = field.view?;
        let base = ObjectPtr::as_ptr(self.obj).cast::<u8>();
        // `field` is an entry of the table describing the object's layout (`self.refl`,
        // see `describe`).
        // SAFETY: so a value of its Rust type lies at `offset`, kept alive and unchanged
        // for `'a` by `self.obj: &'a ObjectRef` (fields change only uniquely).
        let v = unsafe { read_field(field.layout, view, base.add(field.offset)) };
        Some((field, v))
    }

    /// Formats the object through the `Debug` of the Rust type whose layout it has.
    pub(super) fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: the debug entry is the one of the Rust type whose layout the object
        // has (its own, or its Rust ancestor's for a run-time type).
        unsafe { (self.refl.debug)(ObjectPtr::as_ptr(self.obj), f) }
    }
}

/// A field at `p` as a borrowed value: in place for the layouts this crate knows
/// (`layout`, a `FieldLayout` tag), through the table's entry point `view` for the
/// others.
///
/// # Safety
///
/// `layout` and `view` come from the table entry of a field whose Rust type has a live,
/// initialized value at `p` that outlives `'a`.
#[inline(always)]
pub(crate) unsafe fn read_field<'a>(layout: u8, view: ViewFn, p: *const u8) -> ValueRef<'a> {
    match layout {
        LAYOUT_OBJECT_POINTER => {
            // SAFETY: an `ObjectPtr<T>` lies at `p` (only its impl sets this layout);
            // it is `repr(transparent)` over the object pointer whatever `T`, so it
            // reads as the erased handle, as `as_object_ref` does.
            ValueRef::Object(unsafe { &*p.cast::<ObjectRef>() })
        }
        LAYOUT_OPTIONAL_OBJECT_POINTER => {
            // SAFETY: an `Option<ObjectPtr<T>>` lies at `p` (only `Option`'s impl sets
            // this layout, over an `ObjectPtr`): read as the erased one.
            match unsafe { &*p.cast::<Option<ObjectRef>>() } {
                Some(o) => ValueRef::Object(o),
                None => ValueRef::Value(AnyView::NONE),
            }
        }
        LAYOUT_I64 | LAYOUT_U64 => {
            // Only the integer impls set these layouts, for their 8-byte types, and
            // `FieldLayout::object_enum` for an enum of 8-byte integer representation,
            // aligned as one.
            // SAFETY: so an 8-byte integer lies at `p`; every bit pattern is an `i64`.
            ValueRef::Value(AnyView::from(unsafe { p.cast::<i64>().read() }))
        }
        // The narrower integer layouts, set only by `FieldLayout::object_enum`, for an
        // `ObjectEnum` whose (unsafe) contract says it is `#[repr]` of that integer, of
        // its size and alignment (checked there): its discriminant lies at `p`, read
        // and widened as `Variant as i64` widens it.
        LAYOUT_I8 => {
            // SAFETY: as above, an `i8`.
            let v = unsafe { p.cast::<i8>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        LAYOUT_U8 => {
            // SAFETY: as above, a `u8`.
            let v = unsafe { p.cast::<u8>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        LAYOUT_I16 => {
            // SAFETY: as above, an `i16`.
            let v = unsafe { p.cast::<i16>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        LAYOUT_U16 => {
            // SAFETY: as above, a `u16`.
            let v = unsafe { p.cast::<u16>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        LAYOUT_I32 => {
            // SAFETY: as above, an `i32`.
            let v = unsafe { p.cast::<i32>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        LAYOUT_U32 => {
            // SAFETY: as above, a `u32`.
            let v = unsafe { p.cast::<u32>().read() };
            ValueRef::Value(AnyView::from(i64::from(v)))
        }
        // SAFETY: the caller's guarantee is the entry point's.
        _ => unsafe { view(p, PhantomData) },
    }
}
