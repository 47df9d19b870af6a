//! # vari-scan
//!
//! Reading what the binaries of a wheel need (to be written).
