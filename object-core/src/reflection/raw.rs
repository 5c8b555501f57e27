//! Raw field access: the fenced part of reflection.
//!
//! A field table ([`FieldInfo`]s in a [`TypeReflection`]) says where each field lies in
//! an object (its `offset_of!` offset) and carries the type-erased entries that read it
//! as its Rust type. Everything that builds a table or reads an object through one is
//! here:
//!
//! - the constructors, `unsafe` because a table that does not describe its type would
//!   let safe code read one type's memory as another's (the derive calls them, with
//!   `offset_of!` and the field's own type);
//! - [`Reflect`], an `unsafe` trait for the same reason, implemented here for the root;
//! - the safe entry points the rest of reflection uses, each of which pairs an object
//!   with the table of its own run-time type (or a `&T` with `T::FIELDS`), so the
//!   pairing is right by construction.
//!
//! In the public API this access is `reflection::get_field` (a value),
//! `reflection::field_ref` (borrowed) and the per-type `reflection::FieldReader` that
//! serializers keep.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicPtr, Ordering};

use super::create::{finish_create, FieldSource};
use super::error::ReflectError;
use super::field::CreateFn;
use super::per_table::PerTable;
use super::value::{
    LAYOUT_I64, LAYOUT_OBJECT_POINTER, LAYOUT_OPTIONAL_OBJECT_POINTER, LAYOUT_OTHER, LAYOUT_U64,
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
pub(super) type ViewFn = for<'a> unsafe fn(*const u8, PhantomData<&'a ()>) -> ValueRef<'a>;
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
    }
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
};

/// A type's reflection. Used by the derive.
///
/// # Safety
///
/// For a type `T`: `fields` describes `T`'s layout (each entry as
/// [`reflected_field`] requires), `debug` is `debug_entry::<T>`, and `create` builds a
/// `T` (or a run-time descendant with `T`'s layout).
pub const unsafe fn type_reflection(
    fields: &'static [FieldInfo],
    opaque: bool,
    custom_debug: bool,
    create: Option<CreateFn>,
    debug: DebugFn,
) -> TypeReflection {
    TypeReflection {
        fields,
        opaque,
        custom_debug,
        create,
        debug,
        structural: StructuralKind::Tree,
        builtin: None,
        is_abstract: false,
        rebuild: None,
        eq_plan: AtomicPtr::new(core::ptr::null_mut()),
        child_fields: AtomicPtr::new(core::ptr::null_mut()),
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

    /// Builds a value from named fields (parents first), taking each from `src`.
    ///
    /// # Errors
    ///
    /// A missing field, or a field of the wrong kind.
    #[doc(hidden)]
    fn from_fields(src: &mut FieldSource<'_, '_>) -> Result<Self, ReflectError>;

    /// Calls `v` for every reflected field, the parent's first.
    fn visit_attrs(&self, v: &mut dyn AttrVisitor) {
        visit_value(self, v);
    }
}

/// The reflection of value kinds (not objects): nothing to see.
pub(crate) static NO_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: true,
    custom_debug: false,
    create: None,
    debug: debug_entry::<Object>,
    structural: StructuralKind::Tree,
    builtin: None,
    is_abstract: false,
    rebuild: None,
    eq_plan: AtomicPtr::new(core::ptr::null_mut()),
    child_fields: AtomicPtr::new(core::ptr::null_mut()),
};

/// The root `Object`'s reflection: no fields; `create` makes a plain object.
pub(crate) static ROOT_REFLECTION: TypeReflection = TypeReflection {
    fields: &[],
    opaque: false,
    custom_debug: false,
    create: Some(|_, info| finish_create(Object::new(), info)),
    debug: debug_entry::<Object>,
    structural: StructuralKind::Tree,
    builtin: None,
    is_abstract: false,
    rebuild: None,
    eq_plan: AtomicPtr::new(core::ptr::null_mut()),
    child_fields: AtomicPtr::new(core::ptr::null_mut()),
};

// SAFETY: the root has no fields.
unsafe impl Reflect for Object {
    const FIELDS: &'static [FieldInfo] = &[];
    fn from_fields(_: &mut FieldSource<'_, '_>) -> Result<Self, ReflectError> {
        Ok(Object::new())
    }
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
    // SAFETY: `T::FIELDS` describes `T`'s layout (`Reflect`'s contract), and `this` is a
    // live `T`.
    unsafe { visit_table(T::FIELDS, (this as *const T).cast(), v) }
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

