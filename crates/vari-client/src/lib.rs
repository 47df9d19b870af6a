//! # vari-client
//!
//! The package index client (to be written).
