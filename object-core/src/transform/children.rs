//! Enumerating a node's child objects: its reflected fields that hold objects, or a
//! container's items through its [`ContainerHooks`](super::ContainerHooks).

use super::rebuild::{container_hooks, ChildRef, Children, ContainerHooks};
use super::TransformError;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::per_table::PerTable;
use crate::reflection::raw::TypeDescriber;
use crate::reflection::{FieldKind, ValueRef};

/// How the walkers find the children of one type's objects.
#[derive(Clone, Copy)]
pub(crate) enum Plan {
    /// No children, ever (no field that can hold an object; an opaque type without
    /// container hooks).
    Leaf,
    /// The entries of the type's table (indices) that may hold an object: fields of
    /// kind `Object` or `Any`.
    Fields {
        desc: TypeDescriber,
        kids: &'static [u16],
    },
    /// A container with hooks.
    Container(&'static ContainerHooks),
}

impl Plan {
    /// The plan of `info`'s type, from this thread's cache of them: worked out (under
    /// the global lock of [`child_fields`]) once per type and thread, not once per walk
    /// or per call. A plan never changes: types are never unregistered, and what it
    /// holds is `'static`.
    fn cached(info: &'static crate::registry::TypeInfo) -> Plan {
        use std::cell::RefCell;
        std::thread_local! {
            static CACHE: RefCell<Vec<Option<Plan>>> = const { RefCell::new(Vec::new()) };
        }
        let i = info.index() as usize;
        let hit = CACHE.try_with(|c| c.borrow().get(i).copied().flatten());
        if let Ok(Some(plan)) = hit {
            return plan;
        }
        let plan = Plan::of(info);
        // (During the thread's teardown the cache may be gone: the plan is then simply
        // not kept.)
        let _ = CACHE.try_with(|c| {
            let mut c = c.borrow_mut();
            if i >= c.len() {
                c.resize(i + 1, None);
            }
            c[i] = Some(plan);
        });
        plan
    }

    fn of(info: &'static crate::registry::TypeInfo) -> Plan {
        let desc = TypeDescriber::of(info);
        let refl = desc.reflection();
        if refl.is_opaque() {
            return match container_hooks(info.index()) {
                Some(h) => Plan::Container(h),
                None => Plan::Leaf,
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
/// `Any`), computed once per table for the whole process.
fn child_fields(refl: &'static crate::reflection::TypeReflection) -> &'static [u16] {
    static FIELDS: PerTable<[u16]> = PerTable::new();
    FIELDS.get(refl, || {
        refl.fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.is_reflected() && matches!(f.kind(), FieldKind::Object | FieldKind::Any)
            })
            .filter_map(|(k, _)| u16::try_from(k).ok())
            .collect()
    })
}

/// The plans of the types a walk has met, in a small direct-mapped table (by the low
/// bits of the type index) in front of the thread's cache ([`Plan::cached`]): no
/// registry look-up per node, and nothing allocated per walk (walks are often short:
/// a pass may run one per subexpression).
pub(crate) struct Plans {
    slots: [(u32, Plan); PLAN_SLOTS],
}

/// Entries of [`Plans`]' table.
const PLAN_SLOTS: usize = 16;

/// The type index of an empty entry (no type has it).
const NO_TYPE: u32 = u32::MAX;

impl Default for Plans {
    fn default() -> Self {
        Plans {
            slots: [(NO_TYPE, Plan::Leaf); PLAN_SLOTS],
        }
    }
}

impl Plans {
    /// The plan for `obj`'s type.
    #[inline(always)]
    pub(crate) fn get(&mut self, obj: &ObjectRef) -> Plan {
        let i = obj.type_index();
        let slot = &self.slots[i as usize % PLAN_SLOTS];
        if slot.0 == i {
            return slot.1;
        }
        self.fill(obj)
    }

    #[cold]
    #[inline(never)]
    fn fill(&mut self, obj: &ObjectRef) -> Plan {
        let i = obj.type_index();
        let plan = Plan::cached(obj.type_info());
        self.slots[i as usize % PLAN_SLOTS] = (i, plan);
        plan
    }
}

/// Calls `f` with every child object of `obj` (of the type `plan` is for), borrowed
/// from it where it stores them.
#[inline]
pub(crate) fn plan_children<'a>(plan: Plan, obj: &'a ObjectRef, f: &mut impl FnMut(ChildRef<'a>)) {
    match plan {
        Plan::Leaf => {}
        Plan::Fields { desc, kids } => {
            let Some(d) = desc.describe(obj) else { return };
            for &k in kids.iter() {
                if let Some(ValueRef::Object(o)) = d.view_at(usize::from(k)) {
                    f(ChildRef::Borrowed(o));
                }
            }
        }
        Plan::Container(h) => (h.children)(obj, f),
    }
}

/// Pushes the children of `obj` onto `stack` so that the first is on top (popped
/// first).
#[inline(always)]
pub(crate) fn push_children<'a>(plan: Plan, obj: &'a ObjectRef, stack: &mut Vec<ChildRef<'a>>) {
    match plan {
        Plan::Leaf => {}
        Plan::Fields { desc, kids } => {
            let Some(d) = desc.describe(obj) else { return };
            for &k in kids.iter().rev() {
                if let Some(ValueRef::Object(o)) = d.view_at(usize::from(k)) {
                    stack.push(ChildRef::Borrowed(o));
                }
            }
        }
        Plan::Container(h) => {
            let mark = stack.len();
            (h.children)(obj, &mut |c| stack.push(c));
            stack[mark..].reverse();
        }
    }
}

/// Calls `f` with every child object of `obj`, borrowed from it where it stores them.
pub(crate) fn each_child<'a>(obj: &'a ObjectRef, f: &mut impl FnMut(ChildRef<'a>)) {
    plan_children(Plan::cached(obj.type_info()), obj, f);
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
        Plan::Container(h) => (h.rebuild)(obj, children),
        Plan::Leaf => Err(TransformError::not_rebuildable(obj.type_key())),
    }
}

/// The address of an object, as a memo key.
#[inline]
pub(crate) fn addr(o: &ObjectRef) -> usize {
    ObjectPtr::as_ptr(o) as usize
}

/// A hasher for object addresses (already unique; spread the bits a little).
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl core::hash::Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        // Objects are at least 16 bytes long, so no two live ones share `addr >> 4`
        // (the size-class pool aligns some to 8 only): drop those bits, then mix.
        self.0 = ((n as u64) >> 4)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

pub(crate) type AddrMap<V> =
    std::collections::HashMap<usize, V, core::hash::BuildHasherDefault<AddrHasher>>;