    /// The value of the `k`-th entry of the object's table, borrowed from the object
    /// (`None` for a skipped entry or one past the end).
    #[inline(always)]
    pub(crate) fn view_at(self, k: usize) -> Option<ValueRef<'a>> {
        self.entry_at(k).map(|(_, v)| v)
    }

    /// The `k`-th entry of the object's table and its value, borrowed from the object
    /// (`None` for a skipped entry or one past the end).
    #[inline(always)]
    fn entry_at(self, k: usize) -> Option<(&'static FieldInfo, ValueRef<'a>)> {
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

    /// The object's type as a [`TreeType`]: one whose objects structural equality can
    /// compare in place ([`TreeType::is_tree`]) if it is a tree type (not `Var`, `Dag` or
    /// identity; no hooks; not opaque) with no definition fields, whose compared fields
    /// are all `ObjectPtr`s, `Option<ObjectPtr>`s or 8-byte integers.
    #[inline]
    pub(crate) fn tree_type(self) -> TreeType {
        let plan = eq_plan(self.refl);
        // (Made once per type and thread: the table keeps it.)
        let flags = match plan.tree.as_deref() {
            Some(ops) if ops.iter().all(|op| op.kind == InPlaceKind::Word) => {
                TreeType::TREE | TreeType::WORDS_ONLY
            }
            Some(_) => TreeType::TREE,
            None => 0,
        };
        TreeType {
            ops: plan.tree.as_deref().unwrap_or(&[]),
            index: self.info.index(),
            flags,
            key_hash: self.info.key_hash(),
        }
    }

    /// Formats the object through the `Debug` of the Rust type whose layout it has.
    pub(super) fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: the debug entry is the one of the Rust type whose layout the object
        // has (its own, or its Rust ancestor's for a run-time type).
        unsafe { (self.refl.debug)(ObjectPtr::as_ptr(self.obj), f) }
    }
}

// ---------------------------------------------------------------------------------
// The fields structural equality and hashing walk, read without the table's detours.
// ---------------------------------------------------------------------------------

/// One field a structural walk compares: a compact copy of its table entry.
#[derive(Clone, Copy)]
pub(crate) struct PlanField {
    /// The table entry (for its name in access paths).
    pub(crate) info: &'static FieldInfo,
    /// Whether the field is a definition site (`#[object(def)]`).
    pub(crate) def: bool,
    offset: usize,
    /// Set by this crate for the layouts it owns (see `FieldLayout`): those are
    /// read in place, the others through `view`.
    layout: u8,
    view: ViewFn,
}

impl PlanField {
    /// The field at `p` as a borrowed value (see [`read_field`]).
    ///
    /// # Safety
    ///
    /// `p` points to a live, initialized value of the field's Rust type (the one its
    /// table entry was made for) that outlives `'a`.
    #[inline(always)]
    unsafe fn read<'a>(&self, p: *const u8) -> ValueRef<'a> {
        // SAFETY: the caller's guarantee; `layout` and `view` were copied from the
        // field's table entry.
        unsafe { read_field(self.layout, self.view, p) }
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
unsafe fn read_field<'a>(layout: u8, view: ViewFn, p: *const u8) -> ValueRef<'a> {
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
            // SAFETY: an 8-byte integer lies at `p` (only the integer impls set these
            // layouts, for their 8-byte types); every bit pattern is an `i64`.
            ValueRef::Value(AnyView::from(unsafe { p.cast::<i64>().read() }))
        }
        // SAFETY: the caller's guarantee is the entry point's.
        _ => unsafe { view(p, PhantomData) },
    }
}

