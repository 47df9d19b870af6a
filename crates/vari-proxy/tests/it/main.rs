//! Integration tests of vari-proxy: real upstream servers on 127.0.0.1 (vari-client's test
//! index) and find-links directories, raw HTTP requests, and real pip and uv installing
//! through the proxy.

mod support;
mod wheels;

mod classes;
mod concurrency;
mod eviction;
mod files;
mod installers;
mod kept_pages;
mod metadata;
mod nesting;
mod pages;
mod remote_links;
mod server;
mod targets;
mod union;
