//! The framework's CEL environment (`docs/hyperfleet-framework.md` §2.8) on cel-rust: the
//! standard library with optional types, `ext.Strings`, `ext.Lists`, and the framework's own
//! functions this harness implements with the doc's semantics: `now()` (an RFC 3339 *string* with
//! second precision), `toJson`, `dig`, `conditionStatus` (rejects lists CEL built), `triState`.
//! Nothing else: `json.decode`, `sets.*`, `base64.*`, `math.*`, `cel.bind` are not provided,
//! so an expression using them fails.
//!
//! Lists built by CEL vs lists from data: the framework serialises a CEL-built list of maps as
//! `[{"Adapter":{}}]` (§2.6). cel-rust has one list type, so this harness tells them apart by
//! value: a list of maps that is not, as a whole, a list found in the input data is CEL-built.
//! (A `filter` that keeps every element is therefore taken for the data list: the one case this
//! misses.)
//!
//! The result of an expression, as the framework turns it into a payload value (not in the
//! framework doc; read in hyperfleet-adapter's `criteria/cel_evaluator.go` `EvaluateSafe`, which
//! keeps `out.Value()`, `executor/post_action_executor.go` `processValue`, which replaces a Go
//! `nil` with the value definition's `default` and `json.Marshal`s the rest, and cel-go's
//! `types.Null.Value()` / `types.Optional.Value()`): a CEL `null` becomes
//! `structpb.NullValue_NULL_VALUE`, an `int32` enum that `encoding/json` writes as `0`, so a
//! top-level `null` is reported here as a trap and written as `0`; `optional.none()` is Go `nil`
//! (JSON `null`, or the `default`); `optional.of(x)` is `x`.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use cel::extractors::Arguments;
use cel::objects::{Key, Map, OptionalValue};
use cel::{Context, Env, ExecutionError, Program, Value};
use jiff::Timestamp;
use serde_json::Value as Json;

/// How JSON numbers become CEL numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// Go `float64` (JSON decoded into `interface{}`: event data, API responses) → `double`.
    Float,
    /// Integers stay `int` (Kubernetes unstructured objects, typed params).
    Int,
}

/// JSON → CEL value.
pub fn to_cel(v: &Json, numbers: Numbers) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (numbers, n.as_i64(), n.as_u64()) {
            (Numbers::Int, Some(i), _) => Value::Int(i),
            (Numbers::Int, None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => {
            Value::List(Arc::new(items.iter().map(|v| to_cel(v, numbers)).collect()))
        }
        Json::Object(m) => Value::Map(Map {
            map: Arc::new(
                m.iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v, numbers)))
                    .collect::<HashMap<_, _>>(),
            ),
        }),
    }
}

/// CEL value → JSON as Go's `json.Marshal` writes it: a `double` with no fraction prints as an
/// integer (`3`, not `3.0`). Lists of maps CEL built are the §2.6 trap: each element becomes
/// `{"Adapter":{}}` and the trap is reported in `traps`.
pub fn to_json(v: &Value, data_lists: &[Value], traps: &mut Vec<String>) -> Result<Json, String> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => {
            if f.fract() == 0.0 && f.abs() < 1e15 {
                Json::from(*f as i64)
            } else {
                serde_json::Number::from_f64(*f)
                    .map(Json::Number)
                    .ok_or_else(|| format!("{f} has no JSON form"))?
            }
        }
        Value::String(s) => Json::String(s.to_string()),
        Value::List(items) => {
            let has_maps = items.iter().any(|i| matches!(i, Value::Map(_)));
            if has_maps && !data_lists.contains(v) {
                traps.push(format!(
                    "a list of {} maps built by CEL serialises as [{{\"Adapter\":{{}}}}, …] (§2.6)",
                    items.len()
                ));
                Json::Array(
                    items
                        .iter()
                        .map(|i| match i {
                            Value::Map(_) => Ok(serde_json::json!({"Adapter": {}})),
                            other => to_json(other, data_lists, traps),
                        })
                        .collect::<Result<_, _>>()?,
                )
            } else {
                Json::Array(
                    items
                        .iter()
                        .map(|i| to_json(i, data_lists, traps))
                        .collect::<Result<_, _>>()?,
                )
            }
        }
        Value::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m.map.iter() {
                let key = match k {
                    Key::String(s) => s.to_string(),
                    Key::Int(i) => i.to_string(),
                    Key::Uint(u) => u.to_string(),
                    Key::Bool(b) => b.to_string(),
                };
                out.insert(key, to_json(v, data_lists, traps)?);
            }
            Json::Object(out)
        }
        other => {
            return Err(format!(
                "a CEL value of type {} has no JSON form here",
                other.type_of()
            ));
        }
    })
}

