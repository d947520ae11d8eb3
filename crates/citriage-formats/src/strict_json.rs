//! A JSON value that refuses duplicate object keys and keeps key order, so validation
//! can report the exact key that was repeated instead of silently keeping the last one.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// A JSON number as read: integers stay exact, everything else is a float.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

/// A parsed JSON value whose objects have no duplicate keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// A short name of the value's JSON type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(Number::Float(_)) => "a fractional number",
            Value::Number(_) => "an integer",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// A compact rendering of the value for error messages (truncated).
    pub fn brief(&self) -> String {
        let s = match self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Number(Number::Unsigned(n)) => n.to_string(),
            Value::Number(Number::Signed(n)) => n.to_string(),
            Value::Number(Number::Float(f)) => f.to_string(),
            Value::String(s) => format!("{s:?}"),
            Value::Array(a) => format!("[…{} items]", a.len()),
            Value::Object(o) => format!("{{…{} keys}}", o.len()),
        };
        if s.chars().count() > 60 {
            let cut: String = s.chars().take(57).collect();
            format!("{cut}...")
        } else {
            s
        }
    }
}

/// Renders a key path for messages: `job "a"`, `job "a", field "b"`, ...
pub fn describe_path(path: &[String]) -> String {
    let mut parts = Vec::new();
    for (i, k) in path.iter().enumerate() {
        match i {
            0 => parts.push(format!("job {k:?}")),
            1 => parts.push(format!("field {k:?}")),
            _ => parts.push(format!("key {k:?}")),
        }
    }
    if parts.is_empty() {
        "the top-level object".to_string()
    } else {
        parts.join(", ")
    }
}

/// Deserializes a [`Value`] while knowing where it sits, so a duplicate key can be
/// reported with its full path.
struct ValueSeed<'p> {
    path: &'p mut Vec<String>,
}

impl<'de> de::DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor { path: self.path })
    }
}

struct ValueVisitor<'p> {
    path: &'p mut Vec<String>,
}

impl<'de> Visitor<'de> for ValueVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(Number::Signed(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(Number::Unsigned(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(Number::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ValueSeed { path: &mut *self.path })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out: Vec<(String, Value)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                self.path.push(key);
                let at = describe_path(self.path);
                return Err(de::Error::custom(format!("duplicate key: {at} appears twice")));
            }
            self.path.push(key.clone());
            let v = map.next_value_seed(ValueSeed { path: &mut *self.path })?;
            self.path.pop();
            out.push((key, v));
        }
        Ok(Value::Object(out))
    }
}

/// Parses bytes as strict JSON (no duplicate keys, no trailing data). A UTF-8 byte
/// order mark before the JSON is accepted (some editors and tools write one).
pub fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut path = Vec::new();
    let v = de::DeserializeSeed::deserialize(ValueSeed { path: &mut path }, &mut de)?;
    de.end()?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_duplicates_keeps_order() {
        let v = parse(br#"{"b":1,"a":{"x":null}}"#).unwrap();
        match v {
            Value::Object(kv) => assert_eq!(kv[0].0, "b"),
            _ => panic!("not an object"),
        }
        let e = parse(br#"{"a":{"x":1,"x":2}}"#).unwrap_err().to_string();
        assert!(e.contains("job \"a\", field \"x\" appears twice"), "{e}");
        assert!(parse(b"{} x").is_err());
    }
}
