//! Run-time registration ([`TypeSpec`], [`register_type`]) and the first use of a Rust
//! type (found in the table built at first use, or registered then).

use super::info::{TypeInfo, TypeRegistration};
use super::place::{check_static_index, place_runtime, place_static, KeyName};
use super::{registry, RegistryError};

/// A type to register at run time with [`register_type`].
///
/// ```
/// use object_core::registry::{register_type, TypeSpec};
///
/// let info = register_type(&TypeSpec::new("doc.spec.Node", "ffi.Object").slots(4)).unwrap();
/// assert_eq!(info.key(), "doc.spec.Node");
/// assert_eq!(info.range().len(), 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSpec {
    key: String,
    parent: String,
    slots: u32,
    is_final: bool,
    allow_overflow: bool,
}

impl TypeSpec {
    /// A non-final type with no reserved slots that allows overflow.
    pub fn new(key: impl Into<String>, parent_key: impl Into<String>) -> Self {
        TypeSpec {
            key: key.into(),
            parent: parent_key.into(),
            slots: 0,
            is_final: false,
            allow_overflow: true,
        }
    }
    /// Reserve `n` indices for descendants registered later.
    pub fn slots(mut self, n: u32) -> Self {
        self.slots = n;
        self
    }
    /// Declare the type final.
    pub fn final_type(mut self, yes: bool) -> Self {
        self.is_final = yes;
        self
    }
    /// Allow or refuse descendants outside this type's range.
    pub fn overflow(mut self, allow: bool) -> Self {
        self.allow_overflow = allow;
        self
    }
    fn describe(&self) -> String {
        describe(&self.parent, self.slots, self.is_final, self.allow_overflow)
    }
}

fn describe(parent: &str, slots: u32, is_final: bool, overflow: bool) -> String {
    format!("parent `{parent}`, slots {slots}, final {is_final}, overflow {overflow}")
}

/// Registers a type at run time (plugins, foreign languages, generated types).
///
/// The new type takes `slots + 1` indices from the reserved slots of its nearest
/// ancestor with room, or overflows past the end of the table when every ancestor it
/// falls outside allows it. Registering an existing key with the same parent, slots,
/// finality and overflow policy returns the existing entry.
///
/// # Errors
///
/// [`RegistryError`] naming the key: a duplicate key that differs, a value kind's key
/// (`"int"`, …), an unknown, final or non-object parent, a final type with slots, slots
/// exhausted where overflow is refused, a full table.
///
/// ```
/// use object_core::registry::{register_type, RegistryError, TypeSpec};
///
/// let a = register_type(&TypeSpec::new("doc.reg.Base", "ffi.Object").slots(1)).unwrap();
/// let b = register_type(&TypeSpec::new("doc.reg.Child", "doc.reg.Base")).unwrap();
/// assert!(a.is_ancestor_or_self_of(b.index()));
/// // Identical re-registration is idempotent; a different one is an error.
/// assert_eq!(register_type(&TypeSpec::new("doc.reg.Child", "doc.reg.Base")).unwrap().index(), b.index());
/// assert!(matches!(
///     register_type(&TypeSpec::new("doc.reg.Child", "ffi.Object")),
///     Err(RegistryError::DuplicateKey { .. })
/// ));
/// ```
pub fn register_type(spec: &TypeSpec) -> Result<&'static TypeInfo, RegistryError> {
    if let Some(host) = super::adopt::adopted() {
        return (host.register_type)(spec);
    }
    let reg = registry();
    let mut w = reg.lock();
    if let Some(existing) = reg.lookup(&spec.key) {
        if !existing.is_object() {
            return Err(RegistryError::ValueKindKey {
                key: spec.key.clone(),
            });
        }
        return same_or_duplicate(existing, spec);
    }
    let key = KeyName::Owned(&spec.key);
    let parent = reg
        .lookup(&spec.parent)
        .ok_or_else(|| RegistryError::UnknownParent {
            key: spec.key.clone(),
            parent: spec.parent.clone(),
        })?;
    place_runtime(
        reg,
        &mut w,
        key,
        parent,
        spec.slots,
        spec.is_final,
        spec.allow_overflow,
        None,
    )
}

fn same_or_duplicate(
    existing: &'static TypeInfo,
    spec: &TypeSpec,
) -> Result<&'static TypeInfo, RegistryError> {
    let parent_key = existing.parent().map_or("", |p| p.key);
    if parent_key == spec.parent
        && existing.slots == spec.slots
        && existing.is_final == spec.is_final
        && existing.allow_overflow == spec.allow_overflow
    {
        Ok(existing)
    } else {
        Err(RegistryError::DuplicateKey {
            key: spec.key.clone(),
            existing: describe(
                parent_key,
                existing.slots,
                existing.is_final,
                existing.allow_overflow,
            ),
            requested: spec.describe(),
        })
    }
}

/// Resolves a derive-registered Rust type to its entry: normally found in the table
/// built at first use; registered at run time if its link-time entry was not collected
/// (e.g. a type in a library loaded later).
pub(crate) fn resolve_rust_type(
    r: &'static TypeRegistration,
) -> Result<&'static TypeInfo, RegistryError> {
    if let Some(host) = super::adopt::adopted() {
        return (host.resolve_rust_type)(r);
    }
    resolve_rust_type_from(r, false)
}

