//! The dashboard's integration tests, one module per concern, in one binary: each test starts
//! the whole service in-process (`common::app`) and drives it over real sockets.

mod alerts;
mod assignment;
mod common;
mod crm;
mod delete;
mod imports;
mod inbox;
mod logs;
mod next_steps;
mod platform_sign_in;
mod privacy;
mod reports;
mod settings;
mod sign_in;
mod spam;
mod team;
mod viewers;
mod views;
