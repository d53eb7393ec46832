//! The dashboard's routes, declared once: every page and form with its method and path. The
//! dispatch (`crate::handle`), the `405` answers, the paths the dashboard claims and the
//! metrics' route labels all come from [`ROUTES`].

use std::fmt::Display;
use std::sync::LazyLock;

use leadtrack_core::types::LeadId;
use leadtrack_http::{Found, Router};
use warp::http::Method;

/// A page or a form of the dashboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// The stylesheet.
    Stylesheet,
    /// The inbox's script.
    Script,
    /// The site's icon.
    Favicon,
    /// The sign-in form.
    SignInForm,
    /// Signing in.
    SignIn,
    /// Signing out.
    SignOut,
    /// An invitation's page (`{token}`).
    Invitation,
    /// Taking an invitation.
    AcceptInvitation,
    /// The form that asks for a password-reset link.
    ForgotForm,
    /// Asking for one.
    Forgot,
    /// A reset link's form (`{token}`).
    ResetForm,
    /// Setting the new password.
    Reset,
    /// The user's own profile.
    Profile(Profile),
    /// The projects the viewer belongs to.
    Projects,
    /// One project: on to its inbox.
    Project,
    /// The inbox and a lead's page (`{project}`, `{lead}`).
    Leads(Leads),
    /// The inbox's view as CSV.
    Export,
    /// Reports.
    Reports,
    /// The project's settings, for owners.
    Settings(Settings),
    /// A platform's answer to signing in with it.
    OAuthCallback,
    /// Saving the inbox's view with a name.
    SaveView,
    /// Deleting a saved view (`{id}`).
    DeleteView,
    /// Saving the viewer's inbox columns.
    SaveColumns,
    /// Saving the viewer's colour scheme.
    SaveTheme,
}

/// The pages and forms under `/profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    /// The profile.
    Page,
    /// Renaming.
    Name,
    /// Choosing what one is alerted of in a project.
    Alerts,
    /// Asking for a new email, confirmed by a link sent to it.
    Email,
    /// An email confirmation's page (`{token}`).
    ConfirmEmailForm,
    /// Confirming it.
    ConfirmEmail,
    /// Changing the password.
    Password,
    /// Signing out every other session.
    EndOtherSessions,
}

/// The pages and forms under `/projects/{project}/leads`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leads {
    /// The inbox.
    List,
    /// How many leads arrived since the inbox was shown.
    New,
    /// The leads whose last rating has not reached a platform.
    Attention,
    /// The leads whose next step is due today or overdue.
    Due,
    /// Rating the ticked leads.
    BulkRate,
    /// A lead's page.
    Lead,
    /// Rating one lead.
    Rate,
    /// Undoing a lead's rating inside its window.
    Undo,
    /// Sending a lead's failed deliveries again (owners).
    Retry,
    /// Undoing a bulk rating inside its window.
    BulkUndo,
    /// Sending the project's draft ratings as one batch.
    SendDrafts,
    /// Marking the posted leads as spam.
    MarkSpam,
    /// Taking the posted leads out of spam.
    NotSpam,
    /// Assigning the posted leads.
    BulkAssign,
    /// Assigning one lead.
    Assign,
    /// Correcting a lead's contact details.
    CorrectContact,
    /// Setting a lead's next step, or marking it done.
    NextStep,
    /// Trusting a lead's address or email domain (owners).
    Trust,
    /// The page that asks whether to delete a lead (owners).
    AskDelete,
    /// Deleting a lead (owners).
    Delete,
    /// The page that asks whether to erase a lead's person (owners).
    AskErase,
    /// Erasing a lead's person at their request (owners).
    Erase,
    /// Everything kept about a lead's person, as a JSON file (owners).
    PersonData,
    /// Commenting on a lead.
    Comment,
    /// Changing one's comment (`{id}`).
    EditComment,
    /// Deleting one's comment.
    DeleteComment,
}

