//! The standalone server's integration tests in one binary: its app served in-process over real
//! sockets (compression, connections, the front door, probes, sources, inbound webhooks, the
//! OpenAPI document, the demo), and `process`: the compiled binary run as its users run it.

mod compression;
mod connections;
mod demo;
mod front_door;
mod hooks;
mod inbound;
mod openapi;
mod probes;
mod process;
mod required;
mod sources;
