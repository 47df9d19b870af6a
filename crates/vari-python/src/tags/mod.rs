//! The wheel tags a target accepts, in installer order, with a fast lookup of a wheel's best
//! tag.
//!
//! Each of the three tag parts is interned once (a string to a small integer), and the
//! priority of each `(python, abi, platform)` triple is one hash lookup on three integers, so
//! judging a wheel costs a few hash lookups however long the tag list is (about a thousand
//! tags for a CPython on a recent glibc).

mod generate;

use std::fmt;

use rustc_hash::FxHashMap;
use vari_core::filename::WheelFilename;

use crate::abi::Abi;
use crate::platform::TargetPlatform;

pub use generate::platform_tags;

/// One tag triple, borrowed from a [`Tags`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TagRef<'a> {
    /// The Python tag (`cp312`, `py3`).
    pub python: &'a str,
    /// The ABI tag (`cp312`, `abi3`, `none`).
    pub abi: &'a str,
    /// The platform tag (`manylinux_2_28_x86_64`, `any`).
    pub platform: &'a str,
}

impl fmt::Display for TagRef<'_> {
    /// `python-abi-platform`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}", self.python, self.abi, self.platform)
    }
}

/// Strings of one tag part, each given a small integer.
#[derive(Debug, Default, Clone)]
struct Interner {
    ids: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// The id of `name`; tags compare case-insensitively (packaging lowercases them).
    fn get(&self, name: &str) -> Option<u32> {
        match self.ids.get(name) {
            Some(&id) => Some(id),
            None if name.bytes().any(|b| b.is_ascii_uppercase()) => {
                self.ids.get(name.to_ascii_lowercase().as_str()).copied()
            }
            None => None,
        }
    }

    fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |n| n)
    }
}

/// The wheel tags a target accepts, best first, as `packaging.tags.sys_tags()` orders them.
///
/// ```
/// use vari_python::{Abi, PlatformName, Tags};
/// use vari_core::filename::WheelFilename;
/// let platform = "x86_64-manylinux_2_28".parse::<PlatformName>().unwrap().platform(None);
/// let tags = Tags::new(&Abi::cpython(&"3.12".parse().unwrap()), &platform);
/// assert_eq!(tags.iter().next().unwrap().to_string(), "cp312-cp312-linux_x86_64");
/// let numpy = WheelFilename::parse(
///     "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl").unwrap();
/// let pure = WheelFilename::parse("six-1.16.0-py2.py3-none-any.whl").unwrap();
/// let windows = WheelFilename::parse("numpy-2.1.0-cp312-cp312-win_amd64.whl").unwrap();
/// assert!(tags.wheel_priority(&numpy) < tags.wheel_priority(&pure));
/// assert_eq!(tags.wheel_priority(&windows), None);
/// ```
#[derive(Debug, Clone)]
pub struct Tags {
    pythons: Interner,
    abis: Interner,
    platforms: Interner,
    /// The tags in order, as interned ids.
    order: Vec<[u32; 3]>,
    /// Each distinct tag's priority: its first position in `order`.
    priority: FxHashMap<[u32; 3], u32>,
}

/// Tag generation pushes straight into [`Tags`], so no string is allocated per tag.
impl generate::TagSink for Tags {
    fn push(&mut self, python: &str, abi: &str, platform: &str) {
        let key = [
            self.pythons.intern(python),
            self.abis.intern(abi),
            self.platforms.intern(platform),
        ];
        let position = u32::try_from(self.order.len()).unwrap_or(u32::MAX);
        self.order.push(key);
        self.priority.entry(key).or_insert(position);
    }
}

impl Tags {
    /// The tags of an interpreter with `abi` on `platform`.
    pub fn new(abi: &Abi, platform: &TargetPlatform) -> Self {
        let platforms = platform_tags(platform);
        Self::with_platform_tags(abi, &platforms)
    }

    /// The tags of an interpreter with `abi` on the given platform tags (best first).
    pub fn with_platform_tags(abi: &Abi, platform_tags: &[String]) -> Self {
        let mut tags = Self {
            pythons: Interner::default(),
            abis: Interner::default(),
            platforms: Interner::default(),
            order: Vec::new(),
            priority: FxHashMap::default(),
        };
        generate::sys_tags(abi, platform_tags, &mut tags);
        tags
    }

