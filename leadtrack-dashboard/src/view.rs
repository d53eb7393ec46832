//! An inbox view: the tab, search, filters, sort and page a person chose, as query
//! parameters, so every view is a shareable URL; and the core [`LeadQuery`] it stands for.
//! The inbox page and the CSV export read views with this one function.
//!
//! | parameter | values |
//! |---|---|
//! | `tab` | `open` (default), `mine` (the open leads assigned to the viewer), `pending`, `rated`, `lost`, `spam` |
//! | `q` (or `search`, as older links say) | words, 2 characters or more in all: each must be in the lead's name, email, phone, company, CRM id, campaign, form message or a click id, whatever the case and accents |
//! | `form` | a form's name, whatever its case |
//! | `formName` | a form's exact name (as older links say) |
//! | `source`, `medium`, `campaign` | the first touch's, exactly |
//! | `label` | the lead's last rating: `lost` or a label's id |
//! | `from`, `to` | `YYYY-MM-DD`, created on or after / on or before that UTC day |
//! | `gclid`, `cid`, `fbp`, `fbc`, `msclkid`, `li_fat_id` | `yes` or `no`: whether the lead has it |
//! | `assignee` | a member's user id, or `none`: the leads assigned to them, or to nobody |
//! | `duplicates` | `yes`: only leads that duplicate an earlier lead of the same person |
//! | `sort` | getLeads' `field:direction`, default `createdAt:desc` |
//! | `view` | the saved view it was opened as (whose columns it shows) |
//! | `page` | from 1 |
//!
//! A value that does not parse is dropped (and said so in [`InboxView::problems`]): a
//! shared link never fails to open.

use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{
    AssigneeFilter, DuplicateFilter, Sort, SortDirection, SortField,
};
use leadtrack_core::saved_view::SavedView;
use leadtrack_core::types::{LeadStatus, Role, UserId};
use strum::VariantArray;

/// Leads per inbox page.
pub(crate) const PAGE_SIZE: u32 = 50;

/// The click ids a view can filter by: their parameter names, and what people call them.
pub(crate) const CLICK_IDS: [(&str, &str); 12] = [
    ("gclid", "Google click"),
    ("cid", "GA4 client"),
    ("fbp", "Meta browser"),
    ("fbc", "Meta click"),
    ("msclkid", "Microsoft click"),
    ("li_fat_id", "LinkedIn click"),
    ("gbraid", "Google iOS click"),
    ("ttclid", "TikTok click"),
    ("rdt_cid", "Reddit click"),
    ("ScCid", "Snapchat click"),
    ("epik", "Pinterest click"),
    ("twclid", "X click"),
];

/// An inbox view as its URL says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InboxView {
    /// The tab: which status.
    pub(crate) tab: LeadStatus,
    /// The Mine tab: the open leads assigned to the viewer.
    pub(crate) mine: bool,
    /// Whose leads: a user id, `none`, or empty for anybody's.
    pub(crate) assignee: String,
    /// The search text, trimmed.
    pub(crate) search: String,
    /// The exact form name filter (older links).
    pub(crate) form_name: String,
    /// The form filter, whatever the case.
    pub(crate) form: String,
    /// The first touch's source.
    pub(crate) source: String,
    /// The first touch's medium.
    pub(crate) medium: String,
    /// The first touch's campaign.
    pub(crate) campaign: String,
    /// The last rating: `lost` or a label's id.
    pub(crate) label: String,
    /// Created on or after this day (`YYYY-MM-DD`).
    pub(crate) from: String,
    /// Created on or before this day.
    pub(crate) to: String,
    /// `[exists]` filters, in [`CLICK_IDS`] order.
    pub(crate) click_ids: [Option<bool>; 12],
    /// Only duplicates.
    pub(crate) duplicates: bool,
    /// The sort.
    pub(crate) sort: Sort,
    /// The page, from 1.
    pub(crate) page: u32,
    /// The saved view it was opened as.
    pub(crate) saved: Option<i64>,
    /// What was dropped from the URL, in words.
    pub(crate) problems: Vec<String>,
}

