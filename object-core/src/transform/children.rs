//! Enumerating a node's child objects: its reflected fields that hold objects, or the
//! object items and entries of a built-in container, read through its
//! [`BuiltinHooks`](crate::builtin::BuiltinHooks); and rebuilding either with new
//! children.
//!
//! Which entries of a type's table can hold objects is worked out once per type (its
//! *plan*, from the child fields kept in its table), then found in a per-thread table
//! by type index.

use core::cell::Cell;

use super::field::Site;
use super::rebuild::{ChildRef, Children};
use super::TransformError;
use crate::any::Any;
use crate::builtin::{BuiltinHooks, BuiltinShape, Contents, Parts};
use crate::ptr::ObjectRef;
use crate::reflection::per_table::PerTable;
use crate::reflection::raw::TypeDescriber;
use crate::reflection::TypeReflection;
use crate::reflection::{FieldKind, ValueRef};

/// How the walkers find the children of one type's objects.
#[derive(Clone, Copy)]
pub(crate) enum Plan {
    /// No children, ever (no field that can hold an object; an opaque type that is not
    /// a built-in container).
    Leaf,
    /// The entries of the type's table (indices) that may hold an object: fields of
    /// kind `Object` or `Any`.
    Fields {
        desc: TypeDescriber,
        kids: &'static [u16],
    },
    /// A built-in of a shape that holds values (items or entries).
    Container(&'static BuiltinHooks),
}

impl Plan {
    /// The plan of `obj`'s run-time type, from this thread's table of them ([`PLANS`]):
    /// one load and one compare once the type was met (by any walk of the thread).
    #[inline(always)]
    pub(crate) fn of_object(obj: &ObjectRef) -> Plan {
        let i = obj.type_index();
        let slot = i as usize % PLAN_SLOTS;
        // (`try_with` fails only while the thread's locals are torn down: then no entry.)
        if let Ok((t, plan)) = PLANS.try_with(|p| p[slot].get()) {
            if t == i {
                return plan;
            }
        }
        Plan::fill(obj, slot)
    }

    /// Works out `obj`'s plan (a few loads: the type's entry, its table, the child
    /// fields kept in the table) and enters it in this thread's table.
    #[cold]
    #[inline(never)]
    fn fill(obj: &ObjectRef, slot: usize) -> Plan {
        let plan = Plan::of(obj.type_info());
        let _ = PLANS.try_with(|p| p[slot].set((obj.type_index(), plan)));
        plan
    }

    #[inline]
    fn of(info: &'static crate::registry::TypeInfo) -> Plan {
        let desc = TypeDescriber::of(info);
        let refl = desc.reflection();
        if refl.is_opaque() {
            return match refl.builtin() {
                Some(h) if matches!(h.shape, BuiltinShape::Items | BuiltinShape::Entries) => {
                    Plan::Container(h)
                }
                _ => Plan::Leaf,
            };
        }
        let kids = child_fields(refl);
        if kids.is_empty() {
            Plan::Leaf
        } else {
            Plan::Fields { desc, kids }
        }
    }
}

/// The entries of `refl`'s table that may hold an object (fields of kind `Object` or
/// `Any`), listed once per table for the whole process and kept in the table (one load
/// after that: the walkers ask once per node).
fn child_fields(refl: &'static TypeReflection) -> &'static [u16] {
    static ALL: PerTable<ChildFields> = PerTable::new();
    let kept = ALL.kept(&refl.child_fields, refl, || {
        Box::new(ChildFields(
            refl.fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.is_reflected() && matches!(f.kind(), FieldKind::Object | FieldKind::Any)
                })
                .filter_map(|(k, _)| u16::try_from(k).ok())
                .collect(),
        ))
    });
    &kept.0
}

/// The field indices [`child_fields`] keeps for a table (in its `child_fields` slot).
pub(crate) struct ChildFields(Vec<u16>);

/// Entries of [`PLANS`] (a power of two).
const PLAN_SLOTS: usize = 64;

/// The type index of an empty entry (no type has it).
const NO_TYPE: u32 = u32::MAX;

std::thread_local! {
    /// The plans of the types this thread's walks met, by the low bits of the type
    /// index: no registry look-up per node, and nothing made per walk (walks are often
    /// short: a pass may run one per subexpression). An entry never goes stale: types
    /// are never unregistered, and a plan holds only `'static` data.
    static PLANS: [Cell<(u32, Plan)>; PLAN_SLOTS] =
        const { [const { Cell::new((NO_TYPE, Plan::Leaf)) }; PLAN_SLOTS] };
}

