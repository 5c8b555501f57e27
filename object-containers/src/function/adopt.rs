//! Adoption for this crate's process-wide state: a plugin's copy of `object-containers`
//! uses the host's error slot and global functions (see `object_core::registry::adopt`
//! for the registry and the rules; the same build is required).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{OnceLock, RwLock};

use object_core::Error;

use super::last_error::ErrorMark;
use super::Function;

/// The global function table (shared as a data structure: same build on both sides).
pub(super) type Globals = RwLock<BTreeMap<std::string::String, Function>>;

/// The host's error slot and global functions, as a plugin's copy reaches them.
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
}

static HOST_HOOKS: ContainerHooks = ContainerHooks {
    set_last_error: super::last_error::set_last_error_here,
    take_last_error: super::last_error::take_last_error_here,
    errors_raised: &super::last_error::ERRORS_RAISED,
    take_error_since: super::last_error::take_error_since_here,
    globals: super::registry::globals_here,
};

static ADOPTED: OnceLock<&'static ContainerHooks> = OnceLock::new();

/// This copy's hooks, to hand to a plugin.
pub fn host_hooks() -> &'static ContainerHooks {
    ADOPTED.get().copied().unwrap_or(&HOST_HOOKS)
}

#[inline(always)]
pub(super) fn adopted() -> Option<&'static ContainerHooks> {
    ADOPTED.get().copied()
}

/// Makes this copy use the host's error slot and global functions. Returns `false` if
/// it already adopted other hooks.
pub fn adopt(hooks: &'static ContainerHooks) -> bool {
    if core::ptr::eq(hooks, &HOST_HOOKS) {
        return true;
    }
    match ADOPTED.set(hooks) {
        Ok(()) => true,
        Err(_) => ADOPTED.get().is_some_and(|h| core::ptr::eq(*h, hooks)),
    }
}
