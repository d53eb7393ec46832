//! The leadtrack lead routes as one mountable warp filter (filled in by the routes work).

#![forbid(unsafe_code)]
