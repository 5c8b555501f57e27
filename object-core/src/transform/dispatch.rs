//! [`TypeDispatch`]: a per-type function table (TVM's `NodeFunctor`), for code that
//! cannot be an exhaustive `match`, such as passes that must accept plugin node types.
//! Each table keeps a per-type-index cache of its nearest-ancestor resolutions.

use core::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::object_type::ObjectType;
use crate::ptr::ObjectRef;
use crate::registry::{self, TypeInfo};

/// A cache slot not resolved yet.
const UNRESOLVED: u32 = 0;
/// A cache slot resolved to "no entry for this type or any ancestor".
const NO_ENTRY: u32 = u32::MAX;
/// Cache slots kept beyond the largest type index registered when the cache was sized,
/// so that types registered later are cached too.
const HEADROOM: usize = 256;

/// A table of values of type `F` (usually functions) indexed by object type: TVM's
/// `NodeFunctor`. [`dispatch`](Self::dispatch) finds the entry of an object's own type
/// or, failing that, of its nearest ancestor that has one.
///
/// # Cost
///
/// The hot path is O(1): one load from a per-type-index cache and one index into the
/// entries. The first dispatch of each type resolves it through its ancestor list
/// (O(depth)) and caches the result. Changing the entries (`&mut self`) clears the
/// cache. Types registered *after* the table was filled (run-time or plugin types)
/// resolve like any other type on first dispatch: an entry for their parent applies to
/// them. Types whose index lies beyond the cache (more than 256 indices past the
/// largest index registered when the table last changed) resolve through their
/// ancestors on every dispatch (O(depth), still no lock).
///
/// # Thread Safety
///
/// `TypeDispatch<F>` is `Send` and `Sync` when `F` is: dispatching takes `&self` and
/// fills the cache with relaxed atomic stores (every thread computes the same value
/// for a slot, since the entries cannot change while `&self` is shared). Adding or
/// removing entries takes `&mut self`.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::{DispatchErrorKind, TypeDispatch};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.disp.Expr", slots = 4)]
/// struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.disp.Add", parent = Expr)]
/// struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.disp.Int", parent = Expr)]
/// struct Int { base: Expr, value: i64 }
///
/// let mut names: TypeDispatch<fn(&ObjectRef) -> String> = TypeDispatch::new();
/// names.set_dispatch::<Add>(|_| "add".to_string());
/// names.set_dispatch::<Expr>(|e| format!("some expr ({})", e.type_key()));
///
/// let int = Int::new(1);
/// let add = Add::new(int.clone(), int.clone()).into_object_ref();
/// let one = int.into_object_ref();
///
/// assert_eq!(names.dispatch(&add).unwrap()(&add), "add");
/// // `Int` has no entry: its parent's applies.
/// assert_eq!(names.dispatch(&one).unwrap()(&one), "some expr (doc.disp.Int)");
/// // Nothing for a plain object: an error, not a panic.
/// let plain = make_object(Object::new());
/// assert_eq!(names.dispatch(&plain).unwrap_err().kind(), DispatchErrorKind::NoEntry);
/// ```
pub struct TypeDispatch<F> {
    /// The entries, with the type index each is for.
    entries: Vec<(u32, F)>,
    /// Per type index: `UNRESOLVED`, `NO_ENTRY`, or 1 + the position of its entry.
    cache: Box<[AtomicU32]>,
}

impl<F> Default for TypeDispatch<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> TypeDispatch<F> {
    /// An empty table.
    pub fn new() -> Self {
        TypeDispatch {
            entries: Vec::new(),
            cache: Box::new([]),
        }
    }

    /// Sets the entry for `T` (and for descendants without an entry of their own),
    /// returning the one it replaces.
    pub fn set_dispatch<T: ObjectType>(&mut self, f: F) -> Option<F> {
        self.set_index(T::type_index(), f)
    }

