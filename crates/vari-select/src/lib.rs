//! # vari-select
//!
//! Selection as a library (to be written).
