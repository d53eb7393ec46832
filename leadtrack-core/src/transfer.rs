//! A leadtrack database in a form every backend reads and writes: its tables, their
//! columns and the kind of value each holds. Moving a database from one backend to another
//! (`server migrate-to`) reads each table from the first, in batches in key order, and
//! writes the same rows to the second, whose ids, hashes and JSON stay exactly as they were.
//!
//! The tables are listed parents first (projects before leads, leads before jobs), so that
//! rows written in this order always find what they refer to. Every table of a project's
//! data has its `project_id`, whatever a backend keeps it in.

use uuid::Uuid;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A 64-bit integer (ids, times in milliseconds, prices).
    Int,
    /// An integer that fits 32 bits (HTTP statuses, attempt counts).
    Int32,
    /// True or false.
    Bool,
    /// UTF-8 text (JSON included: it is kept as written).
    Text,
    /// Bytes (key and session hashes).
    Bytes,
    /// A UUID.
    Uuid,
}

/// One value of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// No value.
    Null,
    /// An [`Kind::Int`] or [`Kind::Int32`].
    Int(i64),
    /// A [`Kind::Bool`].
    Bool(bool),
    /// A [`Kind::Text`].
    Text(String),
    /// A [`Kind::Bytes`].
    Bytes(Vec<u8>),
    /// A [`Kind::Uuid`].
    Uuid(Uuid),
}

/// A column: its name and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name, the same in every backend.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
}

/// A table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// Its columns, in the order rows hold them.
    pub columns: &'static [Column],
    /// The integer column rows are read in order of, and a copy resumes from; `None` for a
    /// small table read whole.
    pub key: Option<&'static str>,
}

impl Table {
    /// The position of the column `name` in a row.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|column| column.name == name)
    }

    /// The table named `name`.
    pub fn named(name: &str) -> Option<&'static Table> {
        TABLES.iter().find(|table| table.name == name)
    }
}

const fn column(name: &'static str, kind: Kind) -> Column {
    Column { name, kind }
}

use Kind::{Bool, Bytes, Int, Int32, Text};

