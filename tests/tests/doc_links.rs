//! The documentation's links hold: every relative link and `#anchor` in `README.md` and
//! `docs/*.md` names a file of the repository and, for a Markdown page, one of its headings (or an
//! `<a id="…">`) by GitHub's anchor rules; and the README and the index, `docs/README.md`, link
//! every page under `docs/`, so no reference page is out of reach.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use testbed::docs::{pages, root};

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// What a page offers and what it asks for.
struct Page {
    /// The anchors of its headings, and its `<a id="…">` / `<a name="…">`.
    anchors: BTreeSet<String>,
    /// Each link's (and image's) line and destination, as written.
    links: Vec<(usize, String)>,
}

/// Reads a page as GitHub does: CommonMark with tables; nothing in a code block or code span is
/// a link or a heading.
fn parse(text: &str) -> Page {
    let html_id = regex::Regex::new(r#"<a\s+(?:id|name)="([^"]+)""#).unwrap();
    let mut anchors = BTreeSet::new();
    let mut slugs: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    let mut links = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let slug = slug(&heading.take().unwrap_or_default());
                // A repeated heading gets `-1`, `-2`, … after the first.
                let seen = slugs.entry(slug.clone()).or_insert(0);
                anchors.insert(match *seen {
                    0 => slug,
                    n => format!("{slug}-{n}"),
                });
                *seen += 1;
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                let line = text[..range.start].matches('\n').count() + 1;
                links.push((line, dest_url.into_string()));
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                anchors.extend(html_id.captures_iter(&html).map(|c| c[1].to_owned()));
            }
            _ => {}
        }
    }
    Page { anchors, links }
}

/// GitHub's anchor for a heading's text: lowercased, every character but letters, digits, `-`,
/// `_` and spaces removed, each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// `dest` (a path relative to `page`) as a path relative to the repository root, or `None` when
/// it leads out of the repository.
fn resolve(page: &str, dest: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let dir = Path::new(page).parent().unwrap_or(Path::new(""));
    for component in dir.join(dest).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// Whether `dest` is a URL (`https:`, `mailto:`, …) rather than a path in the repository.
fn is_url(dest: &str) -> bool {
    dest.split_once(':')
        .is_some_and(|(scheme, _)| !scheme.is_empty() && !scheme.contains(['/', '#', '.']))
}

/// What is wrong with the links of `page` (its path relative to the root) whose text is `text`:
/// one line per link that leads nowhere. Other pages are read from the checkout.
fn problems(page: &str, text: &str) -> Vec<String> {
    let this = parse(text);
    let mut problems = Vec::new();
    for (line, dest) in &this.links {
        if is_url(dest) {
            continue;
        }
        let (path, anchor) = match dest.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (dest.as_str(), None),
        };
        let at = format!("{page}:{line}: ({dest})");
        let target = if path.is_empty() {
            page.to_owned()
        } else {
            match resolve(page, path) {
                Some(target) => target,
                None => {
                    problems.push(format!("{at} leads out of the repository"));
                    continue;
                }
            }
        };
        if !root().join(&target).exists() {
            problems.push(format!("{at}: no {target} in the repository"));
            continue;
        }
        let Some(anchor) = anchor.filter(|_| target.ends_with(".md")) else {
            continue;
        };
        let anchors = if target == page {
            this.anchors.clone()
        } else {
            parse(&read(&target)).anchors
        };
        if !anchors.contains(anchor) {
            problems.push(format!("{at}: {target} has no heading or id `{anchor}`"));
        }
    }
    problems
}

#[test]
fn every_link_of_the_readme_and_the_docs_resolves() {
    let mut all = Vec::new();
    let mut links = 0;
    for page in pages() {
        let text = read(&page);
        links += parse(&text).links.len();
        all.extend(problems(&page, &text));
    }
    assert!(
        all.is_empty(),
        "links that lead nowhere:\n{}",
        all.join("\n")
    );
    assert!(
        links > 50,
        "only {links} links found: is the parser reading the pages?"
    );
}

/// The pages of `docs/` that `page` links, by path relative to the root.
fn linked_docs(page: &str) -> BTreeSet<String> {
    parse(&read(page))
        .links
        .iter()
        .filter(|(_, dest)| !is_url(dest))
        .filter_map(|(_, dest)| resolve(page, dest.split('#').next().unwrap_or_default()))
        .filter(|target| target.starts_with("docs/") && target.ends_with(".md"))
        .collect()
}

#[test]
fn the_readme_and_the_index_link_every_page() {
    let docs: BTreeSet<String> = pages()
        .into_iter()
        .filter(|p| p.starts_with("docs/"))
        .collect();
    assert!(
        docs.contains("docs/README.md"),
        "docs/README.md is the index"
    );
    for (page, expected) in [
        ("README.md", docs.clone()),
        (
            "docs/README.md",
            docs.iter()
                .filter(|p| *p != "docs/README.md")
                .cloned()
                .collect(),
        ),
    ] {
        let linked = linked_docs(page);
        let missing: Vec<_> = expected.difference(&linked).collect();
        assert!(missing.is_empty(), "{page} does not link {missing:?}");
    }
}

#[test]
fn github_anchors() {
    for (heading, anchor) in [
        (
            "The report (`/results/adapter-report.json`)",
            "the-report-resultsadapter-reportjson",
        ),
        (
            "Try it locally: the framework's dry-run",
            "try-it-locally-the-frameworks-dry-run",
        ),
        (
            "Deploying: manifests and RBAC",
            "deploying-manifests-and-rbac",
        ),
        ("Uninstall, and what stays", "uninstall-and-what-stays"),
        ("local-pulse: whole pulses", "local-pulse-whole-pulses"),
        ("snake_case and ✓ marks", "snake_case-and--marks"),
    ] {
        assert_eq!(slug(heading), anchor, "{heading}");
    }
    let page = parse("# Title\n\n## Same\n\n## Same\n\n<a id=\"here\"></a>**Bold.**\n");
    assert_eq!(
        page.anchors,
        ["here", "same", "same-1", "title"]
            .map(str::to_owned)
            .into()
    );
}

#[test]
fn a_link_that_leads_nowhere_is_caught() {
    let text = "# Top\n\n[ok](#top) [ok](docs/helm.md#install) [ok](https://example.com/x#y) \
                [ok](manifests/)\n\n\
                [file](docs/nope.md) [anchor](docs/helm.md#nope) [here](#nope) [out](../x.md)\n\n\
                `[code](docs/nope.md)`\n\n```\n[fenced](docs/nope.md)\n```\n\n\
                | a | b |\n|---|---|\n| [cell](#nope-either) | `x\\|y` |\n";
    let found = problems("README.md", text);
    assert_eq!(found.len(), 5, "{found:#?}");
    for (problem, dest) in found.iter().zip([
        "docs/nope.md",
        "docs/helm.md#nope",
        "#nope",
        "../x.md",
        "#nope-either",
    ]) {
        assert!(problem.contains(&format!("({dest})")), "{problem}");
    }
    // From a page under docs/, paths are relative to it.
    assert!(problems("docs/x.md", "[a](helm.md#install) [b](../README.md)").is_empty());
    assert_eq!(problems("docs/x.md", "[a](docs/helm.md)").len(), 1);
}
