//! Keeping the snapshots of mutable containers (`List`, `Dict`) alive for one walk.
//!
//! A mutable container shows its contents as an owned copy taken under its lock
//! ([`Contents::SnapshotItems`](super::Contents::SnapshotItems)), so that no lock is
//! held while the walk goes on (a list that holds itself, or two lists compared against
//! each other, cannot deadlock). The walk borrows values from what it compares for its
//! whole length, so each snapshot must stay where it is until the walk ends: it goes
//! into a [`Snapshots`] store made before the engine, which only grows. The store is a
//! chain of boxes linked through `OnceCell`s, so handing out a reference that lives as
//! long as the store needs no `unsafe`: a set cell is never changed again.

use std::cell::OnceCell;

use crate::any::Any;

/// One kept snapshot and the link to the next.
struct Chunk {
    snap: Snapshot,
    next: OnceCell<Box<Chunk>>,
}

/// What a snapshot holds.
pub(crate) enum Snapshot {
    Items(Vec<Any>),
    Entries(Vec<(Any, Any)>),
}

/// The store: an empty head, then the snapshots in the order they were kept.
pub(crate) struct Snapshots {
    head: Chunk,
}

impl Snapshots {
    pub(crate) fn new() -> Self {
        Snapshots {
            head: Chunk {
                snap: Snapshot::Items(Vec::new()),
                next: OnceCell::new(),
            },
        }
    }
}

/// Unlinks the chain one box at a time: dropping it as nested boxes would recurse once
/// per snapshot (a list of lists ten million deep keeps ten million snapshots).
impl Drop for Snapshots {
    fn drop(&mut self) {
        let mut next = self.head.next.take();
        while let Some(mut chunk) = next {
            next = chunk.next.take();
        }
    }
}

/// Appends to a [`Snapshots`] store, handing out references that live as long as it.
pub(crate) struct Keeper<'a> {
    tail: &'a Chunk,
}

impl<'a> Keeper<'a> {
    pub(crate) fn new(store: &'a Snapshots) -> Self {
        Keeper { tail: &store.head }
    }

    /// Keeps `snap` until the store is dropped.
    pub(crate) fn keep(&mut self, snap: Snapshot) -> &'a Snapshot {
        // Another keeper of the same store may have appended: find the end.
        while let Some(next) = self.tail.next.get() {
            self.tail = next;
        }
        let chunk: &'a Chunk = self.tail.next.get_or_init(|| {
            Box::new(Chunk {
                snap,
                next: OnceCell::new(),
            })
        });
        self.tail = chunk;
        &chunk.snap
    }

    /// Keeps `items`, returning them borrowed for the store's lifetime.
    pub(crate) fn items(&mut self, items: Vec<Any>) -> &'a [Any] {
        match self.keep(Snapshot::Items(items)) {
            Snapshot::Items(v) => v,
            Snapshot::Entries(_) => &[],
        }
    }

    /// Keeps `entries`, returning them borrowed for the store's lifetime.
    pub(crate) fn entries(&mut self, entries: Vec<(Any, Any)>) -> &'a [(Any, Any)] {
        match self.keep(Snapshot::Entries(entries)) {
            Snapshot::Entries(v) => v,
            Snapshot::Items(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_snapshots_stay_put_and_drop_without_recursion() {
        let store = Snapshots::new();
        let mut keeper = Keeper::new(&store);
        let first = keeper.items(vec![Any::from(1i64)]);
        let mut last: &[(Any, Any)] = &[];
        // (Fewer under Miri, which interprets each allocation.)
        let n: i64 = if cfg!(miri) { 2_000 } else { 200_000 };
        for i in 0..n {
            last = keeper.entries(vec![(Any::from(i), Any::from(-i))]);
        }
        // A second keeper appends after the first one's snapshots.
        let other = Keeper::new(&store).items(vec![Any::from(7i64)]);
        assert_eq!(first[0].as_int(), Some(1));
        assert_eq!(last[0].1.as_int(), Some(1 - n));
        assert_eq!(other[0].as_int(), Some(7));
        drop(store);
    }
}
