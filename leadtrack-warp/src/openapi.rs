//! The OpenAPI 3.1 document of the lead routes, `GET /api/openapi.json`, for tools (client
//! generators, the schemathesis fuzzing in CI). `docs/CONTRACT.md` stays authoritative.

use warp::reply::Response;
use warp::{Filter, Rejection};

use leadtrack_http::StaticAsset;

/// The OpenAPI 3.1 document of every lead route, as JSON.
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

/// `GET /api/openapi.json`: [`OPENAPI`], revalidated on every use so a new server's
/// document is seen at once.
pub fn openapi()
-> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    warp::path!("api" / "openapi.json").and(leadtrack_http::serve(|| {
        StaticAsset::new(OPENAPI.as_bytes(), "application/json", "no-cache").for_any_origin()
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use strum::VariantArray;

    use super::OPENAPI;
    use leadtrack_core::ErrorCode;

    use crate::{Operation, ROUTES};

    const PREFIX: &str = "/api/leads/";

    fn document() -> Value {
        serde_json::from_str(OPENAPI).expect("the OpenAPI document is JSON")
    }

    #[test]
    fn names_openapi_3_1() {
        let doc = document();
        let version = doc["openapi"].as_str().unwrap_or_default();
        assert!(version.starts_with("3.1."), "{version}");
        assert!(doc["info"]["title"].is_string());
        assert_eq!(
            doc["components"]["securitySchemes"]["ApiKey"]["name"],
            "X-API-Key"
        );
    }

    #[test]
    fn every_operation_of_the_router_is_documented_with_its_method_and_preflight() {
        let doc = document();
        let rows: Vec<_> = ROUTES.rows().collect();
        for operation in Operation::VARIANTS {
            let (method, path, _) = rows
                .iter()
                .find(|(_, _, routed)| routed == operation)
                .unwrap_or_else(|| panic!("{operation:?} has no route"));
            // The lead routes are named by their operation; the others are under their own
            // prefixes.
            let expected = match operation {
                Operation::GetRoas => "/api/reports/roas".to_owned(),
                Operation::ErasePerson => "/api/privacy/erase".to_owned(),
                Operation::ExportPerson => "/api/privacy/export".to_owned(),
                Operation::CreateHook | Operation::ListHooks => "/api/hooks".to_owned(),
                Operation::DeleteHook => "/api/hooks/{id}".to_owned(),
                Operation::GetHookSample => "/api/hooks/sample".to_owned(),
                _ => format!("{PREFIX}{}", operation.segment()),
            };
            assert_eq!(*path, expected);
            let item = doc["paths"][path]
                .as_object()
                .unwrap_or_else(|| panic!("{path} is not in the document"));
            let method = method.as_str().to_ascii_lowercase();
            let mut methods: Vec<&str> = item
                .keys()
                .map(String::as_str)
                .filter(|key| *key != "parameters")
                .collect();
            methods.sort_unstable();
            // Every method the router has for the path, and the preflight.
            let mut expected: Vec<String> = rows
                .iter()
                .filter(|(_, other, _)| other == path)
                .map(|(method, ..)| method.as_str().to_ascii_lowercase())
                .chain(["options".to_owned()])
                .collect();
            expected.sort_unstable();
            assert_eq!(methods, expected, "{path}");
            assert_eq!(
                item[&method]["operationId"],
                operation.segment(),
                "{path}: operationId"
            );
        }
    }

    #[test]
    fn every_documented_path_is_claimed_by_the_router() {
        for path in document()["paths"].as_object().unwrap().keys() {
            assert!(
                ROUTES.has_path(path),
                "{path} is documented but no route claims it"
            );
        }
    }

    /// The section 7 codes each error response may carry, by the status it is documented under.
    fn documented_codes(doc: &Value, response: &Value) -> Vec<String> {
        let response = match response["$ref"].as_str() {
            Some(reference) => {
                &doc["components"]["responses"][reference.rsplit('/').next().unwrap()]
            }
            None => response,
        };
        let codes = &response["content"]["application/json"]["schema"]["allOf"][1]["properties"]["code"]
            ["enum"];
        codes
            .as_array()
            .map(|codes| {
                codes
                    .iter()
                    .filter_map(|c| c.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn every_error_code_is_documented_with_its_status() {
        let doc = document();
        let mut documented = vec![(405, "method_not_allowed".to_owned())];
        let not_allowed = &doc["components"]["responses"]["MethodNotAllowed"];
        assert_eq!(documented_codes(&doc, not_allowed), ["method_not_allowed"]);
        assert_eq!(not_allowed["headers"]["Allow"]["required"], true);
        for item in doc["paths"].as_object().unwrap().values() {
            let item = item.as_object().unwrap();
            let operations = item.iter().filter(|(key, _)| *key != "parameters");
            for (_, operation) in operations {
                for (status, response) in operation["responses"].as_object().unwrap() {
                    let status: u16 = status.parse().unwrap();
                    for code in documented_codes(&doc, response) {
                        documented.push((status, code));
                    }
                }
            }
        }
        for code in ErrorCode::VARIANTS {
            // `not_found` answers paths outside the lead API; the HTTP layer answers
            // `bad_request`, `uri_too_long` and `headers_too_large` before any route (the
            // contract's section 7); `unknown` is the typed client's name for a code it
            // does not know.
            if matches!(
                code,
                ErrorCode::NotFound
                    | ErrorCode::BadRequest
                    | ErrorCode::UriTooLong
                    | ErrorCode::HeadersTooLarge
                    | ErrorCode::Unknown
            ) {
                continue;
            }
            let status = code.http_status();
            let name = code.as_ref();
            assert!(
                documented.iter().any(|(s, c)| *s == status && c == name),
                "{name} is not documented under {status}"
            );
        }
        for (status, code) in &documented {
            let known = ErrorCode::VARIANTS.iter().find(|c| c.as_ref() == code);
            assert_eq!(known.map(|c| c.http_status()), Some(*status), "{code}");
        }
    }
}
