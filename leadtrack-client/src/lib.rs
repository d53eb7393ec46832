//! A typed HTTP client for the leadtrack API (filled in by the client work).

#![forbid(unsafe_code)]
