//! No circle of imports inside any crate: a module that another module of its crate uses
//! never uses that module back, directly or through others. Shared types live in leaf
//! modules (`dashboard/src/rating.rs`, `sqlite/src/lookup.rs`, ...), so that each module
//! reads on its own. A crate's root and a parent module compose their children and are
//! left out; what counts is siblings and cousins.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found
}

/// A file's module path within its crate (`settings::labels`); the root is `""`.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<_> = relative.iter().map(|p| p.to_str().unwrap()).collect();
    match parts.as_slice() {
        ["lib" | "main"] => String::new(),
        [dirs @ .., "mod"] => dirs.join("::"),
        all => all.join("::"),
    }
}

/// The code of a file without its comments and its test module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    let lines = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"));
    lines.collect::<Vec<_>>().join("\n")
}

/// The words after each `prefix` in `code` (`crate::` gives `inbox` of `crate::inbox::x`
/// and each head of `crate::{a, b::c}`).
fn heads(code: &str, prefix: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            found.extend(group.split(',').map(|part| word(part.trim())));
        } else {
            found.push(word(rest));
        }
    }
    found
}

/// Each module's uses of its crate's other modules, parents and children left out.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<_> = sources(src)
        .into_iter()
        .map(|file| {
            (
                module_of(src, &file),
                std::fs::read_to_string(&file).unwrap(),
            )
        })
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let related =
        |a: &str, b: &str| a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"));
    let mut graph = BTreeMap::new();
    for (module, text) in &files {
        let code = code(text);
        let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
        let crate_wide = heads(&code, "crate::").into_iter();
        let siblings = heads(&code, "super::")
            .into_iter()
            .map(|name| match parent {
                "" => name,
                parent => format!("{parent}::{name}"),
            });
        let used: BTreeSet<String> = crate_wide
            .chain(siblings)
            .filter(|target| modules.contains(target) && !target.is_empty())
            .filter(|target| target != module && !related(module, target))
            .collect();
        graph.insert(module.clone(), used);
    }
    graph
}

/// A circle of `graph`, if it has one, as the modules along it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        module: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            return Some(path[at..].iter().map(|m| (*m).to_owned()).collect());
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for next in &graph[module] {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_a_circle_of_imports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() > 10, "the workspace's crates: {crates:?}");
    for src in crates {
        let graph = uses(&src);
        assert_eq!(
            circle(&graph),
            None,
            "a circle of imports in {}",
            src.display()
        );
    }
}

#[test]
fn a_circle_is_found() {
    let graph = BTreeMap::from([
        ("inbox".to_owned(), BTreeSet::from(["lead".to_owned()])),
        ("lead".to_owned(), BTreeSet::from(["spam".to_owned()])),
        ("spam".to_owned(), BTreeSet::from(["inbox".to_owned()])),
        ("rating".to_owned(), BTreeSet::new()),
    ]);
    assert_eq!(circle(&graph).unwrap(), ["inbox", "lead", "spam"]);
    let code = code("use crate::{inbox::Member, lead};\n// crate::spam\nuse super::labels;");
    assert_eq!(heads(&code, "crate::"), ["inbox", "lead"]);
    assert_eq!(heads(&code, "super::"), ["labels"]);
}
