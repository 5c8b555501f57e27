//! `Map<K, V>` (`ffi.Map`, static index 72): a copy-on-write hash map of `Any` keys and
//! values that remembers insertion order.

use core::fmt;
use core::hash::BuildHasher;
use core::marker::PhantomData;

use hashbrown::HashTable;
use object_core::{make_object, Any, AnyItem, AnyView, Object, ObjectPtr, TypeError};

/// The hasher: foldhash, chosen on measurement (see the `containers` benches: it hashes
/// short string keys several times faster than SipHash, which dominated insert and
/// look-up time), seeded per map so that iteration order never depends on hashes.
type Hasher = foldhash::fast::RandomState;

/// An entry as the storage keeps it (the built-in entry slot walkers read in place).
pub(super) type Entry = object_core::builtin::EntrySlot;

/// The storage of a map, shared with [`Dict`](super::Dict) (which keeps one behind its
/// lock).
#[derive(Clone, Default)]
pub(super) struct MapInner {
    /// Indices into `entries`, hashed by the entry's key.
    table: HashTable<usize>,
    /// Entries in insertion order; `None` where one was removed.
    entries: Vec<Option<Entry>>,
    len: usize,
    hasher: Hasher,
}

impl MapInner {
    /// The entries, lent in place.
    #[inline]
    pub(super) fn lend(&self) -> object_core::builtin::Entries<'_> {
        object_core::builtin::Entries::from_slots(&self.entries, self.len)
    }

    pub(super) fn with_capacity(capacity: usize) -> Self {
        MapInner {
            table: HashTable::with_capacity(capacity),
            entries: Vec::with_capacity(capacity),
            len: 0,
            hasher: Hasher::default(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The entry at a position `find` returned.
    pub(super) fn entry(&self, i: usize) -> Option<&Entry> {
        self.entries.get(i).and_then(Option::as_ref)
    }

    #[inline]
    pub(super) fn find(&self, key: AnyView<'_>) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        let entries = &self.entries;
        self.table
            .find(hash, |&i| {
                entries[i].as_ref().is_some_and(|e| e.key.view() == key)
            })
            .copied()
    }

    pub(super) fn insert(&mut self, key: Any, value: Any) -> Option<Any> {
        let hash = self.hasher.hash_one(key.view());
        let entries = &mut self.entries;
        let found = self
            .table
            .find(hash, |&i| entries[i].as_ref().is_some_and(|e| e.key == key))
            .copied();
        if let Some(i) = found {
            return entries[i]
                .as_mut()
                .map(|e| core::mem::replace(&mut e.value, value));
        }
        let index = entries.len();
        entries.push(Some(Entry { hash, key, value }));
        self.table
            .insert_unique(hash, index, |&i| entries[i].as_ref().map_or(0, |e| e.hash));
        self.len += 1;
        None
    }

    pub(super) fn remove(&mut self, key: AnyView<'_>) -> Option<Any> {
        self.remove_entry(key).map(|(_, value)| value)
    }

    /// Removes `key`; returns the stored key and its value (so that a caller holding a
    /// lock can drop them after releasing it).
    pub(super) fn remove_entry(&mut self, key: AnyView<'_>) -> Option<(Any, Any)> {
        let hash = self.hasher.hash_one(key);
        let entries = &mut self.entries;
        let slot = self
            .table
            .find_entry(hash, |&i| {
                entries[i].as_ref().is_some_and(|e| e.key.view() == key)
            })
            .ok()?;
        let (index, _) = slot.remove();
        let removed = entries[index].take().map(|e| (e.key, e.value));
        self.len -= 1;
        if self.entries.len() > 8 && self.len < self.entries.len() / 2 {
            self.compact();
        }
        removed
    }

    /// Drops the holes left by removals (keeping order) and re-indexes.
    fn compact(&mut self) {
        self.entries.retain(Option::is_some);
        self.table.clear();
        let entries = &self.entries;
        for (i, e) in entries.iter().enumerate() {
            let hash = e.as_ref().map_or(0, |e| e.hash);
            self.table
                .insert_unique(hash, i, |&j| entries[j].as_ref().map_or(0, |e| e.hash));
        }
    }

    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &Entry> + '_ {
        self.entries.iter().flatten()
    }
}

/// The object behind [`Map`].
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Map", index = 72, final, opaque, builtin = MAP_HOOKS)]
pub struct MapObj {
    base: Object,
    inner: MapInner,
}

impl MapObj {
    /// The keys and values in insertion order, borrowed for as long as the map object
    /// is: what a walk that holds `&MapObj` (found by `downcast_ref` on a borrowed
    /// handle) reads without cloning the map's handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, MapObj};
    /// use object_core::{Any, ObjectRef};
    ///
    /// let mut m: Map<Any, Any> = Map::new();
    /// m.insert(Any::from("k"), Any::from(1));
    /// let obj: ObjectRef = m.into_object_ptr().into_object_ref();
    /// let map: &MapObj = obj.downcast_ref().unwrap();
    /// let entries: Vec<(&Any, &Any)> = map.iter().collect();
    /// assert_eq!(entries, [(&Any::from("k"), &Any::from(1))]);
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Any, &Any)> + '_ {
        self.inner.iter().map(|e| (&e.key, &e.value))
    }
}