/// The fields of one type that structural equality and hashing compare, in the order
/// they are walked: definition sites first, then the others, each in table order;
/// skipped and `no_eq` fields left out. Built once per type (and kept: see the
/// structural engine's `plan_of`), so that the walk reads each field through one entry
/// point at a known offset instead of filtering the whole table per object.
pub(crate) struct EqPlan {
    refl: &'static TypeReflection,
    fields: Vec<PlanField>,
    /// Every field is declared a plain value or a string (no object can be among
    /// them, if the declarations hold: a walk still checks each value it reads).
    pub(crate) plain: bool,
    /// The offsets of the `ObjectPtr` fields after the first field, in walk order:
    /// the objects a recursive walk reads only after the first field's subtree.
    later_objects: Vec<usize>,
    /// For a tree type (not `Var`, `Dag` or identity; no hooks; not opaque) with no
    /// definition fields, whose planned fields all have layouts this crate owns
    /// (`ObjectPtr`, `Option<ObjectPtr>`, 8-byte integers): how to compare its objects
    /// in place, in walk order (see [`TreeType`]).
    tree: Option<Box<[InPlace]>>,
}

/// How one field of a tree type's objects is compared in place (see [`TreeType`]).
#[derive(Clone, Copy)]
struct InPlace {
    /// The field's offset.
    at: u32,
    /// The offset of the next `ObjectPtr` field in walk order, whose objects to start
    /// loading before this field's subtree is compared (0, the header's, for none).
    prefetch: u32,
    kind: InPlaceKind,
}

