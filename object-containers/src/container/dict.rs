//! `Dict<K, V>` (`ffi.Dict`, static index 76): the *mutable* counterpart of
//! [`Map`](super::Map). One shared, insertion-ordered hash map that every holder sees
//! change: no copy-on-write; mutation goes through `&self`, under a lock inside the
//! object.

use core::fmt;
use core::marker::PhantomData;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use object_core::{make_object, Any, AnyItem, AnyView, Object, ObjectPtr, TypeError};

use super::map::MapInner;
use super::Map;

/// The object behind [`Dict`]: the header and a map's storage behind a reader-writer
/// lock, held (as in [`ListObj`](super::ListObj)) for one operation and never while
/// code outside this module runs.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Dict", index = 76, final, opaque, builtin = DICT_HOOKS)]
pub struct DictObj {
    base: Object,
    inner: RwLock<MapInner>,
}

impl DictObj {
    /// Shared access. A poisoned lock is taken anyway: the operations here cannot
    /// leave the storage half-changed by a panic (hashing and comparing `Any` keys runs
    /// no user code), so a panic elsewhere while it was held broke nothing.
    fn read(&self) -> RwLockReadGuard<'_, MapInner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, MapInner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Clones of the entries in insertion order, taken under the lock.
    fn snapshot(&self) -> Vec<(Any, Any)> {
        self.read()
            .iter()
            .map(|e| (e.key.clone(), e.value.clone()))
            .collect()
    }
}

/// The entries, as a map (what an `ffi.Dict` held in an `Any` prints as), copied out
/// first so that the lock is not held while they print, and once per print
/// (`print_snapshot`), so the printer's two walks see the same entries.
impl fmt::Debug for DictObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = object_core::reflection::print_snapshot(self, || self.snapshot());
        f.debug_map()
            .entries(entries.iter().map(|(k, v)| (k.view(), v.view())))
            .finish()
    }
}

fn new_obj(inner: MapInner) -> ObjectPtr<DictObj> {
    make_object(DictObj {
        base: Object::new(),
        inner: RwLock::new(inner),
    })
}

/// A mutable, shared, insertion-ordered hash map, `ffi.Dict`.
///
/// Unlike [`Map`], a `Dict` is *one* object that every holder sees change: cloning
/// clones the handle, and [`insert`](Dict::insert), [`remove`](Dict::remove) and
/// [`clear`](Dict::clear) take `&self`. Keys compare as in a `Map` (strings by text,
/// numbers by value, other objects by identity); iteration follows insertion order
/// (replacing a value keeps its place).
///
/// **Typed views.** As for [`List`](super::List): another view may store anything, so
/// reads convert and report a mismatch; reads return clones, never references into
/// the storage.
///
/// # Thread Safety
///
/// `Dict<K, V>` is `Send + Sync`: every access takes the lock inside the object (reads
/// share it). Each method is atomic on its own.
///
/// # Cycles
///
/// A dict can hold itself (as a value, or as a key: keys are compared by identity), or
/// reach itself through other objects; such a cycle leaks until broken by hand
/// (`remove`, `clear`). The printer prints the repeated dict as a back-reference;
/// saving a JSON graph with a cycle is an error (`GraphErrorKind::Cycle`); `==`
/// compares values as `Any` does (objects by identity), so it does not descend.
/// Structural equality compares dicts by contents, in any order, as maps, and ends on
/// cycles (see `object_core::structural`).
///
/// ```
/// use object_containers::{Dict, String};
///
/// let d: Dict<String, i64> = Dict::new();
/// let alias = d.clone();
/// d.insert(String::from("b"), 1);
/// alias.insert(String::from("a"), 2);
/// assert_eq!(d.get("a").unwrap(), Some(2));
/// let keys: Vec<std::string::String> =
///     d.to_vec().unwrap().iter().map(|(k, _)| k.as_str().to_owned()).collect();
/// assert_eq!(keys, ["b", "a"]);
/// ```
#[repr(transparent)]
pub struct Dict<K: AnyItem = Any, V: AnyItem = Any> {
    obj: ObjectPtr<DictObj>,
    _kv: PhantomData<(K, V)>,
}