/// The pages and forms under `/projects/{project}/settings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settings {
    /// On to the labels.
    Root,
    /// The labels.
    Labels,
    /// Creating a label.
    CreateLabel,
    /// Adding the starter labels to a project that has none.
    AddStarterLabels,
    /// A label's form (`{id}`).
    Label,
    /// Changing a label.
    UpdateLabel,
    /// Moving a label one place up or down in the project's order.
    MoveLabel,
    /// Archiving a label, or restoring it.
    ArchiveLabel,
    /// Deleting a label never used.
    DeleteLabel,
    /// One test of a label's conversion to a platform (`{kind}`), answered on its page.
    TestLabel,
    /// The integrations' cards.
    Integrations,
    /// Connecting or updating an integration (`{kind}`).
    SaveIntegration,
    /// Disconnecting one.
    DisconnectIntegration,
    /// Off to a platform's consent page.
    SignIn,
    /// The account picked once signed in.
    PickAccount,
    /// One test event.
    TestIntegration,
    /// Sending its failed deliveries of the last 30 days again.
    RetryIntegration,
    /// The lead sources' cards.
    Sources,
    /// Setting a lead source up (`{kind}`).
    SaveSource,
    /// Removing one.
    RemoveSource,
    /// The inbound webhooks of form tools.
    Inbound,
    /// Making one.
    AddInbound,
    /// Trying a sample post against its mapping, or saving the mapping (`{id}`).
    SaveInbound,
    /// Removing one (`{id}`).
    RemoveInbound,
    /// Importing leads from a CSV file: the upload form.
    Import,
    /// A file uploaded.
    Upload,
    /// An upload's columns and preview, or its import's progress (`{id}`).
    ImportFile,
    /// Importing it with the columns picked (`{id}`).
    StartImport,
    /// Ad spend: the import form, the currency rates and the spend kept.
    Spend,
    /// A file of spend uploaded.
    UploadSpend,
    /// The currency rates saved.
    SaveRates,
    /// The CRM syncs.
    Crm,
    /// Connecting or changing one (`{kind}`).
    SaveCrm,
    /// Disconnecting one.
    DisconnectCrm,
    /// The lead webhooks.
    Webhooks,
    /// Adding one.
    AddWebhook,
    /// Removing one (`{id}`).
    RemoveWebhook,
    /// The API keys.
    Keys,
    /// Creating one.
    CreateKey,
    /// Revoking one.
    RevokeKey,
    /// The members.
    Members,
    /// Adding one.
    AddMember,
    /// Changing a role (`{user}`).
    ChangeRole,
    /// Allowing a member to export, or no longer.
    MemberExport,
    /// Removing one.
    RemoveMember,
    /// Sending an invitation again with a new link (`{id}`).
    ResendInvitation,
    /// Revoking one.
    RevokeInvitation,
    /// The audit log.
    Audit,
    /// The project's own settings.
    Project,
    /// Saving them.
    SaveProject,
    /// The chat channels.
    Alerts,
    /// Setting one (`{kind}`).
    SaveChat,
    /// Removing one.
    RemoveChat,
    /// The round-robin rule.
    Assignment,
    /// Saving it.
    SaveAssignment,
    /// The spam settings.
    Spam,
    /// Saving them.
    SaveSpam,
    /// The install snippet.
    Install,
    /// Creating a test lead.
    TestLead,
}

