//! Just enough of Go's `text/template` (with `missingkey=error`) and the framework's template
//! functions (`docs/hyperfleet-framework.md` §2.7) to render what a task config renders: field
//! chains (`{{ .a.b }}`), string/number/bool literals, function calls and pipes (`|`), and the
//! functions `now date dateFormat lower upper trim trimPrefix trimSuffix replace contains
//! hasPrefix hasSuffix quote default int int64 float float64 string`.
//!
//! Anything else (`if`/`range`/`with`, variables `$x`, other functions, printing maps or
//! lists, date layouts other than RFC 3339) is an error naming what is unsupported: the test
//! fails loudly instead of rendering something the framework would not.
//!
//! Values: JSON values whose numbers keep Go's distinction: a JSON number stored as `f64`
//! (`serde_json::Number::is_f64`) is a Go `float64` (how the framework holds numbers from JSON:
//! event data, API responses), printed with `%v` (`1e+06` for 1000000); an integer is an `int`
//! (typed params).

use jiff::Timestamp;
use serde_json::Value;

/// A template value.
#[derive(Debug, Clone, PartialEq)]
enum TVal {
    Json(Value),
    Time(Timestamp),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Field(Vec<String>),
    Dot,
    Str(String),
    Number(String),
    Bool(bool),
    Nil,
    Ident(String),
    Pipe,
    Open,
    Close,
}

