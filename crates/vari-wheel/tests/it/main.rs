//! Integration tests of vari-wheel: reading real variant wheels and broken ones built here,
//! writing variant wheels and back, repacking existing builds, and compatibility with the real
//! Python tools.

mod compat;
mod derive;
mod hostile;
mod inspect;
mod make;
mod repack;
mod replace_metadata;
mod support;