impl InPlace {
    /// This field's value in the object at `base`.
    ///
    /// # Safety
    ///
    /// `base` is the address of an object, borrowed for `'a`, of a type whose plan's
    /// in-place form (`EqPlan::tree`) holds this field.
    #[inline(always)]
    unsafe fn read<'a>(&self, base: *const u8) -> InPlaceValue<'a> {
        // The object's type is the plan's (the caller's guarantee), so the offset is that
        // of one of its planned fields, whose layout tag (set only by this crate's impls)
        // says which Rust type lies there; the object is borrowed for `'a`, and fields
        // change only uniquely, so the value lives and stays unchanged for `'a`.
        let p = base.wrapping_add(self.at as usize);
        match self.kind {
            // SAFETY: as above: an 8-byte integer (every bit pattern a `u64`).
            InPlaceKind::Word => InPlaceValue::Word(unsafe { p.cast::<u64>().read() }),
            // SAFETY: as above: an `ObjectPtr<T>` (`repr(transparent)` over the object
            // pointer), read as the erased handle (as `read_field` does).
            InPlaceKind::Object => InPlaceValue::Object(unsafe { &*p.cast::<ObjectRef>() }),
            // SAFETY: as above: an `Option<ObjectPtr<T>>`, read as the erased one.
            InPlaceKind::OptionalObject => match unsafe { &*p.cast::<Option<ObjectRef>>() } {
                Some(o) => InPlaceValue::Object(o),
                None => InPlaceValue::None,
            },
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum InPlaceKind {
    /// An 8-byte integer, compared by its bits.
    Word,
    /// An `ObjectPtr`.
    Object,
    /// An `Option<ObjectPtr>`.
    OptionalObject,
}

/// A type as structural equality's in-place walk sees it (made by
/// [`Described::tree_type`]): its index, and, if its objects are compared in place (if
/// it [is a tree type](Self::is_tree)), how. Made only from a described object, so the
/// fields are those of the reflection that describes every object with this index (the
/// registry never reuses an index).
#[derive(Clone, Copy)]
pub(crate) struct TreeType {
    /// The plan's in-place form (see `EqPlan::tree`; empty if the type has none).
    ops: &'static [InPlace],
    index: u32,
    /// `TREE` (the type has an in-place form), `WORDS_ONLY` (which holds only 8-byte
    /// integers: no object to compare).
    flags: u32,
    /// The stable hash of the type's key (see `TypeInfo::key_hash`).
    key_hash: u64,
}

impl TreeType {
    const TREE: u32 = 1;
    const WORDS_ONLY: u32 = 2;
}

/// A [`TreeType`] kept in a thread's table (its fields in cells, so that a look-up reads
/// only what it uses); empty when made.
pub(crate) struct TreeSlot {
    ops: Cell<&'static [InPlace]>,
    /// `u32::MAX` (no type's index) while empty.
    index: Cell<u32>,
    flags: Cell<u32>,
    key_hash: Cell<u64>,
}

impl TreeSlot {
    /// An empty slot.
    pub(crate) const fn new() -> TreeSlot {
        TreeSlot {
            ops: Cell::new(&[]),
            index: Cell::new(u32::MAX),
            flags: Cell::new(0),
            key_hash: Cell::new(0),
        }
    }

    /// The type kept, if it is the one of index `index`.
    #[inline(always)]
    pub(crate) fn get(&self, index: u32) -> Option<TreeType> {
        (self.index.get() == index).then(|| TreeType {
            ops: self.ops.get(),
            index,
            flags: self.flags.get(),
            key_hash: self.key_hash.get(),
        })
    }

    /// Keeps `t`.
    pub(crate) fn set(&self, t: TreeType) {
        self.ops.set(t.ops);
        self.index.set(t.index);
        self.flags.set(t.flags);
        self.key_hash.set(t.key_hash);
    }
}

/// A field of a tree type's object, read in place (see [`TreeFields`]).
#[derive(Clone, Copy)]
pub(crate) enum InPlaceValue<'a> {
    /// An 8-byte integer's bits.
    Word(u64),
    /// An `Option<ObjectPtr>` that is `None`.
    None,
    /// An object.
    Object(&'a ObjectRef),
}

impl TreeType {
    /// The type's index.
    #[inline(always)]
    pub(crate) fn index(self) -> u32 {
        self.index
    }

    /// Whether the type's objects are compared in place.
    #[inline(always)]
    pub(crate) fn is_tree(self) -> bool {
        self.flags & TreeType::TREE != 0
    }

    /// The type, with its objects never compared in place (strings, say, which are
    /// compared as values).
    #[inline]
    pub(crate) fn never_in_place(self) -> TreeType {
        TreeType {
            ops: &[],
            flags: 0,
            ..self
        }
    }

    /// The stable hash of the type's key.
    #[inline(always)]
    pub(crate) fn key_hash(self) -> u64 {
        self.key_hash
    }

    /// The compared fields of `o`, an object of this type, in walk order; `None` if `o`
    /// is not of this type.
    #[inline(always)]
    pub(crate) fn fields<'a>(self, o: &'a ObjectRef) -> Option<TreeFields<'a>> {
        (self.is_tree() && o.type_index() == self.index).then(|| TreeFields {
            ops: self.ops.iter(),
            o: ObjectPtr::as_ptr(o).cast::<u8>(),
            object: PhantomData,
        })
    }

    /// Whether the type's compared fields are all 8-byte integers ([`TreePair::of`] compares
    /// its objects on the spot).
    #[inline(always)]
    pub(crate) fn words_only(self) -> bool {
        self.flags & TreeType::WORDS_ONLY != 0
    }
}

/// Two objects of one tree type (made by [`TreePair::of`]), compared field by field in
/// place, in walk order: [`next`](Self::next) gives each pair of objects in turn to the
/// caller, who compares them, and compares the other fields itself. A walk keeps the
/// pairs it is inside of on an [`InPlaceStack`].
#[derive(Clone)]
pub(crate) struct TreePair<'a> {
    /// The fields still to compare.
    ops: core::slice::Iter<'static, InPlace>,
    /// The two objects' addresses.
    l: *const u8,
    r: *const u8,
    objects: PhantomData<&'a ObjectRef>,
}

/// The compared fields of an object of a tree type (made by [`TreeType::fields`]), read
/// in place, in walk order.
#[derive(Clone)]
pub(crate) struct TreeFields<'a> {
    /// The fields still to read.
    ops: core::slice::Iter<'static, InPlace>,
    /// The object's address.
    o: *const u8,
    object: PhantomData<&'a ObjectRef>,
}

impl<'a> Iterator for TreeFields<'a> {
    type Item = InPlaceValue<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<InPlaceValue<'a>> {
        let op = self.ops.next()?;
        // SAFETY: the object has the type whose plan `ops` came from (checked by
        // `TreeType::fields`), and is borrowed for `'a`.
        Some(unsafe { op.read(self.o) })
    }
}

/// A pair of objects as [`TreePair::of`] takes it.
pub(crate) enum Child<'a> {
    /// Of different types: they differ.
    Differ,
    /// Of a tree type whose compared fields are all 8-byte integers (say `IntImm`):
    /// whether they are equal (they hold nothing else to compare).
    Leaf(bool),
    /// Of a tree type with objects among its fields: to compare in place.
    Pair(TreePair<'a>),
    /// Of the same type, but not one `find` gave as a tree type: for the general walk.
    Other,
}