/// The entries, as a map (what an `ffi.Map` held in an `Any` prints as).
impl fmt::Debug for MapObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k.view(), v.view())))
            .finish()
    }
}

fn new_obj(capacity: usize) -> ObjectPtr<MapObj> {
    let inner = MapInner::with_capacity(capacity);
    make_object(MapObj {
        base: Object::new(),
        inner,
    })
}

/// A copy-on-write hash map, `ffi.Map`.
///
/// Keys and values are stored as `Any`; `K` and `V` say what this map holds (as for
/// [`Array`](super::Array)). Keys compare as `Any` does: strings by their text
/// (whether a [`String`](crate::String) object, an inline short string or a `&str`
/// look-up key), numbers by value, other objects by identity.
///
/// **Order:** iteration follows insertion order. Replacing the value of an existing key
/// keeps its place; removing a key and inserting it again moves it to the end.
///
/// Cloning shares the object; mutating a shared map copies it first, so a clone never
/// sees the change.
///
/// ```
/// use object_containers::{Map, String};
///
/// let mut m: Map<String, i64> = Map::new();
/// m.insert(String::from("one"), 1);
/// m.insert(String::from("two"), 2);
/// let before = m.clone();
/// m.insert(String::from("one"), 10);
/// assert_eq!(m.get("one"), Some(&10));
/// assert_eq!(before.get("one"), Some(&1));
/// let keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
/// assert_eq!(keys, ["one", "two"]);
/// ```
#[repr(transparent)]
pub struct Map<K: AnyItem = Any, V: AnyItem = Any> {
    obj: ObjectPtr<MapObj>,
    _kv: PhantomData<(K, V)>,
}

