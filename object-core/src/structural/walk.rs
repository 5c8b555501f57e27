//! What the two structural engines (`equal.rs`, `hash.rs`) share: how deep they walk
//! by recursion ([`RECURSION_BUDGET`]) before their work stacks take over, how a value
//! is seen (a [`Leaf`], compared as a whole, or an object: [`classify`]), and the
//! per-thread tables through which they describe objects: [`TypeEntries`] (an object's
//! type, structural kind and field plan, for every walk) and [`TreeTypes`] (the
//! object's [`TreeType`], for the in-place walks of tree types).
//!
//! # Tree types
//!
//! Equality without paths, and hashing without a subtree cache, take objects of a *tree
//! type*, one whose compared fields all have the layouts this crate owns (`ObjectPtr`,
//! `Option<ObjectPtr>`, 8-byte integers; held once, outside definitions; a type made
//! only of integers, such as `IntImm`, held any number of times), through its
//! [`TreeType`] (`plan.rs`), a per-type list of offsets, found per object through
//! [`TreeTypes`], in a loop over a stack of the pairs (`TreePair`) or objects
//! (`TreeFields`) it is inside of, kept in place (`InPlaceStack`, [`TREE_FRAMES`] deep,
//! then a step), with no step or prelude per object.

use core::cell::Cell;
use core::marker::PhantomData;

use super::hooks::Contents;
use super::plan::{eq_plan, EqPlan, TreeSlot, TreeType};
use super::snapshot::Keeper;
use super::StructuralKind;
use crate::any::AnyView;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::raw::{describe, Described, TypeDescriber};
use crate::reflection::ValueRef;
use crate::string::{BytesObj, StringObj};
use crate::type_index as ti;

/// How many levels of a graph the engines walk by recursion (each a bounded frame)
/// before they continue the deeper part of a subtree on their work stack. Recursion
/// keeps a pair (or a value) in registers instead of a trip through the work stack (a
/// balanced tree of a million nodes is 20 levels deep, so it never leaves recursion);
/// the budget bounds the native stack a walk takes, whatever the graph's depth.
pub(super) const RECURSION_BUDGET: u32 = 48;

#[inline(always)]
pub(super) fn shared(o: &ObjectRef) -> bool {
    ObjectPtr::strong_count(o) > 1
}

/// A value that is compared as a whole.
#[derive(Clone, Copy)]
pub(super) enum Leaf<'a> {
    /// A plain value kind (below 64) and its payload bits; floats are not plain.
    Plain(u32, u64),
    Float(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
}

