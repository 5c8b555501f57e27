//! The thread-local error slot of the C ABI: a callee that fails leaves its [`Error`]
//! here and returns a nonzero code; the caller takes it.

use core::cell::RefCell;

use object_core::Error;

std::thread_local! {
    static LAST_ERROR: RefCell<Option<Error>> = const { RefCell::new(None) };
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
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(e));
}

/// This copy's own slot.
pub(super) fn take_last_error_here() -> Option<Error> {
    LAST_ERROR
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten()
}

/// The error a failed call left, out of line.
#[cold]
#[inline(never)]
pub(super) fn call_failed(rc: i32) -> Error {
    take_last_error().unwrap_or_else(|| {
        Error::new(
            "Error",
            format!(
                "call failed with code {rc}, and its error could not be delivered \
                 (the thread's error slot is gone or was emptied)"
            ),
        )
    })
}
