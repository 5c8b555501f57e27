//! Adoption for this crate's process-wide state: a plugin's copy of `object-containers`
//! uses the host's error slot, global functions and method table (see `object_core::registry::adopt`
//! for the registry and the rules; the same build is required).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{OnceLock, RwLock};

use object_core::Error;

use super::last_error::ErrorMark;
use super::Function;

/// The global function table (shared as a data structure: same build on both sides).
pub(super) type Globals = RwLock<BTreeMap<std::string::String, Function>>;

/// The host's error slot, global functions and method table, as a plugin's copy reaches
/// them.
#[derive(Debug)]
pub struct ContainerHooks {
    /// Leaves an error in the calling thread's slot (the host's).
    pub set_last_error: fn(Error),
    /// Takes it.
    pub take_last_error: fn() -> Option<Error>,
    /// The counter that numbers the errors the slot receives (`error_mark`).
    pub errors_raised: &'static AtomicU64,
    /// Takes the slot's error if it was raised since the mark (`take_error_since`).
    pub take_error_since: fn(ErrorMark) -> Option<Error>,
    /// The host's global function table.
    pub globals: fn() -> &'static Globals,
    /// The host's method table.
    pub methods: fn() -> &'static super::methods::Methods,
}

static HOST_HOOKS: ContainerHooks = ContainerHooks {
    set_last_error: super::last_error::set_last_error_here,
    take_last_error: super::last_error::take_last_error_here,
    errors_raised: &super::last_error::ERRORS_RAISED,
    take_error_since: super::last_error::take_error_since_here,
    globals: super::registry::globals_here,
    methods: super::methods::methods_here,
};

object_core::__private::inventory::submit! {
    object_core::registry::adopt::RuntimePart {
        name: PART,
        hooks: || (host_hooks() as *const ContainerHooks).cast(),
    }
}

/// This crate's name among the runtime's parts.
const PART: &str = "object-containers";

/// The hooks this copy uses, once decided: [`HOST_HOOKS`] (its own) or another copy's.
static ADOPTED: OnceLock<&'static ContainerHooks> = OnceLock::new();

/// This copy's hooks, to hand to a plugin: its own, or the ones it adopted.
pub fn host_hooks() -> &'static ContainerHooks {
    adopted().unwrap_or(&HOST_HOOKS)
}

/// The host's hooks, if this copy uses another's. The first call decides, with the
/// registry: when `object-core`'s copy adopted another copy's registry (a plugin's
/// handshake, or the process's runtime found at first use), this copy uses that
/// copy's error slot, global table and method table too.
#[inline(always)]
pub(super) fn adopted() -> Option<&'static ContainerHooks> {
    match ADOPTED.get() {
        Some(h) if core::ptr::eq(*h, &HOST_HOOKS) => None,
        Some(h) => Some(h),
        None => decide(),
    }
}

#[cold]
#[inline(never)]
fn decide() -> Option<&'static ContainerHooks> {
    let hooks = match object_core::registry::adopt::adopted_part(PART) {
        // SAFETY: the part named `object-containers` of a registry this copy adopted,
        // which `object-core` adopts only from a copy of the same build (its
        // `BUILD_ID`): a `&'static ContainerHooks` of that copy's, this struct.
        Some(p) => unsafe { &*p.cast::<ContainerHooks>() },
        None => &HOST_HOOKS,
    };
    let _ = ADOPTED.set(hooks);
    ADOPTED
        .get()
        .copied()
        .filter(|h| !core::ptr::eq(*h, &HOST_HOOKS))
}

/// Makes this copy use the host's error slot and global functions. Returns `false` if
/// it already uses other hooks.
pub fn adopt(hooks: &'static ContainerHooks) -> bool {
    if core::ptr::eq(hooks, &HOST_HOOKS) {
        return true;
    }
    match ADOPTED.set(hooks) {
        Ok(()) => true,
        Err(_) => ADOPTED.get().is_some_and(|h| core::ptr::eq(*h, hooks)),
    }
}