impl<K: AnyItem, V: AnyItem> Dict<K, V> {
    /// An empty dict.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = Dict::new();
    /// assert!(d.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty dict with room for `n` entries.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = Dict::with_capacity(8);
    /// assert_eq!(d.len(), 0);
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        Self::from_obj(new_obj(MapInner::with_capacity(n)))
    }

    fn from_obj(obj: ObjectPtr<DictObj>) -> Self {
        Dict {
            obj,
            _kv: PhantomData,
        }
    }

    /// The number of entries now.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = [(1, 10), (2, 20)].into_iter().collect();
    /// assert_eq!(d.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.obj.read().len()
    }

    /// Whether the dict is empty now.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = Dict::new();
    /// assert!(d.is_empty());
    /// d.insert(1, 10);
    /// assert!(!d.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A clone of the value for `key` (a `&str`, an `i64`, a `&String`, an `&Any`, …),
    /// `Ok(None)` when absent.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for a value that is not a `V` (stored through another view).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Dict, String};
    /// let d: Dict<String, i64> = Dict::new();
    /// d.insert(String::from("one"), 1);
    /// assert_eq!(d.get("one"), Ok(Some(1)));
    /// assert_eq!(d.get(&String::from("one")), Ok(Some(1))); // strings compare by text
    /// assert_eq!(d.get("two"), Ok(None));
    /// ```
    pub fn get<'k>(&self, key: impl Into<AnyView<'k>>) -> Result<Option<V>, TypeError> {
        let key = key.into();
        let value = {
            let inner = self.obj.read();
            inner
                .find(key)
                .and_then(|i| inner.entry(i))
                .map(|e| e.value.clone())
        };
        value.map(V::try_from_any).transpose()
    }

    /// Whether `key` is present now.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = [(1, 10)].into_iter().collect();
    /// assert!(d.contains_key(1));
    /// assert!(!d.contains_key(2));
    /// ```
    pub fn contains_key<'k>(&self, key: impl Into<AnyView<'k>>) -> bool {
        self.obj.read().find(key.into()).is_some()
    }

    /// Inserts or replaces; returns the old value as it was stored (a replaced key
    /// keeps its place in the order). (When the key is there already, the `key` given
    /// is dropped under the lock, which runs no code of anyone's: an equal key is the
    /// same object, or a string or number.)
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let d: Dict<i64, i64> = Dict::new();
    /// let alias = d.clone(); // `insert` takes `&self`: every handle sees it
    /// assert_eq!(d.insert(1, 10), None);
    /// assert_eq!(d.insert(1, 11), Some(Any::from(10)));
    /// assert_eq!(alias.get(1), Ok(Some(11)));
    /// ```
    pub fn insert(&self, key: K, value: V) -> Option<Any> {
        let (key, value) = (key.into_any(), value.into_any());
        let old = self.obj.write().insert(key, value);
        old
    }

    /// Removes `key`; returns its value as it was stored. (The stored key comes out of
    /// the lock with the value and is released after it, as everything removed here.)
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let d: Dict<i64, i64> = [(1, 10), (2, 20)].into_iter().collect();
    /// assert_eq!(d.remove(1), Some(Any::from(10)));
    /// assert_eq!(d.remove(1), None);
    /// assert_eq!(d.len(), 1);
    /// ```
    pub fn remove<'k>(&self, key: impl Into<AnyView<'k>>) -> Option<Any> {
        let key = key.into();
        let old = self.obj.write().remove_entry(key);
        old.map(|(_, value)| value)
    }

    /// Removes every entry (released after the lock is).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let d: Dict<i64, Any> = Dict::new();
    /// d.insert(0, Any::from(d.clone())); // a dict that holds itself leaks...
    /// d.clear(); // ...until the cycle is broken
    /// assert!(d.is_empty());
    /// ```
    pub fn clear(&self) {
        let old = core::mem::take(&mut *self.obj.write());
        drop(old);
    }

    /// Clones of the entries in insertion order, converted.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first key or value of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let d: Dict<i64, i64> = [(2, 20), (1, 10)].into_iter().collect();
    /// d.insert(2, 21); // a replaced value keeps its place
    /// assert_eq!(d.to_vec().unwrap(), [(2, 21), (1, 10)]);
    /// ```
    pub fn to_vec(&self) -> Result<Vec<(K, V)>, TypeError> {
        self.obj
            .snapshot()
            .into_iter()
            .map(|(k, v)| Ok((K::try_from_any(k)?, V::try_from_any(v)?)))
            .collect()
    }

    /// The entries now, as an immutable [`Map`] (a copy).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let d: Dict<i64, i64> = [(1, 10)].into_iter().collect();
    /// let frozen = d.to_map();
    /// d.insert(2, 20);
    /// assert_eq!((frozen.len(), d.len()), (1, 2));
    /// assert_eq!(frozen.get(1), Some(&Any::from(10)));
    /// ```
    pub fn to_map(&self) -> Map<Any, Any> {
        self.obj.snapshot().into_iter().collect()
    }

    /// The same dict viewed with other key and value types, if every entry fits now
    /// (typed reads stay checked).
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first key or value that does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let any: Dict<Any, Any> = [(Any::from(1), Any::from(10))].into_iter().collect();
    /// let ints: Dict<i64, i64> = any.cast().unwrap();
    /// assert_eq!(ints.get(1), Ok(Some(10)));
    /// any.insert(Any::from(2), Any::from("twenty"));
    /// let e = any.cast::<i64, i64>().unwrap_err();
    /// assert_eq!(e.to_string(), "expected int value, got ffi.String");
    /// ```
    pub fn cast<K2: AnyItem, V2: AnyItem>(&self) -> Result<Dict<K2, V2>, TypeError> {
        check_entries::<K2, V2>(&self.obj)?;
        Ok(Dict::from_obj(self.obj.clone()))
    }

    /// Whether two handles are the same dict, whatever their key and value types.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Dict;
    /// let a: Dict<i64, i64> = [(1, 10)].into_iter().collect();
    /// let b: Dict<i64, i64> = [(1, 10)].into_iter().collect();
    /// assert!(Dict::ptr_eq(&a, &a.clone()));
    /// assert!(!Dict::ptr_eq(&a, &b));
    /// assert_eq!(a, b); // `==` compares the entries
    /// ```
    #[inline]
    pub fn ptr_eq<K2: AnyItem, V2: AnyItem>(this: &Self, other: &Dict<K2, V2>) -> bool {
        ObjectPtr::ptr_eq(&this.obj, &other.obj)
    }

    /// The underlying object.
    #[inline]
    pub fn as_object_ptr(&self) -> &ObjectPtr<DictObj> {
        &self.obj
    }

    /// The underlying object, taking over this handle's reference.
    #[inline]
    pub fn into_object_ptr(self) -> ObjectPtr<DictObj> {
        self.obj
    }

    /// Wraps a dict object, checking that every entry fits `K` and `V` now.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first key or value that does not.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, Dict};
    /// let d: Dict<i64, Any> = [(1, Any::from("one"))].into_iter().collect();
    /// let obj = d.into_object_ptr();
    /// assert!(Dict::<i64, i64>::from_object_ptr(obj.clone()).is_err());
    /// assert_eq!(Dict::<i64, Any>::from_object_ptr(obj).unwrap().len(), 1);
    /// ```
    pub fn from_object_ptr(obj: ObjectPtr<DictObj>) -> Result<Self, TypeError> {
        Dict::<Any, Any>::from_obj(obj).cast()
    }
}