/// Every table of a leadtrack database, parents first. The per-status lead counts are not
/// among them: a backend derives them from the leads it is given.
pub const TABLES: &[Table] = &[
    Table {
        name: "projects",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("public_id", Text),
            column("name", Text),
            column("active", Bool),
            column("currency", Text),
            column("region", Text),
            column("lost_mapping", Text),
            column("created_at", Int),
            column("allowed_origins", Text),
            column("default_consent", Text),
            column("undo_window_seconds", Int32),
            column("spam_rules", Text),
            column("review_ratings", Bool),
            column("retention_days", Int32),
            column("spam_retention_days", Int32),
            column("retention_done_to", Int),
            column("retention_ran_at", Int),
            column("retention_erased", Int),
        ],
    },
    Table {
        name: "api_keys",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("key_hash", Bytes),
            column("prefix", Text),
            column("created_at", Int),
            column("revoked_at", Int),
        ],
    },
    Table {
        name: "users",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("email", Text),
            column("email_key", Text),
            column("name", Text),
            column("password_hash", Text),
            column("disabled", Bool),
            column("created_at", Int),
            column("preferences", Text),
        ],
    },
    Table {
        name: "members",
        key: None,
        columns: &[
            column("project_id", Int),
            column("user_id", Int),
            column("role", Text),
            column("created_at", Int),
            column("can_export", Bool),
            column("alerts", Text),
        ],
    },
    Table {
        name: "sessions",
        key: None,
        columns: &[
            column("hash", Bytes),
            column("user_id", Int),
            column("created_at", Int),
            column("last_seen_at", Int),
            column("address", Text),
            column("user_agent", Text),
        ],
    },
    Table {
        name: "account_links",
        key: None,
        columns: &[
            column("user_id", Int),
            column("kind", Text),
            column("link_hash", Bytes),
            column("email", Text),
            column("created_at", Int),
        ],
    },
    Table {
        name: "login_failures",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("email_key", Text),
            column("address", Text),
            column("at", Int),
        ],
    },
    Table {
        name: "reset_requests",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("email_key", Text),
            column("address", Text),
            column("at", Int),
        ],
    },
    Table {
        name: "invitations",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("email", Text),
            column("email_key", Text),
            column("role", Text),
            column("invited_by", Text),
            column("link_hash", Bytes),
            column("sent_at", Int),
        ],
    },
    Table {
        name: "labels",
        key: None,
        columns: &[
            column("project_id", Int),
            column("id", Kind::Uuid),
            column("name", Text),
            column("mark_as_done", Bool),
            column("mapping", Text),
            column("created_at", Int),
            column("archived", Bool),
            column("position", Int),
        ],
    },
    Table {
        name: "integrations",
        key: None,
        columns: &[
            column("project_id", Int),
            column("kind", Text),
            column("settings", Text),
            column("updated_at", Int),
        ],
    },
    Table {
        // In the order they were added, which a backend keeps.
        name: "webhooks",
        key: None,
        columns: &[
            column("project_id", Int),
            column("id", Kind::Uuid),
            column("url", Text),
            column("secret", Text),
            column("events", Int),
            column("created_at", Int),
            column("kind", Text),
            column("options", Text),
        ],
    },
    Table {
        name: "chat_channels",
        key: None,
        columns: &[
            column("project_id", Int),
            column("kind", Text),
            column("url", Text),
        ],
    },
    Table {
        name: "oauth_grants",
        key: None,
        columns: &[
            column("project_id", Int),
            column("provider", Text),
            column("credentials", Text),
        ],
    },
    Table {
        name: "lead_sources",
        key: None,
        columns: &[
            column("project_id", Int),
            column("kind", Text),
            column("settings", Text),
            column("routing", Text),
        ],
    },
    Table {
        name: "lead_fetches",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("kind", Text),
            column("external_id", Text),
            column("announced", Text),
            column("attempts", Int32),
            column("due_at", Int),
            column("lease_token", Kind::Uuid),
            column("last_error", Text),
            column("done_at", Int),
        ],
    },
    Table {
        name: "inbound_hooks",
        key: None,
        columns: &[
            column("id", Text),
            column("project_id", Int),
            column("settings", Text),
            column("created_at", Int),
        ],
    },
    Table {
        name: "round_robin",
        key: None,
        columns: &[
            column("project_id", Int),
            column("rule", Text),
            column("last_user", Int),
        ],
    },
    Table {
        name: "leads",
        key: Some("id"),
        columns: &[
            column("project_id", Int),
            column("id", Int),
            column("status", Text),
            column("price", Int),
            column("note", Text),
            column("conversion_id", Text),
            column("created_at", Int),
            column("updated_at", Int),
            column("data", Text),
            column("form_name", Text),
            column("first_name", Text),
            column("last_name", Text),
            column("unique_identifier", Text),
            column("unique_event_id", Text),
            column("email_key", Text),
            column("phone_key", Text),
            column("search_text", Text),
            column("q_text", Text),
            column("form_key", Text),
            column("has_gclid", Bool),
            column("has_cid", Bool),
            column("has_fbp", Bool),
            column("has_fbc", Bool),
            column("has_msclkid", Bool),
            column("has_li_fat_id", Bool),
            column("has_gbraid", Bool),
            column("has_ttclid", Bool),
            column("has_rdt_cid", Bool),
            column("has_sccid", Bool),
            column("has_epik", Bool),
            column("has_twclid", Bool),
            column("first_source", Text),
            column("first_medium", Text),
            column("first_campaign", Text),
            column("last_source", Text),
            column("last_medium", Text),
            column("last_campaign", Text),
            column("created_via", Text),
            column("spam_reason", Text),
            column("duplicate_of", Int),
            column("duplicated", Bool),
            column("first_touch_at", Int),
            column("first_touch_by", Text),
            column("assigned_to", Int),
            column("erased_at", Int),
        ],
    },
    Table {
        name: "lead_events",
        key: Some("id"),
        columns: &[
            column("project_id", Int),
            column("id", Int),
            column("lead_id", Int),
            column("at", Int),
            column("actor", Text),
            column("activity", Text),
        ],
    },
    Table {
        name: "lead_histories_recorded",
        key: Some("lead_id"),
        columns: &[column("project_id", Int), column("lead_id", Int)],
    },
    Table {
        name: "lead_comments",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("lead_id", Int),
            column("author_id", Int),
            column("author", Text),
            column("text", Text),
            column("created_at", Int),
            column("edited_at", Int),
        ],
    },
    Table {
        name: "rating_drafts",
        key: Some("lead_id"),
        columns: &[
            column("project_id", Int),
            column("lead_id", Int),
            column("conversion_id", Text),
            column("price", Int),
            column("actor", Text),
            column("at", Int),
        ],
    },
    Table {
        name: "next_steps",
        key: Some("lead_id"),
        columns: &[
            column("lead_id", Int),
            column("project_id", Int),
            column("due_at", Int),
            column("note", Text),
            column("set_by", Int),
            column("set_at", Int),
            column("reminded", Bool),
        ],
    },
    Table {
        name: "saved_views",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("owner_id", Int),
            column("shared", Bool),
            column("scope", Int),
            column("name", Text),
            column("query", Text),
            column("columns", Text),
            column("saved_at", Int),
        ],
    },
    Table {
        name: "project_events",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("at", Int),
            column("actor", Text),
            column("activity", Text),
            column("address", Text),
        ],
    },
    Table {
        name: "jobs",
        key: Some("id"),
        columns: &[
            column("project_id", Int),
            column("id", Int),
            column("event_id", Kind::Uuid),
            column("lead_id", Int),
            column("conversion_id", Text),
            column("final_status", Text),
            column("price", Int),
            column("state", Text),
            column("created_at", Int),
            column("due_at", Int),
            column("lease_token", Kind::Uuid),
            column("lease_expires_at", Int),
            column("started_at", Int),
            column("finished_at", Int),
            column("rated_by", Text),
            column("conversion_event_id", Kind::Uuid),
            column("converted_at", Int),
            column("form_token", Kind::Uuid),
            column("prior", Text),
            column("retracts", Text),
        ],
    },
    Table {
        name: "deliveries",
        key: Some("job_id"),
        columns: &[
            column("project_id", Int),
            column("job_id", Int),
            column("integration", Text),
            column("state", Text),
            column("attempts", Int32),
            column("next_attempt_at", Int),
            column("detail", Text),
            column("action", Text),
        ],
    },
    Table {
        name: "attempts",
        key: Some("id"),
        columns: &[
            column("project_id", Int),
            column("id", Int),
            column("job_id", Int),
            column("integration", Text),
            column("at", Int),
            column("outcome", Text),
            column("http_status", Int32),
            column("error", Text),
            column("retry_at", Int),
        ],
    },
    Table {
        name: "last_attempts",
        key: None,
        columns: &[
            column("project_id", Int),
            column("integration", Text),
            column("attempt_id", Int),
            column("at", Int),
        ],
    },
    Table {
        name: "alert_queue",
        key: Some("id"),
        columns: &[
            column("id", Int),
            column("project_id", Int),
            column("lead_id", Int),
            column("kind", Text),
            column("created_at", Int),
        ],
    },
    Table {
        name: "crm_records",
        key: None,
        columns: &[
            column("webhook_id", Kind::Uuid),
            column("lead_id", Int),
            column("contact_id", Text),
            column("crm_lead_id", Text),
            column("deal_id", Text),
        ],
    },
    Table {
        name: "webhook_events",
        key: Some("id"),
        columns: &[
            column("project_id", Int),
            column("id", Int),
            column("webhook_id", Kind::Uuid),
            column("event_id", Kind::Uuid),
            column("event", Text),
            column("lead_id", Int),
            column("occurred_at", Int),
            column("body", Text),
            column("state", Text),
            column("attempts", Int32),
            column("due_at", Int),
            column("lease_token", Kind::Uuid),
            column("lease_expires_at", Int),
            column("last_attempt_at", Int),
            column("outcome", Text),
            column("http_status", Int32),
            column("error", Text),
            column("crm", Bool),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_an_integer_column_of_its_table() {
        for table in TABLES {
            if let Some(key) = table.key {
                let at = table.position(key).expect("the key is a column");
                assert_eq!(table.columns[at].kind, Int, "{}", table.name);
            }
        }
    }

    #[test]
    fn tables_are_named_once() {
        for table in TABLES {
            assert_eq!(Table::named(table.name), Some(table));
        }
        assert_eq!(Table::named("lead_status_counts"), None);
    }
}
