//! The thread-local error slot of the C ABI: a callee that fails leaves its [`Error`]
//! here and returns a nonzero code; the caller takes it.
//!
//! An error nobody took stays in the slot, so a foreign callee that fails without
//! raising would be reported with that stale error. Rather than clearing the slot
//! before every call out (a thread-local access on every successful call), every
//! error the slot receives is numbered from one process-wide counter: the caller reads
//! the counter before calling ([`error_mark`]: one relaxed load of a global) and, only
//! if the call fails, takes the slot's error only if its number is not below the mark
//! ([`take_error_since`]). That is exact on one thread with relaxed atomics: an error
//! set on this thread before the mark was read has a number below it, and one set
//! after has one at or above it (the counter's modification order agrees with each
//! thread's program order); other threads' errors only move the counter.

use core::cell::RefCell;
use core::sync::atomic::{AtomicU64, Ordering};

use object_core::{Error, ErrorKind};

/// An error in the slot, with the number it got when it was set.
struct Raised {
    error: Error,
    number: u64,
}

std::thread_local! {
    static LAST_ERROR: RefCell<Option<Raised>> = const { RefCell::new(None) };
}

/// The next error's number (this copy's; a plugin's copy uses the host's).
pub(super) static ERRORS_RAISED: AtomicU64 = AtomicU64::new(0);

/// A point in the order in which errors are raised, taken by [`error_mark`] before
/// calling code that reports failure through the error slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorMark(u64);

/// Notes the point before a call out to code that reports failure by a nonzero code
/// and an error left in the slot (a C callback, a plugin's `init`), so that an error
/// left there earlier is not taken for the callee's ([`take_error_since`]). One
/// relaxed load of a global; clears nothing.
///
/// ```
/// use object_containers::{error_mark, set_last_error, take_error_since, take_last_error};
/// use object_core::Error;
///
/// set_last_error(Error::value_error("stale: nobody took me"));
/// let mark = error_mark();
/// // … a callee that fails without raising …
/// assert!(take_error_since(mark).is_none(), "the stale error is not the callee's");
///
/// let mark = error_mark();
/// set_last_error(Error::value_error("raised by the callee"));
/// assert_eq!(take_error_since(mark).unwrap().message(), "raised by the callee");
/// assert!(take_last_error().is_none(), "taken");
/// ```
#[inline]
pub fn error_mark() -> ErrorMark {
    let counter = match super::adopt::adopted() {
        Some(host) => host.errors_raised,
        None => &ERRORS_RAISED,
    };
    ErrorMark(counter.load(Ordering::Relaxed))
}

/// Takes the error in this thread's slot if it was raised since `mark` (on this
/// thread, so by the callee), or `None` if none was: an error waiting from before is
/// left where it is (the caller reports the failure with an error of its own, which
/// replaces it).
pub fn take_error_since(mark: ErrorMark) -> Option<Error> {
    match super::adopt::adopted() {
        Some(host) => (host.take_error_since)(mark),
        None => take_error_since_here(mark),
    }
}

/// Leaves `e` in this thread's error slot (what a C-ABI callee does before returning a
/// nonzero code). While the thread's storage is being torn down (a call from a
/// thread-local destructor) the slot is gone and the error is dropped; the caller then
/// reports the failure without its details.
///
/// ```
/// use object_containers::{set_last_error, take_last_error};
/// use object_core::Error;
///
/// set_last_error(Error::value_error("bad input"));
/// assert_eq!(take_last_error().unwrap().message(), "bad input");
/// assert!(take_last_error().is_none(), "taking empties the slot");
/// ```
pub fn set_last_error(e: Error) {
    match super::adopt::adopted() {
        Some(host) => (host.set_last_error)(e),
        None => set_last_error_here(e),
    }
}

/// Takes the error a failed call left in this thread's slot.
pub fn take_last_error() -> Option<Error> {
    match super::adopt::adopted() {
        Some(host) => (host.take_last_error)(),
        None => take_last_error_here(),
    }
}

/// This copy's own slot.
pub(super) fn set_last_error_here(e: Error) {
    let number = ERRORS_RAISED.fetch_add(1, Ordering::Relaxed);
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(Raised { error: e, number }));
}

/// This copy's own slot.
pub(super) fn take_last_error_here() -> Option<Error> {
    LAST_ERROR
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten()
        .map(|r| r.error)
}

/// This copy's own slot.
pub(super) fn take_error_since_here(mark: ErrorMark) -> Option<Error> {
    LAST_ERROR
        .try_with(|slot| {
            let mut slot = slot.borrow_mut();
            match &*slot {
                Some(r) if r.number >= mark.0 => slot.take().map(|r| r.error),
                _ => None,
            }
        })
        .ok()
        .flatten()
}

/// The error a failed call left, out of line.
#[cold]
#[inline(never)]
pub(super) fn call_failed(rc: i32) -> Error {
    take_last_error().unwrap_or_else(|| {
        Error::new(
            ErrorKind::Error,
            format!(
                "call failed with code {rc}, and its error could not be delivered \
                 (the thread's error slot is gone or was emptied)"
            ),
        )
    })
}