/// Every route of the dashboard. `HEAD` finds the `GET` routes.
pub(crate) static ROUTES: LazyLock<Router<Route>> = LazyLock::new(|| {
    use Method as M;
    use Profile as P;
    use Settings as S;
    Router::new(
        [
            (M::GET, "/assets/app.css", Route::Stylesheet),
            (M::GET, "/assets/app.js", Route::Script),
            (M::GET, "/favicon.ico", Route::Favicon),
            (M::GET, "/login", Route::SignInForm),
            (M::POST, "/login", Route::SignIn),
            (M::POST, "/logout", Route::SignOut),
            (M::GET, "/invitations/{token}", Route::Invitation),
            (M::POST, "/invitations/{token}", Route::AcceptInvitation),
            (M::GET, "/password/forgot", Route::ForgotForm),
            (M::POST, "/password/forgot", Route::Forgot),
            (M::GET, "/password/reset/{token}", Route::ResetForm),
            (M::POST, "/password/reset/{token}", Route::Reset),
            (M::GET, "/profile", Route::Profile(P::Page)),
            (M::POST, "/profile/name", Route::Profile(P::Name)),
            (M::POST, "/profile/alerts", Route::Profile(P::Alerts)),
            (M::POST, "/profile/email", Route::Profile(P::Email)),
            (
                M::GET,
                "/profile/email/{token}",
                Route::Profile(P::ConfirmEmailForm),
            ),
            (
                M::POST,
                "/profile/email/{token}",
                Route::Profile(P::ConfirmEmail),
            ),
            (M::POST, "/profile/password", Route::Profile(P::Password)),
            (
                M::POST,
                "/profile/sessions/end-others",
                Route::Profile(P::EndOtherSessions),
            ),
            (M::POST, "/preferences/columns", Route::SaveColumns),
            (M::POST, "/preferences/theme", Route::SaveTheme),
            (M::GET, "/", Route::Projects),
            (M::GET, "/projects/{project}", Route::Project),
            (
                M::GET,
                "/projects/{project}/leads",
                Route::Leads(Leads::List),
            ),
            (
                M::GET,
                "/projects/{project}/leads/new",
                Route::Leads(Leads::New),
            ),
            (
                M::GET,
                "/projects/{project}/leads/attention",
                Route::Leads(Leads::Attention),
            ),
            (
                M::GET,
                "/projects/{project}/leads/due",
                Route::Leads(Leads::Due),
            ),
            (
                M::POST,
                "/projects/{project}/leads/rate",
                Route::Leads(Leads::BulkRate),
            ),
            (
                M::POST,
                "/projects/{project}/leads/undo",
                Route::Leads(Leads::BulkUndo),
            ),
            (
                M::POST,
                "/projects/{project}/leads/send-drafts",
                Route::Leads(Leads::SendDrafts),
            ),
            (
                M::POST,
                "/projects/{project}/leads/spam",
                Route::Leads(Leads::MarkSpam),
            ),
            (
                M::POST,
                "/projects/{project}/leads/not-spam",
                Route::Leads(Leads::NotSpam),
            ),
            (
                M::POST,
                "/projects/{project}/leads/assign",
                Route::Leads(Leads::BulkAssign),
            ),
            (
                M::GET,
                "/projects/{project}/leads/{lead}",
                Route::Leads(Leads::Lead),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/assign",
                Route::Leads(Leads::Assign),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/contact",
                Route::Leads(Leads::CorrectContact),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/next-step",
                Route::Leads(Leads::NextStep),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/rate",
                Route::Leads(Leads::Rate),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/undo",
                Route::Leads(Leads::Undo),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/retry",
                Route::Leads(Leads::Retry),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/trust",
                Route::Leads(Leads::Trust),
            ),
            (
                M::GET,
                "/projects/{project}/leads/{lead}/delete",
                Route::Leads(Leads::AskDelete),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/delete",
                Route::Leads(Leads::Delete),
            ),
            (
                M::GET,
                "/projects/{project}/leads/{lead}/erase",
                Route::Leads(Leads::AskErase),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/erase",
                Route::Leads(Leads::Erase),
            ),
            (
                M::GET,
                "/projects/{project}/leads/{lead}/person.json",
                Route::Leads(Leads::PersonData),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/comments",
                Route::Leads(Leads::Comment),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/comments/{id}",
                Route::Leads(Leads::EditComment),
            ),
            (
                M::POST,
                "/projects/{project}/leads/{lead}/comments/{id}/delete",
                Route::Leads(Leads::DeleteComment),
            ),
            (M::GET, "/projects/{project}/leads.csv", Route::Export),
            (M::POST, "/projects/{project}/views", Route::SaveView),
            (
                M::POST,
                "/projects/{project}/views/{id}/delete",
                Route::DeleteView,
            ),
            (M::GET, "/projects/{project}/reports", Route::Reports),
            (
                M::GET,
                "/projects/{project}/settings",
                Route::Settings(S::Root),
            ),
            (
                M::GET,
                "/projects/{project}/settings/labels",
                Route::Settings(S::Labels),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels",
                Route::Settings(S::CreateLabel),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/starters",
                Route::Settings(S::AddStarterLabels),
            ),
            (
                M::GET,
                "/projects/{project}/settings/labels/{id}",
                Route::Settings(S::Label),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/{id}",
                Route::Settings(S::UpdateLabel),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/{id}/move",
                Route::Settings(S::MoveLabel),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/{id}/archive",
                Route::Settings(S::ArchiveLabel),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/{id}/test/{kind}",
                Route::Settings(S::TestLabel),
            ),
            (
                M::POST,
                "/projects/{project}/settings/labels/{id}/delete",
                Route::Settings(S::DeleteLabel),
            ),
            (
                M::GET,
                "/projects/{project}/settings/integrations",
                Route::Settings(S::Integrations),
            ),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}",
                Route::Settings(S::SaveIntegration),
            ),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}/disconnect",
                Route::Settings(S::DisconnectIntegration),
            ),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}/sign-in",
                Route::Settings(S::SignIn),
            ),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}/account",
                Route::Settings(S::PickAccount),
            ),
            (M::GET, "/oauth/callback", Route::OAuthCallback),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}/test",
                Route::Settings(S::TestIntegration),
            ),
            (
                M::POST,
                "/projects/{project}/settings/integrations/{kind}/retry",
                Route::Settings(S::RetryIntegration),
            ),
            (
                M::GET,
                "/projects/{project}/settings/crm",
                Route::Settings(S::Crm),
            ),
            (
                M::POST,
                "/projects/{project}/settings/crm/{kind}",
                Route::Settings(S::SaveCrm),
            ),
            (
                M::POST,
                "/projects/{project}/settings/crm/{kind}/disconnect",
                Route::Settings(S::DisconnectCrm),
            ),
            (
                M::GET,
                "/projects/{project}/settings/webhooks",
                Route::Settings(S::Webhooks),
            ),
            (
                M::POST,
                "/projects/{project}/settings/webhooks",
                Route::Settings(S::AddWebhook),
            ),
            (
                M::POST,
                "/projects/{project}/settings/webhooks/{id}/remove",
                Route::Settings(S::RemoveWebhook),
            ),
            (
                M::GET,
                "/projects/{project}/settings/keys",
                Route::Settings(S::Keys),
            ),
            (
                M::POST,
                "/projects/{project}/settings/keys",
                Route::Settings(S::CreateKey),
            ),
            (
                M::POST,
                "/projects/{project}/settings/keys/revoke",
                Route::Settings(S::RevokeKey),
            ),
            (
                M::GET,
                "/projects/{project}/settings/members",
                Route::Settings(S::Members),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members",
                Route::Settings(S::AddMember),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members/{user}",
                Route::Settings(S::ChangeRole),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members/{user}/remove",
                Route::Settings(S::RemoveMember),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members/{user}/export",
                Route::Settings(S::MemberExport),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members/invitations/{id}/resend",
                Route::Settings(S::ResendInvitation),
            ),
            (
                M::POST,
                "/projects/{project}/settings/members/invitations/{id}/revoke",
                Route::Settings(S::RevokeInvitation),
            ),
            (
                M::GET,
                "/projects/{project}/settings/audit",
                Route::Settings(S::Audit),
            ),
            (
                M::GET,
                "/projects/{project}/settings/project",
                Route::Settings(S::Project),
            ),
            (
                M::POST,
                "/projects/{project}/settings/project",
                Route::Settings(S::SaveProject),
            ),
            (
                M::GET,
                "/projects/{project}/settings/alerts",
                Route::Settings(S::Alerts),
            ),
            (
                M::POST,
                "/projects/{project}/settings/alerts/{kind}",
                Route::Settings(S::SaveChat),
            ),
            (
                M::POST,
                "/projects/{project}/settings/alerts/{kind}/remove",
                Route::Settings(S::RemoveChat),
            ),
            (
                M::GET,
                "/projects/{project}/settings/assignment",
                Route::Settings(S::Assignment),
            ),
            (
                M::POST,
                "/projects/{project}/settings/assignment",
                Route::Settings(S::SaveAssignment),
            ),
            (
                M::GET,
                "/projects/{project}/settings/sources",
                Route::Settings(S::Sources),
            ),
            (
                M::POST,
                "/projects/{project}/settings/sources/{kind}",
                Route::Settings(S::SaveSource),
            ),
            (
                M::POST,
                "/projects/{project}/settings/sources/{kind}/remove",
                Route::Settings(S::RemoveSource),
            ),
            (
                M::GET,
                "/projects/{project}/settings/inbound",
                Route::Settings(S::Inbound),
            ),
            (
                M::POST,
                "/projects/{project}/settings/inbound",
                Route::Settings(S::AddInbound),
            ),
            (
                M::POST,
                "/projects/{project}/settings/inbound/{id}",
                Route::Settings(S::SaveInbound),
            ),
            (
                M::POST,
                "/projects/{project}/settings/inbound/{id}/remove",
                Route::Settings(S::RemoveInbound),
            ),
            (
                M::GET,
                "/projects/{project}/settings/import",
                Route::Settings(S::Import),
            ),
            (
                M::POST,
                "/projects/{project}/settings/import",
                Route::Settings(S::Upload),
            ),
            (
                M::GET,
                "/projects/{project}/settings/import/{id}",
                Route::Settings(S::ImportFile),
            ),
            (
                M::POST,
                "/projects/{project}/settings/import/{id}",
                Route::Settings(S::StartImport),
            ),
            (
                M::GET,
                "/projects/{project}/settings/spend",
                Route::Settings(S::Spend),
            ),
            (
                M::POST,
                "/projects/{project}/settings/spend",
                Route::Settings(S::UploadSpend),
            ),
            (
                M::POST,
                "/projects/{project}/settings/spend/rates",
                Route::Settings(S::SaveRates),
            ),
            (
                M::GET,
                "/projects/{project}/settings/spam",
                Route::Settings(S::Spam),
            ),
            (
                M::POST,
                "/projects/{project}/settings/spam",
                Route::Settings(S::SaveSpam),
            ),
            (
                M::GET,
                "/projects/{project}/settings/install",
                Route::Settings(S::Install),
            ),
            (
                M::POST,
                "/projects/{project}/settings/install/test-lead",
                Route::Settings(S::TestLead),
            ),
        ],
        true,
    )
});