impl<K: AnyItem, V: AnyItem> Map<K, V> {
    /// An empty map.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// let m: Map<String, i64> = Map::new();
    /// assert!(m.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty map with room for `n` entries.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, f64> = Map::with_capacity(100);
    /// assert_eq!(m.len(), 0);
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        Map {
            obj: new_obj(n),
            _kv: PhantomData,
        }
    }

    fn from_obj(obj: ObjectPtr<MapObj>) -> Self {
        Map {
            obj,
            _kv: PhantomData,
        }
    }

    #[inline]
    fn inner(&self) -> &MapInner {
        &self.obj.inner
    }

    fn inner_mut(&mut self) -> &mut MapInner {
        // `MapObj` is final, so copy-on-write always succeeds.
        let copy = |m: &MapObj| MapObj {
            base: Object::new(),
            inner: m.inner.clone(),
        };
        match ObjectPtr::make_mut_with(&mut self.obj, copy) {
            Some(fields) => fields.inner,
            None => unreachable!("a freshly copied map is unique"),
        }
    }

    /// The number of entries.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, i64> = [(1, 10), (2, 20), (1, 11)].into_iter().collect();
    /// assert_eq!(m.len(), 2, "a key is counted once");
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.inner().len
    }

    /// Whether the map is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let mut m: Map<i64, i64> = Map::new();
    /// assert!(m.is_empty());
    /// m.insert(1, 1);
    /// assert!(!m.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value for `key` (a `&str`, an `i64`, a `&String`, an `&ObjectPtr<_>`, an
    /// `&Any`, …).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// let mut m: Map<String, f64> = Map::new();
    /// m.insert(String::from("pi"), 3.14);
    /// assert_eq!(m.get("pi"), Some(&3.14)); // a `&str` looks up a `String` key
    /// assert_eq!(m.get(&String::from("pi")), Some(&3.14));
    /// assert_eq!(m.get("e"), None);
    /// ```
    #[inline]
    pub fn get<'k>(&self, key: impl Into<AnyView<'k>>) -> Option<&V> {
        let inner = self.inner();
        let i = inner.find(key.into())?;
        // SAFETY: every value of a `Map<K, V>` matches `V` (checked on the way in).
        inner.entries[i]
            .as_ref()
            .map(|e| unsafe { V::from_slot_unchecked(&e.value) })
    }

    /// Whether `key` is present.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, i64> = [(1, 10)].into_iter().collect();
    /// assert!(m.contains_key(1));
    /// assert!(!m.contains_key(2));
    /// ```
    pub fn contains_key<'k>(&self, key: impl Into<AnyView<'k>>) -> bool {
        self.inner().find(key.into()).is_some()
    }

    /// Inserts or replaces; returns the old value. A replaced key keeps its place in the
    /// order; a shared map is copied first.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// let mut m: Map<String, i64> = Map::new();
    /// assert_eq!(m.insert(String::from("a"), 1), None);
    /// let shared = m.clone();
    /// assert_eq!(m.insert(String::from("a"), 2), Some(1));
    /// assert_eq!((m.get("a"), shared.get("a")), (Some(&2), Some(&1)));
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.inner_mut()
            .insert(key.into_any(), value.into_any())
            .and_then(|v| V::try_from_any(v).ok())
    }

    /// Removes `key`; returns its value. Removing a missing key does not copy a shared
    /// map.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let mut m: Map<i64, i64> = [(1, 10), (2, 20)].into_iter().collect();
    /// assert_eq!(m.remove(1), Some(10));
    /// assert_eq!(m.remove(1), None);
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn remove<'k>(&mut self, key: impl Into<AnyView<'k>>) -> Option<V> {
        let key = key.into();
        self.inner().find(key)?;
        self.inner_mut()
            .remove(key)
            .and_then(|v| V::try_from_any(v).ok())
    }

    /// The entries in insertion order.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, i64> = [(3, 30), (1, 10)].into_iter().collect();
    /// let entries: Vec<(i64, i64)> = m.iter().map(|(k, v)| (*k, *v)).collect();
    /// assert_eq!(entries, [(3, 30), (1, 10)]);
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        // SAFETY: every key and value of a `Map<K, V>` matches `K` and `V`.
        self.inner().iter().map(|e| unsafe {
            (
                K::from_slot_unchecked(&e.key),
                V::from_slot_unchecked(&e.value),
            )
        })
    }

    /// The keys in insertion order.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// let mut m: Map<String, i64> = Map::new();
    /// m.insert(String::from("b"), 1);
    /// m.insert(String::from("a"), 2);
    /// assert_eq!(m.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values in insertion order.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, i64> = [(3, 30), (1, 10)].into_iter().collect();
    /// assert_eq!(m.values().sum::<i64>(), 40);
    /// ```
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The same map viewed with other key and value types, if every entry fits.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first key or value that does not.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// use object_core::Any;
    /// let mut m: Map<Any, Any> = Map::new();
    /// m.insert(Any::from(String::from("n")), Any::from(1));
    /// let typed: Map<String, i64> = m.cast().unwrap();
    /// assert!(Map::ptr_eq(&typed, &m), "a view, not a copy");
    /// assert!(m.cast::<String, f64>().is_err());
    /// ```
    pub fn cast<K2: AnyItem, V2: AnyItem>(&self) -> Result<Map<K2, V2>, TypeError> {
        for e in self.inner().iter() {
            if !K2::matches(&e.key) {
                return Err(TypeError::new(
                    format!("{} key", K2::expected()),
                    e.key.type_key(),
                ));
            }
            if !V2::matches(&e.value) {
                return Err(TypeError::new(
                    format!("{} value", V2::expected()),
                    e.value.type_key(),
                ));
            }
        }
        Ok(Map::from_obj(self.obj.clone()))
    }

    /// Whether two maps share one object, whatever their key and value types
    /// (`Map::ptr_eq(&a, &b)`, as `Arc::ptr_eq`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Map;
    /// let m: Map<i64, i64> = [(1, 10)].into_iter().collect();
    /// let mut copy = m.clone();
    /// assert!(Map::ptr_eq(&m, &copy));
    /// copy.insert(2, 20);
    /// assert!(!Map::ptr_eq(&m, &copy), "mutating a shared map copies it");
    /// ```
    #[inline]
    pub fn ptr_eq<K2: AnyItem, V2: AnyItem>(this: &Self, other: &Map<K2, V2>) -> bool {
        ObjectPtr::ptr_eq(&this.obj, &other.obj)
    }

    /// Whether `self` and `other` are the same map object (identity, as TVM's
    /// `same_as`), whatever `==` compares.
    #[inline]
    pub fn same_as<K2: AnyItem, V2: AnyItem>(&self, other: &Map<K2, V2>) -> bool {
        ObjectPtr::ptr_eq(&self.obj, &other.obj)
    }

    /// The underlying object.
    #[inline]
    pub fn as_object_ptr(&self) -> &ObjectPtr<MapObj> {
        &self.obj
    }

    /// The underlying object, taking over this handle's reference.
    #[inline]
    pub fn into_object_ptr(self) -> ObjectPtr<MapObj> {
        self.obj
    }

    /// Wraps a map object, checking that every entry fits `K` and `V`.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first key or value that does not.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Map, String};
    /// let mut m: Map<String, i64> = Map::new();
    /// m.insert(String::from("n"), 1);
    /// let obj = m.into_object_ptr();
    /// assert!(Map::<String, String>::from_object_ptr(obj.clone()).is_err());
    /// assert_eq!(Map::<String, i64>::from_object_ptr(obj).unwrap().get("n"), Some(&1));
    /// ```
    pub fn from_object_ptr(obj: ObjectPtr<MapObj>) -> Result<Self, TypeError> {
        Map::<Any, Any>::from_obj(obj).cast()
    }
}

