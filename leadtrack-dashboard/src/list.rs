//! The inbox of a project: tabs with counts, search and filters, sortable columns, pages,
//! rating several leads at once, and the count of leads that arrived since the page was
//! shown.

use askama::Template;
use chrono::{DateTime, Datelike, Utc};
use leadtrack_core::account::Membership;
use leadtrack_core::assignment::Assignee;
use leadtrack_core::draft::Draft;
use leadtrack_core::integration::Integrations;
use leadtrack_core::job::Trouble;
use leadtrack_core::label::{ConversionLabel, rateable};
use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::next_step::{NextStep, due_by};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::AssigneeFilter;
use leadtrack_core::request::query::SortDirection;
use leadtrack_core::saved_view::SavedView;
use leadtrack_core::store::Listed;
use leadtrack_core::types::{LeadId, LeadStatus, UserId};
use leadtrack_core::{Store, StoreError};
use leadtrack_core::{channel, matching};
use strum::VariantArray;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::attention::Shown;
use crate::columns::Col;
use crate::format;
use crate::next_step;
use crate::rating::BulkResult;
use crate::rating::{Held, RatingChoice, choices, display_name};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links, Route, Settings};
use crate::view::ViewLink;
use crate::view::{CLICK_IDS, InboxView, PAGE_SIZE, tabs};
use crate::viewer::Viewer;

/// A tab with its count.
pub(crate) struct Tab {
    pub(crate) name: &'static str,
    /// Its status (`open`, …), or `mine`: what the script finds its count by.
    pub(crate) key: &'static str,
    /// `None` when a `q` search's matches were too many to count.
    pub(crate) count: Option<u64>,
    pub(crate) href: String,
    pub(crate) current: bool,
}

/// A column heading, sortable or not.
pub(crate) struct Column {
    pub(crate) col: Col,
    pub(crate) name: &'static str,
    /// The view sorted by it, if it sorts.
    pub(crate) href: String,
    /// `ascending` or `descending` when the view is sorted by it.
    pub(crate) sorted: Option<&'static str>,
    /// Sorted by it, ascending.
    pub(crate) ascending: bool,
}

/// A column the chooser offers: its name, heading, and whether it is shown.
pub(crate) struct ColumnChoice {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) shown: bool,
}

/// A lead as its inbox row shows it, with its rating controls.
pub(crate) struct Row {
    pub(crate) id: LeadId,
    /// Its status, which a rating saved by the script moves in the tabs' counts.
    pub(crate) status: LeadStatus,
    pub(crate) created: String,
    pub(crate) created_exact: String,
    pub(crate) created_iso: String,
    pub(crate) name: String,
    pub(crate) email: String,
    pub(crate) phone: String,
    pub(crate) company: String,
    pub(crate) form: String,
    pub(crate) source: String,
    pub(crate) campaign: String,
    pub(crate) landing_page: String,
    /// The platforms whose click or browser id the lead carries: name, and what it has.
    pub(crate) badges: Vec<(&'static str, &'static str)>,
    /// The ratings to pick from (Open first), each with the platforms it goes to and
    /// whether this lead has what each needs.
    pub(crate) choices: Vec<RatingChoice>,
    /// The value of the choice the lead holds now.
    pub(crate) selected: String,
    /// The price as the input shows it (no currency).
    pub(crate) price: String,
    /// The rating waiting out its undo window, if the lead has one.
    pub(crate) held: Option<Held>,
    /// Why it is spam, in the Spam tab.
    pub(crate) spam_reason: Option<String>,
    /// The lead of the same person it duplicates.
    pub(crate) duplicate_of: Option<LeadId>,
    /// The row's rating form's one-time token.
    pub(crate) token: String,
    /// The rating shown is the lead's draft, not yet sent.
    pub(crate) draft: bool,
    /// The name of the member it is assigned to; empty: nobody.
    pub(crate) assignee: String,
    /// It is assigned to the viewer.
    pub(crate) mine: bool,
    /// The deliveries of its last rating that have not reached their platform.
    pub(crate) troubles: Vec<Shown>,
    /// Its next step.
    pub(crate) step: Option<next_step::Shown>,
}