impl Route {
    /// This route's path with `params` in its `{name}` segments, in order: made from
    /// [`ROUTES`], so that no link is written by hand. A route and its parameters are fixed
    /// in code; a mismatch is a programming error a test finds, answered with `/` in release.
    pub(crate) fn href(self, params: &[&dyn Display]) -> String {
        ROUTES.href(self, params).unwrap_or_else(|| {
            debug_assert!(
                false,
                "no link to {self:?} with {} parameters",
                params.len()
            );
            "/".to_owned()
        })
    }

    /// The path of a route without parameters (`/login`, `/profile/name`).
    pub(crate) fn path(self) -> String {
        self.href(&[])
    }
}

/// The links of one project's pages, for its handlers and templates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Links<'a> {
    project: &'a str,
}

impl<'a> Links<'a> {
    /// The links of the project `project` (its public id).
    pub(crate) fn new(project: &'a str) -> Self {
        Self { project }
    }

    /// A page of the project: `route` with the project as its one parameter.
    pub(crate) fn to(self, route: Route) -> String {
        route.href(&[&self.project])
    }

    /// A page of one thing of the project: `route` with the project and `id`.
    pub(crate) fn item(self, route: Route, id: &dyn Display) -> String {
        route.href(&[&self.project, id])
    }

    /// The inbox.
    pub(crate) fn inbox(self) -> String {
        self.to(Route::Leads(Leads::List))
    }