/// One `{{ … }}` action or a run of text.
#[derive(Debug)]
enum Piece<'a> {
    Text(&'a str),
    Action(&'a str),
}

fn pieces(text: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let (before, after) = rest.split_at(start);
        let Some(end) = find_close(&after[2..]) else {
            return Err(format!("unclosed action in {text:?}"));
        };
        let mut inner = &after[2..2 + end];
        let mut before = before;
        if let Some(trimmed) = inner.strip_prefix("- ") {
            before = before.trim_end();
            inner = trimmed;
        }
        let mut trim_after = false;
        if let Some(trimmed) = inner.strip_suffix(" -") {
            trim_after = true;
            inner = trimmed;
        }
        if !before.is_empty() {
            out.push(Piece::Text(before));
        }
        out.push(Piece::Action(inner));
        rest = &after[2 + end + 2..];
        if trim_after {
            rest = rest.trim_start();
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// Index of the `}}` closing an action, skipping string literals.
fn find_close(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) => {
                if c == b'\\' && q == b'"' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if c == b'"' || c == b'`' {
                    quote = Some(c);
                } else if s[i..].starts_with("}}") {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

fn tokenize(action: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = action.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '|' => {
                out.push(Token::Pipe);
                i += 1;
            }
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(format!("unterminated string in {{{{{action}}}}}"));
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '\\' => {
                            let e = chars.get(i).copied().unwrap_or('\\');
                            i += 1;
                            s.push(match e {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        other => s.push(other),
                    }
                }
                out.push(Token::Str(s));
            }
            '`' => {
                let start = i + 1;
                let end = chars[start..]
                    .iter()
                    .position(|&c| c == '`')
                    .ok_or_else(|| format!("unterminated raw string in {{{{{action}}}}}"))?;
                out.push(Token::Str(chars[start..start + end].iter().collect()));
                i = start + end + 1;
            }
            '.' => {
                let mut path = Vec::new();
                while chars.get(i) == Some(&'.') {
                    let start = i + 1;
                    let mut j = start;
                    while j < chars.len() && is_ident(chars[j]) {
                        j += 1;
                    }
                    if j == start {
                        break;
                    }
                    path.push(chars[start..j].iter().collect());
                    i = j;
                }
                if path.is_empty() {
                    out.push(Token::Dot);
                    i += 1;
                } else {
                    out.push(Token::Field(path));
                }
            }
            '$' => {
                return Err(format!(
                    "template variables ($…) are not supported: {{{{{action}}}}}"
                ));
            }
            c if c.is_ascii_digit() || c == '-' => {
                let start = i;
                i += 1;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                out.push(Token::Number(chars[start..i].iter().collect()));
            }
            c if is_ident(c) => {
                let start = i;
                while i < chars.len() && is_ident(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push(match word.as_str() {
                    "true" => Token::Bool(true),
                    "false" => Token::Bool(false),
                    "nil" => Token::Nil,
                    _ => Token::Ident(word),
                });
            }
            other => {
                return Err(format!(
                    "unsupported character {other:?} in {{{{{action}}}}}"
                ));
            }
        }
    }
    Ok(out)
}

const CONTROL: [&str; 9] = [
    "if", "else", "end", "range", "with", "define", "template", "block", "break",
];

/// The root variable names (`x` of `.x.y`) used in `text`'s actions.
pub fn roots(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for piece in pieces(text)? {
        let Piece::Action(action) = piece else {
            continue;
        };
        if action.trim_start().starts_with("/*") {
            continue;
        }
        for token in tokenize(action)? {
            if let Token::Field(path) = token {
                out.push(path[0].clone());
            }
        }
    }
    Ok(out)
}

/// Renders `text` with `data` (a JSON object) and the clock `now`.
pub fn render(text: &str, data: &Value, now: Timestamp) -> Result<String, String> {
    if !text.contains("{{") {
        return Ok(text.to_owned());
    }
    let mut out = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Action(action) => {
                if action.trim_start().starts_with("/*") {
                    continue;
                }
                let tokens = tokenize(action)?;
                if let Some(Token::Ident(w)) = tokens.first()
                    && CONTROL.contains(&w.as_str())
                {
                    return Err(format!(
                        "control action {{{{{action}}}}} is not supported by the test renderer"
                    ));
                }
                let mut r = Renderer { data, now };
                let mut pos = 0;
                let value = r.pipeline(&tokens, &mut pos)?;
                if pos != tokens.len() {
                    return Err(format!("unexpected tokens in {{{{{action}}}}}"));
                }
                out.push_str(&print(&value)?);
            }
        }
    }
    Ok(out)
}

struct Renderer<'a> {
    data: &'a Value,
    now: Timestamp,
}

impl Renderer<'_> {
    fn pipeline(&mut self, tokens: &[Token], pos: &mut usize) -> Result<TVal, String> {
        let mut value = self.command(tokens, pos, None)?;
        while tokens.get(*pos) == Some(&Token::Pipe) {
            *pos += 1;
            value = self.command(tokens, pos, Some(value))?;
        }
        Ok(value)
    }

    fn command(
        &mut self,
        tokens: &[Token],
        pos: &mut usize,
        piped: Option<TVal>,
    ) -> Result<TVal, String> {
        let Some(first) = tokens.get(*pos) else {
            return Err("empty command".to_owned());
        };
        if let Token::Ident(name) = first {
            *pos += 1;
            let mut args = Vec::new();
            while let Some(t) = tokens.get(*pos) {
                if matches!(t, Token::Pipe | Token::Close) {
                    break;
                }
                args.push(self.operand(tokens, pos)?);
            }
            args.extend(piped);
            return call(name, args, self.now);
        }
        let value = self.operand(tokens, pos)?;
        if piped.is_some() {
            return Err("a non-function command cannot take piped input".to_owned());
        }
        Ok(value)
    }

    fn operand(&mut self, tokens: &[Token], pos: &mut usize) -> Result<TVal, String> {
        let token = tokens.get(*pos).ok_or("missing operand")?.clone();
        *pos += 1;
        Ok(match token {
            Token::Field(path) => TVal::Json(lookup(self.data, &path)?),
            Token::Dot => TVal::Json(self.data.clone()),
            Token::Str(s) => TVal::Json(Value::String(s)),
            Token::Bool(b) => TVal::Json(Value::Bool(b)),
            Token::Nil => TVal::Json(Value::Null),
            Token::Number(n) => TVal::Json(if let Ok(i) = n.parse::<i64>() {
                Value::from(i)
            } else {
                n.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("bad number {n}"))?
            }),
            Token::Open => {
                let v = self.pipeline(tokens, pos)?;
                if tokens.get(*pos) != Some(&Token::Close) {
                    return Err("missing )".to_owned());
                }
                *pos += 1;
                v
            }
            Token::Ident(name) => call(&name, Vec::new(), self.now)?,
            Token::Pipe | Token::Close => return Err("unexpected | or )".to_owned()),
        })
    }
}

