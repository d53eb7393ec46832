//! A backend using the typed client against a running server.
//!
//! ```sh
//! cargo run --release --example server       # prints a project id and an API key
//! LEADTRACK_API_KEY=lt_... cargo run --example client
//! ```
//!
//! `LEADTRACK_URL` points it elsewhere than `http://127.0.0.1:8080`.

use leadtrack::client::Client;
use leadtrack::core::api::{
    ConversionId, CreateLeadRequest, LeadIdentifier, UpdateLeadStatusRequest, UserData,
};
use leadtrack::core::request::LeadQuery;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("LEADTRACK_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("LEADTRACK_API_KEY")
        .map_err(|_| "set LEADTRACK_API_KEY to a key that `server` printed")?;
    let client = Client::new(url).with_api_key(key);

    // A lead captured by the backend, e.g. from a phone call.
    let created = client
        .create_server_side_lead(&CreateLeadRequest {
            user_data: Some(UserData {
                first_name: Some("Ada".into()),
                email: Some("ada@example.com".into()),
                ..UserData::default()
            }),
            unique_identifier: Some("crm-1001".into()),
            ..CreateLeadRequest::default()
        })
        .await?;
    println!("{} (lead {})", created.message, created.lead_id);

    // The CRM rates it later; `open` resets it, a label UUID or `lost` queues a conversion.
    let updated = client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::UniqueIdentifier("crm-1001".into()),
            conversion_id: ConversionId::Open,
            price: Some(49_900),
            note: Some("asked for a quote".into()),
        })
        .await?;
    println!("{}: status {}", updated.message, updated.status);

    let lead = client
        .get_lead(&LeadIdentifier::Email("ada@example.com".into()))
        .await?;
    println!(
        "lead {} is {} at {:?} cents",
        lead.id, lead.status, lead.price
    );

    let page = client
        .get_leads(&LeadQuery {
            search: Some("ada".into()),
            limit: 10,
            ..LeadQuery::default()
        })
        .await?;
    println!("{} lead(s) match \"ada\"", page.total);
    Ok(())
}