    /// A form on the inbox's leads: `/projects/{project}/leads/...`.
    pub(crate) fn leads(self, page: Leads) -> String {
        self.to(Route::Leads(page))
    }

    /// A lead's page, or a form on the lead (`page`).
    pub(crate) fn lead(self, page: Leads, lead: &dyn Display) -> String {
        self.item(Route::Leads(page), lead)
    }

    /// A form on a lead's comment (`id`).
    pub(crate) fn comment(self, page: Leads, lead: &dyn Display, id: &dyn Display) -> String {
        Route::Leads(page).href(&[&self.project, lead, id])
    }

    /// A settings page, or a form on one.
    pub(crate) fn settings(self, page: Settings) -> String {
        self.to(Route::Settings(page))
    }

    /// A settings page or form of one thing (a label, a member, a webhook, ...).
    pub(crate) fn setting(self, page: Settings, id: &dyn Display) -> String {
        self.item(Route::Settings(page), id)
    }
}

impl Settings {
    /// The areas of Settings, in the order of their navigation: each one of the table's
    /// pages, with its name in the navigation and in page titles.
    pub(crate) const AREAS: [(Settings, &'static str); 16] = [
        (Settings::Labels, "Conversion labels"),
        (Settings::Integrations, "Integrations"),
        (Settings::Sources, "Lead sources"),
        (Settings::Inbound, "Form tools"),
        (Settings::Import, "Import leads"),
        (Settings::Spend, "Ad spend"),
        (Settings::Crm, "CRM"),
        (Settings::Webhooks, "Lead webhooks"),
        (Settings::Keys, "API keys"),
        (Settings::Members, "Members"),
        (Settings::Assignment, "Assignment"),
        (Settings::Alerts, "Alerts"),
        (Settings::Project, "Project"),
        (Settings::Spam, "Spam"),
        (Settings::Install, "Install"),
        (Settings::Audit, "Audit log"),
    ];

    /// The name of an area's page (one of [`Settings::AREAS`]).
    pub(crate) fn title(self) -> &'static str {
        Self::AREAS
            .iter()
            .find(|(area, _)| *area == self)
            .map_or("Settings", |(_, title)| title)
    }
}

