//! Small but valid wheels and the variant metadata they carry: the shared test support's
//! builders, under the names these tests use.

pub(crate) use vari_test_support::paths::testdata;
pub(crate) use vari_test_support::wheels::{level_variants, one_variant, wheel, TORCH_REQUIRES};
