//! Placing one type: checking its parent and static index, allocating its indices
//! (from an ancestor's reserved slots, or past the end of the table), flagging the
//! ancestors it overflows, and publishing its entry. Used by the one-time build and by
//! run-time registration alike.

use core::sync::atomic::Ordering;

use super::info::{TypeInfo, TypeOrigin, TypeRegistration};
use super::table::{publish, table_get};
use super::{Registry, RegistryError, Writer, MAX_TYPES};
use crate::reflection::runtime::PendingFields;
use crate::reflection::RuntimeFields;
use crate::type_index;

/// Whether a static registration's index is in range, free, and without slots.
pub(super) fn check_static_index(r: &TypeRegistration) -> Result<(), RegistryError> {
    let bad = |reason: &str| RegistryError::BadStaticIndex {
        key: r.key.to_owned(),
        index: r.static_index,
        reason: reason.to_owned(),
    };
    if !(type_index::STATIC_OBJECT_BEGIN + 1..type_index::DYNAMIC_OBJECT_BEGIN)
        .contains(&r.static_index)
    {
        return Err(bad("static indices lie in 65..128"));
    }
    if r.slots != 0 {
        return Err(bad("static types cannot reserve slots"));
    }
    if let Some(holder) = table_get(r.static_index) {
        return Err(RegistryError::StaticIndexTaken {
            key: r.key.to_owned(),
            index: r.static_index,
            holder: holder.key.to_owned(),
        });
    }
    Ok(())
}

pub(super) fn ancestors_with(parent: &TypeInfo, index: u32) -> &'static [u32] {
    let mut v = Vec::with_capacity(parent.ancestors.len() + 1);
    v.extend_from_slice(parent.ancestors);
    v.push(index);
    Box::leak(v.into_boxed_slice())
}

pub(super) fn check_parent(key: &str, parent: &TypeInfo) -> Result<(), RegistryError> {
    if !parent.is_object() {
        return Err(RegistryError::ParentNotObject {
            key: key.to_owned(),
            parent: parent.key.to_owned(),
        });
    }
    if parent.is_final {
        return Err(RegistryError::FinalParent {
            key: key.to_owned(),
            parent: parent.key.to_owned(),
        });
    }
    Ok(())
}

/// A key that is either already `'static` (derive registrations) or borrowed from a
/// run-time request (leaked only once the registration succeeds).
#[derive(Clone, Copy)]
pub(super) enum KeyName<'a> {
    Static(&'static str),
    Owned(&'a str),
}

impl KeyName<'_> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            KeyName::Static(s) => s,
            KeyName::Owned(s) => s,
        }
    }
    pub(super) fn into_static(self) -> &'static str {
        match self {
            KeyName::Static(s) => s,
            KeyName::Owned(s) => Box::leak(s.to_owned().into_boxed_str()),
        }
    }
}

/// Allocates `slots + 1` indices for a new type under `parent` and publishes it.
#[allow(clippy::too_many_arguments)]
pub(super) fn place_runtime(
    reg: &Registry,
    w: &mut Writer,
    key: KeyName<'_>,
    parent: &'static TypeInfo,
    slots: u32,
    is_final: bool,
    allow_overflow: bool,
    rust: Option<&'static TypeRegistration>,
    fields: Option<PendingFields>,
) -> Result<&'static TypeInfo, RegistryError> {
    let name = key.as_str();
    check_parent(name, parent)?;
    if is_final && slots != 0 {
        return Err(RegistryError::FinalWithSlots {
            key: name.to_owned(),
            slots,
        });
    }
    let need = slots
        .checked_add(1)
        .ok_or_else(|| RegistryError::TableFull {
            key: name.to_owned(),
        })?;
    // Walk up from the parent to the nearest ancestor with room; each ancestor we pass
    // will not contain the new type, so it must allow overflow.
    let mut container = Some(parent);
    let mut start = None;
    while let Some(a) = container {
        if a.depth == 0 {
            break; // the root contains everything; allocate at the end of the table
        }
        let free = w.free_slot.get(&a.index).copied().unwrap_or(a.range.end);
        if u64::from(free) + u64::from(need) <= u64::from(a.range.end) {
            start = Some(free);
            w.free_slot.insert(a.index, free + need);
            break;
        }
        if !a.allow_overflow {
            return Err(RegistryError::SlotsExhausted {
                key: name.to_owned(),
                ancestor: a.key.to_owned(),
            });
        }
        container = a.parent();
    }
    let index = match start {
        Some(i) => i,
        None => {
            let i = w.next;
            if u64::from(i) + u64::from(need) > u64::from(MAX_TYPES) {
                return Err(RegistryError::TableFull {
                    key: name.to_owned(),
                });
            }
            w.next = i + need;
            i
        }
    };
    mark_overflow(w, parent, index);
    // Only now that the type is accepted does its key (and its run-time field table)
    // become process-lifetime.
    let key = key.into_static();
    let fields: Option<&'static RuntimeFields> = fields.map(|f| f.publish(key));
    let info = TypeInfo::new(
        index,
        key,
        Some(parent),
        ancestors_with(parent, index),
        index..index + need,
        slots,
        (is_final, allow_overflow),
        TypeOrigin::RunTime,
        rust,
        fields,
    );
    if slots > 0 {
        w.free_slot.insert(index, index + 1);
    }
    let info = publish(info);
    reg.keys.insert(key, index);
    Ok(info)
}

/// Flags every ancestor (from `parent` up) whose range does not contain `index`, in
/// its entry and in the caches of the Rust types that hold it.
pub(super) fn mark_overflow(w: &Writer, parent: &TypeInfo, index: u32) {
    let mut a = Some(parent);
    while let Some(t) = a {
        if !t.range.contains(&index) {
            t.overflowed.store(true, Ordering::Relaxed);
            for c in w.caches.get(&t.index).into_iter().flatten() {
                c.set_overflow();
            }
        }
        a = t.parent();
    }
}

pub(super) fn place_static(
    reg: &Registry,
    w: &Writer,
    r: &'static TypeRegistration,
    parent: &'static TypeInfo,
) -> Result<&'static TypeInfo, RegistryError> {
    check_parent(r.key, parent)?;
    let index = r.static_index;
    if !parent.range.contains(&index) && !parent.allow_overflow {
        return Err(RegistryError::SlotsExhausted {
            key: r.key.to_owned(),
            ancestor: parent.key.to_owned(),
        });
    }
    mark_overflow(w, parent, index);
    let info = publish(TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors_with(parent, index),
        index..index + 1,
        0,
        (r.is_final, r.allow_overflow),
        TypeOrigin::Static,
        Some(r),
        None,
    ));
    reg.keys.insert(r.key, index);
    Ok(info)
}
