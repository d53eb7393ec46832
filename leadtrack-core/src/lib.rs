//! The rules of leadtrack, stated once: the types, records and rules every web crate and
//! backend share, the HTTP contract's wire types and request parsers, and the store traits.
//!
//! This crate does no I/O: no database, no HTTP, no async runtime.
//!
//! # The module chain
//!
//! The modules form a chain; each uses only the ones before it (a test in this file fails
//! when one imports a later one):
//!
//! 1. [`time`]: timestamps as the contract writes them, `Retry-After`;
//! 2. [`error`]: the contract's error codes and the validation error;
//! 3. [`types`]: ids ([`LeadId`], [`ProjectId`], [`JobId`]), the enumerations with their
//!    wire names, [`JsonObject`], [`LeadIdentifier`];
//! 4. [`matching`]: how emails, phones and search terms match; [`target`]: the one rule for
//!    an address the server calls;
//! 5. the records: [`assignment`] (who a lead is given to), [`lead`], [`channel`] (where a lead came from), [`alert`] (telling the team of leads), [`label`], [`project`], [`key`], [`account`] (users,
//!    sessions, who did what), [`link`] (one-use links: invitations, resets), [`integration`], [`crm`] (leads kept in a CRM), [`oauth`] (platforms connected by signing in), [`job`], [`webhook`] (lead webhooks),
//!    [`activity`] (a lead's history), [`comment`] (the team's thread on a lead), [`next_step`] (when a lead is acted on next), [`draft`] (ratings kept for review before sending),
//!    [`saved_view`] (inbox views kept with a name), [`report`] (leads counted by where
//!    they came from);
//! 6. [`conversion`]: one identity per conversion, and what a rating again sends;
//!    [`rules`]: skips, warnings, the final status and [`rules::plan_conversion`];
//! 7. [`api`]: the request and response wire types, with `From` conversions from the
//!    records;
//! 8. [`request`]: the body and query parsers, one file per route family;
//!    [`mapping`]: other shapes' values made into a lead (`TARGET=SOURCE`);
//!    [`inbound`]: form tools' webhooks and their presets; [`import`]: past leads from
//!    CSV files;
//! 9. [`spend`]: ad spend from files and the platforms, and where it meets leads;
//!    [`roas`]: what each source, campaign or label cost and returned, with its wire type;
//! 10. [`store`]: the traits ([`LeadStore`], [`Admin`], [`JobQueue`], [`Accounts`],
//!     [`Spending`], [`Store`]) and [`StoreError`];
//! 11. `testkit` (feature `testkit`): the conformance suite every backend passes.
//!
//! ```
//! use leadtrack_core::request::{CreateRoute, NewLead};
//!
//! let body = br#"{"projectId":"prj_demo","userData":{"email":" Ada@Example.com "},"lt_channelflow":"direct"}"#;
//! let lead = NewLead::parse(body, CreateRoute::Browser).unwrap();
//! assert_eq!(lead.project_id.as_deref(), Some("prj_demo"));
//! assert_eq!(lead.data.user("email"), Some("Ada@Example.com"));
//! assert_eq!(lead.data.channel_flow.as_deref(), Some("direct"));
//!
//! let err = NewLead::parse(br#"{"projectId":"prj_demo","userData":{}}"#, CreateRoute::Browser)
//!     .unwrap_err();
//! assert_eq!(err.code.as_ref(), "no_lead_data");
//! ```

#![forbid(unsafe_code)]

// In chain order; the blank lines keep rustfmt from sorting them.

pub mod time;

pub mod error;

pub mod types;

pub mod vault;

pub mod matching;

pub mod target;

pub mod spam;

pub mod assignment;

pub mod lead;

pub mod channel;

pub mod alert;

pub mod label;

pub mod project;

pub mod key;

pub mod account;

pub mod link;

pub mod crm;
pub mod integration;

pub mod oauth;

pub mod source;

pub mod job;

pub mod webhook;

pub mod activity;