/// Whether a path is the dashboard's: one of its routes, or anything under `/projects`
/// (where the dashboard answers its own 404). Everything else falls through to the host.
pub(crate) fn claims(path: &str) -> bool {
    ROUTES.has_path(path) || path == "/projects" || path.starts_with("/projects/")
}

/// The label of a path the dashboard claims, for logs and metrics: `assets`, `login`,
/// `logout`, `invitation`, `password` or `dashboard`.
pub fn label(path: &str) -> Option<&'static str> {
    if !claims(path) {
        return None;
    }
    Some(match ROUTES.route_at(path) {
        Some(Route::Stylesheet | Route::Script | Route::Favicon) => "assets",
        Some(Route::SignInForm | Route::SignIn) => "login",
        // A link's token is a secret: its route, not its path, is what metrics see.
        Some(Route::Invitation | Route::AcceptInvitation) => "invitation",
        Some(Route::ForgotForm | Route::Forgot | Route::ResetForm | Route::Reset) => "password",
        Some(Route::SignOut) => "logout",
        // The answer's query holds a one-use code.
        Some(Route::OAuthCallback) => "oauth",
        _ => "dashboard",
    })
}

/// The path as logs may show it: a one-use link's token (an invitation, a password reset,
/// an email confirmation) is a secret, and is replaced by `…`.
pub fn redacted(path: &str) -> std::borrow::Cow<'_, str> {
    use leadtrack_core::link::LinkKind;
    for kind in [
        LinkKind::Invitation,
        LinkKind::PasswordReset,
        LinkKind::EmailChange,
    ] {
        if let Some(token) = path.strip_prefix(kind.path())
            && !token.is_empty()
        {
            return format!("{}…", kind.path()).into();
        }
    }
    path.into()
}

/// The page a form's path belongs to: the nearest path above it that a `GET` finds
/// (`/projects/a/leads/7/rate` belongs to `/projects/a/leads/7`), where a browser that
/// asks for a form's address with a `GET` is sent.
pub(crate) fn page_of(path: &str) -> Option<String> {
    let mut path = path.trim_end_matches('/');
    while let Some(cut) = path.rfind('/') {
        path = &path[..cut];
        let page = if path.is_empty() { "/" } else { path };
        if matches!(ROUTES.find(&Method::GET, page), Found::Route(..)) {
            return Some(page.to_owned());
        }
    }
    None
}

