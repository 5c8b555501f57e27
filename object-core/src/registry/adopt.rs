//! Adoption: how a second copy of this crate (in a plugin, a shared library with its own
//! statics) uses the host's registry instead of its own.
//!
//! A plugin built from the same source links its own copy of `object-core`: its own
//! registry statics, its own index table, its own type caches. Left alone it would
//! number its types independently, and an index would mean different types on the two
//! sides. So the host hands the plugin its [`RegistryHooks`] ([`host_hooks`]) before
//! the plugin touches any type, and the plugin calls [`adopt`]: from then on every
//! registry entry point of the plugin's copy (look-ups by index and key, run-time
//! registration, the first use of a Rust type, the display check) calls the host's. The
//! plugin's own registry is never built. Its Rust types are registered in the host when
//! it adopts (every registration its copy collected; any other on first use, as a type
//! whose link-time registration was not collected), and the host fills the plugin's
//! per-type caches, so `is::<T>()` in the plugin is the same load and compare as in the
//! host.
//!
//! Cost on the host: nothing on the `is::<T>()` fast path or on clone/drop (the type
//! cache and the header do not look here); one load of an initialized-once pointer in
//! the index → entry look-up and in the out-of-range display check.
//!
//! The hooks are Rust function pointers over Rust types (`TypeInfo`, `TypeRegistration`,
//! `RegistryError`): both sides must be built from the same `object-core` source with
//! the same compiler, which [`BUILD_ID`] and the C ABI's layout fingerprint check.

use std::sync::OnceLock;

use super::info::{TypeInfo, TypeRegistration};
use super::{RegistryError, TypeSpec};

/// What the two sides compare before adopting: the crate version, the revision of the
/// Rust layouts the two sides share (raised whenever one changes between releases; 2:
/// the `String` handle became a 16-byte `Any` cell; 3: field tables tag 8-byte
/// unsigned integers apart from `i64`; 4: a type's registration names its cache; 5: it
/// records the struct's size and alignment, and entries record who sealed the layout; 6:
/// run-time field tables: `TypeSpec` carries fields, entries may be sealed by one, field
/// entries may keep a default value) and
/// the compiler that built it must be the same for Rust types to be shared.
pub const BUILD_ID: &str = concat!(
    "object-core ",
    env!("CARGO_PKG_VERSION"),
    " / layouts 6",
    " / ",
    env!("OBJECT_CORE_RUSTC"),
);

