//! The first processor block of `/proc/cpuinfo`, read the way archspec reads it.

use std::collections::HashMap;

/// The CPU architecture a `/proc/cpuinfo` text describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuArch {
    /// x86-64 (`vendor_id` / `flags` keys).
    X86_64,
    /// 64-bit Arm (`Features` / `CPU implementer` keys, without 32-bit-only flags).
    Aarch64,
    /// 32-bit Arm (`Features` lists `thumb`, which 64-bit kernels never report).
    Arm32,
    /// POWER, RISC-V or anything else.
    Other,
}

impl CpuArch {
    /// The conventional name (`x86_64`, `aarch64`, …).
    pub fn name(self) -> &'static str {
        match self {
            CpuArch::X86_64 => "x86_64",
            CpuArch::Aarch64 => "aarch64",
            CpuArch::Arm32 => "32-bit arm",
            CpuArch::Other => "an architecture other than x86_64 or aarch64",
        }
    }
}

/// `key: value` pairs of the first processor in `/proc/cpuinfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuInfo {
    fields: HashMap<String, String>,
}

impl CpuInfo {
    /// Parses the first processor block (archspec `proc_cpuinfo`): each line is split at its first
    /// `:`, keys and values are trimmed, a later duplicate key wins, and the first line without a
    /// `:` after some data ends the block.
    ///
    /// ```
    /// use vari_detect::cpu::cpuinfo::{CpuArch, CpuInfo};
    /// let info = CpuInfo::parse("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: sse sse2\n\nprocessor\t: 1\n");
    /// assert_eq!(info.get("vendor_id"), Some("GenuineIntel"));
    /// assert_eq!(info.arch(), CpuArch::X86_64);
    /// ```
    pub fn parse(text: &str) -> Self {
        let mut fields = HashMap::new();
        for line in text.lines() {
            match line.split_once(':') {
                Some((key, value)) => {
                    fields.insert(key.trim().to_owned(), value.trim().to_owned());
                }
                None if !fields.is_empty() => break,
                None => {}
            }
        }
        Self { fields }
    }

    /// The value of `key` in the first processor block.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// Whitespace-separated words of `key` (`flags`, `Features`).
    pub fn words(&self, key: &str) -> impl Iterator<Item = &str> {
        self.get(key).unwrap_or("").split_whitespace()
    }

    /// Which architecture the text describes, from the keys the kernel writes for it.
    pub fn arch(&self) -> CpuArch {
        if self.get("flags").is_some() || self.get("vendor_id").is_some() {
            CpuArch::X86_64
        } else if self.get("Features").is_some() || self.get("CPU implementer").is_some() {
            if self.words("Features").any(|w| w == "thumb") {
                CpuArch::Arm32
            } else {
                CpuArch::Aarch64
            }
        } else {
            CpuArch::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_first_block() {
        let text = "processor : 0\nflags : a b\n\nprocessor : 1\nflags : c\n";
        let info = CpuInfo::parse(text);
        assert_eq!(info.words("flags").collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn leading_blank_lines_do_not_end_the_block() {
        let info = CpuInfo::parse("\n\nFeatures\t: fp asimd\nCPU part\t: 0xd0c\n");
        assert_eq!(info.get("CPU part"), Some("0xd0c"));
        assert_eq!(info.arch(), CpuArch::Aarch64);
    }

    #[test]
    fn values_keep_colons_after_the_first() {
        let info = CpuInfo::parse("model name : Foo: Bar\n");
        assert_eq!(info.get("model name"), Some("Foo: Bar"));
    }

    #[test]
    fn architectures() {
        assert_eq!(
            CpuInfo::parse("vendor_id : AuthenticAMD\n").arch(),
            CpuArch::X86_64
        );
        assert_eq!(
            CpuInfo::parse(
                "Features : half thumb fastmult vfp edsp neon\nCPU implementer : 0x41\n"
            )
            .arch(),
            CpuArch::Arm32
        );
        assert_eq!(CpuInfo::parse("cpu : POWER9\n").arch(), CpuArch::Other);
        assert_eq!(CpuInfo::parse("").arch(), CpuArch::Other);
    }
}
