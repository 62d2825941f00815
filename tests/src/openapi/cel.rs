//! The CEL rules (`x-kubernetes-validations`) the conformance tests evaluate, by hand.
//!
//! Not a CEL interpreter. Two layers:
//! - a tiny evaluator for boolean combinations (`||`, `&&`, `!`, `c ? a : b`, parentheses) of
//!   atoms: `self.matches('…')`, `self.startsWith('…')`, `has(self.a.b)`, `self.a.b == 'x'` /
//!   `!=`, `size(self.a) >= n`, `isURL(self)`, `true`/`false`;
//! - whole rules recognised by shape or exact text (the GCP same-project rule, the networking
//!   CIDR-uniqueness rule, the APIServer hostname rule) and evaluated in Rust.
//!
//! Anything else is `Unsupported`, which the conformance tests surface rather than pass.
//! `||` and `&&` follow CEL's commutative semantics: a known `true` disjunct (known `false`
//! conjunct) decides even when another part is unsupported.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// Uses `oldSelf`: only evaluated on update.
    Transition,
    Unsupported,
}

/// Compiles (once per pattern; clones share the compiled program).
pub fn compile(pattern: &str) -> Regex {
    static CACHE: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Default::default);
    let mut cache = CACHE.lock().unwrap();
    cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).unwrap_or_else(|e| panic!("pattern {pattern}: {e}")))
        .clone()
}

/// Evaluates `rule` with `self` bound to `value`.
pub fn evaluate(rule: &str, value: &Value) -> Verdict {
    let rule = rule.split_whitespace().collect::<Vec<_>>().join(" ");
    if rule.contains("oldSelf") {
        return Verdict::Transition;
    }
    let result = whole_rule(&rule, value).or_else(|| expr(&rule, value));
    match result {
        Some(true) => Verdict::Pass,
        Some(false) => Verdict::Fail,
        None => Verdict::Unsupported,
    }
}

/// Undoes CEL string escapes (`\\` → `\`, `\'` → `'`).
fn unescape(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len());
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(next) = chars.next()
        {
            out.push(next);
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits `text` at top-level occurrences of `sep` (outside quotes and brackets).
fn split_top(text: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let c = bytes[i] as char;
        match quote {
            Some(q) => {
                if c == '\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ if depth == 0 && text[i..].starts_with(sep) => {
                    parts.push(text[start..i].trim().to_owned());
                    i += sep.len();
                    start = i;
                    continue;
                }
                _ => {}
            },
        }
        i += 1;
    }
    parts.push(text[start..].trim().to_owned());
    parts
}

/// Whether `text` is one parenthesised group `( … )`.
fn wrapped(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let mut depth = 0i32;
    for c in inner.chars() {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then_some(inner)
}

fn expr(text: &str, value: &Value) -> Option<bool> {
    let text = text.trim();
    // Ternary: `cond ? a : b` (right-assoc, top level).
    let q = split_top(text, " ? ");
    if q.len() == 2 {
        let branches = split_top(&q[1], " : ");
        if branches.len() == 2 {
            return if expr(&q[0], value)? {
                expr(&branches[0], value)
            } else {
                expr(&branches[1], value)
            };
        }
        return None;
    }
    let any = split_top(text, " || ");
    if any.len() > 1 {
        let results: Vec<_> = any.iter().map(|p| expr(p, value)).collect();
        if results.contains(&Some(true)) {
            return Some(true);
        }
        return results.iter().all(Option::is_some).then_some(false);
    }
    let all = split_top(text, " && ");
    if all.len() > 1 {
        let results: Vec<_> = all.iter().map(|p| expr(p, value)).collect();
        if results.contains(&Some(false)) {
            return Some(false);
        }
        return results.iter().all(Option::is_some).then_some(true);
    }
    if let Some(inner) = wrapped(text) {
        return expr(inner, value);
    }
    if let Some(rest) = text.strip_prefix('!') {
        return expr(rest, value).map(|b| !b);
    }
    atom(text, value)
}

/// `self.a.b` → the value (Null when absent).
fn path<'v>(text: &str, value: &'v Value) -> Option<&'v Value> {
    let rest = text.strip_prefix("self")?;
    let mut current = value;
    if rest.is_empty() {
        return Some(current);
    }
    for field in rest.strip_prefix('.')?.split('.') {
        if !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        current = current.get(field).unwrap_or(&Value::Null);
    }
    Some(current)
}

fn atom(text: &str, value: &Value) -> Option<bool> {
    let quoted = r#"(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")"#;
    let literal = |c: &regex::Captures<'_>, at: usize| {
        unescape(
            c.get(at)
                .or_else(|| c.get(at + 1))
                .map_or("", |m| m.as_str()),
        )
    };
    match text {
        "true" => return Some(true),
        "false" => return Some(false),
        "isURL(self)" => return value.as_str().map(is_url),
        _ => {}
    }
    if let Some(c) = compile(r"^(self(?:\.\w+)*)\.(matches|startsWith|endsWith|contains)\((.*)\)$")
        .captures(text)
    {
        let s = path(&c[1], value)?.as_str()?;
        let arg = string_expr(&c[3], value)?;
        return Some(match &c[2] {
            "matches" => compile(&arg).is_match(s),
            "startsWith" => s.starts_with(&arg),
            "endsWith" => s.ends_with(&arg),
            _ => s.contains(&arg),
        });
    }
    if let Some(c) = compile(r"^has\((self(?:\.\w+)+)\)$").captures(text) {
        return Some(!path(&c[1], value)?.is_null());
    }
    if let Some(c) = compile(&format!(r"^(self(?:\.\w+)*) (==|!=) {quoted}$")).captures(text) {
        let equal = path(&c[1], value)?.as_str() == Some(literal(&c, 3).as_str());
        return Some(equal == (&c[2] == "=="));
    }
    if let Some(c) = compile(r"^size\((self(?:\.\w+)*)\) (>=|<=|==) (\d+)$").captures(text) {
        let target = path(&c[1], value)?;
        let size = match target {
            Value::Array(a) => a.len(),
            Value::String(s) => s.chars().count(),
            Value::Object(o) => o.len(),
            _ => return None,
        };
        let n: usize = c[3].parse().ok()?;
        return Some(match &c[2] {
            ">=" => size >= n,
            "<=" => size <= n,
            _ => size == n,
        });
    }
    None
}