/// The host registry's entry points, as a plugin's copy calls them.
#[derive(Debug)]
pub struct RegistryHooks {
    /// [`BUILD_ID`] of the host.
    pub build_id: &'static str,
    /// `type_info`.
    pub type_info: fn(u32) -> Option<&'static TypeInfo>,
    /// `type_info_by_key`.
    pub type_info_by_key: fn(&str) -> Option<&'static TypeInfo>,
    /// The out-of-range instance check.
    pub display_check: fn(u32, u32, u32) -> bool,
    /// `register_type`.
    pub register_type: fn(&TypeSpec) -> Result<&'static TypeInfo, RegistryError>,
    /// A Rust type's first use, from another copy of its code.
    pub resolve_rust_type:
        fn(&'static TypeRegistration) -> Result<&'static TypeInfo, RegistryError>,
    /// `types`.
    pub types: fn() -> Vec<&'static TypeInfo>,
    /// `link_errors`.
    pub link_errors: fn() -> Vec<RegistryError>,
    /// The hooks of the host's other process-wide state, by crate ([`RuntimePart`]:
    /// `object-containers`' error slot and global functions), or null.
    pub parts: fn(&str) -> *const (),
    /// The host's count of live objects (`live-count`): one for the process.
    pub live_objects: &'static core::sync::atomic::AtomicIsize,
}

/// The process-wide state of a crate layered on this one (its hooks, for the copies
/// that adopt this copy's registry to adopt too): `object-containers` submits its
/// error slot and global table. The hooks are reached only by a copy of the same build.
#[doc(hidden)]
#[derive(Debug)]
pub struct RuntimePart {
    /// The crate's name.
    pub name: &'static str,
    /// Its hooks as it hands them out (its own, or those it adopted).
    pub hooks: fn() -> *const (),
}

inventory::collect!(RuntimePart);

fn own_part(name: &str) -> *const () {
    inventory::iter::<RuntimePart>
        .into_iter()
        .find(|p| p.name == name)
        .map_or(core::ptr::null(), |p| (p.hooks)())
}

static HOST_HOOKS: RegistryHooks = RegistryHooks {
    build_id: BUILD_ID,
    type_info: super::type_info,
    type_info_by_key: super::type_info_by_key,
    display_check: super::table::display_check,
    register_type: super::register_type,
    resolve_rust_type: |r| super::spec::resolve_rust_type_from(r, true),
    types: super::types,
    link_errors: super::link_errors,
    parts: own_part,
    live_objects: &crate::header::LIVE,
};

/// What a copy refused by [`process_runtime`] sees: no types, and every registration
/// fails with the conflict.
static REFUSED_HOOKS: RegistryHooks = RegistryHooks {
    build_id: BUILD_ID,
    type_info: |_| None,
    type_info_by_key: |_| None,
    display_check: |_, _, _| false,
    register_type: |_| Err(conflict()),
    resolve_rust_type: |_| Err(conflict()),
    types: Vec::new,
    link_errors: || vec![conflict()],
    parts: |_| core::ptr::null(),
    live_objects: &crate::header::LIVE,
};

/// Which registry this copy uses, once decided: [`HOST_HOOKS`] (its own),
/// [`REFUSED_HOOKS`], or another copy's.
static ADOPTED: OnceLock<&'static RegistryHooks> = OnceLock::new();
/// How it was decided, for [`process_runtime`].
static OWNER: OnceLock<ProcessRuntime> = OnceLock::new();

fn conflict() -> RegistryError {
    match OWNER.get() {
        Some(ProcessRuntime::Refused(e)) => e.clone(),
        _ => RegistryError::RuntimeConflict {
            library: String::new(),
            theirs: String::new(),
            ours: BUILD_ID.to_owned(),
        },
    }
}

/// This copy's registry entry points, to hand to a plugin: its own, or the ones it
/// adopted.
pub fn host_hooks() -> &'static RegistryHooks {
    adopted().unwrap_or(&HOST_HOOKS)
}

/// The hooks of a crate layered on this one (`name`: its package name) in the registry
/// this copy adopted, or `None` when it runs its own (or the host has no such part).
#[doc(hidden)]
pub fn adopted_part(name: &str) -> Option<*const ()> {
    let p = (adopted()?.parts)(name);
    (!p.is_null()).then_some(p)
}

/// The host's hooks, if this copy adopted a host registry. The first call decides:
/// a registry another copy runs in this process (found by [`process`](super::process))
/// is adopted, else this copy runs its own.
#[inline(always)]
pub(crate) fn adopted() -> Option<&'static RegistryHooks> {
    match ADOPTED.get() {
        Some(h) if core::ptr::eq(*h, &HOST_HOOKS) => None,
        Some(h) => Some(h),
        None => decide(),
    }
}

/// The live-object count this copy adds to: its own, or the adopted registry's.
#[cfg(feature = "live-count")]
pub(crate) fn live_counter() -> &'static core::sync::atomic::AtomicIsize {
    adopted().map_or(&crate::header::LIVE, |h| h.live_objects)
}

/// 0 undecided, 1 own, 2 adopted, 3 refused (the exported descriptor's `state`).
pub(super) fn state_code() -> u32 {
    match ADOPTED.get() {
        None => 0,
        Some(h) if core::ptr::eq(*h, &HOST_HOOKS) => 1,
        Some(h) if core::ptr::eq(*h, &REFUSED_HOOKS) => 3,
        Some(_) => 2,
    }
}

