//! Sizes shown to people: one formatter for every command that reports bytes (`vari cache`,
//! `vari mirror`).

/// `512 B`, `1.2 KiB`, `3.4 GiB`: binary units, one decimal, as `du -h` and pip's
/// `cache info` count.
///
/// ```
/// assert_eq!(vari_fs::human_bytes(512), "512 B");
/// assert_eq!(vari_fs::human_bytes(1536), "1.5 KiB");
/// assert_eq!(vari_fs::human_bytes(64 << 20), "64.0 MiB");
/// ```
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Precision beyond a decimal is not needed for a size shown to people.
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_expect() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MiB");
        assert_eq!(human_bytes(1_288_490_189), "1.2 GiB");
        assert_eq!(human_bytes(u64::MAX), "16384.0 PiB");
    }
}