/// Checks every entry against `K` and `V`, on a snapshot (`matches` of a nested
/// container takes its lock, which may be this one's).
fn check_entries<K: AnyItem, V: AnyItem>(obj: &DictObj) -> Result<(), TypeError> {
    for (k, v) in &obj.snapshot() {
        if !K::matches(k) {
            return Err(TypeError::new(
                format!("{} key", K::expected()),
                k.type_key(),
            ));
        }
        if !V::matches(v) {
            return Err(TypeError::new(
                format!("{} value", V::expected()),
                v.type_key(),
            ));
        }
    }
    Ok(())
}

impl<K: AnyItem, V: AnyItem> Default for Dict<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Another handle to the same dict (not a copy).
impl<K: AnyItem, V: AnyItem> Clone for Dict<K, V> {
    fn clone(&self) -> Self {
        Dict::from_obj(self.obj.clone())
    }
}

/// The same keys now, each with an equal value (as `Any` compares), in any order. Each
/// dict is read in turn, never both locks at once.
impl<K: AnyItem, V: AnyItem> PartialEq for Dict<K, V> {
    fn eq(&self, other: &Self) -> bool {
        Dict::ptr_eq(self, other) || self.to_map() == other.to_map()
    }
}

/// The entries, as a map; objects through their reflection, shared ones once.
impl<K: AnyItem, V: AnyItem> fmt::Debug for Dict<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.obj, f)
    }
}

