//! The list `search` parameter: the subset of the API's TSL query language that the recordings
//! use (`fixtures/hyperfleet/real-api/` 03–05, 19, 48, 51, 52) and the differential tests make
//! (`real::differential_hyperfleet`): comparisons of a path with a quoted string, joined by
//! `and`:
//!
//! - `name='<name>'`
//! - `labels.<key>='<value>'`
//! - `spec.<a>.<b>…='<value>'` (a string field of the spec; any depth)
//! - `status.conditions.<Type>='<True|False|Unknown>'` (the status of a resource condition)
//!
//! A search the real API refuses gets the real API's 400 (`HYPERFLEET-VAL-005`) where
//! [`refusal`] can tell (measured on the kit's API: an unterminated string, a query cut short,
//! a field the resource does not have, a path into something that is no related resource, a
//! condition status that is none). Anything else outside the subset (`or`, `in`, `!=`, numbers,
//! other fields) is refused with a 400 that says what the fake understands: the real API accepts
//! more, and a test that needs more must extend this module rather than get a silently wrong
//! list.

use serde_json::Value;

/// A parsed `search`: every comparison must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search(Vec<Comparison>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparison {
    field: Field,
    value: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Name,
    Label(String),
    Spec(Vec<String>),
    Condition(String),
}

/// What the fake answers for a search it does not understand (the `detail` of the 400).
pub fn unsupported(search: &str) -> String {
    format!(
        "search {search:?} is outside the fake API's TSL subset: use comparisons name='<name>', \
         labels.<key>='<value>', spec.<path>='<value>' or status.conditions.<Type>='True|False' \
         joined by and"
    )
}

/// Parses `search`; `None` when it is outside the subset.
pub fn parse(search: &str) -> Option<Search> {
    split_and(search)
        .into_iter()
        .map(comparison)
        .collect::<Option<Vec<_>>>()
        .map(Search)
}

/// `search` split at ` and ` outside quoted values.
fn split_and(search: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = search;
    loop {
        let mut quoted = false;
        let split = rest.char_indices().find(|(i, c)| {
            if *c == '\'' {
                quoted = !quoted;
            }
            !quoted && rest[*i..].starts_with(" and ")
        });
        match split {
            Some((i, _)) => {
                parts.push(&rest[..i]);
                rest = &rest[i + " and ".len()..];
            }
            None => {
                parts.push(rest);
                return parts;
            }
        }
    }
}

/// The `detail` of the real API's 400 (`HYPERFLEET-VAL-005`) for a `search` of resources of
/// `kind` that it refuses, when the fake can tell; `None` otherwise. The parser's errors
/// quote the query as the server wraps it (`(<search>) AND kind = '<kind>'`) with a caret
/// under the position it stopped at.
pub fn refusal(search: &str, kind: &str) -> Option<String> {
    let wrapped = format!("({search}) AND kind = '{kind}'");
    let at = |byte: usize| wrapped[..byte].chars().count();
    let syntax = |what: &str, position: usize| {
        format!(
            "failed to parse search query: {what} at position {position}:\n{wrapped}\n{}^",
            " ".repeat(position)
        )
    };
    if search.matches('\'').count() % 2 == 1 {
        // The last quote opens a string the query never closes.
        return Some(syntax("Unterminated string", at(wrapped.rfind('\'')?)));
    }
    let end = search.trim_end().to_ascii_lowercase();
    if end.ends_with('=') || end.ends_with(" and") || end.ends_with(" or") {
        // The parser stops at the `)` closing the query.
        return Some(syntax("syntax error", at(1 + search.len())));
    }
    split_and(search).into_iter().find_map(field_refusal)
}

/// The top-level keys of a presented resource (see the module of the fake API).
const PRESENTED: [&str; 16] = [
    "id",
    "kind",
    "href",
    "name",
    "labels",
    "spec",
    "generation",
    "owner_references",
    "status",
    "tenancy",
    "created_time",
    "created_by",
    "updated_time",
    "updated_by",
    "deleted_time",
    "deleted_by",
];

const INVALID_FIELD: &str = "invalid field in search or order query";

/// A single-segment field the real API refuses: one the resource does not have, or `labels`
/// and `status` as a whole (measured).
fn invalid_field(field: &str) -> Option<String> {
    let identifier = field.starts_with(|c: char| c.is_ascii_alphabetic())
        && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (identifier && (!PRESENTED.contains(&field) || matches!(field, "labels" | "status")))
        .then(|| INVALID_FIELD.to_owned())
}

/// The real API's refusal of one comparison (or bare word) of the fake's grammar.
fn field_refusal(part: &str) -> Option<String> {
    let part = part.trim();
    let Some((path, value)) = part.split_once('=') else {
        return invalid_field(part);
    };
    let (path, value) = (path.trim(), value.trim());
    if path.ends_with(['!', '<', '>']) || value.starts_with('=') {
        return None;
    }
    let segments: Vec<&str> = path.split('.').collect();
    let refused = match segments.as_slice() {
        [field] => invalid_field(field),
        ["labels" | "spec", ..] => None,
        ["status", "conditions", _] => {
            let status = value.strip_prefix('\'')?.strip_suffix('\'')?;
            (!matches!(status, "True" | "False" | "Unknown")).then(|| {
                format!("condition status '{status}' is invalid: must be True, False, or Unknown")
            })
        }
        [first, ..] => Some(format!("{first} is not a related resource of Resource")),
        [] => None,
    };
    // An unquoted identifier on the right is a field too.
    refused.or_else(|| invalid_field(value))
}

