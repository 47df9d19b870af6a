//! Integration tests of vari-install: listing what real installers (pip, uv) installed, reading
//! the indexes pip would use, and installing through the proxy with real pip and uv.

mod common;
mod installers;
mod pip_config;
mod through_proxy;
