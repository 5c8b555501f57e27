//! The one-time build of the registry from every link-time registration, on first
//! use, in named steps: the value kinds, the link-time registrations gathered by key
//! (refusing the ones that can never be placed), the root, the static types, the
//! dynamic types in pre-order, and the leftovers (unknown parents, cycles).
//!
//! The maps built here are temporary; only what is published stays.

use std::collections::HashMap;
use std::sync::Mutex;

use super::info::{LinkedType, TypeInfo, TypeOrigin, TypeRegistration};
use super::place::{ancestors_with, check_parent, check_static_index, mark_overflow, place_static};
use super::table::publish;
use super::{is_core_static, KeyMap, Registry, RegistryError, Writer};
use crate::type_index;

/// The link-time registrations that can be placed, by key.
type ByKey = HashMap<&'static str, &'static TypeRegistration>;
/// The link-time registrations not yet placed, by parent key.
type Children = HashMap<&'static str, Vec<&'static TypeRegistration>>;

/// Builds the registry on first use from every link-time registration.
pub(super) fn build() -> Registry {
    let reg = Registry {
        keys: KeyMap::new(),
        writer: Mutex::new(Writer::default()),
    };
    let mut w = Writer {
        next: type_index::DYNAMIC_OBJECT_BEGIN,
        ..Writer::default()
    };
    publish_value_kinds(&reg);
    let by_key = gather_link_time(&reg, &mut w);
    place_root(&reg, &mut w, &by_key);
    place_statics(&reg, &mut w, &by_key);
    let leftovers = place_dynamic(&reg, &mut w, &by_key);
    reject_leftovers(&mut w, &by_key, leftovers);
    publish_caches(&reg, &mut w, &by_key);
    *reg.writer.lock().unwrap_or_else(|e| e.into_inner()) = w;
    reg
}

/// Fills the cache of every placed link-time type, so that a type's cache is filled
/// before any object of it (or of a type registered under it at run time) can exist:
/// the fast path of `is::<T>()` reads an unfilled cache as "not a `T`".
fn publish_caches(reg: &Registry, w: &mut Writer, by_key: &ByKey) {
    for r in by_key.values() {
        if w.link_errors.contains_key(r.key) {
            continue;
        }
        if let Some(info) = reg.lookup(r.key) {
            w.publish_cache(r.cache, info);
        }
    }
}

/// The value kinds `Any` carries (indices below 64): entries, never object types.
fn publish_value_kinds(reg: &Registry) {
    for &(index, key) in type_index::VALUE_KINDS {
        publish(TypeInfo::new(
            index,
            key,
            None,
            &[],
            index..index + 1,
            0,
            (true, false),
            TypeOrigin::ValueKind,
            None,
            None,
        ));
        reg.keys.insert(key, index);
    }
}

/// Gathers link-time registrations by key, in a deterministic order. Those that can
/// never be placed (a value kind's key, a final type with slots, a key two Rust types
/// claim) become link errors and are left out.
fn gather_link_time(reg: &Registry, w: &mut Writer) -> ByKey {
    let mut all: Vec<&'static TypeRegistration> = inventory::iter::<LinkedType>
        .into_iter()
        .map(|l| l.0)
        .collect();
    all.sort_by(|a, b| (a.key, a.rust_name).cmp(&(b.key, b.rust_name)));
    let mut by_key = ByKey::new();
    for r in &all {
        // Registrations that can never be placed, whatever else is linked.
        if reg.keys.get(r.key).is_some() {
            // Only the value kinds are registered yet.
            w.link_errors.insert(
                r.key,
                RegistryError::ValueKindKey {
                    key: r.key.to_owned(),
                },
            );
            continue;
        }
        if r.is_final && r.slots != 0 {
            w.link_errors.insert(
                r.key,
                RegistryError::FinalWithSlots {
                    key: r.key.to_owned(),
                    slots: r.slots,
                },
            );
            continue;
        }
        match by_key.get(r.key) {
            None => {
                by_key.insert(r.key, r);
            }
            Some(first) if (first.rust_type)() == (r.rust_type)() => {}
            Some(first) => {
                // Neither claimant gets the key: picking one would be arbitrary, and a
                // shared index would let down-casts confuse the two layouts.
                w.link_errors.insert(
                    r.key,
                    RegistryError::RustTypeConflict {
                        key: r.key.to_owned(),
                        first: first.rust_name.to_owned(),
                        second: r.rust_name.to_owned(),
                    },
                );
            }
        }
    }
    for key in w.link_errors.keys() {
        by_key.remove(key);
    }
    by_key
}

/// The root, `ffi.Object`: its range is everything from its index up.
fn place_root(reg: &Registry, w: &mut Writer, by_key: &ByKey) {
    let root_key = type_index::OBJECT_KEY;
    let root = publish(TypeInfo::new(
        type_index::OBJECT,
        root_key,
        None,
        &[type_index::OBJECT],
        type_index::OBJECT..u32::MAX,
        0,
        (false, true),
        TypeOrigin::Static,
        Some(&crate::root::ROOT_REGISTRATION),
        None,
    ));
    reg.keys.insert(root_key, root.index);
    if let Some(r) = by_key.get(root_key) {
        w.claimed.insert(root.index, ((r.rust_type)(), r.rust_name));
    }
}