/// A click-id filter of the filter form.
pub(crate) struct ClickFilter {
    pub(crate) name: &'static str,
    /// What people call it ("Google click").
    pub(crate) label: &'static str,
    /// Whether the lead must have it (`Some(true)`), lack it, or either.
    pub(crate) value: Option<bool>,
}

/// A filter of the filter panel picked from a list: form, source, medium, campaign, label.
pub(crate) struct Picker {
    /// The view's parameter.
    pub(crate) name: &'static str,
    pub(crate) label: &'static str,
    /// The first option's words, which filters nothing.
    pub(crate) any: &'static str,
    /// `(value, words)` of each option.
    pub(crate) options: Vec<(String, String)>,
    /// The view's value; empty for any.
    pub(crate) selected: String,
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    layout: Layout,
    project_id: String,
    view: InboxView,
    tabs: Vec<Tab>,
    /// The other tabs the search and filters find leads in: name, count and link, for a
    /// tab that finds none.
    elsewhere: Vec<(&'static str, u64, String)>,
    tab_name: &'static str,
    tab_sentence: &'static str,
    open_tab: bool,
    spam_tab: bool,
    columns: Vec<Column>,
    /// Every column, for the chooser.
    column_choices: Vec<ColumnChoice>,
    rows: Vec<Row>,
    /// How many leads the view holds: "25 leads", or "more than 1000 leads".
    total: String,
    page: u32,
    /// `None` when the view's leads were too many to count.
    pages: Option<u64>,
    previous: Option<String>,
    next: Option<String>,
    click_filters: Vec<ClickFilter>,
    /// The filters picked from a list.
    pickers: Vec<Picker>,
    /// The saved views, beside the tabs.
    views: Vec<ViewLink>,
    /// The name of the saved view shown, if one is.
    view_name: String,
    /// The query string the Views panel saves.
    save_query: String,
    /// Quick date ranges: name, the view with it, whether the view has it.
    presets: Vec<(&'static str, String, bool)>,
    /// A filter of the filter panel is set: its button says so.
    has_filter: bool,
    /// The viewer may rate and sort out spam (not a viewer).
    can_rate: bool,
    /// The viewer owns the project (and may add its first labels).
    owner: bool,
    /// The viewer may export the view ([`Membership::may_export`]).
    can_export: bool,
    /// The price column is shown (else each row's form carries the price as it is).
    price_shown: bool,
    labels: Vec<(String, String)>,
    currency: String,
    csrf: String,
    back: String,
    /// The bulk rating form's one-time token.
    form_token: String,
    /// The Send N ratings form's one-time token.
    send_token: String,
    /// How many drafts the project has, to send.
    drafts: usize,
    /// The project reviews ratings before sending them.
    review: bool,
    since: i64,
    export: String,
    bulk: Option<BulkResult>,
    /// The members who may take leads: `(user id, name)`, for the bulk assignment.
    takers: Vec<(String, String)>,
    /// The viewer may take leads (the rows offer "Take").
    can_take: bool,
    /// The Mine tab is shown.
    mine_tab: bool,
    /// The view without its search and filters.
    clear: String,
    /// How many leads need attention (their last rating has not reached a platform).
    attention: u64,
}

fn tab_words(status: LeadStatus) -> (&'static str, &'static str) {
    match status {
        LeadStatus::Open => ("Open", "New leads and leads reset to open: rate them."),
        LeadStatus::Pending => (
            "Pending",
            "Rated leads whose conversions are being sent to the platforms.",
        ),
        LeadStatus::Rated => ("Rated", "Leads rated with a label that marks them done."),
        LeadStatus::Lost => ("Lost", "Leads that did not buy."),
        LeadStatus::Spam => (
            "Spam",
            "Junk held out of the inbox: never sent to the platforms or counted.",
        ),
    }
}

/// A platform's badge: its name, the attribution ids that earn it, and what they are.
const BADGES: [(&str, &[&str], &str); 9] = [
    (
        "Google",
        &["gclid", "gbraid", "wbraid"],
        "Has a Google Ads click id",
    ),
    // The raw `fbclid` of an ad's link counts as Meta's click id, as its cookie does.
    (
        "Meta",
        &["fbc", "fbclid", "fbp"],
        "Has Meta's browser or click id",
    ),
    (
        "Microsoft",
        &["msclkid"],
        "Has a Microsoft Advertising click id",
    ),
    ("LinkedIn", &["li_fat_id"], "Has a LinkedIn click id"),
    (
        "TikTok",
        &["ttclid", "_ttp"],
        "Has TikTok's click or browser id",
    ),
    (
        "Reddit",
        &["rdt_cid", "_rdt_uuid"],
        "Has Reddit's click or browser id",
    ),
    (
        "Snapchat",
        &["ScCid", "_scid"],
        "Has Snapchat's click or browser id",
    ),
    (
        "Pinterest",
        &["epik", "_epik"],
        "Has Pinterest's click or browser id",
    ),
    ("X", &["twclid"], "Has an X click id"),
];

/// What a row needs besides its lead: the labels, the integrations and the project.
struct RowContext<'a> {
    viewer: UserId,
    labels: &'a [ConversionLabel],
    integrations: &'a Integrations,
    project: &'a leadtrack_core::project::Project,
    now: DateTime<Utc>,
}

fn row(lead: &StoredLead, context: &RowContext<'_>) -> Row {
    let data = &lead.data;
    let text = |value: Option<&str>| value.unwrap_or_default().to_owned();
    let touches = channel::touches(data);
    let source = match channel::first_and_last(&touches) {
        Some((first, last)) if touches.len() > 1 => format!("{} → {}", first.label(), last.label()),
        Some((first, _)) => first.label(),
        None => String::new(),
    };
    let last = touches.last();
    let has = |name: &str| data.attribution(name).is_some();
    let lost = &context.project.lost_mapping;
    let mut choices = choices(lead, context.labels, context.integrations, lost);
    // Open heads the list, as the lead's state before any rating.
    choices.rotate_right(1);
    let (assignee, mine) = crate::assignees::shown(lead.assignee.as_ref(), context.viewer);
    Row {
        id: lead.id,
        status: lead.status,
        created: format::relative(&lead.created_at, context.now),
        created_exact: format::exact(&lead.created_at),
        created_iso: format::iso(&lead.created_at),
        name: display_name(lead),
        email: text(data.user("email")),
        phone: text(data.user("phone")),
        company: text(data.user("companyName")),
        form: text(data.form_name()),
        source,
        campaign: text(last.and_then(|touch| touch.campaign.as_deref())),
        landing_page: text(last.and_then(|touch| touch.landing_page.as_deref())),
        badges: BADGES
            .iter()
            .filter(|(_, ids, _)| ids.iter().any(|id| has(id)))
            .map(|(name, _, what)| (*name, *what))
            .collect(),
        choices,
        selected: lead
            .conversion_id
            .map_or_else(|| "open".to_owned(), |id| id.to_string()),
        price: lead.price.map(format::money).unwrap_or_default(),
        held: None,
        spam_reason: lead.spam_reason.map(|reason| reason.to_string()),
        duplicate_of: lead.duplicate_of,
        token: uuid::Uuid::new_v4().to_string(),
        draft: false,
        assignee,
        mine,
        troubles: Vec::new(),
        step: None,
    }
}

/// `row` showing `draft`, the lead's rating waiting to be reviewed.
fn with_draft(row: Row, draft: Option<&Draft>) -> Row {
    match draft {
        Some(draft) => Row {
            selected: draft.conversion_id.to_string(),
            price: draft.price.map(format::money).unwrap_or_default(),
            draft: true,
            ..row
        },
        None => row,
    }
}

/// For each of `leads`, its rating still in the undo window: only pending leads have one,
/// so only their jobs are read.
async fn held<S: Store>(
    store: &S,
    project: leadtrack_core::ProjectId,
    leads: &[StoredLead],
    now: DateTime<Utc>,
) -> Result<Vec<Option<Held>>, StoreError> {
    let mut held = Vec::with_capacity(leads.len());
    for lead in leads {
        if lead.status != LeadStatus::Pending {
            held.push(None);
            continue;
        }
        let jobs = store.lead_jobs(project, lead.id).await?;
        held.push(
            jobs.first()
                .and_then(|record| Held::of(record, String::new(), now)),
        );
    }
    Ok(held)
}

fn columns(view: &InboxView, shown: &[Col]) -> Vec<Column> {
    let ascending = view.sort.direction == SortDirection::Asc;
    shown
        .iter()
        .map(|col| {
            let field = col.sort_field();
            Column {
                col: *col,
                name: col.title(),
                href: field.map_or_else(String::new, |field| {
                    view.href(&[("sort", &view.sort_by(field))])
                }),
                sorted: field
                    .filter(|field| view.sort.field == *field)
                    .map(|_| if ascending { "ascending" } else { "descending" }),
                ascending,
            }
        })
        .collect()
}

/// What an inbox page reads from the store.
struct Found {
    page: LeadPage,
    /// Each tab's count, in [`tabs`] order (`None`: too many to count).
    counts: Vec<Option<u64>>,
    labels: Vec<ConversionLabel>,
    integrations: Integrations,
    drafts: Vec<Draft>,
    /// The values the pickers offer: forms, sources, mediums and campaigns.
    listed: [Vec<String>; 4],
    /// Each lead's rating waiting out its undo window.
    held: Vec<Option<Held>>,
    /// The troubled deliveries of the page's leads' last ratings.
    troubles: Vec<Trouble>,
    /// How many of the project's leads need attention ([`attention`](crate::attention)).
    attention: u64,
    /// The next steps of the page's leads.
    steps: Vec<(LeadId, NextStep)>,
    /// How many next steps are due today or overdue (at most
    /// [`leadtrack_core::next_step::DUE_LISTED`]).
    due: usize,
    /// The views the viewer sees.
    saved: Vec<SavedView>,
    /// The members who may take leads.
    takers: Vec<Assignee>,
    /// The Mine tab's count, when the viewer may take leads (`None` inside: too many
    /// to count).
    mine: Option<Option<u64>>,
}

async fn read<S: Store>(
    store: &S,
    (project, user): (leadtrack_core::ProjectId, UserId),
    (view, query): (&InboxView, &LeadQuery),
    now: DateTime<Utc>,
) -> Result<Found, StoreError> {
    // The status tabs count everybody's leads, and Mine the viewer's open ones, each with
    // the view's other filters.
    let everybody = LeadQuery {
        assignee: if view.mine { None } else { query.assignee },
        ..query.clone()
    };
    // A page counted only to its bound leaves the tabs, which count more of the same
    // matches, past it too: they show no counts, so none are counted.
    let (page, counts) = store.inbox_page(project, query, &everybody).await?;
    let counts = match counts {
        None => LeadStatus::VARIANTS.iter().map(|s| (*s, None)).collect(),
        Some(counts) => counted(&everybody, counts),
    };
    let takers = crate::assignees::takers(store, project).await?;
    let mine = match takers.iter().any(|taker| taker.id == user) {
        true => {
            let theirs = LeadQuery {
                assignee: Some(AssigneeFilter::User(user)),
                ..everybody.clone()
            };
            let counts = counted(&theirs, store.status_counts(project, &theirs).await?);
            counts
                .iter()
                .find(|(status, _)| *status == LeadStatus::Open)
                .map(|(_, count)| *count)
        }
        false => None,
    };
    let held = held(store, project, &page.leads, now).await?;
    let ids: Vec<LeadId> = page.leads.iter().map(|lead| lead.id).collect();
    Ok(Found {
        troubles: store.lead_troubles(project, &ids).await?,
        attention: store.troubled_leads(project).await?,
        steps: store.next_steps(project, &ids).await?,
        due: store.due_steps(project, due_by(now), None).await?.len(),
        takers,
        mine,
        counts: counts.into_iter().map(|(_, count)| count).collect(),
        labels: store.labels(project).await?,
        integrations: store.integrations(project).await?,
        drafts: store.drafts(project).await?,
        listed: [
            store.listed_values(project, Listed::FormName).await?,
            store.listed_values(project, Listed::Source).await?,
            store.listed_values(project, Listed::Medium).await?,
            store.listed_values(project, Listed::Campaign).await?,
        ],
        saved: store.saved_views(project, user).await?,
        held,
        page,
    })
}

/// Counts per status of `query`, each `None` when they stopped at the query's bound
/// ([`LeadQuery::counted`]): a tab then shows no count rather than a wrong one.
fn counted(query: &LeadQuery, counts: Vec<(LeadStatus, u64)>) -> Vec<(LeadStatus, Option<u64>)> {
    let all = query.counted_all(counts.iter().map(|(_, count)| count).sum());
    counts
        .into_iter()
        .map(|(status, count)| (status, all.then_some(count)))
        .collect()
}

/// The assignee options of the filter panel: nobody, then each member who may take leads.
fn assignees(takers: &[Assignee]) -> Vec<(String, String)> {
    let nobody = ("none".to_owned(), "Nobody".to_owned());
    std::iter::once(nobody)
        .chain(takers.iter().map(|t| (t.id.0.to_string(), t.name.clone())))
        .collect()
}

/// The pickers of the filter panel: the form (its case variants as one), the first
/// touch's source, medium and campaign, the label and the assignee. A shared link's value that the
/// project lacks is offered too, so the page says what it filters by.
fn pickers(found: &Found, view: &InboxView) -> Vec<Picker> {
    let [forms, sources, mediums, campaigns] = &found.listed;
    let mut form_options: Vec<(String, String)> = Vec::new();
    for name in forms {
        let key = matching::form_key(name);
        if !form_options.iter().any(|(known, _)| *known == key) {
            form_options.push((key, name.clone()));
        }
    }
    let same = |values: &[String]| values.iter().map(|v| (v.clone(), v.clone())).collect();
    let mut labels: Vec<(String, String)> = found
        .labels
        .iter()
        .map(|label| (label.id.to_string(), label.name.clone()))
        .collect();
    labels.push(("lost".to_owned(), "Lost".to_owned()));
    [
        ("form", "Form", "Any form", form_options, &view.form),
        (
            "source",
            "Source",
            "Any source",
            same(sources),
            &view.source,
        ),
        (
            "medium",
            "Medium",
            "Any medium",
            same(mediums),
            &view.medium,
        ),
        (
            "campaign",
            "Campaign",
            "Any campaign",
            same(campaigns),
            &view.campaign,
        ),
        ("label", "Label", "Any label", labels, &view.label),
        (
            "assignee",
            "Assigned to",
            "Anybody",
            assignees(&found.takers),
            &view.assignee,
        ),
    ]
    .into_iter()
    .map(|(name, label, any, mut options, selected)| {
        if !selected.is_empty() && !options.iter().any(|(value, _)| value == selected) {
            options.insert(0, (selected.clone(), selected.clone()));
        }
        Picker {
            name,
            label,
            any,
            options,
            selected: selected.clone(),
        }
    })
    .collect()
}

/// The quick date ranges of the filter panel, ending `today` (UTC): each as the view's
/// link with it, and whether the view shows it now.
fn presets(view: &InboxView, today: chrono::NaiveDate) -> Vec<(&'static str, String, bool)> {
    let first_of_month = today.with_day(1).unwrap_or(today);
    [
        ("Today", today),
        ("Last 7 days", today - chrono::Days::new(6)),
        ("Last 30 days", today - chrono::Days::new(29)),
        ("This month", first_of_month),
    ]
    .into_iter()
    .map(|(name, from)| {
        let (from, to) = (from.to_string(), today.to_string());
        let href = view.href(&[("from", &from), ("to", &to), ("page", "1")]);
        (name, format!("?{href}"), view.from == from && view.to == to)
    })
    .collect()
}

/// The tabs of `view`'s inbox, with their `counts`; Mine after Open, with its count, for a
/// viewer who may take leads.
fn tab_list(
    (view, links): (&InboxView, Links<'_>),
    counts: &[Option<u64>],
    mine: Option<Option<u64>>,
    due: usize,
) -> Vec<Tab> {
    let mut list: Vec<Tab> = tabs()
        .iter()
        .zip(counts)
        .map(|(status, count)| Tab {
            name: tab_words(*status).0,
            key: status.as_ref(),
            count: *count,
            href: format!("?{}", view.href(&[("tab", status.as_ref())])),
            current: *status == view.tab && !view.mine,
        })
        .collect();
    if let Some(count) = mine {
        let tab = Tab {
            name: "Mine",
            key: "mine",
            count,
            href: format!("?{}", view.href(&[("tab", "mine")])),
            current: view.mine,
        };
        list.insert(1, tab);
    }
    // Due opens a page of its own: next steps, not statuses.
    let due = Tab {
        name: "Due",
        key: "due",
        count: Some(due as u64),
        href: links.leads(Leads::Due),
        current: false,
    };
    list.insert(if mine.is_some() { 2 } else { 1 }, due);
    list
}

/// The rows of the page, each with its held rating and its draft.
fn rows(found: &Found, context: &RowContext<'_>) -> Vec<Row> {
    found
        .page
        .leads
        .iter()
        .zip(&found.held)
        .map(|(lead, held)| {
            let draft = found.drafts.iter().find(|draft| draft.lead_id == lead.id);
            let held = held.clone();
            let troubles = found
                .troubles
                .iter()
                .filter(|trouble| trouble.job.lead_id == lead.id)
                .map(|trouble| Shown::of(trouble, context.now))
                .collect();
            let step = found
                .steps
                .iter()
                .find(|(id, _)| *id == lead.id)
                .map(|(_, step)| next_step::Shown::of(step, context.now));
            with_draft(
                Row {
                    held,
                    troubles,
                    step,
                    ..row(lead, context)
                },
                draft,
            )
        })
        .collect()
}

/// The inbox page of `view` (and its `query`), with `bulk`'s result above it when a bulk
/// rating just ran: `400` when that rating had a problem of the form.
pub(crate) async fn page<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: &Membership,
    (view, query): (InboxView, LeadQuery),
    bulk: Option<BulkResult>,
) -> Response {
    let status = match bulk.as_ref().is_some_and(|bulk| bulk.problem.is_some()) {
        true => StatusCode::BAD_REQUEST,
        false => StatusCode::OK,
    };
    let project = &membership.project;
    let now = Utc::now();
    let found = match read(store, (project.id, viewer.user.id), (&view, &query), now).await {
        Ok(found) => found,
        Err(err) => return render::store_failure(err, Some(viewer)),
    };
    let total = found.page.total;
    let pages = total.div_ceil(u64::from(PAGE_SIZE)).max(1);
    let page_href = |page: u32| format!("?{}", view.href(&[("page", &page.to_string())]));
    let (tab_name, tab_sentence) = match view.mine {
        true => ("My", "Open leads assigned to you: call them first."),
        false => tab_words(view.tab),
    };
    // A saved view opened shows its own columns, if it keeps them.
    let opened = found
        .saved
        .iter()
        .find(|saved| view.saved == Some(saved.id));
    let columns_chosen = match opened.and_then(|saved| saved.columns.as_deref()) {
        Some(columns) => Some(columns),
        None => viewer.user.preferences.inbox_columns.as_deref(),
    };
    let shown = Col::chosen(columns_chosen);
    let context = RowContext {
        viewer: viewer.user.id,
        labels: &found.labels,
        integrations: &found.integrations,
        project,
        now,
    };
    let links = Links::new(&project.public_id);
    let tabs = tab_list((&view, links), &found.counts, found.mine, found.due);
    let page = InboxPage {
        layout: Layout::for_project(format!("{tab_name} leads"), viewer, membership, "leads"),
        project_id: project.public_id.clone(),
        elsewhere: tabs
            .iter()
            // Due counts next steps, not the search's matches.
            .filter(|tab| !tab.current && tab.key != "due")
            .filter_map(|tab| Some((tab.name, tab.count.filter(|n| *n > 0)?, tab.href.clone())))
            .collect(),
        tabs,
        tab_name,
        tab_sentence,
        open_tab: view.tab == LeadStatus::Open,
        spam_tab: view.tab == LeadStatus::Spam,
        columns: columns(&view, &shown),
        column_choices: column_choices(&shown),
        rows: rows(&found, &context),
        drafts: found.drafts.len(),
        review: project.review_ratings,
        total: total_text(&found.page),
        page: view.page,
        pages: (!found.page.total_is_lower_bound).then_some(pages),
        previous: (view.page > 1).then(|| page_href(view.page - 1)),
        next: (u64::from(view.page) < pages).then(|| page_href(view.page + 1)),
        click_filters: click_filters(&view),
        pickers: pickers(&found, &view),
        views: found
            .saved
            .iter()
            .map(|saved| ViewLink::of(saved, &view, (viewer.user.id, membership.role)))
            .collect(),
        view_name: opened.map(|saved| saved.name.clone()).unwrap_or_default(),
        save_query: InboxView {
            saved: None,
            ..view.clone()
        }
        .href(&[]),
        presets: presets(&view, now.date_naive()),
        has_filter: view.has_filter(),
        price_shown: shown.contains(&Col::Price),
        can_rate: membership.role.allows(leadtrack_core::Role::Member),
        owner: membership.role.allows(leadtrack_core::Role::Owner),
        can_export: membership.may_export(),
        labels: rateable(&found.labels)
            .map(|label| (label.id.to_string(), label.name.clone()))
            .collect(),
        currency: project.currency.clone(),
        csrf: viewer.csrf(),
        back: view.href(&[("page", &view.page.to_string())]),
        form_token: uuid::Uuid::new_v4().to_string(),
        send_token: uuid::Uuid::new_v4().to_string(),
        since: now.timestamp_millis(),
        export: view.href(&[]),
        takers: found
            .takers
            .iter()
            .map(|t| (t.id.0.to_string(), t.name.clone()))
            .collect(),
        can_take: found.mine.is_some(),
        mine_tab: view.mine,
        clear: format!("tab={}", if view.mine { "mine" } else { view.tab.as_ref() }),
        attention: found.attention,
        view,
        bulk,
    };
    render::page(status, &page)
}

/// Every column, and whether it is `shown`, for the columns' menu.
fn column_choices(shown: &[Col]) -> Vec<ColumnChoice> {
    Col::VARIANTS
        .iter()
        .map(|col| ColumnChoice {
            name: col.as_ref(),
            title: col.title(),
            shown: shown.contains(col),
        })
        .collect()
}

/// The page's total in words: `1 lead`, `250 leads`, or `more than 20000 leads` when the
/// count stopped one past its bound, to tell that more match.
fn total_text(page: &LeadPage) -> String {
    match (page.total_is_lower_bound, page.total) {
        (true, total) => format!("more than {} leads", total - 1),
        (false, 1) => "1 lead".to_owned(),
        (false, total) => format!("{total} leads"),
    }
}

/// The click id filters, each as `view` sets it.
fn click_filters(view: &InboxView) -> Vec<ClickFilter> {
    CLICK_IDS
        .iter()
        .zip(view.click_ids)
        .map(|((name, label), value)| ClickFilter { name, label, value })
        .collect()
}

/// How many of the project's leads were created at or after `since` (milliseconds since
/// the Unix epoch), for the inbox's "new leads" bar.
pub(crate) async fn new_since<S: Store>(
    store: &S,
    membership: &Membership,
    since: i64,
) -> Result<u64, StoreError> {
    let query = LeadQuery {
        created_from: DateTime::from_timestamp_millis(since),
        limit: 1,
        ..LeadQuery::default()
    };
    Ok(store.list_leads(membership.project.id, &query).await?.total)
}