pub(super) enum Node<'a> {
    Leaf(Leaf<'a>),
    Obj(&'a ObjectRef),
}

#[inline(always)]
pub(super) fn plain(av: AnyView<'_>) -> Leaf<'static> {
    let t = av.type_index();
    if t == ti::FLOAT {
        Leaf::Float(av.as_float().unwrap_or(0.0))
    } else {
        Leaf::Plain(t, av.payload_bits())
    }
}

#[inline(always)]
pub(super) fn classify(v: ValueRef<'_>) -> Node<'_> {
    match v {
        ValueRef::Value(av) => Node::Leaf(plain(av)),
        ValueRef::Str(s) => Node::Leaf(Leaf::Str(s)),
        ValueRef::Object(o) => match o.type_index() {
            ti::STRING => match o.downcast_ref::<StringObj>() {
                Some(s) => Node::Leaf(Leaf::Str(s.as_str())),
                None => Node::Obj(o),
            },
            ti::BYTES => match o.downcast_ref::<BytesObj>() {
                Some(b) => Node::Leaf(Leaf::Bytes(b.as_bytes())),
                None => Node::Obj(o),
            },
            _ => Node::Obj(o),
        },
    }
}

/// The canonical bits of a float: one NaN for all.
#[inline(always)]
pub(super) fn float_bits(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

/// What the walk needs of an object's type: the object described, the type's
/// structural spec, and its field plan.
#[derive(Clone, Copy)]
pub(super) struct Entry<'a> {
    pub(super) d: Described<'a>,
    pub(super) kind: StructuralKind,
    /// No fields to walk: hooks show the contents, or none are shown (identity).
    pub(super) builtin: bool,
    pub(super) plan: &'static EqPlan,
}

/// What the walks keep of a type: the [`Entry`] without the object.
#[derive(Clone, Copy)]
struct TypeEntry {
    desc: TypeDescriber,
    kind: StructuralKind,
    builtin: bool,
    plan: &'static EqPlan,
}

/// Entries of the per-thread type table (a power of two).
const TYPE_SLOTS: usize = 64;

std::thread_local! {
    /// The types the walks of this thread met, by the low bits of their index: kept
    /// from one walk to the next, since most walks are short (a `StructuralKey` per
    /// subexpression) and would otherwise meet each of their types for the first time.
    /// An entry never goes stale: types are never unregistered, and what it holds is
    /// `'static`.
    static TYPES: [Cell<Option<TypeEntry>>; TYPE_SLOTS] =
        const { [const { Cell::new(None) }; TYPE_SLOTS] };
}

/// Describes objects for a walk through this thread's table of types ([`TYPES`]):
/// describing an object of a type met before (in this walk or an earlier one) skips
/// the registry and the field table.
pub(super) struct TypeEntries<'a>(PhantomData<&'a ObjectRef>);

impl<'a> TypeEntries<'a> {
    pub(super) fn new() -> Self {
        TypeEntries(PhantomData)
    }

    #[inline(always)]
    pub(super) fn entry(&mut self, o: &'a ObjectRef) -> Entry<'a> {
        let slot = o.type_index() as usize % TYPE_SLOTS;
        // (`try_with` fails only while the thread's locals are torn down: then no entry.)
        if let Ok(Some(e)) = TYPES.try_with(|t| t[slot].get()) {
            if let Some(d) = e.desc.describe(o) {
                return Entry {
                    d,
                    kind: e.kind,
                    builtin: e.builtin,
                    plan: e.plan,
                };
            }
        }
        Self::miss(o, slot)
    }

    #[cold]
    #[inline(never)]
    fn miss(o: &'a ObjectRef, slot: usize) -> Entry<'a> {
        let d = describe(o);
        let refl = d.reflection();
        let e = TypeEntry {
            desc: TypeDescriber::of(d.info()),
            kind: refl.structural_kind(),
            builtin: refl.builtin().is_some() || refl.is_opaque(),
            plan: eq_plan(refl),
        };
        let _ = TYPES.try_with(|t| t[slot].set(Some(e)));
        Entry {
            d,
            kind: e.kind,
            builtin: e.builtin,
            plan: e.plan,
        }
    }
}

/// Entries of the per-thread table of tree types (a power of two).
const TREE_SLOTS: usize = 64;

/// How many pairs (or, hashing, objects) of tree types deep the in-place walks go before
/// they take a step.
pub(super) const TREE_FRAMES: usize = 32;

std::thread_local! {
    /// The types the structural walks met on this thread, by the low bits of their index, as
    /// [`TreeType`]s (whether or not they are tree types): the one look-up the in-place
    /// walk makes per object. As in [`TYPES`], an entry never goes stale.
    static TREES: [TreeSlot; TREE_SLOTS] = const { [const { TreeSlot::new() }; TREE_SLOTS] };
}

/// Finds objects' [`TreeType`]s through this thread's table ([`TREES`]).
pub(super) struct TreeTypes;

impl TreeTypes {
    /// The type of `o`, whose type index is `index`, if it is a tree type.
    #[inline(always)]
    pub(super) fn get(index: u32, o: &ObjectRef) -> Option<TreeType> {
        let slot = index as usize % TREE_SLOTS;
        // (`try_with` fails only while the thread's locals are torn down: then a miss.)
        match TREES.try_with(|t| t[slot].get(index)) {
            Ok(Some(t)) => t.is_tree().then_some(t),
            _ => Self::miss(o, slot),
        }
    }

    #[cold]
    #[inline(never)]
    fn miss(o: &ObjectRef, slot: usize) -> Option<TreeType> {
        let t = TreeType::of(describe(o));
        // (Strings and bytes are compared as values, never by fields.)
        let t = match t.index() {
            ti::STRING | ti::BYTES => t.never_in_place(),
            _ => t,
        };
        let _ = TREES.try_with(|table| table[slot].set(t));
        t.is_tree().then_some(t)
    }
}

/// A snapshot (of a `List` or `Dict`), kept in `keep` for the rest of the walk and seen
/// as borrowed contents; other contents as they are.
pub(super) fn hold<'a>(keep: &mut Keeper<'a>, c: Contents<'a>) -> Contents<'a> {
    match c {
        Contents::SnapshotItems(items) => Contents::Items(keep.items(items)),
        Contents::SnapshotEntries(entries) => {
            Contents::Entries(keep.entries(entries).iter().map(|(k, v)| (k, v)).collect())
        }
        other => other,
    }
}