/// Static types, parents before children (ascending index, parents must be lower).
/// The root has a static index too, but is placed by [`place_root`]. Of two types
/// claiming one index, the first placed keeps it and the other is refused
/// (`StaticIndexTaken`): a core type first, then by key, so the outcome never depends
/// on hash order.
fn place_statics(reg: &Registry, w: &mut Writer, by_key: &ByKey) {
    let mut statics: Vec<_> = by_key
        .values()
        .copied()
        .filter(|r| r.static_index != 0 && r.key != type_index::OBJECT_KEY)
        .collect();
    statics.sort_by_key(|r| (r.static_index, !is_core_static(r), r.key));
    for r in statics {
        let res = check_static_index(r).and_then(|()| {
            let parent = reg
                .lookup(r.parent_key)
                .ok_or_else(|| RegistryError::BadStaticIndex {
                    key: r.key.to_owned(),
                    index: r.static_index,
                    reason: format!(
                        "the parent `{}` must be a static type with a lower index",
                        r.parent_key
                    ),
                })?;
            place_static(reg, w, r, parent)
        });
        match res {
            Ok(info) => {
                w.claimed.insert(info.index, ((r.rust_type)(), r.rust_name));
            }
            Err(e) => {
                w.link_errors.insert(r.key, e);
            }
        }
    }
}

/// Dynamic link-time types: pre-order over the forest hanging off placed types, so
/// each subtree is one contiguous range. Returns what could not be reached.
fn place_dynamic(reg: &Registry, w: &mut Writer, by_key: &ByKey) -> Children {
    let mut children = Children::new();
    for r in by_key
        .values()
        .filter(|r| r.static_index == 0 && r.key != type_index::OBJECT_KEY)
    {
        children.entry(r.parent_key).or_default().push(r);
    }
    for list in children.values_mut() {
        list.sort_by_key(|r| r.key);
    }
    let mut anchors: Vec<&'static TypeInfo> =
        children.keys().filter_map(|k| reg.lookup(k)).collect();
    anchors.sort_by_key(|i| i.index);
    for anchor in anchors {
        let Some(kids) = children.remove(anchor.key) else {
            continue;
        };
        for r in kids {
            if let Err(e) = check_parent(r.key, anchor) {
                reject_subtree(w, &mut children, r, e);
                continue;
            }
            if !anchor.range.contains(&w.next) && !anchor.allow_overflow {
                let e = RegistryError::SlotsExhausted {
                    key: r.key.to_owned(),
                    ancestor: anchor.key.to_owned(),
                };
                reject_subtree(w, &mut children, r, e);
                continue;
            }
            mark_overflow(w, anchor, w.next);
            preorder(reg, w, &mut children, r, anchor);
        }
    }
    children
}

/// Whatever is left hangs off an unknown key, or off a cycle.
fn reject_leftovers(w: &mut Writer, by_key: &ByKey, mut leftovers: Children) {
    let left: Vec<_> = leftovers.drain().collect();
    for (parent_key, kids) in left {
        for r in kids {
            let e = if by_key.contains_key(parent_key) {
                RegistryError::Cycle {
                    key: r.key.to_owned(),
                }
            } else {
                RegistryError::UnknownParent {
                    key: r.key.to_owned(),
                    parent: parent_key.to_owned(),
                }
            };
            w.link_errors.insert(r.key, e);
        }
    }
}

/// Refuses `r` with `e`, and its link-time descendants as having an unknown parent.
fn reject_subtree(
    w: &mut Writer,
    children: &mut Children,
    r: &'static TypeRegistration,
    e: RegistryError,
) {
    w.link_errors.insert(r.key, e);
    for c in children.remove(r.key).unwrap_or_default() {
        let e = RegistryError::UnknownParent {
            key: c.key.to_owned(),
            parent: r.key.to_owned(),
        };
        reject_subtree(w, children, c, e);
    }
}

/// Numbers `r` and its link-time subtree in pre-order, then reserves `r.slots`.
fn preorder(
    reg: &Registry,
    w: &mut Writer,
    children: &mut Children,
    r: &'static TypeRegistration,
    parent: &TypeInfo,
) {
    let index = w.next;
    w.next += 1;
    let ancestors = ancestors_with(parent, index);
    // Children need this type's entry (for their ancestry and parent checks) before its
    // range end is known, so they are numbered against a provisional view.
    let kids = children.remove(r.key).unwrap_or_default();
    let provisional = TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors,
        index..index + 1,
        r.slots,
        (r.is_final, r.allow_overflow),
        TypeOrigin::LinkTime,
        Some(r),
        None,
    );
    let mut placed = Vec::new();
    for c in kids {
        if let Err(e) = check_parent(c.key, &provisional) {
            reject_subtree(w, children, c, e);
            continue;
        }
        placed.push(c);
    }
    // The children's entries point at their parent by index; publishing the parent
    // last is fine because nothing reads the table until the build completes.
    for c in placed {
        preorder(reg, w, children, c, &provisional);
    }
    let end = w.next + r.slots;
    w.next = end;
    if r.slots > 0 {
        w.free_slot.insert(index, end - r.slots);
    }
    publish(TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors,
        index..end,
        r.slots,
        (r.is_final, r.allow_overflow),
        TypeOrigin::LinkTime,
        Some(r),
        None,
    ));
    reg.keys.insert(r.key, index);
    w.claimed.insert(index, ((r.rust_type)(), r.rust_name));
}
