//! Small memos for what is derived from metadata text: a table's manifests
//! repeat the same Avro schema, table schema and partition spec, and parsing
//! them again for every manifest would cost more than decoding a small one.

use std::sync::Mutex;

/// The last `capacity` (key, value) pairs computed, compared by equality.
/// Keys are few and compared mostly by length first (strings), so a short
/// list beats hashing kilobytes of schema text.
pub struct Memo<K, V> {
    entries: Mutex<Vec<(K, V)>>,
    capacity: usize,
}

impl<K: PartialEq, V: Clone> Memo<K, V> {
    pub const fn new(capacity: usize) -> Self {
        Memo {
            entries: Mutex::new(Vec::new()),
            capacity,
        }
    }

    /// The value for `key`, computed by `make` when not memoised. Errors are
    /// returned, not memoised. `make` runs without the lock held.
    pub fn get_or_try_insert<E>(
        &self,
        key: K,
        make: impl FnOnce(&K) -> std::result::Result<V, E>,
    ) -> std::result::Result<V, E> {
        if let Some(value) = self.get(&key) {
            return Ok(value);
        }
        let value = make(&key)?;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if !entries.iter().any(|(k, _)| *k == key) {
            if entries.len() >= self.capacity.max(1) {
                entries.remove(0);
            }
            entries.push((key, value.clone()));
        }
        Ok(value)
    }

    fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key_and_evicts_the_oldest() {
        let memo: Memo<String, usize> = Memo::new(2);
        let calls = std::cell::Cell::new(0);
        let get = |key: &str| {
            memo.get_or_try_insert::<()>(key.to_owned(), |k| {
                calls.set(calls.get() + 1);
                Ok(k.len())
            })
            .unwrap()
        };
        assert_eq!((get("a"), get("bb"), get("a"), get("bb")), (1, 2, 1, 2));
        assert_eq!(get("ccc"), 3); // evicts "a"
        assert_eq!(get("a"), 1);
        assert_eq!(calls.get(), 4);
        let failed: Result<usize, &str> = memo.get_or_try_insert("d".to_owned(), |_| Err("no"));
        assert_eq!(failed, Err("no"));
    }
}
