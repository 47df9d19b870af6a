//! Integration tests of vari-config: layers read from real files.

mod layers;
