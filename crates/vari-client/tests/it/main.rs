//! Integration tests of vari-client against real HTTP servers on 127.0.0.1.

mod support;

// The shared test servers, under the names these tests have always used.
use vari_test_support::index as server;
use vari_test_support::raw as raw_server;

mod downloads;
mod hostile;
mod pages;
mod sources;
mod tls;
mod transport;
mod variants;
