//! [`Entries`]: a map's entries lent as a borrowed iterator, over any storage that
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
#[derive(Clone, Copy)]
pub struct Entries<'a> {
    list: &'a dyn EntryList,
    front: usize,
    back: usize,
    left: usize,
}

impl<'a> Entries<'a> {
    /// The entries of `list`.
    #[inline]
    pub fn new(list: &'a dyn EntryList) -> Self {
        Entries {
            list,
            front: 0,
            back: list.end(),
            left: list.len(),
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a Any, &'a Any);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.left > 0 && self.front < self.back {
            let at = self.front;
            self.front += 1;
            if let Some(e) = self.list.entry(at) {
                self.left -= 1;
                return Some(e);
            }
        }
        None
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Entries<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        while self.left > 0 && self.front < self.back {
            self.back -= 1;
            if let Some(e) = self.list.entry(self.back) {
                self.left -= 1;
                return Some(e);
            }
        }
        None
    }
}

impl ExactSizeIterator for Entries<'_> {}

impl core::iter::FusedIterator for Entries<'_> {}

impl fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(*self).finish()
    }
}