/// What [`TreePair::next`] found.
pub(crate) enum PairStep<'a> {
    /// The next pair of objects, for the caller to compare.
    Objects(&'a ObjectRef, &'a ObjectRef),
    /// A pair of integers, or of `None` and an object, that differ: the objects differ.
    Differ,
    /// Every field is compared.
    End,
}

impl<'a> TreePair<'a> {
    /// `x` and `y`, objects held in fields of a pair being compared in place, as the
    /// walk takes them: through the tree type `find` gives for their type index (called
    /// with it only if both have it), if it gives one of that index. Each type index is
    /// read once.
    #[inline(always)]
    pub(crate) fn of(
        x: &'a ObjectRef,
        y: &'a ObjectRef,
        find: impl FnOnce(u32) -> Option<TreeType>,
    ) -> Child<'a> {
        let index = x.type_index();
        if index != y.type_index() {
            return Child::Differ;
        }
        let t = match find(index) {
            Some(t) if t.is_tree() && t.index == index => t,
            _ => return Child::Other,
        };
        let (l, r) = (
            ObjectPtr::as_ptr(x).cast::<u8>(),
            ObjectPtr::as_ptr(y).cast::<u8>(),
        );
        if t.words_only() {
            return Child::Leaf(t.ops.iter().all(|op| {
                // SAFETY: both objects have the type `t` (checked above), whose plan
                // `ops` came from, and are borrowed for `'a`.
                match unsafe { (op.read(l), op.read(r)) } {
                    (InPlaceValue::Word(a), InPlaceValue::Word(b)) => a == b,
                    // (Not met: the type's fields are all integers.)
                    _ => false,
                }
            }));
        }
        Child::Pair(TreePair {
            ops: t.ops.iter(),
            l,
            r,
            objects: PhantomData,
        })
    }

    /// Compares the fields up to the next pair of objects and hands that pair out,
    /// having started to load the objects of the next `ObjectPtr` field after it (read
    /// once this pair's subtree is compared).
    #[inline(always)]
    pub(crate) fn next(&mut self) -> PairStep<'a> {
        for op in self.ops.by_ref() {
            if op.kind == InPlaceKind::Object && op.prefetch != 0 {
                let at = op.prefetch as usize;
                // Both objects have the type whose plan `ops` came from (checked by
                // `TreePair::of`), and are borrowed for `'a`; `prefetch` is the offset of a
                // later field of the plan that is an `ObjectPtr`.
                // SAFETY: as above (`repr(transparent)` over the object pointer): read as
                // the erased handles.
                let (a, b) = unsafe {
                    (
                        &*self.l.add(at).cast::<ObjectRef>(),
                        &*self.r.add(at).cast::<ObjectRef>(),
                    )
                };
                ObjectPtr::prefetch(a);
                ObjectPtr::prefetch(b);
            }
            // SAFETY: as above.
            match unsafe { (op.read(self.l), op.read(self.r)) } {
                (InPlaceValue::Object(x), InPlaceValue::Object(y)) => {
                    return PairStep::Objects(x, y);
                }
                (InPlaceValue::Word(a), InPlaceValue::Word(b)) if a == b => {}
                (InPlaceValue::None, InPlaceValue::None) => {}
                _ => return PairStep::Differ,
            }
        }
        PairStep::End
    }

    /// Whether every field is compared ([`next`](Self::next) would say `End`).
    #[inline(always)]
    pub(crate) fn is_done(&self) -> bool {
        self.ops.len() == 0
    }
}

/// A stack of up to `N` values kept in place (no allocation, and nothing written until a
/// value is pushed): the [`TreePair`]s (or objects being hashed) an iterative walk is
/// inside of.
pub(crate) struct InPlaceStack<T, const N: usize> {
    items: [MaybeUninit<T>; N],
    /// `items[..len]` are written.
    len: usize,
}

