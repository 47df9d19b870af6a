//! # vari-fs
//!
//! File-system plumbing that every vari front-end and library shares (to be written).
