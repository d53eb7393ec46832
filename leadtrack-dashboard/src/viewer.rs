//! The signed-in viewer of a page: their user and session, and who they are in the records
//! (an actor, an address). A leaf: the pages, the layout and the session all use it.

use leadtrack_core::account::{Actor, SessionToken, User};
use leadtrack_core::activity::Attribution;

use crate::{Config, Request};

/// A signed-in user and their session.
pub(crate) struct Viewer {
    /// The user.
    pub(crate) user: User,
    /// The session's token, as the cookie holds it.
    pub(crate) token: SessionToken,
}

impl Viewer {
    /// The session's anti-forgery token, for forms.
    pub(crate) fn csrf(&self) -> String {
        self.token.csrf_token()
    }

    /// The viewer as the store records who did something.
    pub(crate) fn actor(&self) -> Actor {
        Actor::User {
            id: self.user.id,
            name: self.user.name.clone(),
        }
    }

    /// The viewer and their address, as a project's history records who did something.
    pub(crate) fn attribution(&self, request: &Request, config: &Config) -> Attribution {
        Attribution {
            actor: self.actor(),
            address: Some(client_address(request, config)),
        }
    }
}

/// The client's address: the peer's, or the one a trusted proxy forwarded.
pub(crate) fn client_address(request: &Request, config: &Config) -> String {
    leadtrack_http::client_ip(&request.headers, request.remote, config.trust_proxy)
        .unwrap_or_default()
}