/// Calls `f` with every child object of `obj` (of the type `plan` is for), borrowed
/// from it where it stores them, and where it sits (a caller that ignores the site pays
/// nothing for it: it is what the loop reads anyway).
#[inline]
pub(crate) fn plan_children<'a>(
    plan: Plan,
    obj: &'a ObjectRef,
    f: &mut impl FnMut(Site, ChildRef<'a>),
) {
    match plan {
        Plan::Leaf => {}
        Plan::Fields { desc, kids } => {
            let Some(d) = desc.describe(obj) else { return };
            for &k in kids.iter() {
                if let Some((field, ValueRef::Object(o))) = d.entry_at(usize::from(k)) {
                    f(Site::Field(field), ChildRef::Borrowed(o));
                }
            }
        }
        Plan::Container(h) => builtin_children(h, obj, f),
    }
}

/// The object among a container's values (strings are values, not children).
#[inline]
fn item_child(item: &Any) -> Option<&ObjectRef> {
    match ValueRef::from_any(item) {
        ValueRef::Object(o) => Some(o),
        _ => None,
    }
}

/// Calls `f` with the objects among a built-in container's values (items; entries' keys
/// and values in turn), borrowed where it stores them, owned from a snapshot, each with
/// its index.
#[inline(always)]
fn builtin_children<'a>(
    h: &'static BuiltinHooks,
    obj: &'a ObjectRef,
    f: &mut impl FnMut(Site, ChildRef<'a>),
) {
    // (Held without its drop glue: only a snapshot owns anything, and is dropped in
    // its arm; a walk meets a container per few nodes.)
    let contents = core::mem::ManuallyDrop::new((h.contents)(obj));
    match &*contents {
        &Contents::Items(items) => {
            for (i, v) in items.iter().enumerate() {
                if let Some(o) = item_child(v) {
                    f(Site::Item(i), ChildRef::Borrowed(o));
                }
            }
        }
        Contents::Entries(entries) => {
            for (i, (k, v)) in entries.clone().enumerate() {
                if let Some(o) = item_child(k) {
                    f(Site::Key(i), ChildRef::Borrowed(o));
                }
                if let Some(o) = item_child(v) {
                    f(Site::Value(i), ChildRef::Borrowed(o));
                }
            }
        }
        _ => match core::mem::ManuallyDrop::into_inner(contents) {
            Contents::SnapshotItems(items) => {
                for (i, v) in items.iter().enumerate() {
                    if let Some(o) = item_child(v) {
                        f(Site::Item(i), ChildRef::Owned(o.clone()));
                    }
                }
            }
            Contents::SnapshotEntries(entries) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    if let Some(o) = item_child(k) {
                        f(Site::Key(i), ChildRef::Owned(o.clone()));
                    }
                    if let Some(o) = item_child(v) {
                        f(Site::Value(i), ChildRef::Owned(o.clone()));
                    }
                }
            }
            _ => {}
        },
    }
}

