//! The chain a diagnosis prints: links marked ✓ / ✗ / ? / …, each with one line of evidence, the
//! verdict (the first link that decides), the exit code, and the two renderings (`-o text`,
//! `-o json`).

use serde::Serialize;

use crate::message::{redact, truncate};

/// Longest evidence, meaning or action line (bytes); longer text ends in `…`.
pub const MAX_LINE: usize = 512;

/// Exit code: every link ✓.
pub const EXIT_HEALTHY: u8 = 0;
/// Exit code: a link is broken (✗) before any link that could not be read.
pub const EXIT_STUCK: u8 = 1;
/// Exit code: bad flags (clap's usage error).
pub const EXIT_BAD_FLAGS: u8 = 2;
/// Exit code: a link that decides could not be read (a `?` before any ✗).
pub const EXIT_UNREADABLE: u8 = 3;
/// Exit code: nothing is broken or unreadable, but something is still in progress (…).
pub const EXIT_IN_PROGRESS: u8 = 4;

/// How one link reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// ✓ works as it should.
    Ok,
    /// ✗ broken: the chain stops here.
    Broken,
    /// ? could not be read (the evidence says why: 401, 403, 404, timeout, connection refused).
    Unknown,
    /// … not done yet, and not late.
    Waiting,
}

impl Mark {
    /// The symbol of the text output.
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Ok => "✓",
            Mark::Broken => "✗",
            Mark::Unknown => "?",
            Mark::Waiting => "…",
        }
    }
}

/// One link of the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// Stable id, e.g. `hyperfleet.object`, `kubernetes.job`, `maestro.work`.
    pub id: &'static str,
    pub mark: Mark,
    /// The one line that decided the mark.
    pub evidence: String,
    /// What a ✗ / ? / … means (empty on ✓).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub meaning: String,
    /// What to do about it (empty on ✓).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub action: String,
}

impl Link {
    /// A ✓ link.
    pub fn ok(id: &'static str, evidence: impl Into<String>) -> Link {
        Link::new(id, Mark::Ok, evidence, "", "")
    }

    /// A ✗ link: `meaning` says what is broken, `action` what to do.
    pub fn broken(
        id: &'static str,
        evidence: impl Into<String>,
        meaning: impl Into<String>,
        action: impl Into<String>,
    ) -> Link {
        Link::new(id, Mark::Broken, evidence, meaning, action)
    }

    /// A link with evidence only: what it means and what to do are another link's.
    pub fn bare(id: &'static str, mark: Mark, evidence: impl Into<String>) -> Link {
        Link::new(id, mark, evidence, "", "")
    }

    /// A link with every text bounded and credentials removed.
    pub fn new(
        id: &'static str,
        mark: Mark,
        evidence: impl Into<String>,
        meaning: impl Into<String>,
        action: impl Into<String>,
    ) -> Link {
        Link {
            id,
            mark,
            evidence: line(&evidence.into()),
            meaning: line(&meaning.into()),
            action: line(&action.into()),
        }
    }
}

/// A number, or `?` when it is not known.
pub fn known(n: Option<i64>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// `text` on one line, credentials removed, at most [`MAX_LINE`] bytes.
pub fn line(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate(redact(&one_line), MAX_LINE)
}

/// The outcome of the whole chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Healthy,
    Stuck,
    Unreadable,
    InProgress,
}

/// The verdict: the link that decides, and its meaning and action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub status: Status,
    /// The deciding link's id (absent when healthy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<&'static str>,
    pub summary: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub meaning: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub action: String,
}

/// What `diagnose` found, as `-o json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    /// `cluster` or `nodepool`.
    pub kind: &'static str,
    pub id: String,
    pub cluster_id: String,
    /// The HyperFleet object's generation, when read.
    pub generation: Option<i64>,
    /// The Maestro consumer (management cluster) holding the work, when found.
    pub consumer: Option<String>,
    pub links: Vec<Link>,
    pub verdict: Verdict,
    pub exit_code: u8,
}

/// The verdict of `links`: the first ✗ or ? decides (✗ → stuck, ? → could not read); with none,
/// the first … (in progress); with none of those, healthy.
pub fn verdict(links: &[Link]) -> (Verdict, u8) {
    let first = |marks: &[Mark]| links.iter().find(|l| marks.contains(&l.mark));
    let decided = match first(&[Mark::Broken, Mark::Unknown]) {
        Some(l) if l.mark == Mark::Broken => Some((l, Status::Stuck, "stuck", EXIT_STUCK)),
        Some(l) => Some((l, Status::Unreadable, "could not read", EXIT_UNREADABLE)),
        None => first(&[Mark::Waiting])
            .map(|l| (l, Status::InProgress, "in progress", EXIT_IN_PROGRESS)),
    };
    let Some((link, status, what, code)) = decided else {
        let healthy = Verdict {
            status: Status::Healthy,
            link: None,
            summary: "healthy: every link holds".to_owned(),
            meaning: String::new(),
            action: String::new(),
        };
        return (healthy, EXIT_HEALTHY);
    };
    let verdict = Verdict {
        status,
        link: Some(link.id),
        summary: line(&format!("{what} at {}: {}", link.id, link.evidence)),
        meaning: link.meaning.clone(),
        action: link.action.clone(),
    };
    (verdict, code)
}

