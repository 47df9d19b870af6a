//! The size ceilings of what is read from a wheel, and the inflation ceiling's ratio, which a
//! program may change once at start-up.
//!
//! Every reader of every member ([`crate::validate`], `make_variant`, `unmake`, `repack`,
//! `replace_metadata`, and so `index build` and the proxy) refuses a wheel whose members declare
//! more uncompressed bytes than [`max_inflate_ratio`] times its size (at least
//! [`MIN_INFLATE_CEILING`]). The ratio is one process-wide setting rather than a
//! parameter of each of those functions so that every caller, present and future, inherits
//! the value the user chose; this crate reads no environment itself: the program reads
//! [`MAX_INFLATE_RATIO_ENV`] once and calls [`set_max_inflate_ratio`].

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable a program reads to raise (or lower) the ratio: a positive integer.
pub const MAX_INFLATE_RATIO_ENV: &str = "VARI_MAX_INFLATE_RATIO";

/// The most `variant.json` may inflate to. Real files are a few KiB; the cap keeps a hostile
/// wheel from exhausting memory.
pub const MAX_VARIANT_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// The most `RECORD` may inflate to. A wheel with 100 000 files has a RECORD of ~15 MiB.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// By default, how many times its own size a wheel's members may declare in all, uncompressed,
/// when every member is read ([`validate`](crate::validate)): deflate cannot exceed 1032, real
/// wheels are under 10, and a zip bomb is refused before anything is inflated. See also
/// [`MIN_INFLATE_CEILING`]; [`set_max_inflate_ratio`] changes it (the `vari` command reads
/// [`MAX_INFLATE_RATIO_ENV`]).
pub const MAX_INFLATE_RATIO: u64 = 200;

/// The inflation ceiling of a small wheel: its members may always declare this many bytes in
/// all (1 GiB), whatever [`max_inflate_ratio`] times its size is.
pub const MIN_INFLATE_CEILING: u64 = 1 << 30;

static RATIO: AtomicU64 = AtomicU64::new(MAX_INFLATE_RATIO);

/// Sets how many times its own size a wheel's members may declare in all, for every reader in
/// this process from now on (the default is [`MAX_INFLATE_RATIO`]).
pub fn set_max_inflate_ratio(ratio: NonZeroU64) {
    RATIO.store(ratio.get(), Ordering::Relaxed);
}

/// How many times its own size a wheel's members may declare in all, as set by
/// [`set_max_inflate_ratio`] (by default [`MAX_INFLATE_RATIO`]).
pub fn max_inflate_ratio() -> u64 {
    RATIO.load(Ordering::Relaxed)
}

/// The value of [`MAX_INFLATE_RATIO_ENV`] as a ratio; `Err` with what is wrong with it.
///
/// ```
/// assert_eq!(vari_wheel::parse_inflate_ratio(" 1000 ").unwrap().get(), 1000);
/// assert!(vari_wheel::parse_inflate_ratio("0").is_err());
/// ```
pub fn parse_inflate_ratio(value: &str) -> Result<NonZeroU64, String> {
    value
        .trim()
        .parse::<NonZeroU64>()
        .map_err(|_| format!("{MAX_INFLATE_RATIO_ENV}: `{value}` is not a positive integer"))
}