impl<K: AnyItem, V: AnyItem> Default for Map<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: AnyItem, V: AnyItem> Clone for Map<K, V> {
    fn clone(&self) -> Self {
        Map::from_obj(self.obj.clone())
    }
}

/// Same keys, each with an equal value (as `Any` compares), in any order.
impl<K: AnyItem, V: AnyItem> PartialEq for Map<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.inner().iter().all(|e| {
                other
                    .inner()
                    .find(e.key.view())
                    .and_then(|i| other.inner().entries[i].as_ref())
                    .is_some_and(|o| o.value == e.value)
            })
    }
}
impl<K: AnyItem, V: AnyItem> Eq for Map<K, V> {}

/// The entries, as a map; objects through their reflection, shared ones once.
impl<K: AnyItem, V: AnyItem> fmt::Debug for Map<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.obj, f)
    }
}

impl<K: AnyItem, V: AnyItem> Extend<(K, V)> for Map<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        let mut iter = iter.into_iter().peekable();
        if iter.peek().is_none() {
            return; // nothing to add: a shared map stays shared
        }
        let inner = self.inner_mut();
        for (k, v) in iter {
            inner.insert(k.into_any(), v.into_any());
        }
    }
}

impl<K: AnyItem, V: AnyItem> FromIterator<(K, V)> for Map<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut m = Self::with_capacity(iter.size_hint().0);
        m.extend(iter);
        m
    }
}

