//! # vari-slim
//!
//! Per-architecture variants of a fat CUDA build, made after the fact: every `.nv_fatbin`
//! container of every ELF file in a wheel is rewritten in place to hold only the GPU code for
//! the kept compute capabilities, and the result is written as a variant wheel labelled by what
//! it keeps (`nvidia :: sm_arch :: 90_real`, …). `vari wheel slim` and `vari wheel split` are
//! thin wrappers around [`slim_wheel`] and [`split_wheel`].
//!
//! - [`keep`]: which entries stay (the rule, written down);
//! - [`section`]: one fat-binary section rewritten in place (same offset and length, header
//!   size covering the kept entries, zeros after them);
//! - [`elf`]: one ELF file (its `.nv_fatbin` sections; what is left whole and why);
//! - [`wheel`](slim_wheel): the wheel (members read with vari-scan's bounds, written with
//!   vari-wheel's raw copy) and the report of what it saved ([`SlimReport`]).
//!
//! A crate of its own because it joins two crates that must not depend on each other: vari-scan
//! reads binaries (it parses fat binaries and infers properties) and vari-wheel writes archives
//! without knowing what binaries mean. Rewriting GPU code needs both; putting it in either would
//! make the reader a writer or the archive layer a binary analyser.
//!
//! What a slim wheel is checked for here is its structure (the kept entries byte-identical, the
//! rest of each file unchanged, what `vari wheel scan` reads of it); loading it on a GPU is left
//! to `bench/slim_gpu.sh`.

pub mod elf;
pub mod keep;
mod report;
pub mod section;
mod wheel;

pub use elf::{slim_elf, ElfOutcome, ElfProblem, LeftWhole};
pub use keep::{profile_families, Keep, KeepSpec, KeepSpecError};
pub use report::{CodeSize, FileReport, SlimReport};
pub use section::{slim_section, EntryOutcome};
pub use wheel::{
    families, readable_families, slim_wheel, split_wheel, split_wheel_reporting, ReadableFamilies,
    SlimError, SlimOptions, SplitStep,
};
