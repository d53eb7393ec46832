//! Forwarding rated leads as offline conversions: the deliveries to Google Ads (Data Manager
//! API), Google Analytics 4 (Measurement Protocol), Meta (Conversions API), Microsoft
//! Advertising (Campaign Management API), LinkedIn (Conversions API), TikTok (Events API),
//! Reddit (Conversions API), Pinterest (API for Conversions), Snapchat (Conversions API) and
//! signed webhooks, and the [`Worker`] that drives them from any
//! [`leadtrack_core::JobQueue`].
//!
//! A status update queues a job with one delivery per connected and mapped integration
//! (CONTRACT.md sections 5, 6 and 8). The worker claims due jobs with a lease, sends each
//! pending delivery, and records every attempt. Jobs due together go together: each
//! destination's events in one request, up to the platform's batch size and within its
//! quota, a request the platform refused whole halved until each bad event is alone.
//! Temporary failures (5xx but 501, 408, 429, timeouts, connection errors, Meta's transient
//! codes) are retried with exponential backoff and jitter, honouring `Retry-After`, within
//! [`RetryPolicy`]; other failures end the delivery at once. Deliveries that succeeded are
//! never sent again. When every delivery has ended, the lead moves to its final status.
//! Every platform receives the conversion's id (Meta, TikTok, Pinterest and Snapchat
//! `event_id`, Reddit `conversion_id`, GA4 and Google Ads transaction id, LinkedIn
//! `eventId`, the webhook's `conversionEventId`), the same for every job of one lead and
//! label, so a delivery repeated after a crash, or a rating repeated, is one conversion; a
//! delivery's action says whether it sends, restates or retracts it
//! ([`leadtrack_core::conversion`]).
//!
//! The other way, [`spend`] reads each project's ad spend from the platforms with its
//! sign-ins, for the reports of what the spend bought.
//!
//! Email, phone and names leave the service only as SHA-256 hashes of their normalised form
//! (`leadtrack_platforms::normalize`); credentials never appear in logs or recorded errors.
//! Each platform's request and answer rules live in `leadtrack-platforms`; a delivery module
//! here builds the request from a job and reads the outcome.
//!
//! ```no_run
//! use leadtrack_forward::{Worker, WorkerConfig};
//! use leadtrack_sqlite::SqliteStore;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = SqliteStore::open("leadtrack.db").await?;
//! let worker = Worker::new(store, WorkerConfig::default());
//! worker.run(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod answer;
mod batch;
mod deliverer;
mod ga4;
mod google;
mod google_ads;
mod hubspot;
mod linkedin;
mod meta;
mod microsoft_ads;
mod pinterest;
mod pipedrive;
mod quota;
mod reddit;
mod retry;
mod snapchat;
pub mod spend;
mod tiktok;
mod user_data;
mod webhook;
mod worker;

pub use deliverer::Deliverer;
pub use leadtrack_platforms::Outcome;
pub use retry::RetryPolicy;
pub use worker::{Worker, WorkerConfig, describe_metrics};
