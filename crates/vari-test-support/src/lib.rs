//! What the workspace's tests share, in one place (development only; never published):
//!
//! - [`paths`]: the workspace root and its test data;
//! - [`venv`]: the test venv (`VARI_TEST_VENV` or `<root>/.venv`), its pip and uv, fresh
//!   environments, an environment without the installers' variables;
//! - [`installers`]: the real pip (the machine's and the newest) and uv installing from an
//!   index into a directory of their own;
//! - [`index`]: a simple index on 127.0.0.1 serving a directory (PEP 503 and 691, PEP 658
//!   metadata, ranges) with knobs for misbehaviour, recording each request;
//! - [`raw`]: a scripted server on raw sockets for answers no HTTP library would send;
//! - [`site`]: a static host serving a built site, with or without content negotiation;
//! - [`wheels`]: valid test wheels, variant wheels and `*-variants.json` documents;
//! - [`fleet`]: a local upstream built like the real indexes (PyTorch-like, NumPy-like, an
//!   ordinary tree) and the machine classes of a mixed fleet;
//! - [`s3_store`]: the object store the publishing tests use: [`seaweed`] (SeaweedFS from
//!   PyPI, one server or a cluster of separate processes, a static site in front of a
//!   bucket), or [`garage`] (Garage, single node, with its website endpoint) where
//!   `VARI_GARAGE` names one;
//! - [`nginx`]: nginx from the system's packages serving a directory on 127.0.0.1;
//! - [`elf`]: ELF files with known machine code and real fat-binary sections, in wheels;
//! - [`binary`]: the real `vari` binary with a clean environment, its streams captured;
//! - [`output`]: whole-output checks with filters for paths, ports, durations and versions.
//!
//! It depends on no vari crate, so any crate's tests can use it without a cycle.

pub mod binary;
pub mod elf;
pub mod fleet;
pub mod garage;
pub mod index;
pub mod installers;
pub mod nginx;
pub mod output;
pub mod paths;
pub mod raw;
pub mod s3_store;
pub mod seaweed;
pub mod site;
pub mod venv;
pub mod wheels;
