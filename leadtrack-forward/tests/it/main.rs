//! The forwarding worker's integration tests in one binary, a module per concern: deliveries to
//! mock platforms on local ports, lead webhooks, the worker's loop and its logs.

mod batches;
mod common;
mod conversions;
mod hubspot;
mod lead_webhooks;
mod logs;
mod microsoft_linkedin;
mod outbound;
mod pinterest;
mod pipedrive;
mod reddit;
mod snapchat;
mod spend;
mod tiktok;
mod worker;