impl InboxView {
    /// The view as `query` states it, its values not yet checked (a tab that is none is
    /// Open, with a problem said).
    fn read(query: &str) -> Self {
        let param = |name: &str| crate::query_param(query, name);
        let mut problems = Vec::new();
        let mine = param("tab").as_deref() == Some("mine");
        let tab = match param("tab") {
            None => LeadStatus::Open,
            Some(_) if mine => LeadStatus::Open,
            Some(tab) => tab.parse().unwrap_or_else(|_| {
                problems.push(format!("There is no tab {tab:?}; showing Open."));
                LeadStatus::Open
            }),
        };
        let mut view = Self {
            tab,
            mine,
            assignee: param("assignee").unwrap_or_default(),
            // `q` (every word, any case and accents, in more fields); `search` is how links
            // from before it said so.
            search: param("q").or_else(|| param("search")).unwrap_or_default(),
            form_name: param("formName").unwrap_or_default(),
            form: param("form").unwrap_or_default(),
            source: param("source").unwrap_or_default(),
            medium: param("medium").unwrap_or_default(),
            campaign: param("campaign").unwrap_or_default(),
            label: param("label").unwrap_or_default(),
            from: param("from").unwrap_or_default(),
            to: param("to").unwrap_or_default(),
            click_ids: [None; 12],
            duplicates: param("duplicates").as_deref() == Some("yes"),
            sort: Sort::default(),
            page: 1,
            saved: param("view").and_then(|id| id.parse().ok()),
            problems,
        };
        for (slot, (name, _)) in view.click_ids.iter_mut().zip(CLICK_IDS) {
            *slot = match param(name).as_deref() {
                Some("yes") => Some(true),
                Some("no") => Some(false),
                _ => None,
            };
        }
        view
    }

    /// The view a query string names, and the lead query it stands for, seen by `me`
    /// (whose leads Mine lists).
    pub(crate) fn from_query(query: &str, me: UserId) -> (Self, LeadQuery) {
        let param = |name: &str| crate::query_param(query, name);
        let mut view = Self::read(query);
        // Everything else is read by core's own getLeads rules, one parameter at a time, so
        // that a bad one is dropped alone.
        let mut core_pairs: Vec<(String, String)> = vec![
            ("status".into(), view.tab.as_ref().into()),
            ("limit".into(), PAGE_SIZE.to_string()),
        ];
        let mut accept = |name: &str, value: &str, what: &str| {
            let mut candidate = core_pairs.clone();
            candidate.push((name.to_owned(), value.to_owned()));
            let accepted = LeadQuery::from_pairs(candidate.clone()).is_ok();
            if accepted {
                core_pairs = candidate;
            } else {
                view.problems
                    .push(format!("{what} was not understood, so it is not applied."));
            }
            accepted
        };
        let search = view.search.clone();
        if !search.is_empty() && !accept("q", &search, "The search") {
            view.search.clear();
        }
        for (value, name, what) in [
            (&mut view.form_name, "formName", "The form name"),
            (&mut view.form, "form", "The form"),
            (&mut view.source, "source", "The source"),
            (&mut view.medium, "medium", "The medium"),
            (&mut view.campaign, "campaign", "The campaign"),
            (&mut view.label, "conversionId", "The label"),
        ] {
            if !value.is_empty() && !accept(name, value, what) {
                value.clear();
            }
        }
        let from = view.from.clone();
        if !from.is_empty() && !accept("createdAt[gte]", &from, "The start date") {
            view.from.clear();
        }
        let to = view.to.clone();
        if !to.is_empty() && !accept("createdAt[lte]", &to, "The end date") {
            view.to.clear();
        }
        for (exists, (name, _)) in view.click_ids.into_iter().zip(CLICK_IDS) {
            if let Some(exists) = exists {
                accept(
                    &format!("{name}[exists]"),
                    &exists.to_string(),
                    "A click id filter",
                );
            }
        }
        let sort = param("sort");
        let sorted = sort.is_some_and(|sort| accept("sort", &sort, "The sort"));
        let page = param("page");
        let paged = page.is_some_and(|page| accept("page", &page, "The page number"));
        let mut query = LeadQuery::from_pairs(core_pairs).unwrap_or_default();
        if view.duplicates {
            query.duplicates = Some(DuplicateFilter::All);
        }
        query.assignee = match view.assignee.as_str() {
            _ if view.mine => Some(AssigneeFilter::User(me)),
            "" => None,
            "none" => Some(AssigneeFilter::Nobody),
            id => match id.parse() {
                Ok(id) => Some(AssigneeFilter::User(UserId(id))),
                Err(_) => {
                    view.problems
                        .push("The assignee was not understood, so it is not applied.".into());
                    view.assignee.clear();
                    None
                }
            },
        };
        if sorted {
            view.sort = query.sort;
        }
        if paged {
            view.page = query.page;
        }
        (view, query)
    }

