//! The CEL rules (`x-kubernetes-validations`) the conformance tests evaluate, by hand.
//!
//! Not a CEL interpreter. Two layers:
//! - a tiny evaluator for boolean combinations (`||`, `&&`, `!`, `c ? a : b`, parentheses) of
//!   atoms: `self.matches('…')`, `self.startsWith('…')`, `has(self.a.b)`, `isURL(self)`,
//!   `true`/`false`, and comparisons `a OP b` (`==`, `!=`, `<`, `<=`, `>`, `>=`) of operands
//!   `self.a.b`, `size(self.a)`, integer, string and boolean literals (numbers with numbers,
//!   strings with strings; an absent field or mixed types is unsupported, as CEL would error);
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

/// Compiles an RE2 pattern (OpenAPI `pattern` and CEL `matches` both use Go's RE2) with RE2's
/// meaning (once per pattern; clones share the compiled program). See [`re2`].
pub fn compile(pattern: &str) -> Regex {
    static CACHE: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Default::default);
    let mut cache = CACHE.lock().unwrap();
    cache
        .entry(pattern.to_owned())
        .or_insert_with(|| {
            Regex::new(&re2(pattern)).unwrap_or_else(|e| panic!("pattern {pattern}: {e}"))
        })
        .clone()
}

/// An RE2 pattern in Rust `regex` syntax. The syntaxes agree except for the Perl classes, which
/// are ASCII in RE2 and Unicode in Rust: `\w` is `[0-9A-Za-z_]`, `\d` is `[0-9]` and `\s` is
/// `[\t\n\f\r ]` (no `\v`), so `\S` matches a non-breaking space in RE2 and not in Rust. They
/// are spelled out as ASCII classes (inside a class too, as a nested class).
pub fn re2(pattern: &str) -> String {
    const CLASSES: [(char, &str); 3] = [('d', "0-9"), ('s', r"\t\n\x0C\r "), ('w', "0-9A-Za-z_")];
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let class = CLASSES
                    .iter()
                    .find(|(name, _)| *name == next.to_ascii_lowercase());
                match class {
                    Some((_, members)) if next.is_ascii_lowercase() && in_class => {
                        out.push_str(members);
                    }
                    Some((_, members)) if next.is_ascii_lowercase() => {
                        out.push_str(&format!("[{members}]"));
                    }
                    Some((_, members)) => out.push_str(&format!("[^{members}]")),
                    None => {
                        out.push(c);
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // `[]…]` and `[^]…]`: a `]` first is a member, not the end.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str(r"\]");
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            // Literal in an RE2 class; Rust reads `[` as a nested class (except `[:alpha:]`, which
            // both know) and `&&`, `~~` as set operations.
            '[' if chars.peek() != Some(&':') => out.push_str(r"\["),
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
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
    comparison(text, value)
}

/// `a OP b` with `OP` one of `==`, `!=`, `<`, `<=`, `>`, `>=` (at the top level of `text`).
fn comparison(text: &str, value: &Value) -> Option<bool> {
    use std::cmp::Ordering;
    let (left, op, right) = [" == ", " != ", " <= ", " >= ", " < ", " > "]
        .iter()
        .find_map(|op| match split_top(text, op).as_slice() {
            [left, right] => Some((left.clone(), op.trim(), right.clone())),
            _ => None,
        })?;
    let (left, right) = (operand(&left, value)?, operand(&right, value)?);
    let order = match (&left, &right) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => a.as_f64()?.partial_cmp(&b.as_f64()?)?,
        },
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => return None,
    };
    Some(match op {
        "==" => order == Ordering::Equal,
        "!=" => order != Ordering::Equal,
        "<" => order == Ordering::Less,
        "<=" => order != Ordering::Greater,
        ">" => order == Ordering::Greater,
        _ => order != Ordering::Less,
    })
}