/// A lead id in a path or a form: a positive number.
pub(crate) fn parse_id(text: &str) -> Option<LeadId> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse().ok())
        .flatten()
        .filter(|id| *id > 0)
        .map(LeadId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_claims_its_routes_and_everything_under_projects() {
        for path in [
            "/",
            "/login",
            "/assets/app.css",
            "/projects",
            "/projects/a/nothing",
        ] {
            assert!(claims(path), "{path}");
        }
        for path in [
            "/api/leads/getLeads",
            "/assets/other.css",
            "/demo",
            "/projectsx",
        ] {
            assert!(!claims(path), "{path}");
        }
    }

    #[test]
    fn a_fixed_segment_wins_over_a_parameter_in_its_place() {
        let found = ROUTES.find(&Method::GET, "/projects/acme/leads/new");
        assert!(matches!(found, Found::Route(Route::Leads(Leads::New), _)));
        let Found::Route(Route::Leads(Leads::Lead), params) =
            ROUTES.find(&Method::HEAD, "/projects/acme/leads/7")
        else {
            panic!("a lead's page");
        };
        assert_eq!((params.get("project"), params.get("lead")), ("acme", "7"));
        assert_eq!(
            ROUTES.find(&Method::GET, "/projects/acme/settings/keys/revoke"),
            Found::MethodNotAllowed(vec![Method::POST])
        );
        assert_eq!(
            ROUTES.find(&Method::GET, "/projects/acme/leads/rate"),
            Found::MethodNotAllowed(vec![Method::POST]),
            "a form's fixed path is no lead called `rate`"
        );
    }

    #[test]
    fn a_form_belongs_to_the_page_above_it() {
        for (form, page) in [
            ("/projects/a/leads/7/rate", "/projects/a/leads/7"),
            ("/projects/a/leads/rate", "/projects/a/leads"),
            (
                "/projects/a/settings/integrations/ga4/test",
                "/projects/a/settings/integrations",
            ),
            (
                "/projects/a/settings/members/3/remove",
                "/projects/a/settings/members",
            ),
            ("/logout", "/"),
        ] {
            assert_eq!(page_of(form).as_deref(), Some(page), "{form}");
        }
    }

    #[test]
    fn every_route_links_to_a_path_that_finds_it_again() {
        for (method, pattern, route) in ROUTES.rows() {
            let names = pattern.matches('{').count();
            let values: Vec<String> = (1..=names).map(|n| format!("v{n}")).collect();
            let params: Vec<&dyn Display> = values.iter().map(|v| v as &dyn Display).collect();
            let href = route.href(&params);
            let Found::Route(found, _) = ROUTES.find(method, &href) else {
                panic!("{href} finds no route");
            };
            assert_eq!(found, route, "{href}");
        }
        let links = Links::new("acme");
        assert_eq!(links.lead(Leads::Rate, &7), "/projects/acme/leads/7/rate");
        assert_eq!(
            links.setting(Settings::RemoveWebhook, &3),
            "/projects/acme/settings/webhooks/3/remove"
        );
        for (area, _) in Settings::AREAS {
            let page = links.settings(area);
            assert!(
                matches!(ROUTES.find(&Method::GET, &page), Found::Route(Route::Settings(found), _) if found == area),
                "{area:?} is a page of its own"
            );
        }
    }

    #[test]
    fn link_tokens_never_reach_a_log() {
        let token = "ab".repeat(32);
        for prefix in ["/invitations/", "/password/reset/", "/profile/email/"] {
            let path = format!("{prefix}{token}");
            assert_eq!(redacted(&path), format!("{prefix}…"));
        }
        for kept in ["/profile/email", "/password/forgot", "/projects/a/leads/7"] {
            assert_eq!(redacted(kept), kept);
        }
    }

    #[test]
    fn labels_name_the_route_a_path_belongs_to() {
        for (path, expected) in [
            ("/login", Some("login")),
            ("/invitations/abc", Some("invitation")),
            ("/password/forgot", Some("password")),
            ("/profile", Some("dashboard")),
            ("/logout", Some("logout")),
            ("/assets/app.js", Some("assets")),
            ("/projects/a/leads/1", Some("dashboard")),
            ("/projects/a/unknown", Some("dashboard")),
            ("/metrics", None),
        ] {
            assert_eq!(label(path), expected, "{path}");
        }
    }
}
