//! Saved views: an inbox view (the tab, search, filters and sort that the dashboard's query
//! string says) with its columns, kept under a name for the person who saved it, or for the
//! project's whole team. Saving a name again in the same place replaces that view.

use chrono::{DateTime, Utc};

use crate::types::{Role, UserId};

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 60;

/// The longest query string kept, in bytes (a view's query is a few parameters).
pub const MAX_QUERY_BYTES: usize = 2000;

/// A view as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedView {
    /// Its id within the store.
    pub id: i64,
    /// What it is called.
    pub name: String,
    /// The inbox's query string (`tab=open&source=google&sort=...`), without a page.
    pub query: String,
    /// The inbox's columns, by the dashboard's names; `None`: the viewer's own.
    pub columns: Option<Vec<String>>,
    /// Who saved it.
    pub owner: UserId,
    /// Whether the project's whole team sees it (else only its owner does).
    pub shared: bool,
    /// When it was saved.
    pub saved_at: DateTime<Utc>,
}

impl SavedView {
    /// Whether `user`, of `role` in the project, may delete it: its owner, or for a shared
    /// view also the project's owners.
    pub fn may_delete(&self, user: UserId, role: Role) -> bool {
        self.owner == user || (self.shared && role.allows(Role::Owner))
    }
}

/// A view to save.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSavedView {
    /// Its name, trimmed.
    pub name: String,
    /// The inbox's query string.
    pub query: String,
    /// The columns, if the view sets them.
    pub columns: Option<Vec<String>>,
    /// For the whole team.
    pub shared: bool,
}

impl NewSavedView {
    /// A view named `name` (trimmed: 1 to [`MAX_NAME_CHARS`] characters, no control
    /// characters) of the query string `query` (at most [`MAX_QUERY_BYTES`]). `Err` says
    /// what is wrong, in words for the person saving it.
    pub fn new(
        name: &str,
        query: &str,
        columns: Option<Vec<String>>,
        shared: bool,
    ) -> Result<Self, &'static str> {
        let name = name.trim();
        if name.is_empty() {
            return Err("Give the view a name.");
        }
        if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            return Err("A view's name is one line of at most 60 characters.");
        }
        if query.len() > MAX_QUERY_BYTES {
            return Err("This view is too long to save.");
        }
        Ok(Self {
            name: name.to_owned(),
            query: query.to_owned(),
            columns,
            shared,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_trimmed_line() {
        let view = NewSavedView::new("  Google leads ", "tab=open", None, true).unwrap();
        assert_eq!((view.name.as_str(), view.shared), ("Google leads", true));
        for bad in ["", "   ", "two\nlines", &"x".repeat(61)] {
            assert!(NewSavedView::new(bad, "", None, false).is_err(), "{bad:?}");
        }
        assert!(NewSavedView::new(&"é".repeat(60), "", None, false).is_ok());
        assert!(NewSavedView::new("v", &"q".repeat(2001), None, false).is_err());
    }

    #[test]
    fn a_shared_view_is_deleted_by_its_owner_or_the_projects() {
        let view = SavedView {
            id: 1,
            name: "Mine".into(),
            query: String::new(),
            columns: None,
            owner: UserId(1),
            shared: false,
            saved_at: DateTime::UNIX_EPOCH,
        };
        assert!(view.may_delete(UserId(1), Role::Member));
        assert!(
            !view.may_delete(UserId(2), Role::Owner),
            "a personal view is its owner's"
        );
        let shared = SavedView {
            shared: true,
            ..view
        };
        assert!(shared.may_delete(UserId(2), Role::Owner));
        assert!(!shared.may_delete(UserId(2), Role::Member));
    }
}
