//! Routes declared once: a table of method, path pattern and route, from which a web crate
//! takes its dispatch, its `405` answers (and the methods an `Allow` lists) and the paths it
//! claims.
//!
//! A pattern is a path whose `{name}` segments match any one non-empty segment, which the
//! handler reads back by name: `/projects/{project}/leads/{lead}/rate`. Links are made from
//! the same table ([`Router::href`]), so a link and the route it names cannot drift apart.

use std::fmt::Display;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use warp::http::Method;

/// What a path segment keeps as it is: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One row of a table: a method, a path pattern, and the route it names.
pub type Row<R> = (Method, &'static str, R);

/// A table of routes.
#[derive(Debug)]
pub struct Router<R> {
    rows: Vec<(Method, Vec<Segment>, R)>,
    head_as_get: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum Segment {
    Literal(&'static str),
    Param(&'static str),
}

/// What the table says of a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Found<'a, R> {
    /// A route for the path and method, with the path's parameters.
    Route(R, Params<'a>),
    /// Routes for the path, none for the method: these methods are.
    MethodNotAllowed(Vec<Method>),
    /// No route for the path.
    NotFound,
}

/// A matched path's `{name}` segments.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Params<'a>(Vec<(&'static str, &'a str)>);

impl<'a> Params<'a> {
    /// The segment that stood for `{name}`; empty when the pattern has none of that name,
    /// which only a mistake in a table can cause (and a handler then answers not found).
    pub fn get(&self, name: &str) -> &'a str {
        self.0
            .iter()
            .find(|(key, _)| *key == name)
            .map_or("", |(_, value)| value)
    }
}

impl<R: Copy> Router<R> {
    /// The table `rows`. With `head_as_get`, `HEAD` finds the `GET` routes.
    ///
    /// # Panics
    ///
    /// When a pattern does not start with `/`: tables are written in code, so that is a
    /// programming error found by the first test that builds the table.
    pub fn new(rows: impl IntoIterator<Item = Row<R>>, head_as_get: bool) -> Self {
        let rows = rows
            .into_iter()
            .map(|(method, pattern, route)| (method, parse(pattern), route))
            .collect();
        Self { rows, head_as_get }
    }

    /// Whether any route has `path`, whatever its method.
    pub fn has_path(&self, path: &str) -> bool {
        self.route_at(path).is_some()
    }

    /// The first route of `path`, whatever its method (for labels that name the path).
    pub fn route_at(&self, path: &str) -> Option<R> {
        let segments = split(path)?;
        self.rows
            .iter()
            .find(|(_, pattern, _)| matches(pattern, &segments).is_some())
            .map(|(_, _, route)| *route)
    }

    /// The route for `method` on `path`. Where patterns of several routes match, the one
    /// with the most fixed segments speaks for the path: `/leads/rate`, a `POST` route, is
    /// no lead called `rate` for a `GET`, but a `405`.
    pub fn find<'a>(&self, method: &Method, path: &'a str) -> Found<'a, R> {
        let Some(segments) = split(path) else {
            return Found::NotFound;
        };
        let method = if self.head_as_get && method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        let matched: Vec<_> = self
            .rows
            .iter()
            .filter_map(|(row_method, pattern, route)| {
                let params = matches(pattern, &segments)?;
                Some((literals(pattern), row_method, route, params))
            })
            .collect();
        let Some(fixed) = matched.iter().map(|(fixed, ..)| *fixed).max() else {
            return Found::NotFound;
        };
        let mut allowed = Vec::new();
        for (literals, row_method, route, params) in matched {
            if literals < fixed {
                continue;
            }
            if row_method == method {
                return Found::Route(*route, params);
            }
            if !allowed.contains(row_method) {
                allowed.push(row_method.clone());
            }
        }
        Found::MethodNotAllowed(allowed)
    }

    /// The path of `route` (its first row) with `params` in its `{name}` segments, in order,
    /// each escaped as a path segment; `None` when the table has no such route or `params`
    /// are not as many as its `{name}` segments.
    pub fn href(&self, route: R, params: &[&dyn Display]) -> Option<String>
    where
        R: PartialEq,
    {
        let (_, pattern, _) = self.rows.iter().find(|(_, _, row)| *row == route)?;
        let mut params = params.iter();
        let mut path = String::new();
        for segment in pattern {
            path.push('/');
            match segment {
                Segment::Literal(text) => path.push_str(text),
                Segment::Param(_) => {
                    let value = params.next()?.to_string();
                    path.extend(utf8_percent_encode(&value, SEGMENT));
                }
            }
        }
        if params.next().is_some() {
            return None;
        }
        Some(if path.is_empty() {
            "/".to_owned()
        } else {
            path
        })
    }

    /// Every route with its method and pattern, in table order (for documents and tests).
    pub fn rows(&self) -> impl Iterator<Item = (&Method, String, R)> + '_ {
        self.rows.iter().map(|(method, pattern, route)| {
            let pattern: String = pattern
                .iter()
                .map(|segment| match segment {
                    Segment::Literal(text) => format!("/{text}"),
                    Segment::Param(name) => format!("/{{{name}}}"),
                })
                .collect();
            let pattern = if pattern.is_empty() {
                "/".to_owned()
            } else {
                pattern
            };
            (method, pattern, *route)
        })
    }
}