impl Diagnosis {
    /// Builds the diagnosis of `links` with its verdict and exit code.
    pub fn new(
        kind: &'static str,
        id: &str,
        cluster_id: &str,
        generation: Option<i64>,
        consumer: Option<String>,
        links: Vec<Link>,
    ) -> Diagnosis {
        let (verdict, exit_code) = verdict(&links);
        Diagnosis {
            kind,
            id: line(id),
            cluster_id: line(cluster_id),
            generation,
            consumer: consumer.map(|c| line(&c)),
            links,
            verdict,
            exit_code,
        }
    }

    /// `-o text`: a header, one line per link (mark, id, evidence), then the verdict.
    pub fn text(&self) -> String {
        let cluster = match self.kind {
            "nodepool" => format!(" (cluster {})", self.cluster_id),
            _ => String::new(),
        };
        let generation = self
            .generation
            .map_or_else(|| "unknown".to_owned(), |g| g.to_string());
        let consumer = self
            .consumer
            .as_ref()
            .map_or_else(String::new, |c| format!(", consumer {c}"));
        let mut out = format!(
            "diagnose {} {}{cluster}, generation {generation}{consumer}\n",
            self.kind, self.id
        );
        let width = self.links.iter().map(|l| l.id.len()).max().unwrap_or(0);
        for link in &self.links {
            let (mark, id, evidence) = (link.mark.symbol(), link.id, &link.evidence);
            out.push_str(&format!("{mark} {id:width$}  {evidence}\n"));
        }
        out.push_str(&format!("verdict: {}\n", self.verdict.summary));
        for (label, text) in [
            ("meaning", &self.verdict.meaning),
            ("action", &self.verdict.action),
        ] {
            if !text.is_empty() {
                out.push_str(&format!("  {label}: {text}\n"));
            }
        }
        out
    }

    /// `-o json`: one document (keys as in this struct, in this order).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!(
                "{{\"error\":{}}}",
                serde_json::Value::String(format!("cannot render the diagnosis: {e}"))
            )
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn link(id: &'static str, mark: Mark) -> Link {
        Link::new(id, mark, format!("{id} evidence"), "why", "do")
    }

    #[test]
    fn the_first_broken_or_unreadable_link_decides_the_exit_code() {
        let healthy = [link("a", Mark::Ok), link("b", Mark::Ok)];
        assert_eq!(verdict(&healthy).1, EXIT_HEALTHY);
        let stuck = [
            link("a", Mark::Waiting),
            link("b", Mark::Broken),
            link("c", Mark::Unknown),
        ];
        let (v, code) = verdict(&stuck);
        assert_eq!((v.link, v.status, code), (Some("b"), Status::Stuck, 1));
        let unreadable = [link("a", Mark::Unknown), link("b", Mark::Broken)];
        let (v, code) = verdict(&unreadable);
        assert_eq!((v.link, v.status, code), (Some("a"), Status::Unreadable, 3));
        let waiting = [link("a", Mark::Ok), link("b", Mark::Waiting)];
        let (v, code) = verdict(&waiting);
        assert_eq!((v.link, v.status, code), (Some("b"), Status::InProgress, 4));
    }

    #[test]
    fn lines_are_bounded_single_lines_without_credentials() {
        let long = format!("Bearer s3cr3t-token\nnext {}", "x".repeat(5000));
        let text = line(&long);
        assert!(text.len() <= MAX_LINE, "{}", text.len());
        assert!(!text.contains('\n'));
        assert!(!text.contains("s3cr3t-token"), "{text}");
        assert!(text.ends_with('…'));
    }

    #[test]
    fn json_has_the_documented_keys() {
        let d = Diagnosis::new(
            "cluster",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
            Some(3),
            Some("mgmt-1".into()),
            vec![link("a", Mark::Broken)],
        );
        let v: serde_json::Value = serde_json::from_str(&d.json()).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "cluster_id",
                "consumer",
                "exit_code",
                "generation",
                "id",
                "kind",
                "links",
                "verdict"
            ]
        );
        assert_eq!(v["links"][0]["mark"], "broken");
        assert_eq!(v["verdict"]["status"], "stuck");
        assert_eq!(v["verdict"]["link"], "a");
        assert_eq!(v["exit_code"], 1);
        assert!(d.text().contains("✗ a  a evidence"), "{}", d.text());
    }
}