impl<T, const N: usize> InPlaceStack<T, N> {
    /// An empty stack.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        InPlaceStack {
            items: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    /// Pushes `v`, or hands it back if the stack is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: T) -> Result<(), T> {
        let Some(slot) = self.items.get_mut(self.len) else {
            return Err(v);
        };
        slot.write(v);
        self.len += 1;
        Ok(())
    }

    /// The value pushed last, taken off.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.len = self.len.checked_sub(1)?;
        // SAFETY: `items[..len]` are written (the field's invariant, kept by `push`),
        // and the old `len - 1` is below the old `len`; reading it out moves it (`len`
        // no longer covers it, so it is neither read nor dropped again).
        Some(unsafe { self.items.get_unchecked(self.len).assume_init_read() })
    }
}

impl<T, const N: usize> Drop for InPlaceStack<T, N> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            while self.pop().is_some() {}
        }
    }
}

/// The field plan of the type `refl` describes: made once per table for the process
/// (kept for good, a few bytes per type, like the table itself) and found through the
/// table after that, with one load: a walk is often short (a `StructuralKey` per
/// subexpression, say), and a plan looked up in a map cost a good part of one.
pub(crate) fn eq_plan(refl: &'static TypeReflection) -> &'static EqPlan {
    static ALL: PerTable<EqPlan> = PerTable::new();
    kept(&refl.eq_plan, &ALL, refl, || EqPlan::new(refl))
}

/// The indices (in the table) of the fields of the type `refl` describes that can hold
/// a child object, as `make` lists them the first time: kept, and found, as
/// [`eq_plan`] keeps its plan (the generic walkers ask once per node).
pub(crate) fn child_fields(
    refl: &'static TypeReflection,
    make: impl FnOnce() -> Vec<u16>,
) -> &'static [u16] {
    static ALL: PerTable<ChildFields> = PerTable::new();
    &kept(&refl.child_fields, &ALL, refl, || ChildFields(make())).0
}

/// The field indices [`child_fields`] keeps for a table.
pub(crate) struct ChildFields(Vec<u16>);

/// The value kept in `slot` (a field of `refl`) for the rest of the process: made by
/// `make` the first time any thread asks (`all` hands racing threads the same one),
/// then found with one load.
fn kept<V: 'static>(
    slot: &AtomicPtr<V>,
    all: &'static PerTable<V>,
    refl: &'static TypeReflection,
    make: impl FnOnce() -> V,
) -> &'static V {
    let p = slot.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: only stored below, from a value `all` leaked (never freed); the
        // acquire load pairs with the release store, so the value is seen made.
        return unsafe { &*p };
    }
    // (Two threads may both get here: `all` gives them the same value.)
    let v = all.get(refl, || Box::new(make()));
    slot.store(core::ptr::from_ref(v).cast_mut(), Ordering::Release);
    v
}

