//! Reading a request body within a size limit, for the lead routes and for any page that
//! reads forms.

use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use warp::http::header::{self, HeaderMap};

/// Why a body could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// It is larger than the limit, by its declared length or as it streamed in.
    #[error("the body is larger than {0} bytes")]
    TooLarge(usize),
    /// The connection failed while it streamed in.
    #[error("the body could not be read")]
    Broken,
}

/// Reads `body`, stopping as soon as it exceeds `limit` bytes (by its declared
/// `Content-Length`, or while it streams in), so an oversized body is never held whole.
pub async fn read_limited<B, D>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
) -> Result<Bytes, BodyError>
where
    B: Stream<Item = Result<D, warp::Error>>,
    D: Buf,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(BodyError::TooLarge(limit));
    }
    let mut body = std::pin::pin!(body);
    let capacity = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit));
    let mut collected = BytesMut::with_capacity(capacity);
    while let Some(chunk) = body.next().await {
        let mut chunk = chunk.map_err(|err| {
            tracing::debug!(error = %err, "could not read a request body");
            BodyError::Broken
        })?;
        if collected.len() + chunk.remaining() > limit {
            return Err(BodyError::TooLarge(limit));
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            let len = part.len();
            collected.extend_from_slice(part);
            chunk.advance(len);
        }
    }
    Ok(collected.freeze())
}
