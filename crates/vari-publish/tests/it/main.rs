//! Integration tests of vari-publish: building sites from the fixture wheels and from wheels
//! generated here, validating them, and installing from them with the real pip and uv.

mod build;
mod common;
mod http_validate;
mod installers;
mod validate;