#[cold]
#[inline(never)]
fn decide() -> Option<&'static RegistryHooks> {
    use super::process::{find_running, Found};
    match find_running() {
        Found::Nothing => {
            let _ = OWNER.set(ProcessRuntime::Own);
            let _ = ADOPTED.set(&HOST_HOOKS);
        }
        Found::Runtime { hooks, library } => match adopt_hooks(hooks) {
            Ok(()) => {
                let _ = OWNER.set(ProcessRuntime::Joined { library });
            }
            Err(AdoptError::TypesRefused(errors)) => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                let _ = OWNER.set(ProcessRuntime::Refused(RegistryError::RuntimeConflict {
                    library,
                    theirs: hooks.build_id.to_owned(),
                    ours: format!("{BUILD_ID}, whose types it refused: {}", list.join("; ")),
                }));
            }
            // Decided meanwhile, by another thread of this copy: its decision stands.
            Err(_) => {}
        },
        Found::Conflict { library, build } => {
            let _ = OWNER.set(ProcessRuntime::Refused(RegistryError::RuntimeConflict {
                library,
                theirs: build,
                ours: BUILD_ID.to_owned(),
            }));
            let _ = ADOPTED.set(&REFUSED_HOOKS);
        }
    }
    match ADOPTED.get() {
        Some(h) if core::ptr::eq(*h, &HOST_HOOKS) => None,
        Some(h) => Some(h),
        // Unreachable: every arm above sets it (or another thread did).
        None => {
            let _ = ADOPTED.set(&HOST_HOOKS);
            None
        }
    }
}

/// Which registry this copy of the crate uses, and how it came to: the answer of
/// [`process_runtime`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessRuntime {
    /// Its own: when it first needed one, no other copy in the process ran a registry.
    Own,
    /// The registry of another copy of the same build, found in the process (the Python
    /// extension, `libobject_capi.so`, another extension module): `library` is the
    /// file that copy was loaded from.
    Joined {
        /// The library whose registry this copy uses.
        library: String,
    },
    /// A host's, handed over by a plugin's handshake ([`adopt`]).
    Host,
    /// A copy of another build runs this process's registry, so this one runs none:
    /// nothing can be registered or looked up through it (every registration fails
    /// with this error), and no object of its types can be made.
    Refused(RegistryError),
}

/// Which registry this copy uses: the process's one runtime, whoever loaded first.
///
/// The first time a copy of this crate needs its registry (this call, or any look-up or
/// registration) it looks through the process's loaded libraries for another copy
/// that already runs one ([`process`](super::process): each copy exports
/// `obj_process_runtime_v1`). A copy of the same build is adopted, as a plugin adopts
/// its host: its types, indices, error slot and global functions are then this copy's;
/// a copy of another build makes this one refuse to run a second registry
/// ([`ProcessRuntime::Refused`]). Found nothing: this copy runs its own, and copies
/// loaded later find it.
///
/// ```
/// use object_core::registry::adopt::{process_runtime, ProcessRuntime};
/// // A test program links one copy: it runs its own.
/// assert_eq!(process_runtime(), ProcessRuntime::Own);
/// ```
pub fn process_runtime() -> ProcessRuntime {
    let _ = adopted();
    OWNER.get().cloned().unwrap_or(ProcessRuntime::Own)
}

/// Why [`adopt`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdoptError {
    /// The host was built from another `object-core` or by another compiler.
    BuildMismatch {
        /// The host's [`BUILD_ID`].
        host: &'static str,
        /// Ours.
        plugin: &'static str,
    },
    /// This copy's own registry is already in use (a type was used before adopting).
    AlreadyInUse,
    /// The host refused some of the Rust types this copy shares with it: most often a
    /// struct whose layout differs from the host's copy of it (a plugin built from
    /// another version of a shared crate), each error naming the key and both layouts.
    /// The copy is adopted, but nothing of it may be used: its refused types' caches
    /// stay empty, so nothing of theirs passes a type check.
    TypesRefused(Vec<RegistryError>),
}

