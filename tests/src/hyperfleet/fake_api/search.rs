//! The list `search` parameter: the subset of the API's TSL query language that the recordings
//! use (`fixtures/hyperfleet/real-api/` 03–05, 19, 48, 51, 52) and the differential tests make
//! (`real::differential_hyperfleet`): comparisons of a path with a quoted string, joined by
//! `and`:
//!
//! - `name='<name>'`
//! - `labels.<key>='<value>'`
//! - `spec.<a>.<b>…='<value>'` (a string field of the spec; any depth)
//! - `status.conditions.<Type>='<True|False>'` (the status of a resource condition)
//!
//! Anything else (`or`, `in`, `!=`, numbers, other fields) is refused with a 400 that says
//! what the fake understands: the real API accepts more, and a test that needs more must extend
//! this module rather than get a silently wrong list.

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
    let mut comparisons = Vec::new();
    let mut rest = search;
    // ` and ` outside a quoted value joins comparisons.
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
                comparisons.push(comparison(&rest[..i])?);
                rest = &rest[i + " and ".len()..];
            }
            None => {
                comparisons.push(comparison(rest)?);
                return Some(Search(comparisons));
            }
        }
    }
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
            if parts.next().is_some() || !segment_ok(type_) || !matches!(value, "True" | "False") {
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
}
