//! Integration tests of vari-select: choosing files from releases built here, for described
//! targets and for the real interpreters of this machine.

mod support;
mod test_wheels;

mod choose;
mod index_rules;
mod index_support;
mod index_torch;
mod present;
mod python;
