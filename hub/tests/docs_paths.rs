//! Every path the README and the reference pages name exists: a newcomer who follows one
//! finds the file. Checked are the pages' links (relative to the page) and every path in
//! backticks that ends in a file's extension or a `/` (relative to the repository, the
//! page, or the folders the tours walk from: `hub/src/`, `hub/src/core/`, …). Code blocks
//! are left out: they hold commands and pictures, not references.

use std::path::{Path, PathBuf};

/// Where a path in backticks may be read from, besides its page's folder.
const BASES: &[&str] = &[
    "",
    "hub",
    "hub/src",
    "hub/src/core",
    "hub/src/edge",
    "board-node",
    "board-node/src",
    "protocol/src",
    "hub/tests",
    "deploy",
    // The shared material beside the repository (real games, the Laws).
    "../shared",
];

const EXTENSIONS: &[&str] = &[
    "rs",
    "md",
    "toml",
    "sh",
    "service",
    "conf",
    "json",
    "pgn",
    "trf",
    "py",
    "js",
    "mjs",
    "html",
    "css",
    "png",
    "svg",
    "acl",
    "csv",
    "txt",
    "lock",
    "webmanifest",
    "rules",
    "example",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// The pages a newcomer reads.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md"), root.join("deploy/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The page without its fenced code blocks.
fn prose(text: &str) -> String {
    let mut inside = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Every `](target)` of the page, without its `#anchor`, but links off the machine.
fn links(prose: &str) -> Vec<String> {
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .map(|target| target.split('#').next().unwrap_or_default().to_owned())
        .filter(|target| !target.is_empty() && !target.contains("://") && !target.contains(' '))
        .collect()
}

/// Every path in backticks: a word with a `/`, ending in a file's extension or a `/`; not an
/// HTTP path, a URL, a topic, a flag or a placeholder, nor what a run writes under `target/`
/// (screenshots, reports), which a clean checkout does not hold yet.
fn named_paths(prose: &str) -> Vec<String> {
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| t.contains('/') && !t.contains(char::is_whitespace))
        .filter(|t| !t.starts_with('/') && !t.starts_with('-') && !t.contains("://"))
        .filter(|t| !t.starts_with("target/"))
        .filter(|t| !t.contains(|c: char| c.is_ascii_uppercase() || "{}…*#<>$=,".contains(c)))
        .filter(|t| {
            t.ends_with('/')
                || t.rsplit_once('.')
                    .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_path_the_readme_and_the_docs_name_exists() {
    let root = repository();
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).expect("a page");
        let prose = prose(&text);
        let folder = page.parent().expect("a page's folder");
        let name = page
            .strip_prefix(&root)
            .unwrap_or(&page)
            .display()
            .to_string();
        for link in links(&prose) {
            checked += 1;
            if !folder.join(&link).exists() {
                missing.push(format!("{name}: link {link}"));
            }
        }
        for path in named_paths(&prose) {
            checked += 1;
            let found = folder.join(&path).exists()
                || BASES
                    .iter()
                    .any(|base| root.join(base).join(&path).exists());
            if !found {
                missing.push(format!("{name}: `{path}`"));
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} paths found: is the parser reading the pages?"
    );
    assert!(
        missing.is_empty(),
        "named but missing:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_readme_is_a_tour_not_the_reference() {
    let readme = std::fs::read_to_string(repository().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: move reference to docs/"
    );
    for page in [
        "docs/architecture.md",
        "docs/interfaces.md",
        "docs/security.md",
    ] {
        assert!(readme.contains(page), "the README leads to {page}");
    }
}

#[test]
fn the_path_finder_finds_paths_and_leaves_the_rest() {
    let found = named_paths(
        "see `hub/src/run/shell.rs`, `deploy/`, `/api/boards/{n}`, `zeitnot/default/up`, \
         `nats://a:4222`, `--data DIR`, `core/game/`, `target/screenshots/a.png` and `a/B.rs`",
    );
    assert_eq!(found, ["hub/src/run/shell.rs", "deploy/", "core/game/"]);
    assert_eq!(
        links("[a](docs/a.md#x) [b](https://x.org/) [c](../deploy/README.md)"),
        ["docs/a.md", "../deploy/README.md"]
    );
}