/// Every list in `v` (recursively), for telling data lists from CEL-built ones.
pub fn collect_lists(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::List(items) => {
            out.push(v.clone());
            items.iter().for_each(|i| collect_lists(i, out));
        }
        Value::Map(m) => m.map.values().for_each(|i| collect_lists(i, out)),
        _ => {}
    }
}

/// A soft (evaluation) error or a hard (parse/program) error, as the framework distinguishes.
#[derive(Debug, Clone, PartialEq)]
pub enum CelError {
    /// Parse errors: the framework refuses the config at load, or fails the build.
    Hard(String),
    /// Evaluation errors: "no value" for the caller (§2.8).
    Soft(String),
}

impl std::fmt::Display for CelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CelError::Hard(e) => write!(f, "CEL program error: {e}"),
            CelError::Soft(e) => write!(f, "CEL evaluation error: {e}"),
        }
    }
}

/// Built once: the environment holds no per-evaluation state (the framework's functions are
/// added to each evaluation's context).
static ENV: std::sync::LazyLock<Arc<Env>> = std::sync::LazyLock::new(|| Arc::new(env()));

fn env() -> Env {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .unwrap_or_else(|e| panic!("strings extension: {e:?}"));
    env.add_extension(cel::extensions::lists)
        .unwrap_or_else(|e| panic!("lists extension: {e:?}"));
    env
}

/// Parses `expression` as the framework's loader does (parse only, no type check).
pub fn parse(expression: &str) -> Result<Program, CelError> {
    ENV.compile(expression)
        .map_err(|e| CelError::Hard(e.to_string()))
}

/// One evaluation: variables, the clock, what the functions noticed.
pub struct Evaluation {
    pub vars: Vec<(String, Value)>,
    pub now: Timestamp,
    /// Every list in the variables (data lists).
    pub data_lists: Arc<Vec<Value>>,
    /// Traps and helper rejections noticed while evaluating (failures for our config).
    pub notes: Arc<Mutex<Vec<String>>>,
    /// Every expression evaluated (for the "every expression was evaluated" check).
    pub log: Arc<Mutex<BTreeSet<String>>>,
}

impl Evaluation {
    pub fn new(vars: Vec<(String, Value)>, now: Timestamp) -> Evaluation {
        let mut lists = Vec::new();
        for (_, v) in &vars {
            collect_lists(v, &mut lists);
        }
        Evaluation {
            vars,
            now,
            data_lists: Arc::new(lists),
            notes: Arc::default(),
            log: Arc::default(),
        }
    }

    /// Evaluates `expression`.
    pub fn eval(&self, expression: &str) -> Result<Value, CelError> {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(expression.to_owned());
        let program = parse(expression)?;
        let mut ctx = Context::with_env(Arc::clone(&ENV));
        for (name, value) in &self.vars {
            ctx.add_variable_from_value(name.clone(), value.clone());
        }
        self.add_functions(&mut ctx);
        program
            .execute(&ctx)
            .map_err(|e| CelError::Soft(describe(&e)))
    }

    /// Evaluates `expression` and converts the result to JSON as the framework does (see the
    /// module docs): `Json::Null` stands for the Go `nil` of `optional.none()` (the caller uses the
    /// value definition's `default`), a top-level CEL `null` is written as `0` and reported as a
    /// trap, like a CEL-built list of maps.
    pub fn eval_json(&self, expression: &str) -> Result<Json, CelError> {
        let value = self.eval(expression)?;
        let value = match <&OptionalValue>::try_from(&value) {
            Ok(optional) => match optional.value() {
                None => return Ok(Json::Null),
                Some(inner) => inner.clone(),
            },
            Err(_) => value,
        };
        let mut traps = Vec::new();
        let json = if value == Value::Null {
            traps.push(
                "a CEL null result is marshalled as structpb.NullValue, i.e. 0 (optional.none() gives JSON null)"
                    .to_owned(),
            );
            Json::from(0)
        } else {
            to_json(&value, &self.data_lists, &mut traps).map_err(CelError::Soft)?
        };
        if !traps.is_empty() {
            let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
            for t in traps {
                notes.push(format!("{expression:?}: {t}"));
            }
        }
        Ok(json)
    }