impl core::fmt::Display for AdoptError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AdoptError::BuildMismatch { host, plugin } => write!(
                f,
                "the host was built as `{host}`, the plugin as `{plugin}`: Rust types cannot be shared"
            ),
            AdoptError::AlreadyInUse => {
                write!(f, "the plugin used its own type registry before adopting the host's")
            }
            AdoptError::TypesRefused(errors) => {
                write!(f, "the host refused {} of the plugin's Rust types", errors.len())?;
                for (i, e) in errors.iter().enumerate() {
                    write!(f, "{} {e}", if i == 0 { ":" } else { ";" })?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for AdoptError {}

/// Makes this copy of the crate use the host's registry. Call it before anything
/// touches a type (a plugin's entry point does, first). Adopting the same hooks twice
/// is a no-op.
///
/// # Errors
///
/// [`AdoptError`]: a different build, this copy's registry already in use, or Rust
/// types the host refuses (a layout that differs from the host's copy of the struct,
/// a key the host holds with another parent, …: the handshake compares every type the
/// two share).
pub fn adopt(hooks: &'static RegistryHooks) -> Result<(), AdoptError> {
    adopt_hooks(hooks)?;
    if !core::ptr::eq(hooks, &HOST_HOOKS) {
        let _ = OWNER.set(ProcessRuntime::Host);
    }
    Ok(())
}

fn adopt_hooks(hooks: &'static RegistryHooks) -> Result<(), AdoptError> {
    if hooks.build_id != BUILD_ID {
        return Err(AdoptError::BuildMismatch {
            host: hooks.build_id,
            plugin: BUILD_ID,
        });
    }
    // Adopted already (by this call's hooks: a second load of the plugin, perhaps on
    // another thread at the same moment) or not.
    let same = |done: &&'static RegistryHooks| {
        if core::ptr::eq(*done, hooks) {
            Ok(())
        } else {
            Err(AdoptError::AlreadyInUse)
        }
    };
    if let Some(done) = ADOPTED.get() {
        return same(done);
    }
    if core::ptr::eq(hooks, &HOST_HOOKS) {
        return Ok(()); // our own registry: nothing to route
    }
    if super::REGISTRY.get().is_some() {
        return Err(AdoptError::AlreadyInUse);
    }
    match ADOPTED.set(hooks) {
        Ok(()) => {
            let refused = resolve_collected(hooks);
            if refused.is_empty() {
                Ok(())
            } else {
                Err(AdoptError::TypesRefused(refused))
            }
        }
        // Another thread adopted between the check above and here: fine if it adopted
        // the same hooks (two loads of one plugin racing), an error otherwise.
        Err(_) => ADOPTED.get().map_or(Err(AdoptError::AlreadyInUse), same),
    }
}

/// Registers this copy's collected Rust types in the host now, which fills their caches
/// (as the host's own build fills the host's): a cache must be filled before any object
/// of its type exists, and a type registered in the host by other means (C, Python,
/// another plugin) may already have objects. This is also the handshake's type check:
/// each registration is compared with the host's entry for its key (parent, slots,
/// flags, and the layout of the struct that owns it), and the refusals are returned.
///
/// A parent must be registered before its child, and the collected order is arbitrary:
/// a registration whose parent is not registered yet is tried again after the others,
/// as long as a pass registers something.
fn resolve_collected(hooks: &'static RegistryHooks) -> Vec<RegistryError> {
    let mut pending: Vec<&'static TypeRegistration> = inventory::iter::<super::info::LinkedType>
        .into_iter()
        .map(|l| l.0)
        .filter(|r| r.key != crate::type_index::OBJECT_KEY)
        .collect();
    let mut refused = Vec::new();
    loop {
        let before = pending.len();
        let mut waiting = Vec::new();
        for r in pending {
            match (hooks.resolve_rust_type)(r) {
                Ok(_) => {}
                Err(e @ RegistryError::UnknownParent { .. }) => waiting.push((r, e)),
                Err(e) => refused.push(e),
            }
        }
        let stuck = waiting.len() == before;
        pending = waiting.iter().map(|(r, _)| *r).collect();
        if pending.is_empty() || stuck {
            refused.extend(waiting.into_iter().map(|(_, e)| e));
            break;
        }
    }
    refused
}
