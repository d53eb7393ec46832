//! Who may see and do what, in one place: pages need a signed-in user; a project's pages
//! need its membership (else `404`, so ids cannot be probed); an owner's action needs the
//! owner role (else `403`).

use leadtrack_core::account::Membership;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::store::Entity;
use leadtrack_core::types::{LeadId, LeadIdentifier, Role};
use leadtrack_core::{Accounts, Store, StoreError};
use leadtrack_http::Body;
use warp::http::Method;
use warp::reply::Response;

use crate::routes::Route;
use crate::session::{self, Form};
use crate::viewer::Viewer;
use crate::{Config, Request, render};

/// The signed-in user, or the answer for a visitor: a `GET` goes to the sign-in page and
/// comes back afterwards (`next`); anything else goes to the sign-in page.
pub(crate) async fn signed_in<S: Accounts>(
    store: &S,
    request: &Request,
) -> Result<Viewer, Response> {
    match session::viewer(store, request).await {
        Ok(Some(viewer)) => Ok(viewer),
        Ok(None) if matches!(request.method, Method::GET | Method::HEAD) => {
            let mut next = request.path.clone();
            if !request.query.is_empty() {
                next = format!("{next}?{}", request.query);
            }
            let next: String = form_urlencoded::byte_serialize(next.as_bytes()).collect();
            Err(render::redirect(&format!(
                "{}?next={next}",
                Route::SignInForm.href(&[])
            )))
        }
        Ok(None) => Err(render::redirect(&Route::SignInForm.href(&[]))),
        Err(err) => Err(render::store_failure(err, None)),
    }
}

/// The viewer's membership of the project `public_id`, if their role allows `needed`.
pub(crate) async fn project<S: Accounts>(
    store: &S,
    viewer: &Viewer,
    public_id: &str,
    needed: Role,
) -> Result<Membership, Response> {
    match store.membership(viewer.user.id, public_id).await {
        Ok(membership) if membership.role.allows(needed) => Ok(membership),
        Ok(_) if needed == Role::Owner => Err(render::owners_only(viewer)),
        Ok(_) => Err(render::viewers_read(viewer)),
        Err(StoreError::NotFound(Entity::Project)) => Err(render::not_found(Some(viewer))),
        Err(err) => Err(render::store_failure(err, Some(viewer))),
    }
}

/// A project page's viewer and membership: signed in, a member, with `needed`'s role.
pub(crate) async fn project_page<S: Accounts>(
    store: &S,
    request: &Request,
    public_id: &str,
    needed: Role,
) -> Result<(Viewer, Membership), Response> {
    let viewer = signed_in(store, request).await?;
    let membership = project(store, &viewer, public_id, needed).await?;
    Ok((viewer, membership))
}

/// A form's viewer and fields: signed in, the form genuine (same site, the session's
/// token; else `403` and nothing changes).
pub(crate) async fn user_form<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    body: Body,
) -> Result<(Viewer, Form), Response> {
    let viewer = signed_in(store, request).await?;
    let form = session::read_form(request, config, body).await?;
    if !session::genuine_form(request, config, &viewer, &form) {
        return Err(render::forged(Some(&viewer)));
    }
    Ok((viewer, form))
}

/// A project's genuine upload form ([`session::read_upload`], checked as [`user_form`]
/// checks a form) of a member with `needed`'s role, with its file.
pub(crate) async fn project_upload<S: Accounts>(
    store: &S,
    (config, request): (&Config, &Request),
    (public_id, needed): (&str, Role),
    (body, limit): (Body, usize),
) -> Result<(Viewer, Membership, Form, Option<session::Upload>), Response> {
    let viewer = signed_in(store, request).await?;
    let (form, upload) = session::read_upload(request, body, limit).await?;
    if !session::genuine_form(request, config, &viewer, &form) {
        return Err(render::forged(Some(&viewer)));
    }
    let membership = project(store, &viewer, public_id, needed).await?;
    Ok((viewer, membership, form, upload))
}

/// A project form's viewer, membership and fields: a genuine form ([`user_form`]) of a
/// member with `needed`'s role.
pub(crate) async fn project_form<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
    needed: Role,
    body: Body,
) -> Result<(Viewer, Membership, Form), Response> {
    let (viewer, form) = user_form(store, config, request, body).await?;
    let membership = project(store, &viewer, public_id, needed).await?;
    Ok((viewer, membership, form))
}

/// The project's lead `id`, or the page to answer instead: `404`, or the store's failure.
pub(crate) async fn found<S: Store>(
    store: &S,
    viewer: &Viewer,
    project: leadtrack_core::ProjectId,
    id: LeadId,
) -> Result<StoredLead, Response> {
    match store.find_lead(project, &LeadIdentifier::LeadId(id)).await {
        Ok(lead) => Ok(lead),
        Err(StoreError::NotFound(_)) => Err(render::not_found(Some(viewer))),
        Err(err) => Err(render::store_failure(err, Some(viewer))),
    }
}

/// A member's posted form, genuine: who posted it, their membership of the project, and
/// the form.
pub(crate) type MemberForm = (Viewer, Membership, Form);
