//! The global function registry: functions registered by name, for any caller in the
//! process (and later, through the C ABI, in other languages).

use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

use object_core::{Error, ErrorKind};

use super::Function;

fn globals() -> &'static RwLock<BTreeMap<std::string::String, Function>> {
    match super::adopt::adopted() {
        Some(host) => (host.globals)(),
        None => globals_here(),
    }
}

/// This copy's own table.
pub(super) fn globals_here() -> &'static RwLock<BTreeMap<std::string::String, Function>> {
    static GLOBALS: OnceLock<RwLock<BTreeMap<std::string::String, Function>>> = OnceLock::new();
    GLOBALS.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// Registers `f` under `name` for [`get_global`].
///
/// ```
/// use object_containers::{get_global, register_global, remove_global, Function};
/// register_global("doc.twice", Function::from_typed(|x: i64| 2 * x)).unwrap();
/// assert!(register_global("doc.twice", Function::from_typed(|x: i64| x)).is_err());
/// let f = get_global("doc.twice").unwrap();
/// assert_eq!(f.typed::<(i64,), i64>().call((21,)).unwrap(), 42);
/// remove_global("doc.twice");
/// ```
///
/// # Errors
///
/// An `Error` (kind `"KeyError"`) naming `name` if it is taken; use
/// [`register_global_override`] to replace on purpose.
pub fn register_global(name: &str, f: Function) -> Result<(), Error> {
    let mut g = globals().write().unwrap_or_else(|e| e.into_inner());
    if g.contains_key(name) {
        return Err(Error::new(
            ErrorKind::KeyError,
            format!("global function `{name}` is already registered"),
        ));
    }
    g.insert(name.to_owned(), f);
    Ok(())
}

/// Registers `f` under `name`, replacing and returning any previous function.
pub fn register_global_override(name: &str, f: Function) -> Option<Function> {
    globals()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_owned(), f)
}

/// The global function registered under `name`.
#[inline]
pub fn get_global(name: &str) -> Option<Function> {
    globals()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned()
}

/// The names of all global functions, sorted.
pub fn list_globals() -> Vec<std::string::String> {
    globals()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect()
}

/// Removes and returns the global function registered under `name`.
pub fn remove_global(name: &str) -> Option<Function> {
    globals()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(name)
}
