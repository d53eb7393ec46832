//! Accounts.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use leadtrack_core::account::{
    LoginFailures, Member, Membership, NewUser, PasswordHash, Session, SessionHash, User,
};

pub(crate) async fn create_user(
    c: &impl GenericClient,
    user: &NewUser,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    todo!()
}
pub(crate) async fn users(c: &impl GenericClient) -> Result<Vec<User>, Error> {
    todo!()
}
pub(crate) async fn user_by_email(c: &impl GenericClient, email: &str) -> Result<User, Error> {
    todo!()
}
pub(crate) async fn password_hash(
    c: &impl GenericClient,
    user: UserId,
) -> Result<PasswordHash, Error> {
    todo!()
}
pub(crate) async fn set_password(
    c: &impl GenericClient,
    user: UserId,
    hash: &PasswordHash,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn set_user_disabled(
    c: &impl GenericClient,
    user: UserId,
    disabled: bool,
) -> Result<User, Error> {
    todo!()
}
pub(crate) async fn add_member(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
    role: Role,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn remove_member(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
) -> Result<bool, Error> {
    todo!()
}
pub(crate) async fn members(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<Member>, Error> {
    todo!()
}
pub(crate) async fn memberships(
    c: &impl GenericClient,
    user: UserId,
) -> Result<Vec<Membership>, Error> {
    todo!()
}
pub(crate) async fn membership_of(
    c: &impl GenericClient,
    user: UserId,
    public_id: &str,
) -> Result<Membership, Error> {
    todo!()
}
pub(crate) async fn create_session(
    c: &impl GenericClient,
    user: UserId,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<Session, Error> {
    todo!()
}
pub(crate) async fn session(
    c: &impl GenericClient,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(User, Session), Error> {
    todo!()
}
pub(crate) async fn touch_session(
    c: &impl GenericClient,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn end_sessions_of(c: &impl GenericClient, user: UserId) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn record_login_failure(
    c: &impl GenericClient,
    email: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn login_failures(
    c: &impl GenericClient,
    email: &str,
    address: &str,
    since: DateTime<Utc>,
) -> Result<LoginFailures, Error> {
    todo!()
}
