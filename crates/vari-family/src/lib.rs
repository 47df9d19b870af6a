//! # vari-family
//!
//! Build families: the GPU packages split today's way, read as the variants of one project.
//!
//! Almost every GPU package people install is still published without wheel variants, one
//! build per hardware line, in one of three layouts:
//! - **by index**: the same name from one index or links page per build (`torch` from
//!   `download.pytorch.org/whl/cu128`, versions tagged `+cu128`);
//! - **by name**: one distribution per build (`cupy-cuda12x`, `cudf-cu13`, `faiss-gpu-cu12`);
//! - **by extra**: one extra per build (`jax[cuda12]`, `torch[device-gfx950]`).
//!
//! A *family* says, for the name users ask for, where each build lives and what hardware it
//! needs, in vari's own property vocabulary (`nvidia :: cuda_version_lower_bound :: 12.8`,
//! `nvidia :: sm_arch`, `amd :: gfx_arch`, `intel :: device_ip`, `x86_64 :: level`), and which
//! build is the CPU (null) build. The schema is documented in `docs/reference/families.md`.
//!
//! Where the rules live:
//! - [`read_catalog`]: TOML text → a validated [`Catalog`] or one [`Diagnostic`] with the key
//!   path (bounded size, depth and counts; unknown keys refused; names normalised; URLs
//!   checked);
//! - [`builtin`]: the catalog shipped with vari; [`layered`]: users' files over it;
//! - [`SourceMap`]: which index may serve which distribution (a family's indexes serve its
//!   builds' names only);
//! - [`cuda_line`]: a build's CUDA line read from its own requirements;
//! - [`choose`]: within a family, the best build the target supports first, then its newest
//!   version the requirement allows, with every other build's reason;
//! - [`group_line`]: the one line the requested members of a group (torch, torchvision,
//!   torchaudio, xformers) take together, or the conflict naming what each offers.
//!
//! No I/O happens here: the front-ends read files and index pages and hand the text over.
//!
//! [`Diagnostic`]: vari_core::Diagnostic

mod builtin;
mod choose;
mod group;
mod layers;
mod line;
mod model;
mod read;
mod sources;

pub use builtin::{builtin, builtin_may_name, BUILTIN_TEXT};
pub use choose::{
    carries_local, choose, rank_builds, verdict_text, BuildReport, Chosen, FamilyChoice,
    FamilyOptions, Offer, Verdict,
};
pub use group::{group_line, offered_lines, GroupConflict};
pub use layers::layered;
pub use line::{cuda_line, CudaLine, TOOLKIT_VERSIONED};
pub use model::{Build, BuildSource, Catalog, Family, Group, Layout, Origin, SameName};
pub use read::{
    read_catalog, MAX_BUILDS, MAX_CATALOG_BYTES, MAX_FAMILIES, MAX_GROUPS, MAX_GROUP_MEMBERS,
    MAX_REQUIRES, MAX_SHORT_LIST, MAX_TEXT_BYTES, SCHEMA,
};
pub use sources::SourceMap;

#[cfg(test)]
mod tests;
