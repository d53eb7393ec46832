//! A worker waiting for work hears of a job queued by another process at once
//! (`LISTEN`/`NOTIFY`), rather than at its next poll.
#![cfg(leadtrack_postgres)]

use leadtrack_postgres::testkit::test_key;
use std::time::Duration;

use chrono::Utc;
use leadtrack_core::account::Actor;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::testkit::{data, project};
use leadtrack_core::types::{ConversionId, LeadIdentifier};
use leadtrack_core::{Admin, JobQueue, LeadStore};
use leadtrack_postgres::PgStore;
use serde_json::json;

#[tokio::test]
async fn a_waiting_worker_wakes_when_another_process_queues_a_job() {
    let (api, url) = crate::support::fresh_store().await;
    // The worker's store is another pool: to PostgreSQL, another process.
    let worker = PgStore::connect_with(&url, &test_key(), crate::support::options())
        .await
        .unwrap();
    let acme = project(&api, "acme").await;
    let label = api
        .create_label(
            acme.id,
            NewLabel::done("Customer", LabelMapping::webhook_only()),
            Utc::now(),
        )
        .await
        .unwrap();
    let lead = api
        .create_lead(
            acme.id,
            data(json!({"userData": {"email": "a@example.com"}})),
            Utc::now(),
        )
        .await
        .unwrap();
    // Listening before the rating: the first wait connects, and returns when it has.
    assert!(worker.wait_for_work(Duration::from_secs(30)).await);

    for round in 0..3 {
        let waiting = tokio::spawn({
            let worker = worker.clone();
            async move { worker.wait_for_work(Duration::from_secs(3600)).await }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "round {round}: nothing queued yet");
        let conversion = if round % 2 == 0 {
            ConversionId::Label(label.id)
        } else {
            ConversionId::Open
        };
        let rated = api
            .update_status(
                acme.id,
                &StatusUpdate {
                    identifier: LeadIdentifier::LeadId(lead.lead_id),
                    conversion_id: conversion,
                    price: None,
                    note: None,
                },
                &Actor::api_key("lt_listen"),
                Utc::now(),
            )
            .await
            .unwrap();
        if rated.job.is_none() {
            // Reopening queues nothing: the worker is not woken for it.
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(!waiting.is_finished(), "round {round}: nothing queued");
            waiting.abort();
            continue;
        }
        let woke = tokio::time::timeout(Duration::from_secs(20), waiting).await;
        assert!(matches!(woke, Ok(Ok(true))), "round {round}: {woke:?}");
        let claimed = worker
            .claim_job(Utc::now(), chrono::Duration::minutes(5))
            .await
            .unwrap()
            .expect("the queued job is due");
        assert_eq!(claimed.job.lead_id, lead.lead_id);
        // Leave the lead free to be reopened and rated again.
        worker
            .finish_job(claimed.job.id, claimed.lease.token, Utc::now())
            .await
            .ok();
    }
}