impl<K: AnyItem, V: AnyItem> Extend<(K, V)> for Dict<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        let new: Vec<(Any, Any)> = iter
            .into_iter()
            .map(|(k, v)| (k.into_any(), v.into_any()))
            .collect();
        let mut old = Vec::new();
        {
            let mut inner = self.obj.write();
            for (k, v) in new {
                old.extend(inner.insert(k, v));
            }
        }
        drop(old);
    }
}

impl<K: AnyItem, V: AnyItem> FromIterator<(K, V)> for Dict<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut inner = MapInner::default();
        for (k, v) in iter {
            inner.insert(k.into_any(), v.into_any());
        }
        Self::from_obj(new_obj(inner))
    }
}

impl<'a, K: AnyItem, V: AnyItem> From<&'a Dict<K, V>> for AnyView<'a> {
    fn from(v: &'a Dict<K, V>) -> Self {
        AnyView::from(&v.obj)
    }
}

impl<K: AnyItem, V: AnyItem> From<Dict<K, V>> for Any {
    fn from(d: Dict<K, V>) -> Any {
        Any::from(d.obj)
    }
}

impl<K: AnyItem, V: AnyItem> TryFrom<Any> for Dict<K, V> {
    type Error = TypeError;
    /// Checks that the value is an `ffi.Dict` whose entries all fit `K` and `V` now.
    fn try_from(a: Any) -> Result<Self, TypeError> {
        Dict::from_object_ptr(ObjectPtr::<DictObj>::try_from(a)?)
    }
}

// SAFETY: `Dict<K, V>` is `repr(transparent)` over `ObjectPtr<DictObj>` whatever `K`
// and `V` are, so a slot that holds a dict object is a valid `Dict<K, V>`. Soundness
// never rests on the entries (checked by `matches` as they are now, and again by every
// typed read).
unsafe impl<K: AnyItem, V: AnyItem> AnyItem for Dict<K, V> {
    fn expected() -> std::borrow::Cow<'static, str> {
        format!("ffi.Dict of {} to {}", K::expected(), V::expected()).into()
    }
    fn into_any(self) -> Any {
        Any::from(self)
    }
    fn matches(slot: &Any) -> bool {
        slot.as_object_of::<DictObj>()
            .is_some_and(|o| check_entries::<K, V>(o).is_ok())
    }
    fn from_slot(slot: &Any) -> Option<&Self> {
        if !Self::matches(slot) {
            return None;
        }
        let p = slot.as_object_of::<DictObj>()?;
        // SAFETY: `Dict<K, V>` is `repr(transparent)` over `ObjectPtr<DictObj>`.
        Some(unsafe { &*(p as *const ObjectPtr<DictObj> as *const Dict<K, V>) })
    }
    /// Without the item check (which copies the items): a slot known to match holds
    /// a `DictObj`, which is all the cast needs.
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match slot.as_object_of::<DictObj>() {
            // SAFETY: `Dict<K, V>` is `repr(transparent)` over `ObjectPtr<DictObj>`.
            Some(p) => unsafe { &*(p as *const ObjectPtr<DictObj> as *const Dict<K, V>) },
            // SAFETY: the caller guarantees the slot matches, so it holds a `DictObj`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Dict::try_from(slot)
    }
}

super::view_field_value!(Dict<K, V>, "ffi.Dict");

crate::function::impl_call_traits!(impl<K: AnyItem, V: AnyItem> Dict<K, V>);

/// A dict is a mutable built-in of shape entries: walkers read a snapshot of its
/// entries taken under the lock; one is built as a new dict (a later equal key
/// replaces an earlier one's value).
static DICT_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Entries,
    mutable: true,
    contents: dict_contents,
    build: |parts| match parts {
        object_core::builtin::Parts::Entries(entries) => {
            let d = Dict::<Any, Any>::new();
            for (k, v) in entries {
                d.insert(k, v);
            }
            Ok(Any::from(d))
        }
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Entries,
            &other,
        )),
    },
};

/// The contents of `obj` (a named function: no closure shim on the walkers' path).
fn dict_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    match obj.downcast_ref::<DictObj>() {
        Some(d) => object_core::builtin::Contents::SnapshotEntries(d.snapshot()),
        None => object_core::builtin::Contents::Identity,
    }
}