/// A built-in container like `obj` holding its values with the objects replaced by
/// `children`, in the order [`builtin_children`] listed them. A mutable container is
/// read again (a snapshot): one changed since its children were listed is a
/// `WrongChildType` error if they no longer line up.
fn builtin_rebuild(
    h: &'static BuiltinHooks,
    obj: &ObjectRef,
    children: &mut Children<'_>,
) -> Result<ObjectRef, TransformError> {
    // (The key only for an error: finding it is a registry look-up.)
    let key = || obj.type_key();
    let item = |v: &Any, c: &mut Children<'_>| {
        <Any as crate::reflection::FieldValue>::rebuild_field(v, c)
            .map_err(|e| TransformError::item_type(key(), e))
    };
    let entries = |e: &mut dyn Iterator<Item = (&Any, &Any)>, c: &mut Children<'_>| {
        e.map(|(k, v)| Ok((item(k, c)?, item(v, c)?)))
            .collect::<Result<Vec<_>, TransformError>>()
    };
    // The new values, then the built-in made of them (its own build decides how to
    // hold them).
    let (mut items, mut pairs) = (Vec::new(), Vec::new());
    match (h.contents)(obj) {
        Contents::Items(v) if h.shape == BuiltinShape::Items => {
            // The common case (an `Array`): the new items go straight into the build,
            // with no list of them in between; a failure is kept and reported after.
            let mut failed = None;
            let built = {
                let mut new_items = v.iter().map(|v| match item(v, children) {
                    Ok(a) => a,
                    Err(e) => {
                        failed.get_or_insert(e);
                        Any::NONE
                    }
                });
                (h.build)(Parts::Items(&mut new_items))
            };
            if let Some(e) = failed {
                return Err(e);
            }
            let built = built.map_err(|e| TransformError::custom(key(), e.to_string()))?;
            return ObjectRef::try_from(built).map_err(|e| TransformError::item_type(key(), e));
        }
        Contents::Items(v) => {
            items = v
                .iter()
                .map(|v| item(v, children))
                .collect::<Result<_, _>>()?;
        }
        Contents::SnapshotItems(v) => {
            items = v
                .iter()
                .map(|v| item(v, children))
                .collect::<Result<_, _>>()?;
        }
        Contents::Entries(mut e) => pairs = entries(&mut e, children)?,
        Contents::SnapshotEntries(e) => {
            pairs = entries(&mut e.iter().map(|(k, v)| (k, v)), children)?;
        }
        _ => return Err(TransformError::not_rebuildable(key())),
    }
    let (mut items, mut pairs) = (items.into_iter(), pairs.into_iter());
    let parts = match h.shape {
        BuiltinShape::Entries => Parts::Entries(&mut pairs),
        _ => Parts::Items(&mut items),
    };
    let built = (h.build)(parts).map_err(|e| TransformError::custom(key(), e.to_string()))?;
    ObjectRef::try_from(built).map_err(|e| TransformError::item_type(key(), e))
}

/// A child waiting on a walker's explicit stack, with where it sits in its parent.
pub(crate) struct Pending<'a> {
    pub(crate) node: ChildRef<'a>,
    pub(crate) site: Site,
}

/// Pushes the children of `obj` onto `stack` so that the first is on top (popped
/// first).
#[inline(always)]
pub(crate) fn push_children<'a>(plan: Plan, obj: &'a ObjectRef, stack: &mut Vec<Pending<'a>>) {
    match plan {
        Plan::Leaf => {}
        Plan::Fields { desc, kids } => {
            let Some(d) = desc.describe(obj) else { return };
            for &k in kids.iter().rev() {
                if let Some((field, ValueRef::Object(o))) = d.entry_at(usize::from(k)) {
                    stack.push(Pending {
                        node: ChildRef::Borrowed(o),
                        site: Site::Field(field),
                    });
                }
            }
        }
        Plan::Container(h) => {
            let mark = stack.len();
            builtin_children(h, obj, &mut |site, node| stack.push(Pending { node, site }));
            stack[mark..].reverse();
        }
    }
}

/// Pushes the children of `obj`, a node from a snapshot (owned), onto `stack` as owned
/// children, the first on top.
pub(crate) fn push_owned_children(plan: Plan, obj: &ObjectRef, stack: &mut Vec<Pending<'_>>) {
    let mark = stack.len();
    plan_children(plan, obj, &mut |site, c| {
        stack.push(Pending {
            node: ChildRef::Owned(c.get().clone()),
            site,
        });
    });
    stack[mark..].reverse();
}

/// Calls `f` with every child object of `obj`, borrowed from it where it stores them,
/// and where it sits.
pub(crate) fn each_child<'a>(obj: &'a ObjectRef, f: &mut impl FnMut(Site, ChildRef<'a>)) {
    plan_children(Plan::of_object(obj), obj, f);
}

/// A copy of `obj` (of the type `plan` is for) with its children replaced by
/// `children` (in the order [`plan_children`] listed them).
#[inline]
pub(crate) fn rebuild_node(
    plan: Plan,
    obj: &ObjectRef,
    children: &mut Children<'_>,
) -> Result<ObjectRef, TransformError> {
    match plan {
        Plan::Fields { desc, .. } => match desc.reflection().rebuild {
            Some(rebuild) => rebuild(obj, children, desc.info()),
            None => Err(TransformError::not_rebuildable(desc.info().key())),
        },
        Plan::Container(h) => builtin_rebuild(h, obj, children),
        Plan::Leaf => Err(TransformError::not_rebuildable(obj.type_key())),
    }
}