    /// Sets the entry for the type with key `key` (a run-time or plugin type),
    /// returning the one it replaces.
    ///
    /// # Errors
    ///
    /// [`DispatchErrorKind::UnknownType`] if no object type has that key.
    ///
    /// ```
    /// use object_core::registry::{register_type, TypeSpec};
    /// use object_core::transform::TypeDispatch;
    /// use object_core::{make_object_as, Object};
    ///
    /// let info = register_type(&TypeSpec::new("doc.disp.Plugin", "ffi.Object")).unwrap();
    /// let mut t: TypeDispatch<&str> = TypeDispatch::new();
    /// t.set_dispatch_key("doc.disp.Plugin", "plugin").unwrap();
    /// let o = make_object_as(Object::new(), info.index()).unwrap();
    /// assert_eq!(t.dispatch(&o), Ok(&"plugin"));
    /// assert!(t.set_dispatch_key("doc.disp.Nope", "x").is_err());
    /// ```
    pub fn set_dispatch_key(&mut self, key: &str, f: F) -> Result<Option<F>, DispatchError> {
        match registry::type_info_by_key(key).filter(|i| i.is_object()) {
            Some(info) => Ok(self.set_index(info.index(), f)),
            None => Err(DispatchError::unknown_key(key)),
        }
    }

    /// Sets the entry for the type at `index`, returning the one it replaces.
    ///
    /// # Errors
    ///
    /// [`DispatchErrorKind::UnknownType`] if no object type has that index.
    pub fn set_dispatch_index(&mut self, index: u32, f: F) -> Result<Option<F>, DispatchError> {
        match registry::type_info(index).filter(|i| i.is_object()) {
            Some(info) => Ok(self.set_index(info.index(), f)),
            None => Err(DispatchError::unknown_index(index)),
        }
    }

    fn set_index(&mut self, index: u32, f: F) -> Option<F> {
        self.reset_cache();
        match self.entries.iter_mut().find(|(i, _)| *i == index) {
            Some((_, old)) => Some(core::mem::replace(old, f)),
            None => {
                self.entries.push((index, f));
                None
            }
        }
    }

    /// Removes the entry set for `T` itself (not an ancestor's), returning it.
    pub fn remove<T: ObjectType>(&mut self) -> Option<F> {
        let index = T::type_index();
        let pos = self.entries.iter().position(|(i, _)| *i == index)?;
        self.reset_cache();
        Some(self.entries.swap_remove(pos).1)
    }