    fn add_functions(&self, ctx: &mut Context<'_, '_>) {
        let now = Timestamp::from_second(self.now.as_second())
            .unwrap_or(self.now)
            .to_string();
        let lists = Arc::clone(&self.data_lists);
        let notes = Arc::clone(&self.notes);
        let added = [
            ctx.add_function("now", move || -> Value {
                Value::String(Arc::new(now.clone()))
            }),
            ctx.add_function("toJson", {
                let lists = Arc::clone(&lists);
                let notes = Arc::clone(&notes);
                move |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                    let [v] = args.as_slice() else {
                        return Err(ExecutionError::function_error("toJson", "wants 1 argument"));
                    };
                    let mut traps = Vec::new();
                    let json = to_json(v, &lists, &mut traps)
                        .map_err(|e| ExecutionError::function_error("toJson", e))?;
                    if !traps.is_empty() {
                        notes
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .extend(traps.into_iter().map(|t| format!("toJson: {t}")));
                    }
                    Ok(Value::String(Arc::new(json.to_string())))
                }
            }),
            ctx.add_function(
                "dig",
                |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                    let [v, Value::String(path)] = args.as_slice() else {
                        return Err(ExecutionError::function_error("dig", "wants (dyn, string)"));
                    };
                    let mut cur = v.clone();
                    for seg in path.split('.') {
                        cur = match &cur {
                            Value::Map(m) => m
                                .map
                                .get(&Key::String(Arc::new(seg.to_owned())))
                                .cloned()
                                .unwrap_or(Value::Null),
                            Value::List(items) => seg
                                .parse::<usize>()
                                .ok()
                                .and_then(|i| items.get(i).cloned())
                                .unwrap_or(Value::Null),
                            _ => Value::Null,
                        };
                    }
                    Ok(cur)
                },
            ),
            ctx.add_function("conditionStatus", {
                let lists = Arc::clone(&lists);
                move |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                    let [list @ Value::List(items), Value::String(type_)] = args.as_slice() else {
                        return Err(ExecutionError::function_error(
                            "conditionStatus",
                            "conditionStatus() conditions must be a list",
                        ));
                    };
                    // A list CEL built (including the `[]` of `orValue([])`) is rejected.
                    if items.is_empty() || !lists.contains(list) {
                        return Err(ExecutionError::function_error(
                            "conditionStatus",
                            "conditionStatus() conditions must be a list",
                        ));
                    }
                    for item in items.iter() {
                        if let Value::Map(m) = item
                            && m.map.get(&Key::String(Arc::new("type".into())))
                                == Some(&Value::String(Arc::clone(type_)))
                        {
                            return Ok(m
                                .map
                                .get(&Key::String(Arc::new("status".into())))
                                .cloned()
                                .unwrap_or(Value::String(Arc::new("Unknown".into()))));
                        }
                    }
                    Ok(Value::String(Arc::new("Unknown".into())))
                }
            }),
            ctx.add_function(
                "triState",
                |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                    let [Value::Bool(t), Value::Bool(f)] = args.as_slice() else {
                        return Err(ExecutionError::function_error(
                            "triState",
                            "wants (bool, bool)",
                        ));
                    };
                    let s = if *t {
                        "True"
                    } else if *f {
                        "False"
                    } else {
                        "Unknown"
                    };
                    Ok(Value::String(Arc::new(s.into())))
                },
            ),
        ];
        for r in added {
            r.unwrap_or_else(|e| panic!("declaring a framework function: {e:?}"));
        }
    }
}

fn describe(e: &ExecutionError) -> String {
    match e {
        ExecutionError::UndeclaredReference(name) => {
            format!("no such attribute(s): {name}")
        }
        other => other.to_string(),
    }
}
