//! The printer's per-thread slot: a pointer to the state of the print in progress, which
//! lives on the stack of the outermost print. The fenced part of the printer: the slot
//! is set and cleared only by [`with_installed`], so [`with_state`] can lend the state.

use core::cell::{Cell, RefCell};

use super::print::PrintState;

thread_local! {
    /// The print in progress on this thread: the state on the stack of the outermost
    /// print, or null. A `Cell` of a raw pointer has no destructor, so this slot is
    /// never torn down: printing works at any point of a thread's life, also from other
    /// thread-locals' destructors (a slot with a destructor may already be gone then,
    /// and `with` on it panics, which aborts in a destructor).
    static PRINT: Cell<*const RefCell<PrintState>> = const { Cell::new(core::ptr::null()) };
}

/// Whether a print is in progress on this thread; `None` if this thread's slot cannot
/// be reached (not expected on any platform with native thread-locals).
pub(super) fn in_progress() -> Option<bool> {
    PRINT.try_with(|p| !p.get().is_null()).ok()
}

/// Runs `f` with `state` installed as this thread's print in progress, and clears the
/// slot before returning, also if `f` unwinds.
pub(super) fn with_installed<R>(state: &RefCell<PrintState>, f: impl FnOnce() -> R) -> R {
    /// Clears the slot before `state` goes, even if a `Debug` impl panics.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = PRINT.try_with(|p| p.set(core::ptr::null()));
        }
    }
    let _ = PRINT.try_with(|p| p.set(state));
    let _reset = Reset;
    f()
}

/// Runs `f` on the state of the print in progress: `Some(None)` if there is none,
/// `None` if this thread's slot cannot be reached (the printer then degrades to a plain
/// `key { … }`).
pub(super) fn with_state<R>(f: impl FnOnce(Option<&mut PrintState>) -> R) -> Option<R> {
    let p = PRINT.try_with(Cell::get).ok()?;
    if p.is_null() {
        return Some(f(None));
    }
    // A non-null pointer is set only by `with_installed`, to a state that outlives its
    // call, and reset to null before that call returns (on unwinding too).
    // SAFETY: so, inside that call on this thread, the state lives; it is only borrowed
    // here, for `f`, which calls no `Debug` impl.
    let state = unsafe { &*p };
    let mut s = state.borrow_mut();
    Some(f(Some(&mut s)))
}
