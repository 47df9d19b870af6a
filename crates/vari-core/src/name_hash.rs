//! A fast hash for short names used as hash-map keys inside one call (ranking tables, the
//! reader's name cache).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A word-at-a-time multiplicative hash (the `FxHash` scheme of rustc). The keys are short names
/// looked up tens of thousands of times per ranking or read, where SipHash's flooding resistance costs
/// more than the whole ranking; the maps are built from the very metadata being ranked and live
/// for one call, so there is nothing to protect.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl NameHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits depending on the low input bits only, and hashbrown
        // picks buckets by the low bits: rotate the well-mixed high bits down (as rustc-hash 2
        // does), or `feat0`…`feat9` would all share a bucket.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = 0u64;
            for (i, &b) in chunk.iter().enumerate() {
                word |= u64::from(b) << (8 * i);
            }
            self.add(word);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Assembled byte by byte: a partial `copy_from_slice` becomes a `memcpy` call,
            // which costed more than the hashing itself.
            let mut word = 0u64;
            for (i, &b) in rest.iter().enumerate() {
                word |= u64::from(b) << (8 * i);
            }
            self.add(word);
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }
}

/// A borrowed name as a hash key. Its equality is an inline byte loop: names are a few bytes
/// long, and `str`'s equality calls `memcmp`, whose call overhead dominated look-ups.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name<'a>(pub(crate) &'a str);

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
    }
}

impl Eq for Name<'_> {}

impl Hash for Name<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

/// A hash map keyed by borrowed names.
#[derive(Debug)]
pub(crate) struct NameMap<'a, V>(pub(crate) HashMap<Name<'a>, V, BuildHasherDefault<NameHasher>>);

impl<V> Default for NameMap<'_, V> {
    fn default() -> Self {
        Self(HashMap::default())
    }
}

impl<'a, V> NameMap<'a, V> {
    /// The value of `name`.
    pub(crate) fn get<'s>(&'s self, name: &'s str) -> Option<&'s V> {
        // Maps are covariant in their key's lifetime, so look up in a view whose keys live as
        // short as `name`.
        let map: &'s HashMap<Name<'s>, V, BuildHasherDefault<NameHasher>> = &self.0;
        map.get(&Name(name))
    }

    /// Sets the value of `name`.
    pub(crate) fn insert(&mut self, name: &'a str, value: V) {
        self.0.insert(Name(name), value);
    }

    /// The number of names.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasher_differs_for_different_names() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<NameHasher>::default();
        assert_ne!(b.hash_one("level"), b.hash_one("levem"));
        assert_eq!(b.hash_one("level"), b.hash_one("level"));
    }
}
