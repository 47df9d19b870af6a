//! Integration tests of vari-client against real HTTP servers on 127.0.0.1.

mod raw_server;
mod server;
mod support;

mod downloads;
mod hostile;
mod pages;
mod sources;
mod tls;
mod transport;
mod variants;