/// A string expression: quoted literals and `self.a.b` strings joined by `+`.
fn string_expr(text: &str, value: &Value) -> Option<String> {
    let literal = compile(r#"^(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")$"#);
    let mut out = String::new();
    for part in split_top(text, " + ") {
        if let Some(c) = literal.captures(&part) {
            out.push_str(&unescape(
                c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str()),
            ));
        } else {
            out.push_str(path(&part, value)?.as_str()?);
        }
    }
    Some(out)
}

/// A URL with a scheme and a host (Kubernetes' `isURL` accepts absolute URLs).
fn is_url(s: &str) -> bool {
    compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+[^\s]*$").is_match(s)
}

/// Rules with comprehensions (`all`, `exists`) that matter for what we send, by shape or text.
fn whole_rule(rule: &str, value: &Value) -> Option<bool> {
    // networking: CIDR strings pairwise different across the three lists.
    if rule.starts_with("(!has(self.machineNetwork) && self.clusterNetwork.all(c, self.serviceNetwork.all(s, c.cidr != s.cidr))") {
        let cidrs = |list: &str| -> Vec<String> {
            value[list]
                .as_array()
                .map(|l| l.iter().filter_map(|e| e["cidr"].as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        let (c, s, m) = (cidrs("clusterNetwork"), cidrs("serviceNetwork"), cidrs("machineNetwork"));
        let disjoint = |a: &[String], b: &[String]| a.iter().all(|x| !b.contains(x));
        return Some(disjoint(&c, &s) && disjoint(&m, &c) && disjoint(&m, &s));
    }
    // spec: APIServer LoadBalancer hostname must not be a named certificate. Only a
    // LoadBalancer hostname can clash; we never send one (otherwise: unsupported).
    if rule.starts_with("!self.services.exists(s, s.service == 'APIServer' && has(s.servicePublishingStrategy.loadBalancer)") {
        let hostname = value["services"].as_array().is_some_and(|services| {
            services.iter().any(|s| {
                s["service"] == "APIServer"
                    && s["servicePublishingStrategy"]["loadBalancer"]["hostname"]
                        .as_str()
                        .is_some_and(|h| !h.is_empty())
            })
        });
        return (!hostname).then_some(true);
    }
    // Azure-only rules are vacuously true on other platforms.
    let platform = value["platform"]["type"].as_str()?;
    if platform != "Azure"
        && (rule.starts_with("self.platform.type != \"Azure\" || ")
            || (rule.starts_with("self.platform.type == \"Azure\" ? ") && rule.ends_with(": true")))
    {
        return Some(true);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert_eq!(
            evaluate("self.matches('^[0-9]+$')", &json!("123")),
            Verdict::Pass
        );
        assert_eq!(
            evaluate("self.matches('^[0-9]+$')", &json!("12a")),
            Verdict::Fail
        );
        assert_eq!(
            evaluate(r"self.matches('^a\\.b$')", &json!("a.b")),
            Verdict::Pass
        );
        assert_eq!(
            evaluate(r"self.matches('^a\\.b$')", &json!("axb")),
            Verdict::Fail
        );
        assert_eq!(
            evaluate("!self.startsWith('gcp-')", &json!("gcp-x")),
            Verdict::Fail
        );
        assert_eq!(
            evaluate("!self.startsWith('gcp-')", &json!("x")),
            Verdict::Pass
        );
        assert_eq!(
            evaluate("self == oldSelf", &json!("x")),
            Verdict::Transition
        );
        assert_eq!(
            evaluate("self.foo.bar()", &json!("x")),
            Verdict::Unsupported
        );
        let o = json!({"type": "Route", "route": {}});
        assert_eq!(
            evaluate(
                "self.type == 'NodePort' ? has(self.nodePort) : !has(self.nodePort)",
                &o
            ),
            Verdict::Pass
        );
        assert_eq!(
            evaluate(
                "self.type == 'LoadBalancer' ? !has(self.nodePort) && !has(self.route) : !has(self.loadBalancer)",
                &json!({"type": "LoadBalancer", "route": {}})
            ),
            Verdict::Fail
        );
        assert_eq!(
            evaluate(
                "self.type == 'x' || self.unknown.all(a, a)",
                &json!({"type": "x"})
            ),
            Verdict::Pass
        );
        assert_eq!(
            evaluate(
                "self.type == 'y' || self.unknown.all(a, a)",
                &json!({"type": "x"})
            ),
            Verdict::Unsupported
        );
        assert_eq!(
            evaluate("size(self.s) >= 2", &json!({"s": [1]})),
            Verdict::Fail
        );
        assert_eq!(
            evaluate(
                "(self.a == 'x' || self.b == \"y\") && has(self.c)",
                &json!({"b": "y", "c": 1})
            ),
            Verdict::Pass
        );
    }
}