    /// This view's query string with `changes` applied (`""` removes a parameter); the page
    /// goes back to 1 unless `page` is among the changes.
    pub(crate) fn href(&self, changes: &[(&str, &str)]) -> String {
        let sort = format!(
            "{}:{}",
            self.sort.field.as_ref(),
            self.sort.direction.as_ref()
        );
        let page = self.page.to_string();
        let yes_no = |exists: Option<bool>| match exists {
            Some(true) => "yes",
            Some(false) => "no",
            None => "",
        };
        let mut params: Vec<(&str, String)> = vec![
            (
                "tab",
                if self.mine {
                    "mine".to_owned()
                } else {
                    self.tab.as_ref().to_owned()
                },
            ),
            ("assignee", self.assignee.clone()),
            ("q", self.search.clone()),
            ("formName", self.form_name.clone()),
            ("form", self.form.clone()),
            ("source", self.source.clone()),
            ("medium", self.medium.clone()),
            ("campaign", self.campaign.clone()),
            ("label", self.label.clone()),
            ("from", self.from.clone()),
            ("to", self.to.clone()),
        ];
        for (exists, (name, _)) in self.click_ids.iter().zip(CLICK_IDS) {
            params.push((name, yes_no(*exists).to_owned()));
        }
        params.push((
            "duplicates",
            yes_no(self.duplicates.then_some(true)).to_owned(),
        ));
        params.push((
            "sort",
            if self.sort == Sort::default() {
                String::new()
            } else {
                sort
            },
        ));
        params.push((
            "view",
            self.saved.map(|id| id.to_string()).unwrap_or_default(),
        ));
        params.push((
            "page",
            if changes.iter().any(|(n, _)| *n == "page") {
                page
            } else {
                String::new()
            },
        ));
        for (name, value) in changes {
            match params.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = (*value).to_owned(),
                None => params.push((name, (*value).to_owned())),
            }
        }
        if params.iter().any(|(n, v)| *n == "page" && v == "1") {
            params.retain(|(n, _)| *n != "page");
        }
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (name, value) in params.iter().filter(|(_, v)| !v.is_empty()) {
            serializer.append_pair(name, value);
        }
        serializer.finish()
    }

    /// The `sort` value that sorts by `field`: descending first for dates and prices, and
    /// the other direction when already sorted by it.
    pub(crate) fn sort_by(&self, field: SortField) -> String {
        let direction = if self.sort.field == field {
            match self.sort.direction {
                SortDirection::Asc => SortDirection::Desc,
                SortDirection::Desc => SortDirection::Asc,
            }
        } else if matches!(field, SortField::CreatedAt | SortField::Price) {
            SortDirection::Desc
        } else {
            SortDirection::Asc
        };
        format!("{}:{}", field.as_ref(), direction.as_ref())
    }

    /// Whether any filter besides the tab is applied.
    pub(crate) fn is_filtered(&self) -> bool {
        !self.search.is_empty() || self.has_filter()
    }

    /// Whether a filter of the filter panel (all but the search) is set.
    pub(crate) fn has_filter(&self) -> bool {
        !(self.form_name.is_empty()
            && self.form.is_empty()
            && self.source.is_empty()
            && self.medium.is_empty()
            && self.campaign.is_empty()
            && self.label.is_empty()
            && self.assignee.is_empty()
            && self.from.is_empty()
            && self.to.is_empty()
            && self.click_ids.iter().all(Option::is_none)
            && !self.duplicates)
    }
}

/// Every tab, in the inbox's order.
pub(crate) fn tabs() -> &'static [LeadStatus] {
    LeadStatus::VARIANTS
}

/// A saved view as the inbox lists it.
pub(crate) struct ViewLink {
    pub(crate) id: i64,
    pub(crate) name: String,
    /// The team's (else the viewer's own).
    pub(crate) shared: bool,
    /// The inbox's query string that opens it.
    pub(crate) href: String,
    /// The inbox shows it now.
    pub(crate) current: bool,
    /// The viewer may delete it.
    pub(crate) deletable: bool,
}

impl ViewLink {
    /// `view` as listed in `inbox`'s page, for a viewer of `role` who is `user`.
    pub(crate) fn of(
        view: &SavedView,
        inbox: &InboxView,
        (user, role): (leadtrack_core::UserId, Role),
    ) -> Self {
        Self {
            id: view.id,
            name: view.name.clone(),
            shared: view.shared,
            href: opening(view),
            current: inbox.saved == Some(view.id),
            deletable: view.may_delete(user, role),
        }
    }
}

