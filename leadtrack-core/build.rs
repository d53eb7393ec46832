//! Generates `conformance_tests!` from the conformance checks themselves, so that the
//! macro's list of checks cannot miss one: every public function of a file of
//! `src/testkit/` (but `mod.rs`) is a check, however its generics are written, and becomes
//! one `#[tokio::test]` in a module named after the file. A public function that is not
//! async, or one that takes a backend but is not public, fails the build with a message: it
//! would be a check that cannot run, or one that never does.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    let dir = Path::new("src/testkit");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("src/testkit exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter(|path| path.file_stem().is_some_and(|stem| stem != "mod"))
        .collect();
    files.sort();

    let mut modules = String::new();
    for file in &files {
        println!("cargo::rerun-if-changed={}", file.display());
        let module = file.file_stem().unwrap().to_str().expect("UTF-8 file name");
        let source = fs::read_to_string(file).expect("readable check file");
        let checks = checks(&source, file);
        assert!(!checks.is_empty(), "{} holds no checks", file.display());
        write!(modules, "mod {module} {{ use super::*; ").unwrap();
        for check in checks {
            write!(
                modules,
                "#[tokio::test(flavor = \"multi_thread\", worker_threads = 4)] \
                 async fn {check}() {{ $crate::testkit::{module}::{check}(&$backend).await; }} "
            )
            .unwrap();
        }
        modules.push_str("} ");
    }

    let generated = format!(
        "/// Expands to one `#[tokio::test]` per conformance check, for the [`Backend`] \
         expression, grouped in one module per concern.\n\
         #[macro_export]\n\
         macro_rules! conformance_tests {{ ($backend:expr) => {{ {modules} }}; }}\n"
    );
    let out =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("conformance_tests.rs");
    fs::write(out, generated).expect("writable OUT_DIR");
}

/// The names of the public functions of one check file. Helpers stay `pub(crate)` or
/// private, and take no backend.
fn checks<'a>(source: &'a str, file: &Path) -> Vec<&'a str> {
    let mut checks = Vec::new();
    for line in source.lines() {
        assert!(
            !line.starts_with("pub fn "),
            "{}: `{}`: a check is an async function of a backend",
            file.display(),
            line.trim()
        );
        let public = line.strip_prefix("pub async fn ");
        match public {
            Some(rest) => {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                checks.push(&rest[..end]);
            }
            None => assert!(
                !(line.contains("fn ") && line.contains("Backend")),
                "{}: `{}` takes a backend but is not a public check",
                file.display(),
                line.trim()
            ),
        }
    }
    checks
}
