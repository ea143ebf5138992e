//! Large per-call buffers kept per thread between calls, for the drivers that would otherwise
//! allocate and zero one on every call (`batch/mod.rs`).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// The thread-local slot a thread keeps its spare `T` in while no call uses it.
pub(crate) type Slot<T> = LocalKey<Cell<Option<Box<T>>>>;

/// A `T` taken from the calling thread's [`Slot`] (a fresh default one when the slot is empty)
/// and put back there when dropped. Whoever takes one must not rely on what an earlier call
/// left in it beyond what the slot's documentation promises.
pub(crate) struct Spare<T: 'static> {
    value: Option<Box<T>>,
    slot: &'static Slot<T>,
}

impl<T: Default + 'static> Spare<T> {
    /// The thread's spare from `slot`, or a new `T`.
    pub(crate) fn take(slot: &'static Slot<T>) -> Spare<T> {
        let spare = slot.try_with(|c| c.take()).ok().flatten();
        Spare {
            value: Some(spare.unwrap_or_default()),
            slot,
        }
    }
}

impl<T> Deref for Spare<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_deref().expect("present until dropped")
    }
}

impl<T> DerefMut for Spare<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value.as_deref_mut().expect("present until dropped")
    }
}

impl<T> Drop for Spare<T> {
    fn drop(&mut self) {
        if let Some(value) = self.value.take() {
            // During thread teardown the slot may be gone: the value is then just freed.
            let _ = self.slot.try_with(|c| c.set(Some(value)));
        }
    }
}
