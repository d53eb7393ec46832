//! The contract's JSON error body for the requests hyper refuses itself.
//!
//! A request line that is not HTTP, or a URL over hyper's fixed 64 KiB limit, never reaches
//! a route: hyper answers it on its own, with an empty body and no CORS header, and closes
//! the connection. So does a request far past the header limits, whose ordinary excess
//! `header_limits` answers itself (hyper's own limits are set above ours). It offers no hook for that answer,
//! but it always writes it the same way and as the last bytes of the connection:
//!
//! ```text
//! HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Sun, 22 Nov 2026 02:22:07 GMT\r\n\r\n
//! ```
//!
//! [`split`] recognises exactly that tail of a write, and [`rewrite`] replaces it with the
//! same status, the contract's error body and `Access-Control-Allow-Origin: *`. No response
//! of a route can take that form: routes' responses (`header_limits`' 431 too) carry a
//! `content-type` and a body.

use leadtrack_core::ErrorCode;
use leadtrack_core::api::ErrorBody;

/// The length of an HTTP date (`Sun, 22 Nov 2026 02:22:07 GMT`).
const DATE_LEN: usize = 29;

/// Each answer of hyper's: its status line, the code and the message the body gives.
const ANSWERS: [(&str, ErrorCode, &str); 3] = [
    (
        "HTTP/1.1 400 Bad Request",
        ErrorCode::BadRequest,
        "The request is not valid HTTP",
    ),
    (
        "HTTP/1.1 414 URI Too Long",
        ErrorCode::UriTooLong,
        "The request URL is too long (at most 64 KiB)",
    ),
    (
        "HTTP/1.1 431 Request Header Fields Too Large",
        ErrorCode::HeadersTooLarge,
        "The request header fields are too many or too large",
    ),
];

/// hyper's own error answer found at the end of a write.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HyperAnswer<'a> {
    /// Where it starts in the write.
    pub(crate) start: usize,
    status_line: &'static str,
    code: ErrorCode,
    message: &'static str,
    date: &'a [u8],
}

/// hyper's own error answer, if `written` ends with one.
pub(crate) fn split(written: &[u8]) -> Option<HyperAnswer<'_>> {
    const HEADERS: &[u8] = b"\r\nconnection: close\r\ncontent-length: 0\r\ndate: ";
    const END: &[u8] = b"\r\n\r\n";
    let before_end = written.strip_suffix(END)?;
    let date_at = before_end.len().checked_sub(DATE_LEN)?;
    let (head, date) = before_end.split_at(date_at);
    let head = head.strip_suffix(HEADERS)?;
    if !date
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || b" ,:".contains(b))
    {
        return None;
    }
    ANSWERS
        .iter()
        .find(|(status_line, ..)| head.ends_with(status_line.as_bytes()))
        .map(|&(status_line, code, message)| HyperAnswer {
            start: head.len() - status_line.len(),
            status_line,
            code,
            message,
            date,
        })
}

/// The answer with the contract's JSON error body and the CORS header.
pub(crate) fn rewrite(answer: &HyperAnswer<'_>) -> Vec<u8> {
    let body = serde_json::to_vec(&ErrorBody::new(answer.code, answer.message))
        .unwrap_or_else(|_| b"{}".to_vec());
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(answer.status_line.as_bytes());
    out.extend_from_slice(b"\r\ncontent-type: application/json");
    out.extend_from_slice(b"\r\naccess-control-allow-origin: *");
    out.extend_from_slice(b"\r\nconnection: close");
    out.extend_from_slice(format!("\r\ncontent-length: {}", body.len()).as_bytes());
    out.extend_from_slice(b"\r\ndate: ");
    out.extend_from_slice(answer.date);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &str = "Sun, 22 Nov 2026 02:22:07 GMT";

    fn hyper(status_line: &str) -> String {
        format!("{status_line}\r\nconnection: close\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n")
    }

    #[test]
    fn each_answer_of_hyper_gets_the_json_body_and_cors() {
        for (status_line, code, message) in ANSWERS {
            let written = hyper(status_line);
            let answer = split(written.as_bytes()).expect(status_line);
            assert_eq!(answer.start, 0);
            let body = format!(r#"{{"message":"{message}","code":"{code}"}}"#);
            let expected = format!(
                "{status_line}\r\ncontent-type: application/json\r\n\
                 access-control-allow-origin: *\r\nconnection: close\r\n\
                 content-length: {}\r\ndate: {DATE}\r\n\r\n{body}",
                body.len()
            );
            assert_eq!(String::from_utf8(rewrite(&answer)).unwrap(), expected);
            assert_eq!(status_line[9..12].parse::<u16>(), Ok(code.http_status()));
        }
    }

    #[test]
    fn an_answer_after_a_pipelined_response_is_found_where_it_starts() {
        let first = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        let written = format!("{first}{}", hyper("HTTP/1.1 414 URI Too Long"));
        assert_eq!(split(written.as_bytes()).unwrap().start, first.len());
    }

    #[test]
    fn responses_of_routes_are_left_alone() {
        let routes = [
            // An empty 400 with any other header is not hyper's.
            format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
                 connection: close\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"
            ),
            format!("HTTP/1.1 303 See Other\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
            hyper("HTTP/1.1 200 OK"),
            // A body that merely ends like one, but not with a date.
            "HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: \
             \u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\
             \u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\r\n\r\n"
                .to_owned(),
            String::new(),
            "\r\n\r\n".to_owned(),
        ];
        for written in routes {
            assert_eq!(split(written.as_bytes()), None, "{written:?}");
        }
    }
}
