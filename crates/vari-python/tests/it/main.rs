//! Integration tests of vari-python: discovery against real interpreters, shims and
//! environments built in temporary directories, and tag lists compared with `packaging.tags`.

mod discovery;
mod support;
mod tags;
