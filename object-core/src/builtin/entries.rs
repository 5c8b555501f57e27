//! [`Entries`]: a map's entries lent as a borrowed iterator, over a hash map's slots
//! ([`EntrySlot`]s, read in place with no call per entry) or any storage that
//! implements [`EntryList`].

use core::fmt;

use crate::any::Any;

/// A built-in's entry storage, read by position: what [`Entries`] iterates over.
/// Positions run from 0 to [`end`](Self::end); a position may be vacant (a removed
/// entry not yet compacted), so storage with tombstones lends its entries in place.
pub trait EntryList: Sync {
    /// The number of entries (positions that are not vacant).
    fn len(&self) -> usize;
    /// Whether there are no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One past the last position.
    fn end(&self) -> usize;
    /// The entry at `position`, or `None` if it is vacant (or past the end).
    fn entry(&self, position: usize) -> Option<(&Any, &Any)>;
}

/// One entry of a hash map's storage, in insertion order: the key's hash (the map's
/// own, which walkers do not read), the key and the value. A built-in that stores its
/// entries as `[Option<EntrySlot>]` (vacant where one was removed) lends them with
/// [`Entries::from_slots`].
#[derive(Clone, Debug)]
pub struct EntrySlot {
    /// The key's hash, as the map computed it.
    pub hash: u64,
    /// The key.
    pub key: Any,
    /// The value.
    pub value: Any,
}

#[derive(Clone)]
enum Source<'a> {
    Slots(core::slice::Iter<'a, Option<EntrySlot>>),
    List {
        list: &'a dyn EntryList,
        front: usize,
        back: usize,
    },
}

/// A built-in's key-value entries in order, borrowed from it: a double-ended, exact-size
/// iterator of `(&key, &value)` that allocates nothing.
///
/// ```
/// use object_core::builtin::{Entries, EntryList};
/// use object_core::Any;
///
/// struct Pairs(Vec<Option<(Any, Any)>>);
/// impl EntryList for Pairs {
///     fn len(&self) -> usize { self.0.iter().flatten().count() }
///     fn end(&self) -> usize { self.0.len() }
///     fn entry(&self, at: usize) -> Option<(&Any, &Any)> {
///         self.0.get(at)?.as_ref().map(|(k, v)| (k, v))
///     }
/// }
/// let pairs = Pairs(vec![Some((1.into(), 2.into())), None, Some((3.into(), 4.into()))]);
/// let keys: Vec<i64> = Entries::new(&pairs).rev().map(|(k, _)| k.as_int().unwrap()).collect();
/// assert_eq!(keys, [3, 1]);
/// ```
#[derive(Clone)]
pub struct Entries<'a> {
    source: Source<'a>,
    /// Entries not yet given (from either end).
    left: usize,
}

impl<'a> Entries<'a> {
    /// The entries of `list`.
    #[inline]
    pub fn new(list: &'a dyn EntryList) -> Self {
        Entries {
            source: Source::List {
                list,
                front: 0,
                back: list.end(),
            },
            left: list.len(),
        }
    }

    /// The entries in `slots` (`len` of them are not vacant: a count that is wrong
    /// ends the iteration early or late, never reads out of bounds).
    ///
    /// ```
    /// use object_core::builtin::{Entries, EntrySlot};
    /// use object_core::Any;
    ///
    /// let slot = |k: i64, v: i64| Some(EntrySlot { hash: 0, key: k.into(), value: v.into() });
    /// let slots = [slot(1, 2), None, slot(3, 4)];
    /// let values: Vec<i64> =
    ///     Entries::from_slots(&slots, 2).map(|(_, v)| v.as_int().unwrap()).collect();
    /// assert_eq!(values, [2, 4]);
    /// ```
    #[inline]
    pub fn from_slots(slots: &'a [Option<EntrySlot>], len: usize) -> Self {
        Entries {
            source: Source::Slots(slots.iter()),
            left: len,
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a Any, &'a Any);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let found = match &mut self.source {
            Source::Slots(slots) => slots.find_map(Option::as_ref).map(|e| (&e.key, &e.value)),
            Source::List { list, front, back } => {
                let mut found = None;
                while *front < *back && found.is_none() {
                    found = list.entry(*front);
                    *front += 1;
                }
                found
            }
        };
        match found {
            Some(_) => self.left -= 1,
            None => self.left = 0,
        }
        found
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Entries<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let found = match &mut self.source {
            Source::Slots(slots) => slots
                .rev()
                .find_map(Option::as_ref)
                .map(|e| (&e.key, &e.value)),
            Source::List { list, front, back } => {
                let mut found = None;
                while *front < *back && found.is_none() {
                    *back -= 1;
                    found = list.entry(*back);
                }
                found
            }
        };
        match found {
            Some(_) => self.left -= 1,
            None => self.left = 0,
        }
        found
    }
}

impl ExactSizeIterator for Entries<'_> {}

impl core::iter::FusedIterator for Entries<'_> {}

impl fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.clone()).finish()
    }
}