    /// How many tags (duplicates included, as generated).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The tags, best first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TagRef<'_>> + '_ {
        self.order.iter().map(|&[p, a, f]| TagRef {
            python: self.pythons.name(p),
            abi: self.abis.name(a),
            platform: self.platforms.name(f),
        })
    }

    /// The priority of one tag (0 is best), or `None` when it is not accepted.
    pub fn priority(&self, python: &str, abi: &str, platform: &str) -> Option<u32> {
        let key = [
            self.pythons.get(python)?,
            self.abis.get(abi)?,
            self.platforms.get(platform)?,
        ];
        self.priority.get(&key).copied()
    }

    /// The best priority among the tags of a (possibly compressed) tag set, or `None` when none
    /// is accepted.
    pub fn best_priority<P, A, F>(&self, pythons: P, abis: A, platforms: F) -> Option<u32>
    where
        P: IntoIterator,
        P::Item: AsRef<str>,
        A: IntoIterator,
        A::Item: AsRef<str>,
        F: IntoIterator,
        F::Item: AsRef<str>,
    {
        // Resolve each part once; a name no accepted tag uses cannot match.
        let pythons = ids(&self.pythons, pythons);
        if pythons.is_empty() {
            return None;
        }
        let abis = ids(&self.abis, abis);
        if abis.is_empty() {
            return None;
        }
        let platforms = ids(&self.platforms, platforms);
        let mut best: Option<u32> = None;
        for &p in &pythons {
            for &a in &abis {
                for &f in &platforms {
                    if let Some(&priority) = self.priority.get(&[p, a, f]) {
                        best = Some(best.map_or(priority, |b| b.min(priority)));
                    }
                }
            }
        }
        best
    }

    /// The best priority of a wheel's tags (0 is best), or `None` when the wheel does not fit
    /// the target.
    pub fn wheel_priority(&self, wheel: &WheelFilename) -> Option<u32> {
        self.best_priority(&wheel.python_tags, &wheel.abi_tags, &wheel.platform_tags)
    }

    /// Whether a wheel fits the target.
    pub fn is_compatible(&self, wheel: &WheelFilename) -> bool {
        self.wheel_priority(wheel).is_some()
    }
}

/// The ids of the names an interner knows (a wheel's tag sets are short: no set is needed).
fn ids<I>(interner: &Interner, names: I) -> Vec<u32>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    names
        .into_iter()
        .filter_map(|n| interner.get(n.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Os;

    fn tags(version: &str, os: Os, arch: &str) -> Tags {
        let platform = TargetPlatform {
            os,
            arch: arch.to_owned(),
        };
        Tags::new(&Abi::cpython(&version.parse().unwrap()), &platform)
    }

    fn wheel(name: &str) -> WheelFilename {
        WheelFilename::parse(name).unwrap()
    }

    #[test]
    fn priorities_follow_the_order() {
        let t = tags(
            "3.12",
            Os::Manylinux {
                major: 2,
                minor: 28,
            },
            "x86_64",
        );
        for (index, tag) in t.iter().enumerate().take(50) {
            assert_eq!(
                t.priority(tag.python, tag.abi, tag.platform),
                Some(index as u32)
            );
        }
        assert_eq!(t.priority("cp312", "cp312", "win_amd64"), None);
        assert_eq!(t.priority("CP312", "cp312", "LINUX_X86_64"), Some(0));
        let abi3 = t.priority("cp38", "abi3", "manylinux_2_17_x86_64").unwrap();
        let own = t
            .priority("cp312", "cp312", "manylinux_2_17_x86_64")
            .unwrap();
        assert!(own < abi3);
    }

    #[test]
    fn wheels_are_judged_by_their_best_tag() {
        let t = tags(
            "3.11",
            Os::Manylinux {
                major: 2,
                minor: 36,
            },
            "x86_64",
        );
        let compressed =
            wheel("numpy-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
        assert_eq!(
            t.wheel_priority(&compressed),
            t.priority("cp311", "cp311", "manylinux_2_17_x86_64")
        );
        assert!(t.is_compatible(&wheel("six-1.0-py2.py3-none-any.whl")));
        assert!(!t.is_compatible(&wheel("x-1.0-cp27-cp27m-win32.whl")));
        assert!(!t.is_compatible(&wheel("x-1.0-cp312-cp312-manylinux_2_17_x86_64.whl")));
        assert!(!t.is_compatible(&wheel("x-1.0-cp311-cp311-manylinux_2_39_x86_64.whl")));
        assert_eq!(
            t.best_priority(["py3"], ["none"], ["any"]),
            t.priority("py3", "none", "any")
        );
    }

    #[test]
    fn free_threaded_uses_abi3t_not_abi3() {
        let t = tags("3.13t", Os::Musllinux { major: 1, minor: 2 }, "aarch64");
        assert!(t
            .priority("cp313", "cp313t", "musllinux_1_1_aarch64")
            .is_some());
        assert!(t
            .priority("cp313", "abi3t", "musllinux_1_2_aarch64")
            .is_some());
        assert_eq!(t.priority("cp313", "abi3", "musllinux_1_2_aarch64"), None);
        assert_eq!(t.priority("cp313", "cp313", "musllinux_1_2_aarch64"), None);
    }
}
