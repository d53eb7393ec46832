//! The browser capture script, `GET /leadtrack.js`, which an embedding app serves beside the
//! lead routes.

use leadtrack_http::StaticAsset;
use warp::reply::Response;
use warp::{Filter, Rejection};

/// The first-party capture script websites include, as served: `assets/leadtrack.js`
/// (plain JavaScript, no build step to read or change it) minified by `scripts/minify-js`.
pub const SCRIPT: &str = include_str!("../assets/leadtrack.min.js");

/// How long browsers and CDNs may reuse the script before revalidating it.
const SCRIPT_MAX_AGE: &str = "public, max-age=3600, stale-while-revalidate=86400";

/// `GET /leadtrack.js`: the capture script, cacheable, revalidated by `ETag` (`304` when
/// unchanged), readable from any origin, in brotli or gzip for browsers that accept them.
/// Mount it beside [`crate::routes`] in an embedding app.
pub fn script()
-> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    warp::path!("leadtrack.js").and(leadtrack_http::serve(|| {
        let script = SCRIPT.as_bytes();
        StaticAsset::new(script, "text/javascript; charset=utf-8", SCRIPT_MAX_AGE)
            .compressed()
            .for_any_origin()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::StatusCode;

    #[tokio::test]
    async fn the_script_is_served_with_caching_headers_and_revalidated() {
        let filter = script();
        let response = warp::test::request()
            .path("/leadtrack.js")
            .reply(&filter)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
        assert_eq!(response.headers()["cache-control"], SCRIPT_MAX_AGE);
        assert_eq!(response.body().as_ref(), SCRIPT.as_bytes());
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        let again = warp::test::request()
            .path("/leadtrack.js")
            .header("if-none-match", &etag)
            .reply(&filter)
            .await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert!(again.body().is_empty());
        let stale = warp::test::request()
            .path("/leadtrack.js")
            .header("if-none-match", "\"lt-old\"")
            .reply(&filter)
            .await;
        assert_eq!(stale.status(), StatusCode::OK);
    }

    /// `GET /leadtrack.js` with `Accept-Encoding: accept` (and `If-None-Match: etag`).
    async fn fetch_script(accept: &str, etag: Option<&str>) -> warp::http::Response<bytes::Bytes> {
        let mut request = warp::test::request()
            .path("/leadtrack.js")
            .header("accept-encoding", accept);
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        request.reply(&script()).await
    }

    #[tokio::test]
    async fn the_script_is_sent_in_brotli_or_gzip_when_accepted_and_within_its_budget() {
        let br = fetch_script("gzip, deflate, br, zstd", None).await;
        assert_eq!(br.headers()["content-encoding"], "br");
        assert_eq!(br.headers()["vary"], "accept-encoding");
        assert_eq!(br.headers()["cache-control"], SCRIPT_MAX_AGE);
        let mut unbrotlied = Vec::new();
        brotli::BrotliDecompress(&mut br.body().as_ref(), &mut unbrotlied).unwrap();
        assert_eq!(unbrotlied, SCRIPT.as_bytes());

        let gzip = fetch_script("gzip;q=1.0, br;q=0", None).await;
        assert_eq!(gzip.headers()["content-encoding"], "gzip");
        let mut gunzipped = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(gzip.body().as_ref()),
            &mut gunzipped,
        )
        .unwrap();
        assert_eq!(gunzipped, SCRIPT.as_bytes());

        let plain = fetch_script("identity", None).await;
        assert!(plain.headers().get("content-encoding").is_none());
        assert_eq!(plain.body().as_ref(), SCRIPT.as_bytes());
        assert_eq!(plain.headers()["vary"], "accept-encoding");

        // Each version has its own entity tag, and revalidates only against it.
        let tags: Vec<&str> = [&br, &gzip, &plain]
            .iter()
            .map(|response| response.headers()["etag"].to_str().unwrap())
            .collect();
        assert!(
            tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2],
            "{tags:?}"
        );
        let fresh = fetch_script("br", Some(tags[0])).await;
        assert_eq!(fresh.status(), StatusCode::NOT_MODIFIED);
        let other = fetch_script("br", Some(tags[1])).await;
        assert_eq!(other.status(), StatusCode::OK);

        // The size budget: under 6 kB as browsers download it.
        assert!(br.body().len() < 6_000, "brotli: {} bytes", br.body().len());
        assert!(
            gzip.body().len() < 6_000,
            "gzip: {} bytes",
            gzip.body().len()
        );
    }

    #[test]
    fn the_served_script_is_minified_from_the_current_source() {
        use sha2::Digest;
        let source = include_str!("../assets/leadtrack.js");
        let digest: String = sha2::Sha256::digest(source.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let first_line = SCRIPT.lines().next().unwrap_or_default();
        assert!(
            first_line.contains(&format!("sha256 {digest}")),
            "leadtrack.min.js is not made from the current leadtrack.js: run scripts/minify-js"
        );
        assert!(
            SCRIPT.len() < source.len() * 2 / 3,
            "minified: {} bytes",
            SCRIPT.len()
        );
    }
}