impl EqPlan {
    /// The plan of the type `refl` describes.
    pub(crate) fn new(refl: &'static TypeReflection) -> EqPlan {
        let mut fields = Vec::new();
        for defs in [true, false] {
            for info in refl.fields {
                let Some(view) = info.view else { continue };
                if info.flags.contains(FieldFlags::NO_EQUALITY) {
                    continue;
                }
                let def = info.flags.contains(FieldFlags::DEFINITION);
                if def == defs {
                    fields.push(PlanField {
                        info,
                        def,
                        offset: info.offset,
                        layout: info.layout,
                        view,
                    });
                }
            }
        }
        let plain = fields.iter().all(|f| {
            matches!(
                f.info.kind(),
                FieldKind::Bool
                    | FieldKind::Int
                    | FieldKind::Float
                    | FieldKind::Str
                    | FieldKind::DataType
                    | FieldKind::Device
            )
        });
        let later_objects = fields
            .iter()
            .skip(1)
            .filter(|f| f.layout == LAYOUT_OBJECT_POINTER)
            .map(|f| f.offset)
            .collect();
        let is_tree =
            refl.structural == StructuralKind::Tree && refl.builtin.is_none() && !refl.is_opaque();
        let tree = fields
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let kind = match f.layout {
                    _ if f.def => return None,
                    LAYOUT_I64 | LAYOUT_U64 => InPlaceKind::Word,
                    LAYOUT_OBJECT_POINTER => InPlaceKind::Object,
                    LAYOUT_OPTIONAL_OBJECT_POINTER => InPlaceKind::OptionalObject,
                    _ => return None,
                };
                let next = fields[k + 1..]
                    .iter()
                    .find(|g| g.layout == LAYOUT_OBJECT_POINTER);
                Some(InPlace {
                    at: u32::try_from(f.offset).ok()?,
                    prefetch: next.map_or(Some(0), |g| u32::try_from(g.offset).ok())?,
                    kind,
                })
            })
            .collect::<Option<Box<[InPlace]>>>()
            .filter(|_| is_tree);
        EqPlan {
            refl,
            fields,
            plain,
            later_objects,
            tree,
        }
    }

    /// The planned fields of `obj`, with their values borrowed from it, in walk order
    /// (none if `obj` is not described by this plan's reflection).
    #[inline]
    pub(crate) fn views<'p, 'a>(
        &'p self,
        obj: Described<'a>,
    ) -> impl DoubleEndedIterator<Item = (&'p PlanField, ValueRef<'a>)> + 'p
    where
        'a: 'p,
    {
        let ok = core::ptr::eq(obj.refl, self.refl);
        let fields = if ok { &self.fields[..] } else { &[] };
        let base = ObjectPtr::as_ptr(obj.obj).cast::<u8>();
        fields.iter().map(move |f| {
            // `f` was copied from an entry of `self.refl`, the table that describes the
            // object's layout (checked above: `obj.refl` is `self.refl`, see `describe`).
            // SAFETY: so a value of the entry's Rust type lies at `offset`, kept alive
            // and unchanged for `'a` by `obj.obj: &'a ObjectRef`.
            (f, unsafe { f.read(base.add(f.offset)) })
        })
    }

    /// Starts loading the objects that `l`'s and `r`'s `ObjectPtr` fields after the
    /// first one hold (a walk reads them after the first field's subtree); nothing if
    /// either is not described by this plan's reflection.
    #[inline(always)]
    pub(crate) fn prefetch_later_objects(&self, l: Described<'_>, r: Described<'_>) {
        if !(core::ptr::eq(l.refl, self.refl) && core::ptr::eq(r.refl, self.refl)) {
            return;
        }
        let (lb, rb) = (
            ObjectPtr::as_ptr(l.obj).cast::<u8>(),
            ObjectPtr::as_ptr(r.obj).cast::<u8>(),
        );
        // Each offset is that of a field of `ObjectPtr` layout (only its impl sets it) in
        // the objects `self.refl` describes, as both are (checked above): an `ObjectPtr`
        // lies there, read as the erased handle (as in `read_field`).
        for &offset in &self.later_objects {
            // SAFETY: as above; `l` is borrowed for the call, so the field lives.
            ObjectPtr::prefetch(unsafe { &*lb.add(offset).cast::<ObjectRef>() });
            // SAFETY: as above, for `r`.
            ObjectPtr::prefetch(unsafe { &*rb.add(offset).cast::<ObjectRef>() });
        }
    }

    /// The planned fields of `l` and `r`, objects of the same type, side by side in walk
    /// order (none if either is not described by this plan's reflection).
    #[inline]
    pub(crate) fn pairs<'p, 'a>(
        &'p self,
        l: Described<'a>,
        r: Described<'a>,
    ) -> impl DoubleEndedIterator<Item = (&'p PlanField, ValueRef<'a>, ValueRef<'a>)> + 'p
    where
        'a: 'p,
    {
        let ok = core::ptr::eq(l.refl, self.refl) && core::ptr::eq(r.refl, self.refl);
        let fields = if ok { &self.fields[..] } else { &[] };
        let (lb, rb) = (
            ObjectPtr::as_ptr(l.obj).cast::<u8>(),
            ObjectPtr::as_ptr(r.obj).cast::<u8>(),
        );
        fields.iter().map(move |f| {
            // As in `views`, for each side (both checked to be described by `self.refl`).
            // SAFETY: a value of the entry's Rust type lies at `offset` in each object,
            // kept alive and unchanged for `'a` by the `&'a ObjectRef`s.
            let (lv, rv) = unsafe { (f.read(lb.add(f.offset)), f.read(rb.add(f.offset))) };
            (f, lv, rv)
        })
    }
}