fn comparison(search: &str) -> Option<Comparison> {
    let (path, quoted) = search.split_once('=')?;
    let path = path.trim();
    let quoted = quoted.trim();
    let value = quoted.strip_prefix('\'')?.strip_suffix('\'')?;
    if value.contains('\'') {
        return None;
    }
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/'))
    };
    let mut parts = path.split('.');
    let field = match parts.next()? {
        "name" if parts.next().is_none() => Field::Name,
        "labels" => {
            let key = parts.collect::<Vec<_>>().join(".");
            if key.is_empty() || !key.split('.').all(segment_ok) {
                return None;
            }
            Field::Label(key)
        }
        "spec" => {
            let segments: Vec<String> = parts.map(str::to_owned).collect();
            if segments.is_empty() || !segments.iter().all(|s| segment_ok(s)) {
                return None;
            }
            Field::Spec(segments)
        }
        "status" => {
            if parts.next()? != "conditions" {
                return None;
            }
            let type_ = parts.next()?;
            if parts.next().is_some()
                || !segment_ok(type_)
                || !matches!(value, "True" | "False" | "Unknown")
            {
                return None;
            }
            Field::Condition(type_.to_owned())
        }
        _ => return None,
    };
    Some(Comparison {
        field,
        value: value.to_owned(),
    })
}

impl Search {
    /// Whether the presented resource matches.
    pub fn matches(&self, resource: &Value) -> bool {
        self.0.iter().all(|c| c.matches(resource))
    }
}

impl Comparison {
    fn matches(&self, resource: &Value) -> bool {
        match &self.field {
            Field::Name => resource["name"] == self.value.as_str(),
            Field::Label(key) => resource["labels"][key] == self.value.as_str(),
            Field::Spec(path) => {
                let mut cur = &resource["spec"];
                for seg in path {
                    cur = &cur[seg.as_str()];
                }
                cur.as_str() == Some(self.value.as_str())
            }
            Field::Condition(type_) => {
                resource["status"]["conditions"]
                    .as_array()
                    .is_some_and(|cs| {
                        cs.iter().any(|c| {
                            c["type"] == type_.as_str() && c["status"] == self.value.as_str()
                        })
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_recorded_searches_parse_and_match() {
        let resource = json!({
            "name": "prod-eu-1",
            "labels": {"team": "platform"},
            "spec": {"gcp_region": "us-east1", "platform": {"gcp": {"region": "europe-west2"}}},
            "status": {"conditions": [{"type": "Reconciled", "status": "True"}]},
        });
        for (search, matches) in [
            ("labels.team='platform'", true),
            ("labels.team='nobody'", false),
            ("spec.gcp_region='us-east1'", true),
            ("spec.platform.gcp.region='europe-west2'", true),
            ("status.conditions.Reconciled='True'", true),
            ("status.conditions.Reconciled='False'", false),
            ("status.conditions.MgmtHealthSuccessful='True'", false),
            ("name='prod-eu-1'", true),
            ("name='prod-eu-1' and spec.gcp_region='us-east1'", true),
            (
                "status.conditions.Reconciled='True' and name='prod-eu-2'",
                false,
            ),
            ("labels.team='a and b' and name='prod-eu-1'", false),
        ] {
            let parsed = parse(search).unwrap_or_else(|| panic!("{search} parses"));
            assert_eq!(parsed.matches(&resource), matches, "{search}");
        }
    }

    #[test]
    fn searches_outside_the_subset_are_refused() {
        for search in [
            "",
            "labels.team",
            "labels.team=platform",
            "labels.team='a' or spec.x='b'",
            "labels.team='a' and ",
            "name.x='prod'",
            "status.conditions.Reconciled='maybe'",
            "status.phase='Ready'",
            "spec.replicas=3",
            "labels.team!='a'",
        ] {
            assert_eq!(parse(search), None, "{search}");
        }
        assert!(unsupported("x").contains("labels.<key>='<value>'"));
    }

    #[test]
    fn the_real_apis_refusals_are_told_where_measured() {
        for (search, detail) in [
            ("bogus", Some(INVALID_FIELD.to_owned())),
            ("nope='x'", Some(INVALID_FIELD.to_owned())),
            ("labels='x'", Some(INVALID_FIELD.to_owned())),
            ("name=x", Some(INVALID_FIELD.to_owned())),
            ("labels.team='a' and nope='b'", Some(INVALID_FIELD.to_owned())),
            (
                "foo.bar='x'",
                Some("foo is not a related resource of Resource".to_owned()),
            ),
            (
                "status.phase='x'",
                Some("status is not a related resource of Resource".to_owned()),
            ),
            (
                "status.conditions.Reconciled='maybe'",
                Some(
                    "condition status 'maybe' is invalid: must be True, False, or Unknown"
                        .to_owned(),
                ),
            ),
            (
                "name=",
                Some(
                    "failed to parse search query: syntax error at position 6:\n(name=) AND kind = 'Cluster'\n      ^"
                        .to_owned(),
                ),
            ),
            (
                "name='x' and",
                Some(format!(
                    "failed to parse search query: syntax error at position 13:\n(name='x' and) AND kind = 'Cluster'\n{}^",
                    " ".repeat(13)
                )),
            ),
            (
                "name='x",
                Some(format!(
                    "failed to parse search query: Unterminated string at position 29:\n(name='x) AND kind = 'Cluster'\n{}^",
                    " ".repeat(29)
                )),
            ),
            ("name='x' or name='y'", None),
            ("generation=1", None),
            ("labels.team!='a'", None),
        ] {
            assert_eq!(refusal(search, "Cluster"), detail, "{search}");
        }
        assert!(parse("status.conditions.Reconciled='Unknown'").is_some());
    }
}
