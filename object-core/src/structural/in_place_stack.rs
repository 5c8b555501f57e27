//! [`InPlaceStack`]: a fixed-size stack kept in place, on which the in-place walks of
//! structural equality and hashing keep the pairs (or objects) they are inside of.
//! (`arrayvec`'s `ArrayVec` does the same; measured in its place, it cost the walks
//! 1.6–2.3% more instructions.)

use core::mem::MaybeUninit;

/// A stack of up to `N` values kept in place (no allocation, and nothing written until a
/// value is pushed): the `TreePair`s (or objects being hashed) an iterative walk is
/// inside of.
pub(crate) struct InPlaceStack<T, const N: usize> {
    items: [MaybeUninit<T>; N],
    /// `items[..len]` are written.
    len: usize,
}

impl<T, const N: usize> InPlaceStack<T, N> {
    /// An empty stack.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        InPlaceStack {
            items: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    /// Pushes `v`, or hands it back if the stack is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: T) -> Result<(), T> {
        let Some(slot) = self.items.get_mut(self.len) else {
            return Err(v);
        };
        slot.write(v);
        self.len += 1;
        Ok(())
    }

    /// The value pushed last, taken off.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.len = self.len.checked_sub(1)?;
        // SAFETY: `items[..len]` are written (the field's invariant, kept by `push`),
        // and the old `len - 1` is below the old `len`; reading it out moves it (`len`
        // no longer covers it, so it is neither read nor dropped again).
        Some(unsafe { self.items.get_unchecked(self.len).assume_init_read() })
    }
}

impl<T, const N: usize> Drop for InPlaceStack<T, N> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            while self.pop().is_some() {}
        }
    }
}