/// A comparison operand: `self.a.b` (present), `size(self.a)`, or an integer, string or boolean
/// literal.
fn operand(text: &str, value: &Value) -> Option<Value> {
    let text = text.trim();
    if text.starts_with("self") {
        return path(text, value).filter(|v| !v.is_null()).cloned();
    }
    if let Some(inner) = text.strip_prefix("size(").and_then(|t| t.strip_suffix(')')) {
        return match operand(inner, value)? {
            Value::Array(a) => Some(a.len().into()),
            Value::String(s) => Some(s.chars().count().into()),
            Value::Object(o) => Some(o.len().into()),
            _ => None,
        };
    }
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if let Ok(n) = text.parse::<i64>() {
        return Some(n.into());
    }
    let literal = compile(r#"^(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")$"#);
    let c = literal.captures(text)?;
    Some(Value::String(unescape(
        c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str()),
    )))
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

    #[test]
    fn comparisons_of_fields_and_literals() {
        let bounds = |min: i64, max: i64| json!({"min": min, "max": max});
        let rule = "self.max >= self.min";
        assert_eq!(evaluate(rule, &bounds(1, 3)), Verdict::Pass);
        assert_eq!(evaluate(rule, &bounds(3, 3)), Verdict::Pass);
        assert_eq!(evaluate(rule, &bounds(4, 3)), Verdict::Fail);
        // An absent field is an error in CEL: not evaluated, never passed.
        assert_eq!(evaluate(rule, &json!({"max": 3})), Verdict::Unsupported);
        for (op, expected) in [
            ("==", [false, true, false]),
            ("!=", [true, false, true]),
            ("<", [true, false, false]),
            ("<=", [true, true, false]),
            (">", [false, false, true]),
            (">=", [false, true, true]),
        ] {
            for (n, want) in [0, 1, 2].into_iter().zip(expected) {
                let verdict = evaluate(&format!("self.n {op} 1"), &json!({"n": n}));
                let want = if want { Verdict::Pass } else { Verdict::Fail };
                assert_eq!(verdict, want, "{n} {op} 1");
            }
        }
        assert_eq!(evaluate("self.n > -1", &json!({"n": 0})), Verdict::Pass);
        assert_eq!(evaluate("self.x < 1", &json!({"x": 0.5})), Verdict::Pass);
        assert_eq!(evaluate("self.s < 'b'", &json!({"s": "a"})), Verdict::Pass);
        assert_eq!(evaluate("'b' <= self.s", &json!({"s": "a"})), Verdict::Fail);
        assert_eq!(
            evaluate("self.b == true", &json!({"b": false})),
            Verdict::Fail
        );
        assert_eq!(
            evaluate("size(self.s) < 2", &json!({"s": "ab"})),
            Verdict::Fail
        );
        assert_eq!(
            evaluate("size(self.s) == 1", &json!({"s": ["x"]})),
            Verdict::Pass
        );
        // Mixed types: CEL has no such overload.
        assert_eq!(
            evaluate("self.n > 'a'", &json!({"n": 1})),
            Verdict::Unsupported
        );
        // The NodePool's scale-from-zero rule, whole.
        let rule = "!has(self.autoScaling) || self.autoScaling.min > 0 || self.platform.type == 'AWS' || self.platform.type == 'Azure'";
        let np = |scaling: Value, platform: &str| {
            let mut o = json!({"platform": {"type": platform}});
            if !scaling.is_null() {
                o["autoScaling"] = scaling;
            }
            o
        };
        assert_eq!(evaluate(rule, &np(Value::Null, "GCP")), Verdict::Pass);
        assert_eq!(evaluate(rule, &np(bounds(1, 2), "GCP")), Verdict::Pass);
        assert_eq!(evaluate(rule, &np(bounds(0, 2), "AWS")), Verdict::Pass);
        assert_eq!(evaluate(rule, &np(bounds(0, 2), "GCP")), Verdict::Fail);
        assert_eq!(evaluate(rule, &np(bounds(0, 2), "None")), Verdict::Fail);
    }

    #[test]
    fn patterns_have_their_re2_meaning() {
        let m = |pattern: &str, s: &str| compile(pattern).is_match(s);
        // `\w` and `\d` are ASCII.
        assert!(m(r"^\w+$", "a_Z9"));
        assert!(!m(r"^\w+$", "é"));
        assert!(!m(r"^\d$", "٣"));
        assert!(m(r"^[\w.-]+$", "a.b-c"));
        assert!(!m(r"^[\w.-]+$", "aé"));
        // `\s` is `[\t\n\f\r ]`: `\S` takes a vertical tab and a non-breaking space.
        let image = r"^(\w+\S+)$";
        assert!(m(image, "quay.io/ocp:4.17"));
        assert!(m(image, "a\u{0B}b"));
        assert!(m(image, "a\u{A0}b"));
        assert!(!m(image, "a b"));
        assert!(!m(image, "a\tb"));
        assert!(!m(image, "éa"));
        assert!(m(r"^[^\S]$", " "));
        assert!(!m(r"^[^\S]$", "\u{A0}"));
        assert!(m(r"^\W\D\S$", "-a\u{A0}"));
        // Class syntax Rust reads differently: a leading `]`, a `[`, `&&`, `~~` are members.
        assert!(m(r"^[]a]+$", "]a"));
        assert!(m(r"^[^]a]+$", "b"));
        assert!(m(r"^[a[]+$", "a["));
        assert!(m(r"^[a&&b]+$", "&"));
        assert!(m(r"^[a~~b]+$", "~"));
        assert!(m(r"^[[:alpha:]]+$", "ab"));
        // Escapes stay escapes: an escaped backslash before `w` is a backslash and a `w`.
        assert!(m(r"^\\w$", r"\w"));
        assert!(m(r"^a\.b$", "a.b"));
        assert!(!m(r"^a\.b$", "axb"));
        assert_eq!(re2(r"^\w[\s]\\d$"), r"^[0-9A-Za-z_][\t\n\x0C\r ]\\d$");
    }
}
