//! Every operation through the typed client against the real server: success paths and
//! each error code a client can meet, with full bodies and what later reads return.

use std::time::Duration;

use leadtrack::client::Error;
use leadtrack::core::activity::Activity;
use leadtrack::core::api::{
    AttributionData, ConversionId, CreateLeadRequest, DeviceData, ErrorBody, FormData, Lead,
    LeadIdentifier, LeadStatus, UpdateLeadStatusRequest, UserData,
};
use leadtrack::core::label::LabelMapping;
use leadtrack::core::request::LeadQuery;
use leadtrack::core::request::query::{Sort, SortDirection, SortField};
use leadtrack::core::{ErrorCode, FieldError, LeadId};
use serde_json::{Map, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::helpers::{label, spawn_app};

fn user(email: &str) -> Option<UserData> {
    Some(UserData {
        email: Some(email.into()),
        ..UserData::default()
    })
}

/// The API error of a failed call, or a panic naming what happened instead.
fn api_error<T: std::fmt::Debug>(result: Result<T, Error>) -> (u16, ErrorBody) {
    match result {
        Err(Error::Api { status, body, .. }) => (status, body),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn body(code: ErrorCode, message: &str) -> ErrorBody {
    ErrorBody::new(code, message)
}

#[tokio::test]
async fn create_lead_then_deduplicate_and_read_back_every_field() {
    let app = spawn_app().await;
    let browser = app.anonymous();
    let request = CreateLeadRequest {
        project_id: Some("prj_e2e".into()),
        user_data: Some(UserData {
            first_name: Some(" Ada ".into()),
            last_name: Some("Lovelace".into()),
            email: Some("ada@example.com".into()),
            phone: None,
            company_name: Some("Engines".into()),
            extra: Map::from_iter([("newsletter".to_owned(), json!(true))]),
        }),
        attribution_data: Some(AttributionData {
            gclid: Some("G-1".into()),
            cid: Some("111.222".into()),
            fbc: Some(String::new()),
            ..AttributionData::default()
        }),
        form_data: Some(FormData {
            form_name: Some("Contact".into()),
            unique_event_id: Some("evt-42".into()),
            fields: Map::from_iter([("budget".to_owned(), json!("10k"))]),
            ..FormData::default()
        }),
        device_data: Some(DeviceData {
            ip_address: Some("203.0.113.1".into()),
            user_agent: None,
        }),
        channel_flow: Some(
            json!([{"t": 1, "ch": {"s": "google", "m": "cpc", "cm": "", "ct": "", "tm": ""}, "lp": "/"}]),
        ),
        unique_identifier: Some("crm-42".into()),
    };
    let created = browser.create_lead(&request).await.unwrap();
    assert!(created.is_new());
    assert_eq!(created.message, "Lead created successfully");
    assert_eq!(created.unique_identifier.as_deref(), Some("crm-42"));

    let again = CreateLeadRequest {
        user_data: Some(UserData {
            phone: Some("+44 20 7946 0958".into()),
            ..UserData::default()
        }),
        form_data: Some(FormData {
            unique_event_id: Some("evt-42".into()),
            ..FormData::default()
        }),
        unique_identifier: None,
        channel_flow: None,
        device_data: None,
        attribution_data: None,
        ..request.clone()
    };
    let updated = browser.create_lead(&again).await.unwrap();
    assert!(!updated.is_new());
    assert_eq!(updated.message, "Lead updated successfully");
    assert_eq!(updated.lead_id, created.lead_id);
    // createLead answers only the identifier the request itself sent (CONTRACT.md section 3).
    assert_eq!(updated.unique_identifier, None);

    let lead = app
        .client()
        .get_lead(&LeadIdentifier::LeadId(created.lead_id))
        .await
        .unwrap();
    let expected = Lead {
        id: created.lead_id,
        status: LeadStatus::Open,
        form_name: Some("Contact".into()),
        first_name: Some("Ada".into()),
        last_name: Some("Lovelace".into()),
        phone: Some("+44 20 7946 0958".into()),
        email: Some("ada@example.com".into()),
        company_name: Some("Engines".into()),
        price: None,
        note: None,
        form_data: Some(
            serde_json::from_value(
                json!({"formName": "Contact", "uniqueEventId": "evt-42", "budget": "10k"}),
            )
            .unwrap(),
        ),
        user_data: Some(
            serde_json::from_value(json!({
                "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
                "companyName": "Engines", "newsletter": true, "phone": "+44 20 7946 0958"
            }))
            .unwrap(),
        ),
        attribution_data: Some(
            serde_json::from_value(json!({"gclid": "G-1", "cid": "111.222"})).unwrap(),
        ),
        channel_flow: Some(
            r#"[{"t":1,"ch":{"s":"google","m":"cpc","cm":"","ct":"","tm":""},"lp":"/"}]"#.into(),
        ),
        unique_identifier: Some("crm-42".into()),
        created_at: lead.created_at,
        conversion_id: None,
        spam_reason: None,
        duplicate_of: None,
        assignee: None,
        next_step_at: None,
    };
    assert_eq!(lead, expected);
    let age = chrono::Utc::now() - lead.created_at;
    assert!(age >= chrono::Duration::zero() && age < chrono::Duration::minutes(1));
}

#[tokio::test]
async fn create_lead_errors() {
    let app = spawn_app().await;
    let browser = app.anonymous();
    let no_project = CreateLeadRequest {
        user_data: user("a@x.io"),
        ..CreateLeadRequest::default()
    };
    assert_eq!(
        api_error(browser.create_lead(&no_project).await),
        (
            400,
            ErrorBody {
                errors: vec![FieldError {
                    field: "projectId".into(),
                    message: "is required".into()
                }],
                ..body(ErrorCode::MissingField, "Missing required field: projectId")
            }
        )
    );
    let empty = CreateLeadRequest {
        project_id: Some("prj_e2e".into()),
        user_data: user("  "),
        ..CreateLeadRequest::default()
    };
    assert_eq!(
        api_error(browser.create_lead(&empty).await),
        (
            400,
            body(
                ErrorCode::NoLeadData,
                "At least one of userData or attributionData must contain data"
            )
        )
    );
    let long_id = CreateLeadRequest {
        unique_identifier: Some("u".repeat(256)),
        ..empty.clone()
    };
    let (status, error) = api_error(
        browser
            .create_lead(&CreateLeadRequest {
                user_data: user("a@x.io"),
                ..long_id
            })
            .await,
    );
    assert_eq!((status, error.code), (400, ErrorCode::InvalidField));
    assert_eq!(
        error.message,
        "Invalid field: uniqueIdentifier must be at most 255 characters"
    );
    let unknown = CreateLeadRequest {
        project_id: Some("prj_nope".into()),
        user_data: user("a@x.io"),
        ..CreateLeadRequest::default()
    };
    assert_eq!(
        api_error(browser.create_lead(&unknown).await),
        (404, body(ErrorCode::ProjectNotFound, "Project not found"))
    );
    let huge = CreateLeadRequest {
        project_id: Some("prj_e2e".into()),
        user_data: user("a@x.io"),
        form_data: Some(FormData {
            form_message: Some("x".repeat(70_000)),
            ..FormData::default()
        }),
        ..CreateLeadRequest::default()
    };
    assert_eq!(
        api_error(browser.create_lead(&huge).await),
        (
            413,
            body(
                ErrorCode::PayloadTooLarge,
                "Request body is larger than 65536 bytes"
            )
        )
    );
    app.store
        .set_project_active(app.project.id, false)
        .await
        .unwrap();
    let fine = CreateLeadRequest {
        project_id: Some("prj_e2e".into()),
        user_data: user("a@x.io"),
        ..CreateLeadRequest::default()
    };
    assert_eq!(
        api_error(browser.create_lead(&fine).await),
        (403, body(ErrorCode::ProjectInactive, "Project is inactive"))
    );
    app.store
        .set_project_active(app.project.id, true)
        .await
        .unwrap();
    assert_eq!(
        app.client()
            .get_leads(&LeadQuery::default())
            .await
            .unwrap()
            .total,
        0,
        "no error stored anything"
    );
}

#[tokio::test]
async fn create_server_side_lead_and_its_errors() {
    let app = spawn_app().await;
    let request = CreateLeadRequest {
        user_data: user("b@x.io"),
        ..CreateLeadRequest::default()
    };
    let created = app
        .client()
        .create_server_side_lead(&request)
        .await
        .unwrap();
    assert_eq!(
        (created.message.as_str(), created.unique_identifier),
        ("Lead created successfully", None)
    );

    assert_eq!(
        api_error(app.anonymous().create_server_side_lead(&request).await),
        (
            401,
            body(ErrorCode::MissingApiKey, "Missing X-API-Key header")
        )
    );
    assert_eq!(
        api_error(
            app.anonymous()
                .with_api_key("lt_wrong")
                .create_server_side_lead(&request)
                .await
        ),
        (401, body(ErrorCode::InvalidApiKey, "Invalid API key"))
    );
    let mismatch = CreateLeadRequest {
        project_id: Some("prj_other".into()),
        ..request.clone()
    };
    assert_eq!(
        api_error(app.client().create_server_side_lead(&mismatch).await),
        (
            403,
            body(
                ErrorCode::ProjectMismatch,
                "projectId does not match the project of the API key"
            )
        )
    );
    let no_user = CreateLeadRequest {
        attribution_data: Some(AttributionData {
            gclid: Some("G".into()),
            ..AttributionData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let (status, error) = api_error(app.client().create_server_side_lead(&no_user).await);
    assert_eq!(
        (status, error.code, error.message.as_str()),
        (
            400,
            ErrorCode::MissingField,
            "Missing required field: userData"
        )
    );
    let page = app.client().get_leads(&LeadQuery::default()).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.leads[0].id, created.lead_id);
}

#[tokio::test]
async fn update_lead_status_flows_and_errors() {
    let app = spawn_app().await;
    let label = label(&app, LabelMapping::default()).await;
    let lead = app
        .client()
        .create_server_side_lead(&CreateLeadRequest {
            user_data: user("c@x.io"),
            unique_identifier: Some("crm-c".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let rate = |conversion_id, price| UpdateLeadStatusRequest {
        identifier: LeadIdentifier::UniqueIdentifier("crm-c".into()),
        conversion_id,
        price,
        note: None,
    };

    let open = app
        .client()
        .update_lead_status(&rate(ConversionId::Open, Some(2500)))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&open).unwrap(),
        json!({"message": "Lead status updated to open", "leadId": lead.lead_id, "uniqueIdentifier": "crm-c", "status": "open", "queued": false})
    );
    let queued = app
        .client()
        .update_lead_status(&rate(ConversionId::Label(label), None))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&queued).unwrap(),
        json!({"message": "Lead queued for processing", "leadId": lead.lead_id, "uniqueIdentifier": "crm-c", "status": "pending", "queued": true, "warnings": []})
    );
    let (status, error) = api_error(
        app.client()
            .update_lead_status(&rate(ConversionId::Lost, Some(1)))
            .await,
    );
    assert_eq!(status, 409);
    assert_eq!(
        error,
        ErrorBody {
            lead_id: Some(lead.lead_id),
            ..body(ErrorCode::JobPending, "Lead already has a pending job")
        }
    );

    let read = app
        .client()
        .get_lead(&LeadIdentifier::UniqueIdentifier("crm-c".into()))
        .await
        .unwrap();
    assert_eq!(
        (read.status, read.price, read.conversion_id),
        (
            LeadStatus::Pending,
            Some(2500),
            Some(ConversionId::Label(label))
        )
    );

    let missing = UpdateLeadStatusRequest {
        identifier: LeadIdentifier::Email("nobody@x.io".into()),
        ..rate(ConversionId::Open, None)
    };
    assert_eq!(
        api_error(app.client().update_lead_status(&missing).await),
        (404, body(ErrorCode::LeadNotFound, "Lead not found"))
    );
    let unknown_label = rate(ConversionId::Label(uuid::Uuid::new_v4()), None);
    assert_eq!(
        api_error(app.client().update_lead_status(&unknown_label).await),
        (
            404,
            body(
                ErrorCode::ConversionLabelNotFound,
                "Conversion label not found"
            )
        )
    );
    let (status, error) = api_error(
        app.client()
            .update_lead_status(&rate(ConversionId::Open, Some(-5)))
            .await,
    );
    assert_eq!((status, error.code), (400, ErrorCode::InvalidField));
    assert_eq!(
        error.errors,
        [FieldError {
            field: "price".into(),
            message: "must be a non-negative whole number of cents".into()
        }]
    );
    assert_eq!(
        api_error(
            app.anonymous()
                .update_lead_status(&rate(ConversionId::Open, None))
                .await
        )
        .1
        .code,
        ErrorCode::MissingApiKey
    );
}

#[tokio::test]
async fn lead_activity_shows_each_change_and_who_made_it() {
    let app = spawn_app().await;
    let label = label(&app, LabelMapping::default()).await;
    let lead = app
        .client()
        .create_server_side_lead(&CreateLeadRequest {
            user_data: user("h@x.io"),
            unique_identifier: Some("crm-h".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let identifier = LeadIdentifier::UniqueIdentifier("crm-h".into());
    app.client()
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: identifier.clone(),
            conversion_id: ConversionId::Open,
            price: Some(2500),
            note: Some("called back".into()),
        })
        .await
        .unwrap();
    app.client()
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: identifier.clone(),
            conversion_id: ConversionId::Label(label),
            price: None,
            note: None,
        })
        .await
        .unwrap();

    let key = &app.store.api_keys(app.project.id).await.unwrap()[0];
    let by = format!("API key {}", key.prefix);
    let jobs = app.client().get_lead_jobs(&identifier).await.unwrap();
    assert_eq!(jobs.jobs[0].rated_by.as_deref(), Some(by.as_str()));
    let activity = app.client().get_lead_activity(&identifier).await.unwrap();
    assert_eq!(
        (activity.message.as_str(), activity.lead_id),
        ("Lead activity retrieved", lead.lead_id)
    );
    let seen: Vec<_> = activity
        .events
        .iter()
        .map(|event| (event.by.as_deref(), event.activity.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (None, Activity::Created),
            (
                Some(by.as_str()),
                Activity::Reopened {
                    price: Some(2500),
                    note: Some("called back".into())
                }
            ),
            (
                Some(by.as_str()),
                Activity::Rated {
                    conversion_id: ConversionId::Label(label),
                    label: Some("Customer".into()),
                    // The price the conversion reports: the lead's, since none was given.
                    price: Some(2500),
                    note: None,
                    job_id: jobs.jobs[0].id,
                }
            ),
        ]
    );
    assert!(
        activity.events.windows(2).all(|w| w[0].at <= w[1].at),
        "oldest first"
    );
    assert_eq!(
        api_error(
            app.client()
                .get_lead_activity(&LeadIdentifier::LeadId(LeadId(999_999)))
                .await
        ),
        (404, body(ErrorCode::LeadNotFound, "Lead not found"))
    );
}

#[tokio::test]
async fn concurrent_ratings_over_real_sockets_queue_one_job() {
    let app = spawn_app().await;
    let label = label(&app, LabelMapping::default()).await;
    let lead = app
        .client()
        .create_server_side_lead(&CreateLeadRequest {
            user_data: user("d@x.io"),
            ..Default::default()
        })
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let client = app.client().clone();
            tokio::spawn(async move {
                client
                    .update_lead_status(&UpdateLeadStatusRequest {
                        identifier: LeadIdentifier::LeadId(lead.lead_id),
                        conversion_id: ConversionId::Label(label),
                        price: Some(100),
                        note: None,
                    })
                    .await
            })
        })
        .collect();
    let mut queued = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(response) => {
                assert!(response.queued);
                queued += 1;
            }
            Err(err) => assert_eq!(err.code(), Some(ErrorCode::JobPending), "{err}"),
        }
    }
    assert_eq!(queued, 1);
    assert_eq!(
        app.store
            .lead_jobs(app.project.id, lead.lead_id)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn get_leads_filters_sorts_pages_and_rejects_bad_queries() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for (name, gclid) in [("Carol", None), ("alice", Some("G")), ("Bob", None)] {
        let request = CreateLeadRequest {
            user_data: Some(UserData {
                first_name: Some(name.into()),
                email: Some(format!("{name}@x.io")),
                ..UserData::default()
            }),
            attribution_data: gclid.map(|g: &str| AttributionData {
                gclid: Some(g.into()),
                ..AttributionData::default()
            }),
            ..CreateLeadRequest::default()
        };
        ids.push(
            app.client()
                .create_server_side_lead(&request)
                .await
                .unwrap()
                .lead_id,
        );
    }
    let by_name = LeadQuery {
        sort: Sort {
            field: SortField::FirstName,
            direction: SortDirection::Asc,
        },
        limit: 2,
        ..LeadQuery::default()
    };
    let page = app.client().get_leads(&by_name).await.unwrap();
    assert_eq!(
        page.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [ids[1], ids[2]]
    );
    assert_eq!(
        (
            page.total,
            page.page,
            page.limit,
            page.total_pages,
            page.has_more
        ),
        (3, 1, 2, 2, true)
    );
    let second = app
        .client()
        .get_leads(&LeadQuery {
            page: 2,
            ..by_name.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        (second.leads.len(), second.leads[0].id, second.has_more),
        (1, ids[0], false)
    );
    let past = app
        .client()
        .get_leads(&LeadQuery { page: 3, ..by_name })
        .await
        .unwrap();
    assert_eq!((past.leads.len(), past.total), (0, 3));

    let clicked = app
        .client()
        .get_leads(&LeadQuery {
            gclid_exists: Some(true),
            ..LeadQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        clicked.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [ids[1]]
    );
    let searched = app
        .client()
        .get_leads(&LeadQuery {
            search: Some("BO".into()),
            ..LeadQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        searched.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [ids[2]]
    );
    let today = app
        .client()
        .get_leads(&LeadQuery {
            created_from: Some(chrono::Utc::now() - chrono::Duration::hours(1)),
            ..LeadQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(today.total, 3);
    let newest_first = app.client().get_leads(&LeadQuery::default()).await.unwrap();
    assert_eq!(
        newest_first.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [ids[2], ids[1], ids[0]]
    );

    let (status, error) = api_error(
        app.client()
            .get_leads(&LeadQuery {
                limit: 0,
                ..LeadQuery::default()
            })
            .await,
    );
    assert_eq!(
        (status, error.code, error.message.as_str()),
        (
            400,
            ErrorCode::InvalidQuery,
            "Invalid query parameter: limit must be an integer from 1 to 100"
        )
    );
    let (status, error) = api_error(
        app.client()
            .get_leads(&LeadQuery {
                search: Some("x".into()),
                ..LeadQuery::default()
            })
            .await,
    );
    assert_eq!((status, error.code), (400, ErrorCode::InvalidQuery));
}

#[tokio::test]
async fn get_lead_by_each_identifier_and_its_errors() {
    let app = spawn_app().await;
    let request = CreateLeadRequest {
        user_data: Some(UserData {
            email: Some("Eve@Example.com".into()),
            phone: Some("+1 (555) 010-0001".into()),
            ..UserData::default()
        }),
        unique_identifier: Some("crm-eve".into()),
        ..CreateLeadRequest::default()
    };
    let id = app
        .client()
        .create_server_side_lead(&request)
        .await
        .unwrap()
        .lead_id;
    for identifier in [
        LeadIdentifier::LeadId(id),
        LeadIdentifier::UniqueIdentifier("crm-eve".into()),
        LeadIdentifier::Email(" eve@example.COM".into()),
        LeadIdentifier::Phone("+1-555-010-0001".into()),
    ] {
        assert_eq!(
            app.client().get_lead(&identifier).await.unwrap().id,
            id,
            "{identifier:?}"
        );
    }
    assert_eq!(
        api_error(
            app.client()
                .get_lead(&LeadIdentifier::LeadId(LeadId(id.0 + 1)))
                .await
        ),
        (404, body(ErrorCode::LeadNotFound, "Lead not found"))
    );
    let (status, error) = api_error(
        app.client()
            .get_lead(&LeadIdentifier::LeadId(LeadId(0)))
            .await,
    );
    assert_eq!(
        (status, error.message.as_str()),
        (
            400,
            "Invalid query parameter: leadId must be a positive integer"
        )
    );
    let (status, error) = api_error(
        app.client()
            .get_lead(&LeadIdentifier::Email(String::new()))
            .await,
    );
    assert_eq!((status, error.code), (400, ErrorCode::MissingIdentifier));
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_is_cut_off_with_413() {
    let app = spawn_app().await;
    let addr = app.base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/leads/createLead HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 8192, "x".repeat(8192));
    // Up to 10 chunks (80 KiB), no Content-Length: the server must stop reading at 64 KiB.
    for _ in 0..10 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut response = String::new();
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        stream.read_to_string(&mut response),
    )
    .await;
    assert!(read.is_ok(), "the server answered");
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(
        response.contains(r#""code":"payload_too_large""#),
        "{response}"
    );
}

#[tokio::test]
async fn get_roas_answers_what_the_spend_bought_and_needs_a_key() {
    use leadtrack::core::report::Touchpoint;
    use leadtrack::core::roas::{RoasGrouping, RoasQuery};
    use leadtrack::core::spend::SpendRow;
    let app = spawn_app().await;
    let request = CreateLeadRequest {
        user_data: user("ada@x.io"),
        attribution_data: serde_json::from_value(serde_json::json!({
            "utm_source": "facebook", "utm_campaign": "Spring Sale"
        }))
        .unwrap(),
        ..CreateLeadRequest::default()
    };
    app.client()
        .create_server_side_lead(&request)
        .await
        .unwrap();
    let today = chrono::Utc::now().date_naive();
    let spent = SpendRow {
        date: today,
        source: "meta".into(),
        medium: "paid_social".into(),
        account: String::new(),
        campaign_id: None,
        campaign: "Spring Sale".into(),
        currency: app.project.currency.clone(),
        cost_micros: 80_000_000,
        clicks: Some(12),
        impressions: None,
    };
    app.store
        .save_spend(app.project.id, &[spent])
        .await
        .unwrap();
    let query = RoasQuery {
        from: today,
        to: today,
        touch: Touchpoint::First,
        by: RoasGrouping::Source,
    };
    let report = app.client().get_roas(&query).await.unwrap();
    assert_eq!(
        (report.from, report.to, report.group_by.as_str()),
        (today, today, "source")
    );
    let row = &report.rows[0];
    assert_eq!(
        (
            row.source.as_deref(),
            row.spend,
            row.leads,
            row.cost_per_lead,
            row.clicks
        ),
        (Some("meta"), Some(80.0), 1, Some(80.0), Some(12))
    );
    assert_eq!(
        api_error(app.anonymous().get_roas(&query).await),
        (
            401,
            body(ErrorCode::MissingApiKey, "Missing X-API-Key header")
        )
    );
}
