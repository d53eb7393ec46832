//! A request body, read once within a size limit, for the lead routes and for any page that
//! reads forms.

use std::pin::Pin;

use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt, TryStreamExt};
use warp::http::header::{self, HeaderMap};
use warp::{Filter, Rejection};

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

/// A request's body, not read yet: a route that needs it reads it once with [`Body::read`],
/// after the checks that may refuse the request without reading it.
pub struct Body(Pin<Box<dyn Stream<Item = Result<Bytes, warp::Error>> + Send>>);

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Body")
    }
}

/// The request's [`Body`].
pub fn body() -> impl Filter<Extract = (Body,), Error = Rejection> + Copy {
    warp::body::stream().map(boxed)
}

/// warp's stream of chunks, whatever its type, as a [`Body`].
fn boxed<S, B>(stream: S) -> Body
where
    S: Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: Buf,
{
    Body(Box::pin(stream.map_ok(|mut chunk| {
        let len = chunk.remaining();
        chunk.copy_to_bytes(len)
    })))
}

impl Body {
    /// A body of the given chunks (for tests).
    pub fn from_chunks<I>(chunks: I) -> Self
    where
        I: IntoIterator<Item = Result<Bytes, warp::Error>>,
        I::IntoIter: Send + 'static,
    {
        Self(Box::pin(futures_util::stream::iter(chunks)))
    }

    /// Reads the body, stopping as soon as it exceeds `limit` bytes (by its declared
    /// `Content-Length` in `headers`, or while it streams in), so an oversized body is never
    /// held whole.
    pub async fn read(self, headers: &HeaderMap, limit: usize) -> Result<Bytes, BodyError> {
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|length| length > limit as u64) {
            return Err(BodyError::TooLarge(limit));
        }
        let mut body = self.0;
        let capacity = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit));
        let mut collected = BytesMut::with_capacity(capacity);
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|err| {
                tracing::debug!(error = %err, "could not read a request body");
                BodyError::Broken
            })?;
            if collected.len() + chunk.len() > limit {
                return Err(BodyError::TooLarge(limit));
            }
            collected.extend_from_slice(&chunk);
        }
        Ok(collected.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_is_read_whole_within_its_limit_and_refused_past_it() {
        let chunks = || {
            [
                Ok(Bytes::from_static(b"abc")),
                Ok(Bytes::from_static(b"de")),
            ]
        };
        let headers = HeaderMap::new();
        let read = Body::from_chunks(chunks()).read(&headers, 5).await;
        assert_eq!(read, Ok(Bytes::from_static(b"abcde")));
        let over = Body::from_chunks(chunks()).read(&headers, 4).await;
        assert_eq!(over, Err(BodyError::TooLarge(4)));
        let mut declared = HeaderMap::new();
        declared.insert(header::CONTENT_LENGTH, 9.into());
        let early = Body::from_chunks(chunks()).read(&declared, 5).await;
        assert_eq!(early, Err(BodyError::TooLarge(5)));
    }
}
