//! # vari-publish
//!
//! Static variant indexes (to be written).
