//! Structural equality's walk plans: per type, the fields the walks compare and how to
//! read them, made once from the type's reflection table and kept through it (a slot
//! of the table, see `reflection::per_table::Kept`). Fenced: the plans read objects in
//! place, at the offsets their table gives.
//!
//! - [`EqPlan`], a type's compared fields in walk order ([`PlanField`]s: definition
//!   sites first, skipped and `no_eq` fields left out), read through one entry point
//!   each (in place for the layouts this crate owns) from an object paired with its
//!   table (`reflection::raw::Described`), so the pairing is right by construction;
//! - for a *tree type* (compared fields all `ObjectPtr`, `Option<ObjectPtr>`, 8-byte
//!   integers or enums of an integer representation, no definitions, no hooks), the plan's in-place form: a list of offsets
//!   ([`InPlace`]) behind a [`TreeType`], which the walks keep per thread
//!   ([`TreeSlot`]) and read pairs ([`TreePair`]) or single objects ([`TreeFields`])
//!   through, with no look at a field's table entry.
//!
//! The walks that use them are in `equal.rs` and `hash.rs`; the stack they keep the
//! pairs on is `in_place_stack.rs`.

use core::cell::Cell;
use core::marker::PhantomData;

use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::per_table::PerTable;
use crate::reflection::raw::{read_field, Described, ViewFn};
use crate::reflection::{
    FieldFlags, FieldInfo, FieldKind, TypeReflection, ValueRef, LAYOUT_I16, LAYOUT_I32, LAYOUT_I64,
    LAYOUT_I8, LAYOUT_OBJECT_POINTER, LAYOUT_OPTIONAL_OBJECT_POINTER, LAYOUT_U16, LAYOUT_U32,
    LAYOUT_U64, LAYOUT_U8,
};
use crate::structural::StructuralKind;

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
    /// The field at `p` as a borrowed value (see `reflection::raw::read_field`).
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

/// The fields of one type that structural equality and hashing compare, in the order
/// they are walked: definition sites first, then the others, each in table order;
/// skipped and `no_eq` fields left out. Built once per type (and kept: see
/// [`eq_plan`]), so that the walk reads each field through one entry point at a known
/// offset instead of filtering the whole table per object.
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
    /// (`ObjectPtr`, `Option<ObjectPtr>`, 8-byte integers, `#[repr(int)]` enums): how to compare its objects
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
            // The narrower integers (an enum of that integer representation, as its
            // layout tag says), widened as `read_field` widens them, to the bits of the
            // `i64` the field's value is.
            InPlaceKind::I8 => {
                // SAFETY: as above: an `i8`.
                let v = unsafe { p.cast::<i8>().read() };
                InPlaceValue::Word(i64::from(v) as u64)
            }
            InPlaceKind::U8 => {
                // SAFETY: as above: a `u8`.
                let v = unsafe { p.read() };
                InPlaceValue::Word(u64::from(v))
            }
            InPlaceKind::I16 => {
                // SAFETY: as above: an `i16`.
                let v = unsafe { p.cast::<i16>().read() };
                InPlaceValue::Word(i64::from(v) as u64)
            }
            InPlaceKind::U16 => {
                // SAFETY: as above: a `u16`.
                let v = unsafe { p.cast::<u16>().read() };
                InPlaceValue::Word(u64::from(v))
            }
            InPlaceKind::I32 => {
                // SAFETY: as above: an `i32`.
                let v = unsafe { p.cast::<i32>().read() };
                InPlaceValue::Word(i64::from(v) as u64)
            }
            InPlaceKind::U32 => {
                // SAFETY: as above: a `u32`.
                let v = unsafe { p.cast::<u32>().read() };
                InPlaceValue::Word(u64::from(v))
            }
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
    /// A narrower integer (an enum of that integer representation), widened to an
    /// `i64`'s bits as its value is.
    I8,
    /// See `I8`.
    U8,
    /// See `I8`.
    I16,
    /// See `I8`.
    U16,
    /// See `I8`.
    I32,
    /// See `I8`.
    U32,
    /// An `ObjectPtr`.
    Object,
    /// An `Option<ObjectPtr>`.
    OptionalObject,
}

impl InPlaceKind {
    /// Whether the field is an integer (read as an `i64`'s bits).
    #[inline(always)]
    fn is_word(self) -> bool {
        !matches!(self, InPlaceKind::Object | InPlaceKind::OptionalObject)
    }
}