/// [`resolve_rust_type`], also for another copy of the type's code (`foreign`: a
/// plugin's): that copy's `TypeId` may differ from ours (another build of the same
/// crate), so the same Rust type name claims the same key.
pub(crate) fn resolve_rust_type_from(
    r: &'static TypeRegistration,
    foreign: bool,
) -> Result<&'static TypeInfo, RegistryError> {
    let reg = registry();
    let mut w = reg.lock();
    if let Some(err) = w.link_errors.get(r.key) {
        return Err(err.clone());
    }
    let tid = (r.rust_type)();
    let info = match reg.lookup(r.key) {
        Some(existing) if !existing.is_object() => {
            return Err(RegistryError::ValueKindKey {
                key: r.key.to_owned(),
            });
        }
        Some(existing) => {
            let spec = spec_of(r);
            same_or_duplicate(existing, &spec)?;
            existing
        }
        None => {
            if r.static_index != 0 {
                check_static_index(r)?;
                let parent =
                    reg.lookup(r.parent_key)
                        .ok_or_else(|| RegistryError::UnknownParent {
                            key: r.key.to_owned(),
                            parent: r.parent_key.to_owned(),
                        })?;
                place_static(reg, &w, r, parent)?
            } else {
                let parent =
                    reg.lookup(r.parent_key)
                        .ok_or_else(|| RegistryError::UnknownParent {
                            key: r.key.to_owned(),
                            parent: r.parent_key.to_owned(),
                        })?;
                place_runtime(
                    reg,
                    &mut w,
                    KeyName::Static(r.key),
                    parent,
                    r.slots,
                    r.is_final,
                    r.allow_overflow,
                    Some(r),
                )?
            }
        }
    };
    let info = match w.claimed.get(&info.index) {
        Some(&(held, name)) if held != tid && !(foreign && name == r.rust_name) => {
            Err(RegistryError::RustTypeConflict {
                key: r.key.to_owned(),
                first: name.to_owned(),
                second: r.rust_name.to_owned(),
            })
        }
        Some(_) => Ok(info),
        None => {
            if !info.claim_rust_layout(r) {
                return Err(RegistryError::LayoutTaken {
                    key: r.key.to_owned(),
                    rust: r.rust_name.to_owned(),
                });
            }
            w.claimed.insert(info.index, (tid, r.rust_name));
            Ok(info)
        }
    }?;
    w.publish_cache(r.cache, info);
    Ok(info)
}

fn spec_of(r: &TypeRegistration) -> TypeSpec {
    TypeSpec {
        key: r.key.to_owned(),
        parent: r.parent_key.to_owned(),
        slots: r.slots,
        is_final: r.is_final,
        allow_overflow: r.allow_overflow,
    }
}

#[cfg(test)]
mod tests {
    use core::any::TypeId;

    use super::*;
    use crate::object_type::TypeCache;
    use crate::registry::{link_errors, type_index_of, TypeOrigin};
    use crate::type_index;

    const fn late(
        key: &'static str,
        name: &'static str,
        cache: &'static TypeCache,
    ) -> TypeRegistration {
        TypeRegistration {
            key,
            parent_key: type_index::OBJECT_KEY,
            slots: 0,
            is_final: false,
            allow_overflow: true,
            static_index: 0,
            rust_type: TypeId::of::<u8>,
            rust_name: name,
            reflection: &crate::reflection::NO_REFLECTION,
            cache,
        }
    }

    // Registrations inventory never collected (as for a library loaded later).
    static SEALED: TypeRegistration = late("unit.Sealed", "unit::Sealed", &CACHE_SEALED);
    static CLAIMED: TypeRegistration = late("unit.Claimed", "unit::Claimed", &CACHE_CLAIMED);
    static UNCOLLECTED: TypeRegistration =
        late("unit.Uncollected", "unit::Uncollected", &CACHE_UNCOLLECTED);
    static CACHE_SEALED: TypeCache = TypeCache::new();
    static CACHE_CLAIMED: TypeCache = TypeCache::new();
    static CACHE_UNCOLLECTED: TypeCache = TypeCache::new();

    /// A type whose objects were made with a parent's layout can never be claimed by a
    /// Rust struct afterwards (a down-cast would read past the allocation), and a type a
    /// Rust struct claimed can never be sealed.
    #[test]
    fn layout_ownership_is_decided_once() {
        let sealed = register_type(&TypeSpec::new("unit.Sealed", "ffi.Object")).unwrap();
        assert!(sealed.seal_foreign_layout());
        assert!(sealed.seal_foreign_layout(), "sealing is idempotent");
        let err = resolve_rust_type(&SEALED).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutTaken { .. }), "{err}");

        let claimed = register_type(&TypeSpec::new("unit.Claimed", "ffi.Object")).unwrap();
        let info = resolve_rust_type(&CLAIMED).unwrap();
        assert_eq!(info.index(), claimed.index());
        assert_eq!(info.rust_name(), Some("unit::Claimed"));
        assert!(!claimed.seal_foreign_layout());
    }

    /// A Rust type whose link-time registration was not collected (say, in a library
    /// loaded later) is registered on first use, under its parent.
    #[test]
    fn uncollected_rust_types_register_on_first_use() {
        let info = resolve_rust_type(&UNCOLLECTED).unwrap();
        assert_eq!(info.origin(), TypeOrigin::RunTime);
        assert_eq!(info.parent_index(), Some(type_index::OBJECT));
        assert_eq!(type_index_of("unit.Uncollected"), Ok(info.index()));
    }

    /// The root has its own static index (64, below the range the derive may ask for)
    /// and is placed before the static types: it is not one of them, and not an error.
    #[test]
    fn the_root_is_not_a_link_error() {
        let errors = link_errors();
        assert!(
            errors
                .iter()
                .all(|e| !e.to_string().contains("`ffi.Object`")),
            "{errors:?}"
        );
        let info = <crate::Object as crate::ObjectType>::type_info();
        assert_eq!(info.index(), type_index::OBJECT);
        assert_eq!(info.rust_name(), Some("object_core::Object"));
    }
}