fn parse(pattern: &'static str) -> Vec<Segment> {
    let rest = pattern
        .strip_prefix('/')
        .unwrap_or_else(|| panic!("a route pattern starts with /: {pattern:?}"));
    if rest.is_empty() {
        return Vec::new();
    }
    rest.split('/')
        .map(|segment| match segment.strip_prefix('{') {
            Some(name) => Segment::Param(name.trim_end_matches('}')),
            None => Segment::Literal(segment),
        })
        .collect()
}

/// A path's segments: `/` is none, `/a/b` and `/a/b/` are `a`, `b`; a path not starting
/// with `/` has no route.
fn split(path: &str) -> Option<Vec<&str>> {
    match path.strip_prefix('/')?.trim_end_matches('/') {
        "" => Some(Vec::new()),
        rest => Some(rest.split('/').collect()),
    }
}

/// How many of a pattern's segments are fixed.
fn literals(pattern: &[Segment]) -> usize {
    pattern
        .iter()
        .filter(|segment| matches!(segment, Segment::Literal(_)))
        .count()
}

fn matches<'a>(pattern: &[Segment], segments: &[&'a str]) -> Option<Params<'a>> {
    if pattern.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    for (expected, segment) in pattern.iter().zip(segments) {
        match expected {
            Segment::Literal(text) if text == segment => {}
            Segment::Param(name) if !segment.is_empty() => params.push((*name, *segment)),
            _ => return None,
        }
    }
    Some(Params(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Page {
        Home,
        Lead,
        Rate,
    }

    fn router(head_as_get: bool) -> Router<Page> {
        Router::new(
            [
                (Method::GET, "/", Page::Home),
                (Method::GET, "/projects/{project}/leads/{lead}", Page::Lead),
                (
                    Method::POST,
                    "/projects/{project}/leads/{lead}/rate",
                    Page::Rate,
                ),
            ],
            head_as_get,
        )
    }

    #[test]
    fn a_route_is_found_with_its_parameters() {
        let router = router(false);
        let Found::Route(page, params) = router.find(&Method::GET, "/projects/acme/leads/7") else {
            panic!("not found");
        };
        assert_eq!(page, Page::Lead);
        assert_eq!((params.get("project"), params.get("lead")), ("acme", "7"));
        assert_eq!(params.get("nothing"), "");
        assert!(matches!(
            router.find(&Method::GET, "/"),
            Found::Route(Page::Home, _)
        ));
    }

    #[test]
    fn a_known_path_with_another_method_is_not_allowed() {
        let router = router(false);
        assert_eq!(
            router.find(&Method::GET, "/projects/acme/leads/7/rate"),
            Found::MethodNotAllowed(vec![Method::POST])
        );
        assert_eq!(
            router.find(&Method::HEAD, "/"),
            Found::MethodNotAllowed(vec![Method::GET])
        );
        assert!(matches!(
            self::router(true).find(&Method::HEAD, "/"),
            Found::Route(Page::Home, _)
        ));
    }

    #[test]
    fn a_link_is_its_routes_pattern_filled_in_and_found_again() {
        let router = router(false);
        assert_eq!(router.href(Page::Home, &[]).as_deref(), Some("/"));
        let rate = router.href(Page::Rate, &[&"acme", &7]).unwrap();
        assert_eq!(rate, "/projects/acme/leads/7/rate");
        assert!(matches!(
            router.find(&Method::POST, &rate),
            Found::Route(Page::Rate, _)
        ));
        assert_eq!(
            router.href(Page::Lead, &[&"a b/c?", &1]).as_deref(),
            Some("/projects/a%20b%2Fc%3F/leads/1"),
            "each parameter stays one segment"
        );
        assert_eq!(router.href(Page::Lead, &[&"acme"]), None);
        assert_eq!(router.href(Page::Lead, &[&"acme", &1, &2]), None);
    }

    #[test]
    fn other_paths_are_not_found_and_not_claimed() {
        let router = router(false);
        for path in [
            "/projects",
            "/projects/acme/leads",
            "/projects//leads/7",
            "/projects/acme/leads/7/rate/x",
            "",
        ] {
            assert_eq!(router.find(&Method::GET, path), Found::NotFound, "{path}");
            assert!(!router.has_path(path), "{path}");
        }
        assert!(router.has_path("/projects/a/leads/1/rate"));
        assert!(
            matches!(
                router.find(&Method::GET, "/projects/a/leads/1/"),
                Found::Route(Page::Lead, _)
            ),
            "a trailing slash is the same path"
        );
    }

    #[test]
    fn rows_read_back_as_written() {
        let patterns: Vec<String> = router(false).rows().map(|(_, p, _)| p).collect();
        assert_eq!(
            patterns,
            [
                "/",
                "/projects/{project}/leads/{lead}",
                "/projects/{project}/leads/{lead}/rate"
            ]
        );
    }
}