/// A type as structural equality's in-place walk sees it (made by
/// [`TreeType::of`]): its index, and, if its objects are compared in place (if
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
    /// `d`'s type as a [`TreeType`]: one whose objects structural equality can
    /// compare in place ([`TreeType::is_tree`]) if it is a tree type (not `Var`, `Dag` or
    /// identity; no hooks; not opaque) with no definition fields, whose compared fields
    /// are all `ObjectPtr`s, `Option<ObjectPtr>`s, 8-byte integers or `#[repr(int)]` enums.
    #[inline]
    pub(crate) fn of(d: Described<'_>) -> TreeType {
        let plan = eq_plan(d.reflection());
        // (Made once per type and thread: the table keeps it.)
        let flags = match plan.tree.as_deref() {
            Some(ops) if ops.iter().all(|op| op.kind.is_word()) => {
                TreeType::TREE | TreeType::WORDS_ONLY
            }
            Some(_) => TreeType::TREE,
            None => 0,
        };
        TreeType {
            ops: plan.tree.as_deref().unwrap_or(&[]),
            index: d.info().index(),
            flags,
            key_hash: d.info().key_hash(),
        }
    }

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

    /// Whether the type's compared fields are all integers ([`TreePair::of`] compares
    /// its objects on the spot).
    #[inline(always)]
    pub(crate) fn words_only(self) -> bool {
        self.flags & TreeType::WORDS_ONLY != 0
    }
}

/// Two objects of one tree type (made by [`TreePair::of`]), compared field by field in
/// place, in walk order: [`next`](Self::next) gives each pair of objects in turn to the
/// caller, who compares them, and compares the other fields itself. A walk keeps the
/// pairs it is inside of on an
/// [`InPlaceStack`](super::in_place_stack::InPlaceStack).
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
    /// Of a tree type whose compared fields are all integers (say `IntImm`):
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

/// The field plan of the type `refl` describes: made once per table for the process
/// (kept for good, a few bytes per type, like the table itself) and found through the
/// table after that, with one load: a walk is often short (a `StructuralKey` per
/// subexpression, say), and a plan looked up in a map cost a good part of one.
pub(crate) fn eq_plan(refl: &'static TypeReflection) -> &'static EqPlan {
    static ALL: PerTable<EqPlan> = PerTable::new();
    ALL.kept(&refl.eq_plan, refl, || Box::new(EqPlan::new(refl)))
}

impl EqPlan {
    /// The plan of the type `refl` describes.
    pub(crate) fn new(refl: &'static TypeReflection) -> EqPlan {
        let mut fields = Vec::new();
        for defs in [true, false] {
            for info in refl.fields() {
                let Some(view) = info.view_entry() else {
                    continue;
                };
                if info.flags().contains(FieldFlags::NO_EQUALITY) {
                    continue;
                }
                let def = info.flags().contains(FieldFlags::DEFINITION);
                if def == defs {
                    fields.push(PlanField {
                        info,
                        def,
                        offset: info.offset(),
                        layout: info.layout_tag(),
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
                    | FieldKind::Enum
            )
        });
        let later_objects = fields
            .iter()
            .skip(1)
            .filter(|f| f.layout == LAYOUT_OBJECT_POINTER)
            .map(|f| f.offset)
            .collect();
        let is_tree = refl.structural_kind() == StructuralKind::Tree
            && refl.builtin().is_none()
            && !refl.is_opaque();
        let tree = fields
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let kind = match f.layout {
                    _ if f.def => return None,
                    LAYOUT_I64 | LAYOUT_U64 => InPlaceKind::Word,
                    LAYOUT_I8 => InPlaceKind::I8,
                    LAYOUT_U8 => InPlaceKind::U8,
                    LAYOUT_I16 => InPlaceKind::I16,
                    LAYOUT_U16 => InPlaceKind::U16,
                    LAYOUT_I32 => InPlaceKind::I32,
                    LAYOUT_U32 => InPlaceKind::U32,
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
        let ok = core::ptr::eq(obj.reflection(), self.refl);
        let fields = if ok { &self.fields[..] } else { &[] };
        let base = ObjectPtr::as_ptr(obj.object()).cast::<u8>();
        fields.iter().map(move |f| {
            // `f` was copied from an entry of `self.refl`, the table that describes the
            // object's layout (checked above: `obj`'s reflection is `self.refl`, see
            // `describe`).
            // SAFETY: so a value of the entry's Rust type lies at `offset`, kept alive
            // and unchanged for `'a` by `obj.object(): &'a ObjectRef`.
            (f, unsafe { f.read(base.add(f.offset)) })
        })
    }

    /// Starts loading the objects that `l`'s and `r`'s `ObjectPtr` fields after the
    /// first one hold (a walk reads them after the first field's subtree); nothing if
    /// either is not described by this plan's reflection.
    #[inline(always)]
    pub(crate) fn prefetch_later_objects(&self, l: Described<'_>, r: Described<'_>) {
        if !(core::ptr::eq(l.reflection(), self.refl) && core::ptr::eq(r.reflection(), self.refl)) {
            return;
        }
        let (lb, rb) = (
            ObjectPtr::as_ptr(l.object()).cast::<u8>(),
            ObjectPtr::as_ptr(r.object()).cast::<u8>(),
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
        let ok =
            core::ptr::eq(l.reflection(), self.refl) && core::ptr::eq(r.reflection(), self.refl);
        let fields = if ok { &self.fields[..] } else { &[] };
        let (lb, rb) = (
            ObjectPtr::as_ptr(l.object()).cast::<u8>(),
            ObjectPtr::as_ptr(r.object()).cast::<u8>(),
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