impl<'a, K: AnyItem, V: AnyItem> From<&'a Map<K, V>> for AnyView<'a> {
    fn from(v: &'a Map<K, V>) -> Self {
        AnyView::from(&v.obj)
    }
}

impl<K: AnyItem, V: AnyItem> From<Map<K, V>> for Any {
    fn from(m: Map<K, V>) -> Any {
        Any::from(m.obj)
    }
}

impl<K: AnyItem, V: AnyItem> TryFrom<Any> for Map<K, V> {
    type Error = TypeError;
    /// Checks that the value is an `ffi.Map` whose entries all fit `K` and `V`.
    fn try_from(a: Any) -> Result<Self, TypeError> {
        Map::from_object_ptr(ObjectPtr::<MapObj>::try_from(a)?)
    }
}

// SAFETY: `Map<K, V>` is `repr(transparent)` over `ObjectPtr<MapObj>`; a slot matches when
// it holds a map object whose entries all fit `K` and `V`.
unsafe impl<K: AnyItem, V: AnyItem> AnyItem for Map<K, V> {
    fn expected() -> std::borrow::Cow<'static, str> {
        format!("ffi.Map of {} to {}", K::expected(), V::expected()).into()
    }
    fn into_any(self) -> Any {
        Any::from(self)
    }
    fn matches(slot: &Any) -> bool {
        slot.as_object_of::<MapObj>().is_some_and(|o| {
            o.inner
                .iter()
                .all(|e| K::matches(&e.key) && V::matches(&e.value))
        })
    }
    fn from_slot(slot: &Any) -> Option<&Self> {
        if !Self::matches(slot) {
            return None;
        }
        let p = slot.as_object_of::<MapObj>()?;
        // SAFETY: `Map<K, V>` is `repr(transparent)` over `ObjectPtr<MapObj>`, and the
        // entries were just checked.
        Some(unsafe { &*(p as *const ObjectPtr<MapObj> as *const Map<K, V>) })
    }
    /// Without the check of every item (a slot known to match holds an `MapObj`, which
    /// is all the cast needs): reading a map out of a typed container is then O(1), not O(entries).
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match slot.as_object_of::<MapObj>() {
            // SAFETY: `Map<K, V>` is `repr(transparent)` over `ObjectPtr<MapObj>`, and the
            // caller guarantees the entries match.
            Some(p) => unsafe { &*(p as *const ObjectPtr<MapObj> as *const Map<K, V>) },
            // SAFETY: the caller guarantees the slot matches, so it holds a `MapObj`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Map::try_from(slot)
    }
}

super::view_field_value!(Map<K, V>, "ffi.Map");

crate::function::impl_call_traits!(impl<K: AnyItem, V: AnyItem> Map<K, V>);

/// A map is a built-in of shape entries: lent in place, in insertion order, as a
/// borrowed iterator; built from a `Vec` of them (a later equal key replaces an
/// earlier one's value).
static MAP_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Entries,
    mutable: false,
    contents: map_contents,
    build: |parts| match parts {
        object_core::builtin::Parts::Entries(entries) => {
            let mut m = Map::<Any, Any>::with_capacity(entries.len());
            for (k, v) in entries {
                m.insert(k, v);
            }
            Ok(Any::from(m))
        }
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Entries,
            &other,
        )),
    },
};

/// The contents of `obj` (a named function: no closure shim on the walkers' path).
fn map_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    match obj.downcast_ref::<MapObj>() {
        Some(m) => object_core::builtin::Contents::Entries(m.inner.lend()),
        None => object_core::builtin::Contents::Identity,
    }
}