    /// Whether `T` itself has an entry (an ancestor's does not count).
    pub fn contains<T: ObjectType>(&self) -> bool {
        let index = T::type_index();
        self.entries.iter().any(|(i, _)| *i == index)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A fresh cache covering every index registered now, plus headroom.
    fn reset_cache(&mut self) {
        let max = registry::types()
            .last()
            .map_or(0, |i| i.index() as usize + 1);
        let len = max + HEADROOM;
        if self.cache.len() == len {
            for slot in self.cache.iter_mut() {
                *slot.get_mut() = UNRESOLVED;
            }
        } else {
            self.cache = (0..len).map(|_| AtomicU32::new(UNRESOLVED)).collect();
        }
    }

    /// The entry for `obj`'s type or its nearest ancestor with one.
    ///
    /// # Errors
    ///
    /// [`DispatchErrorKind::NoEntry`] (naming the type) if neither the type nor any
    /// ancestor has an entry.
    #[inline(always)]
    pub fn dispatch(&self, obj: &ObjectRef) -> Result<&F, DispatchError> {
        match self.get_index(obj.type_index()) {
            Some(f) => Ok(f),
            None => Err(DispatchError::no_entry(obj.type_key())),
        }
    }

    /// As [`dispatch`](Self::dispatch), `None` where that is an error.
    #[inline(always)]
    pub fn get(&self, obj: &ObjectRef) -> Option<&F> {
        self.get_index(obj.type_index())
    }

    /// The entry for the type at `index` or its nearest ancestor with one.
    ///
    /// # Errors
    ///
    /// [`DispatchErrorKind::UnknownType`] for an index no object type has,
    /// [`DispatchErrorKind::NoEntry`] as for [`dispatch`](Self::dispatch).
    pub fn dispatch_index(&self, index: u32) -> Result<&F, DispatchError> {
        let info = registry::type_info(index)
            .filter(|i| i.is_object())
            .ok_or_else(|| DispatchError::unknown_index(index))?;
        self.get_index(index)
            .ok_or_else(|| DispatchError::no_entry(info.key()))
    }

    #[inline(always)]
    fn get_index(&self, index: u32) -> Option<&F> {
        if let Some(slot) = self.cache.get(index as usize) {
            // Relaxed: the value is a pure function of the entries, which cannot change
            // while `&self` is shared; a stale `UNRESOLVED` only costs a resolution.
            let pos = slot.load(Ordering::Relaxed);
            if pos.wrapping_sub(1) < NO_ENTRY - 1 {
                if let Some((_, f)) = self.entries.get(pos as usize - 1) {
                    return Some(f);
                }
            }
            if pos == NO_ENTRY {
                return None;
            }
        }
        self.resolve_and_cache(index)
    }

    /// The slow path of [`get_index`](Self::get_index): resolves `index` and caches
    /// the answer where the cache reaches.
    #[cold]
    #[inline(never)]
    fn resolve_and_cache(&self, index: u32) -> Option<&F> {
        let resolved = self.resolve(index);
        if let Some(slot) = self.cache.get(index as usize) {
            slot.store(
                resolved.map_or(NO_ENTRY, |p| p as u32 + 1),
                Ordering::Relaxed,
            );
        }
        resolved.map(|p| &self.entries[p].1)
    }

    /// The position of the entry of the nearest ancestor-or-self of `index` that has
    /// one: a walk up the type's ancestor list.
    fn resolve(&self, index: u32) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let info = registry::type_info(index)?;
        info.ancestors()
            .iter()
            .rev()
            .find_map(|a| self.entries.iter().position(|(i, _)| i == a))
    }
}

impl<F> fmt::Debug for TypeDispatch<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self
            .entries
            .iter()
            .map(|(i, _)| registry::type_info(*i).map_or("<unknown>", TypeInfo::key))
            .collect();
        f.debug_struct("TypeDispatch")
            .field("entries", &keys)
            .finish()
    }
}

/// What went wrong in a [`TypeDispatch`] look-up or update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DispatchErrorKind {
    /// Neither the object's type nor any ancestor has an entry.
    NoEntry,
    /// No object type has the key or index given.
    UnknownType,
}

/// The error of a [`TypeDispatch`] look-up or update: a [`kind`](Self::kind) to match
/// and the type it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchError {
    kind: DispatchErrorKind,
    type_key: std::string::String,
}

impl DispatchError {
    #[cold]
    #[inline(never)]
    fn no_entry(key: &str) -> Self {
        DispatchError {
            kind: DispatchErrorKind::NoEntry,
            type_key: key.to_owned(),
        }
    }
    fn unknown_key(key: &str) -> Self {
        DispatchError {
            kind: DispatchErrorKind::UnknownType,
            type_key: key.to_owned(),
        }
    }
    fn unknown_index(index: u32) -> Self {
        DispatchError {
            kind: DispatchErrorKind::UnknownType,
            type_key: format!("<type index {index}>"),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> DispatchErrorKind {
        self.kind
    }

    /// The type key concerned (`<type index N>` for an unknown index).
    pub fn type_key(&self) -> &str {
        &self.type_key
    }
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DispatchErrorKind::NoEntry => write!(
                f,
                "no dispatch entry for `{}` or any of its ancestors",
                self.type_key
            ),
            DispatchErrorKind::UnknownType => {
                write!(f, "no object type `{}` is registered", self.type_key)
            }
        }
    }
}

impl std::error::Error for DispatchError {}
