//! How much one archive member may decompress to: the ceilings a scan holds every member to,
//! and which its error messages quote.

/// A member may inflate to at most this many times its compressed size (beyond
/// [`INFLATE_FLOOR`]). Real libraries compress 2 to 10 times; deflate reaches 1032 times on
/// zeros, which is what a zip bomb is made of.
pub(crate) const MAX_INFLATE_RATIO: u64 = 100;

/// Members up to this size are read whatever their ratio (a small library padded with zeros
/// compresses far better than 100 to 1, and costs nothing).
pub(crate) const INFLATE_FLOOR: u64 = 8 << 20;

/// No member is read beyond this size, whatever its ratio (the largest real CUDA libraries are
/// about 2 GiB).
pub(crate) const MAX_MEMBER_SIZE: u64 = 16 << 30;

/// The most a member of `compressed` bytes, in an archive file of `archive_len` bytes, may
/// decompress to: [`MAX_INFLATE_RATIO`] times what it can really hold, at least
/// [`INFLATE_FLOOR`], at most [`MAX_MEMBER_SIZE`].
pub(crate) fn inflate_limit(compressed: u64, archive_len: u64) -> u64 {
    compressed
        .min(archive_len)
        .saturating_mul(MAX_INFLATE_RATIO)
        .clamp(INFLATE_FLOOR, MAX_MEMBER_SIZE)
}
