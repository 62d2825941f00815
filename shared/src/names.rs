//! Syntax checks for Kubernetes names and condition reasons, written out by hand so the
//! crate needs no regex engine.

/// The longest qualified name: a 253-character DNS-subdomain prefix, `/`, a 63-character name.
pub(crate) const MAX_QUALIFIED_NAME_LEN: usize = 316;

/// Why a string is not a Kubernetes qualified name (`[prefix/]name`), or `None` when it is one.
pub(crate) fn qualified_name_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("must not be empty".to_owned());
    }
    if value.len() > MAX_QUALIFIED_NAME_LEN {
        return Some(format!(
            "must be at most {MAX_QUALIFIED_NAME_LEN} characters (got {})",
            value.len()
        ));
    }
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Some(format!(
            "prefix {prefix:?} must be a DNS subdomain (lowercase alphanumerics, '-' and '.', at most 253 characters)"
        ));
    }
    if name.is_empty() || name.len() > MAX_NAME_PART_LEN {
        return Some("name part must be 1 to 63 characters".to_owned());
    }
    if !is_name_part(name) {
        return Some(format!(
            "{name:?} must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric (e.g. 'Available', 'example.com/Ready')"
        ));
    }
    None
}

/// The longest name part of a qualified name (label or annotation key), in bytes.
pub(crate) const MAX_NAME_PART_LEN: usize = 63;

/// The name-part rule of a qualified name (label or annotation key), as messages state it.
pub const NAME_PART_RULE: &str =
    "1 to 63 characters matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?";

/// Whether `name` can be the name part of a qualified name (the part after `prefix/` of a
/// label or annotation key): [`NAME_PART_RULE`].
pub fn is_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let inner_ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    bytes.len() <= MAX_NAME_PART_LEN
        && first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes.iter().all(|&b| inner_ok(b))
}

/// RFC 1123 subdomain: lowercase labels of alphanumerics and '-', joined by '.', ≤ 253.
pub(crate) fn is_dns_subdomain(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 253
        && value.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b.iter()
                    .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

/// Whether `value` matches `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, the condition reason rule.
pub(crate) fn is_reason(value: &str) -> bool {
    let b = value.as_bytes();
    let Some((&first, rest)) = b.split_first() else {
        return false;
    };
    let inner_ok = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    first.is_ascii_alphabetic()
        && rest.iter().all(|&c| inner_ok(c))
        && rest
            .last()
            .is_none_or(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in [
            "Available",
            "a",
            "example.com/Ready",
            "x_y.z-1",
            "hyperfleet.io/Health",
        ] {
            assert_eq!(qualified_name_problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "my type",
            "Example.com/Ready",
            "/Ready",
            "a/",
            "a/b/c",
            &"x".repeat(64),
        ] {
            assert!(qualified_name_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn name_parts() {
        for ok in [
            "a",
            "Z",
            "0",
            "control_plane_endpoint",
            "api.v1-x_Y",
            &"x".repeat(63),
        ] {
            assert!(is_name_part(ok), "{ok}");
        }
        for bad in [
            "",
            "_a",
            "a_",
            "-a",
            "a.",
            "with space",
            "a/b",
            "é",
            "a:b",
            &"x".repeat(64),
        ] {
            assert!(!is_name_part(bad), "{bad:?}");
        }
    }

    #[test]
    fn reasons() {
        for ok in ["A", "NoIssues", "Manifest_Work", "a:b,c", "X1"] {
            assert!(is_reason(ok), "{ok}");
        }
        for bad in [
            "",
            "1Abc",
            "Resources are available",
            "Ends:",
            "Ends,",
            "a-b",
            "É",
        ] {
            assert!(!is_reason(bad), "{bad:?}");
        }
    }
}