/// `.a.b` with `missingkey=error`.
fn lookup(data: &Value, path: &[String]) -> Result<Value, String> {
    let mut cur = data;
    for key in path {
        match cur {
            Value::Object(m) => {
                cur = m
                    .get(key)
                    .ok_or_else(|| format!("map has no entry for key {key:?}"))?;
            }
            Value::Null => return Err(format!("nil pointer evaluating interface {{}}.{key}")),
            other => {
                return Err(format!(
                    "can't evaluate field {key} in type {}",
                    go_type(other)
                ));
            }
        }
    }
    Ok(cur.clone())
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn string_arg(v: &TVal, f: &str) -> Result<String, String> {
    match v {
        TVal::Json(Value::String(s)) => Ok(s.clone()),
        other => Err(format!("{f}: expected a string argument, got {other:?}")),
    }
}

fn call(name: &str, args: Vec<TVal>, now: Timestamp) -> Result<TVal, String> {
    let want = |n: usize| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!(
                "wrong number of args for {name}: want {n} got {}",
                args.len()
            ))
        }
    };
    let s = |i: usize| string_arg(&args[i], name);
    let json = |v: String| Ok(TVal::Json(Value::String(v)));
    match name {
        "now" => {
            want(0)?;
            Ok(TVal::Time(now))
        }
        "date" | "dateFormat" => {
            want(2)?;
            let layout = s(0)?;
            let TVal::Time(t) = &args[1] else {
                return Err(format!("{name}: second argument must be a time"));
            };
            if layout != "2006-01-02T15:04:05Z07:00" {
                return Err(format!(
                    "{name}: only the RFC 3339 layout is supported by the test renderer, not {layout:?}"
                ));
            }
            json(
                Timestamp::from_second(t.as_second())
                    .map_err(|e| e.to_string())?
                    .to_string(),
            )
        }
        "lower" => {
            want(1)?;
            json(s(0)?.to_lowercase())
        }
        "upper" => {
            want(1)?;
            json(s(0)?.to_uppercase())
        }
        "trim" => {
            want(1)?;
            json(s(0)?.trim().to_owned())
        }
        "trimPrefix" => {
            want(2)?;
            let (v, affix) = (s(0)?, s(1)?);
            json(v.strip_prefix(affix.as_str()).unwrap_or(&v).to_owned())
        }
        "trimSuffix" => {
            want(2)?;
            let (v, affix) = (s(0)?, s(1)?);
            json(v.strip_suffix(affix.as_str()).unwrap_or(&v).to_owned())
        }
        "replace" => {
            want(3)?;
            json(s(0)?.replace(&s(1)?, &s(2)?))
        }
        "contains" | "hasPrefix" | "hasSuffix" => {
            want(2)?;
            let (v, sub) = (s(0)?, s(1)?);
            Ok(TVal::Json(Value::Bool(match name {
                "contains" => v.contains(&sub),
                "hasPrefix" => v.starts_with(&sub),
                _ => v.ends_with(&sub),
            })))
        }
        "quote" => {
            want(1)?;
            json(Value::String(s(0)?).to_string())
        }
        "default" => {
            want(2)?;
            let val = &args[1];
            let empty = matches!(val, TVal::Json(Value::Null))
                || matches!(val, TVal::Json(Value::String(s)) if s.is_empty());
            Ok(if empty { args[0].clone() } else { val.clone() })
        }
        "string" => {
            want(1)?;
            json(print(&args[0])?)
        }
        "int" | "int64" => {
            want(1)?;
            let n = match &args[0] {
                TVal::Json(Value::Number(n)) => n
                    .as_i64()
                    .or_else(|| n.as_f64().map(|f| f.trunc() as i64))
                    .unwrap_or(0),
                TVal::Json(Value::String(s)) => s.trim().parse().unwrap_or(0),
                _ => 0,
            };
            Ok(TVal::Json(Value::from(n)))
        }
        other => Err(format!(
            "template function {other:?} is not supported by the test renderer"
        )),
    }
}