/// The query string of the inbox showing `view`.
pub(crate) fn opening(view: &SavedView) -> String {
    let id = format!("view={}", view.id);
    if view.query.is_empty() {
        id
    } else {
        format!("{}&{id}", view.query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: UserId = UserId(3);

    #[test]
    fn a_bare_inbox_is_open_newest_first() {
        let (view, query) = InboxView::from_query("", ME);
        assert_eq!(view.tab, LeadStatus::Open);
        assert_eq!(query.status, Some(vec![LeadStatus::Open]));
        assert_eq!((query.limit, query.page), (PAGE_SIZE, 1));
        assert_eq!(query.sort, Sort::default());
        assert!(view.problems.is_empty() && !view.is_filtered());
        assert_eq!(view.href(&[]), "tab=open");
    }

    #[test]
    fn every_parameter_reaches_the_lead_query() {
        let (view, query) = InboxView::from_query(
            "tab=rated&search=ada&formName=Contact&from=2026-03-01&to=2026-03-31&gclid=yes&fbp=no&sort=email:asc&page=2",
            ME,
        );
        assert_eq!(view.tab, LeadStatus::Rated);
        assert_eq!(query.status, Some(vec![LeadStatus::Rated]));
        assert_eq!(query.q, ["ada"]);
        assert_eq!(query.form_name.as_deref(), Some("Contact"));
        assert!(query.created_from.is_some() && query.created_to.is_some());
        assert_eq!(
            (query.gclid_exists, query.fbp_exists, query.cid_exists),
            (Some(true), Some(false), None)
        );
        assert_eq!(query.sort.field, SortField::Email);
        assert_eq!(query.page, 2);
        assert!(view.is_filtered());
        // An older link's `search` is written as `q`.
        let href = view.href(&[("page", "3")]);
        assert_eq!(
            href,
            "tab=rated&q=ada&formName=Contact&from=2026-03-01&to=2026-03-31&gclid=yes&fbp=no&sort=email%3Aasc&page=3"
        );
        assert!(
            !view.href(&[("tab", "lost")]).contains("page="),
            "a new tab starts at page 1"
        );
    }

    #[test]
    fn bad_values_are_dropped_alone_and_said() {
        let (view, query) = InboxView::from_query(
            "tab=done&search=a&from=yesterday&sort=nope&page=0&cid=maybe&assignee=ada",
            ME,
        );
        assert_eq!(view.tab, LeadStatus::Open);
        assert!(query.q.is_empty());
        assert_eq!(query.created_from, None);
        assert_eq!(query.sort, Sort::default());
        assert_eq!((query.page, query.cid_exists), (1, None));
        assert_eq!(view.problems.len(), 6, "{:?}", view.problems);
        assert!(view.search.is_empty() && view.from.is_empty() && view.assignee.is_empty());
        assert_eq!(query.assignee, None);
    }

    #[test]
    fn mine_is_the_open_leads_of_the_viewer_and_assignee_filters_any_tab() {
        let (view, query) = InboxView::from_query("tab=mine&assignee=none", ME);
        assert!(view.mine && view.tab == LeadStatus::Open);
        assert_eq!(query.status, Some(vec![LeadStatus::Open]));
        assert_eq!(query.assignee, Some(AssigneeFilter::User(ME)));
        assert_eq!(view.href(&[]), "tab=mine&assignee=none");
        assert_eq!(view.href(&[("tab", "rated")]), "tab=rated&assignee=none");
        let (view, query) = InboxView::from_query("tab=rated&assignee=7", ME);
        assert_eq!(query.assignee, Some(AssigneeFilter::User(UserId(7))));
        assert!(!view.mine && view.has_filter());
        let (_, query) = InboxView::from_query("assignee=none", ME);
        assert_eq!(query.assignee, Some(AssigneeFilter::Nobody));
    }

    #[test]
    fn sorting_a_column_again_turns_it_round() {
        let (view, _) = InboxView::from_query("", ME);
        assert_eq!(view.sort_by(SortField::CreatedAt), "createdAt:asc");
        assert_eq!(view.sort_by(SortField::Email), "email:asc");
        assert_eq!(view.sort_by(SortField::Price), "price:desc");
    }
}
