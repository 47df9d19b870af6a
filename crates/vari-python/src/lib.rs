//! # vari-python
//!
//! The target Python environment (to be written).