/// Go's `%v` of a value, as `text/template` prints it.
fn print(v: &TVal) -> Result<String, String> {
    match v {
        TVal::Json(Value::String(s)) => Ok(s.clone()),
        TVal::Json(Value::Bool(b)) => Ok(b.to_string()),
        TVal::Json(Value::Null) => Ok("<no value>".to_owned()),
        TVal::Json(Value::Number(n)) => Ok(match (n.as_i64(), n.as_u64()) {
            _ if n.is_f64() => go_float(n.as_f64().unwrap_or(f64::NAN)),
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => n.to_string(),
        }),
        TVal::Json(other) => Err(format!(
            "printing a {} ({other}) is not supported by the test renderer",
            go_type(other)
        )),
        TVal::Time(_) => {
            Err("printing a time.Time is not supported by the test renderer".to_owned())
        }
    }
}

/// Go's `%v` of a `float64`: shortest digits, exponent form when the exponent is < -4 or ≥ 6
/// (`strconv.FormatFloat(f, 'g', -1, 64)` with `%v`'s precision-6 rule): `3`, `1e+06`,
/// `1.234567e+06`, `2.147483647e+09`.
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    // Rust's `{:e}` is the shortest round-tripping digits: "1.234567e6".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        // Plain decimal with the shortest digits.
        format!("{f}")
    }
}

/// A copy of `v` whose numbers are all `f64` (how Go holds numbers decoded from JSON into
/// `interface{}`).
pub fn floats(v: &Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(floats).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), floats(v))).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-11-26T10:00:00.75Z".parse().unwrap()
    }

    #[test]
    fn renders_fields_functions_and_pipes() {
        let data = json!({"clusterId": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b", "generation": 2147483647, "c": {"name": "Prod"}});
        assert_eq!(
            render("hs-cp-{{ .clusterId }}-g{{ .generation }}", &data, now()).unwrap(),
            "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g2147483647"
        );
        assert_eq!(
            render("{{ .c.name | lower }}", &data, now()).unwrap(),
            "prod"
        );
        assert_eq!(
            render(
                r#"{{ now | date "2006-01-02T15:04:05Z07:00" }}"#,
                &data,
                now()
            )
            .unwrap(),
            "2026-11-26T10:00:00Z"
        );
        assert_eq!(
            render(r#"{{ default "x" .c.name }}"#, &data, now()).unwrap(),
            "Prod"
        );
    }

    #[test]
    fn float_numbers_print_like_go() {
        let data = floats(&json!({"a": 1000000, "b": 1234567, "c": 3, "d": 2147483647}));
        assert_eq!(render("{{ .a }}", &data, now()).unwrap(), "1e+06");
        assert_eq!(render("{{ .b }}", &data, now()).unwrap(), "1.234567e+06");
        assert_eq!(render("{{ .c }}", &data, now()).unwrap(), "3");
        assert_eq!(render("{{ .d }}", &data, now()).unwrap(), "2.147483647e+09");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(0.5), "0.5");
    }

    #[test]
    fn missing_keys_and_unsupported_things_fail() {
        let data = json!({"a": {"b": 1}});
        assert!(
            render("{{ .x }}", &data, now())
                .unwrap_err()
                .contains("map has no entry for key \"x\"")
        );
        assert!(render("{{ .a.c }}", &data, now()).is_err());
        assert!(render("{{ if .a }}x{{ end }}", &data, now()).is_err());
        assert!(render("{{ .a }}", &data, now()).is_err());
        assert!(render("{{ toJson .a }}", &data, now()).is_err());
        assert!(render(r#"{{ now | date "2006" }}"#, &data, now()).is_err());
    }

    #[test]
    fn roots_skip_string_literals() {
        assert_eq!(
            roots(
                r#"{{ now | date "2006-01-02T15:04:05Z07:00" }}/{{ .a.b }}{{ default .c "d.e" }}"#
            )
            .unwrap(),
            vec!["a".to_owned(), "c".to_owned()]
        );
    }
}
