//! File hashes as indexes give them: a typed algorithm and its lowercase hex digest.

use std::cmp::Ordering;
use std::fmt;

/// A hash algorithm named by an index (PEP 503's fragment, PEP 691's `hashes` keys).
///
/// The ones installers check are variants; any other name an index uses is kept (lowercased)
/// as [`HashAlgorithm::Other`], so a page is rendered again with every hash it had. Algorithms
/// order by name, as the keys of a PEP 691 `hashes` map do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HashAlgorithm {
    /// MD5 (still listed by old indexes).
    Md5,
    /// SHA-1.
    Sha1,
    /// SHA-224.
    Sha224,
    /// SHA-256, the one every index gives.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
    /// Any other name, lowercase.
    Other(Box<str>),
}

impl HashAlgorithm {
    /// The algorithm `name` stands for (any case).
    pub fn parse(name: &str) -> Self {
        match name.to_ascii_lowercase().as_str() {
            "md5" => Self::Md5,
            "sha1" => Self::Sha1,
            "sha224" => Self::Sha224,
            "sha256" => Self::Sha256,
            "sha384" => Self::Sha384,
            "sha512" => Self::Sha512,
            other => Self::Other(other.into()),
        }
    }

    /// Its name as pages write it, lowercase.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => known.known_name().unwrap_or_default(),
        }
    }

    /// The name of a known algorithm, for the lifetime of the program; `None` for
    /// [`HashAlgorithm::Other`].
    pub fn known_name(&self) -> Option<&'static str> {
        Some(match self {
            Self::Md5 => "md5",
            Self::Sha1 => "sha1",
            Self::Sha224 => "sha224",
            Self::Sha256 => "sha256",
            Self::Sha384 => "sha384",
            Self::Sha512 => "sha512",
            Self::Other(_) => return None,
        })
    }
}

impl Ord for HashAlgorithm {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for HashAlgorithm {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for HashAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Hashes of a file: algorithm → hex digest (lowercase).
///
/// Kept as a short list sorted by algorithm, not a map: a file has one or two hashes, and a
/// `BTreeMap` allocates a node of eleven slots (over 500 bytes) for even one, which on a page
/// of 100,000 files is most of the memory the page costs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hashes(Vec<(HashAlgorithm, String)>);

impl Hashes {
    /// Just a SHA-256 digest (lowercased).
    pub fn sha256_of(digest: &str) -> Self {
        let mut hashes = Self::default();
        hashes.insert(HashAlgorithm::Sha256, digest);
        hashes
    }

    /// The SHA-256 digest, if there is one.
    pub fn sha256(&self) -> Option<&str> {
        self.get(&HashAlgorithm::Sha256)
    }

    /// The digest for `algorithm`.
    pub fn get(&self, algorithm: &HashAlgorithm) -> Option<&str> {
        self.0
            .binary_search_by(|(known, _)| known.cmp(algorithm))
            .ok()
            .map(|at| self.0[at].1.as_str())
    }

    /// Whether there is no hash.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `(algorithm, digest)`, by algorithm name.
    pub fn iter(&self) -> impl Iterator<Item = (&HashAlgorithm, &str)> {
        self.0.iter().map(|(a, d)| (a, d.as_str()))
    }

    /// The strongest hash, for a PEP 503 URL fragment (which holds one): SHA-256 first (every
    /// installer checks it), then the others by strength, else the first by name.
    pub fn strongest(&self) -> Option<(&HashAlgorithm, &str)> {
        use HashAlgorithm::*;
        [Sha256, Sha512, Sha384, Sha224, Sha1, Md5]
            .iter()
            .find_map(|algorithm| {
                let at = self.0.binary_search_by(|(known, _)| known.cmp(algorithm));
                at.ok().map(|at| (&self.0[at].0, self.0[at].1.as_str()))
            })
            .or_else(|| self.iter().next())
    }

    /// Adds a hash (the digest lowercased); a later digest for the same algorithm replaces the
    /// earlier, as a map would. An empty digest is ignored.
    pub fn insert(&mut self, algorithm: HashAlgorithm, digest: &str) {
        if digest.is_empty() || algorithm.as_str().is_empty() {
            return;
        }
        let digest = digest.to_ascii_lowercase();
        match self.0.binary_search_by(|(known, _)| known.cmp(&algorithm)) {
            Ok(at) => self.0[at].1 = digest,
            Err(at) => self.0.insert(at, (algorithm, digest)),
        }
    }

    /// Adds a hash as a page names it (`SHA256`, `sha256`…); empty names are ignored.
    pub fn insert_named(&mut self, algorithm: &str, digest: &str) {
        if !algorithm.is_empty() {
            self.insert(HashAlgorithm::parse(algorithm), digest);
        }
    }
}

impl<A: AsRef<str>, D: AsRef<str>> FromIterator<(A, D)> for Hashes {
    /// Hashes from `(algorithm name, digest)` pairs, lowercased, empty ones skipped.
    fn from_iter<I: IntoIterator<Item = (A, D)>>(pairs: I) -> Self {
        let mut hashes = Self::default();
        for (algorithm, digest) in pairs {
            hashes.insert_named(algorithm.as_ref(), digest.as_ref());
        }
        hashes
    }
}

impl serde::Serialize for Hashes {
    /// A PEP 691 `hashes` map, keys by name.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter().map(|(a, d)| (a.as_str(), d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_behave_as_a_map_of_lowercase_names() {
        let hashes: Hashes = [("SHA512", "CC"), ("sha256", "aa"), ("", "x"), ("md5", "")]
            .into_iter()
            .collect();
        assert_eq!(hashes.sha256(), Some("aa"));
        assert_eq!(hashes.get(&HashAlgorithm::Sha512), Some("cc"));
        assert_eq!(hashes.get(&HashAlgorithm::Md5), None);
        let mut again = hashes.clone();
        again.insert_named("sha256", "BB");
        assert_eq!(again.sha256(), Some("bb"));
        let listed: Vec<_> = again.iter().map(|(a, d)| (a.as_str(), d)).collect();
        assert_eq!(listed, [("sha256", "bb"), ("sha512", "cc")]);
        assert!(Hashes::default().is_empty());
    }

    #[test]
    fn algorithms_order_by_name_and_keep_unknown_names() {
        let hashes: Hashes = [("blake2b_256", "01"), ("sha256", "02"), ("md5", "03")]
            .into_iter()
            .collect();
        let names: Vec<&str> = hashes.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(names, ["blake2b_256", "md5", "sha256"]);
        assert_eq!(
            serde_json::to_string(&hashes).unwrap(),
            r#"{"blake2b_256":"01","md5":"03","sha256":"02"}"#
        );
        assert_eq!(hashes.strongest().unwrap().0, &HashAlgorithm::Sha256);
        let other: Hashes = [("blake2b_256", "01"), ("xx", "02")].into_iter().collect();
        assert_eq!(other.strongest().unwrap().1, "01");
    }
}
