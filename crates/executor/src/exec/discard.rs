//! Freeing big operator state off the statement's thread.
//!
//! An operator that holds millions of rows (a sort's input, a hash table, a DISTINCT's seen
//! set) owns several small allocations per row, and freeing them takes a few hundred
//! milliseconds (measured: a sort cancelled with 3.5 M rows buffered returned its 57014
//! ~180 ms after the deadline, all of it in `drop`). Done on the statement's thread, that
//! time comes between an interrupt and its error, and between a result and its
//! CommandComplete. So a big collection is handed to a short-lived thread that frees it.

/// Collections with at least this many entries are freed on another thread; smaller ones
/// take well under a millisecond to free.
const INLINE_LIMIT: usize = 64 * 1024;

/// Frees `value`, which holds `len` entries: here when it is small, else on a new thread.
/// (When no thread can be started, the closure and the value are dropped here.)
pub(crate) fn discard<T: Send + 'static>(len: usize, value: T) {
    if len < INLINE_LIMIT {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("keel-free".into())
        .spawn(move || drop(value));
}

/// A collection whose length says how much freeing it costs.
pub(crate) trait Entries: Default + Send + 'static {
    fn entries(&self) -> usize;
}

impl<T: Send + 'static> Entries for Vec<T> {
    fn entries(&self) -> usize {
        self.len()
    }
}

impl<T: Send + 'static> Entries for std::vec::IntoIter<T> {
    fn entries(&self) -> usize {
        self.len()
    }
}

impl<K: Send + 'static, V: Send + 'static, S: Default + Send + 'static> Entries
    for std::collections::HashMap<K, V, S>
{
    fn entries(&self) -> usize {
        self.len()
    }
}

impl<K: Send + 'static, S: Default + Send + 'static> Entries for std::collections::HashSet<K, S> {
    fn entries(&self) -> usize {
        self.len()
    }
}

/// Takes `value` out of its place and frees it with [`discard`] (for `Drop` of operators).
pub(crate) fn discard_in_place<T: Entries>(value: &mut T) {
    let v = std::mem::take(value);
    discard(v.entries(), v);
}

/// Operator state held in a local: freed with [`discard`] however the function ends.
pub(crate) struct Freed<T: Entries>(pub T);

impl<T: Entries> Drop for Freed<T> {
    fn drop(&mut self) {
        discard_in_place(&mut self.0);
    }
}

impl<T: Entries> std::ops::Deref for Freed<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Entries> std::ops::DerefMut for Freed<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_collection_is_freed_elsewhere() {
        struct Marker(std::sync::mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Marker {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().id());
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        discard(INLINE_LIMIT, Marker(tx.clone()));
        let freed_on = rx.recv().unwrap();
        assert_ne!(freed_on, std::thread::current().id());
        discard(1, Marker(tx));
        assert_eq!(rx.recv().unwrap(), std::thread::current().id());
    }
}