pub mod comment;

pub mod mention;

pub mod next_step;

pub mod draft;

pub mod saved_view;

pub mod report;

pub mod conversion;

pub mod rules;

pub mod api;

pub mod request;

pub mod mapping;

pub mod inbound;

pub mod import;

pub mod spend;

pub mod roas;

/// A person's data on request: everything kept about them, as one document.
pub mod privacy;
pub mod store;
/// A database in a form every backend reads and writes, for moving it between backends.
pub mod transfer;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use error::{ErrorCode, FieldError, ValidationError};
pub use lead::{LeadData, StoredLead};
pub use store::{
    Accounts, Admin, JobQueue, LeadStore, LeadWebhooks, Spending, Store, StoreError, StoreResult,
};
pub use types::{
    ConversionId, JobId, JsonObject, LeadId, LeadIdentifier, LeadStatus, ProjectId, Role, UserId,
};

#[cfg(test)]
mod chain {
    use std::path::{Path, PathBuf};

    /// The modules in chain order, as the crate docs state it.
    const CHAIN: [&str; 42] = [
        "time",
        "error",
        "types",
        "vault",
        "matching",
        "target",
        "spam",
        "assignment",
        "lead",
        "channel",
        "alert",
        "label",
        "project",
        "key",
        "account",
        "link",
        "integration",
        "crm",
        "oauth",
        "source",
        "job",
        "webhook",
        "activity",
        "comment",
        "mention",
        "next_step",
        "draft",
        "saved_view",
        "report",
        "conversion",
        "rules",
        "api",
        "request",
        "mapping",
        "inbound",
        "import",
        "spend",
        "roas",
        "store",
        "privacy",
        "transfer",
        "testkit",
    ];

    /// A module's source files: `name.rs`, or every `.rs` file under `name/`.
    fn sources(module: &str) -> Vec<PathBuf> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let file = src.join(format!("{module}.rs"));
        if file.exists() {
            return vec![file];
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(src.join(module))
            .unwrap_or_else(|err| panic!("module {module} has no sources: {err}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
            .collect();
        files.sort();
        files
    }

    /// The crate modules a source names in code (`crate::x`, `use crate::{x, ...}`);
    /// comments and doc links do not count.
    fn named_modules(source: &str) -> Vec<String> {
        let code: String = source
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut named = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                named.extend(group.split(',').filter_map(|item| {
                    let name = item.trim().split("::").next()?.trim();
                    (!name.is_empty()).then(|| name.to_owned())
                }));
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                named.push(name);
            }
        }
        named
    }

    #[test]
    fn every_module_is_in_the_chain() {
        let lib = include_str!("lib.rs");
        for line in lib.lines() {
            let declared = line.strip_prefix("pub mod ").or(line.strip_prefix("mod "));
            if let Some(module) = declared.and_then(|rest| rest.strip_suffix(';')) {
                assert!(
                    CHAIN.contains(&module),
                    "module {module} is not in the chain"
                );
            }
        }
    }

    #[test]
    fn no_module_imports_a_later_one() {
        for (position, module) in CHAIN.iter().enumerate() {
            for file in sources(module) {
                let source = std::fs::read_to_string(&file).unwrap();
                for named in named_modules(&source) {
                    let Some(at) = CHAIN.iter().position(|m| *m == named) else {
                        // Crate-root re-exports (`crate::ErrorCode`) must not hide an edge.
                        panic!(
                            "{} names crate::{named}, not a chain module",
                            file.display()
                        );
                    };
                    assert!(
                        at <= position,
                        "{} ({module}) imports {named}, which comes later in the chain",
                        file.display()
                    );
                }
            }
        }
    }

    #[test]
    fn the_scanner_sees_imports() {
        let source = "use crate::types::{A, B};\nuse crate::{lead::X, rules};\n// crate::api\nfn f() { crate::time::format(); }";
        assert_eq!(named_modules(source), ["types", "lead", "rules", "time"]);
    }
}
