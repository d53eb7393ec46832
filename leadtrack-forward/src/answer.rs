//! A platform's answer to a request that carried several conversions.

use leadtrack_platforms::Outcome;

/// A platform's answer to a batched request.
pub(crate) enum Answered {
    /// One outcome for every event: the platform took them all, or none.
    All(Outcome),
    /// An outcome per event, in the request's order.
    Each(Vec<Outcome>),
    /// Not sent: the platform's scope is held back, or its quota spent, for a while.
    Held(Outcome),
}
