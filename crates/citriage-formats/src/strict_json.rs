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

/// The largest magnitude at which every integer is exact in an `f64` (2^53).
const EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// A number in a JSON document that no field can hold as written: an integer beyond
/// 64 bits, or a fraction or exponent whose value overflows or lies beyond 2^53 (where
/// a float no longer holds every integer, so the value read would not be the value
/// written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InexactNumber {
    /// Object keys (and `[i]` array indexes) from the top of the document to the number.
    pub path: Vec<String>,
    /// The number as the document spells it (at most 80 characters kept).
    pub raw: String,
    /// Why it cannot be held.
    pub why: &'static str,
    /// Where the number is in the document (byte offsets, end exclusive).
    pub span: (usize, usize),
}

impl InexactNumber {
    /// `the number 1e400 is too large (…)`, naming the number as written.
    pub fn problem(&self) -> String {
        format!("the number {} is too large ({}); refused rather than rounded", self.raw, self.why)
    }

    /// The key path in dotted form (`metadata.labels.x`, `items[3].spec`), `(top level)` when empty.
    pub fn dotted(&self) -> String {
        let mut s = String::new();
        for k in &self.path {
            if k.starts_with('[') {
                s.push_str(k);
            } else {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
        }
        if s.is_empty() {
            "(top level)".into()
        } else {
            s
        }
    }
}

/// Finds the first number in a JSON document that cannot be held as written
/// ([`InexactNumber`]). Only looks at the tokens (strings are skipped, escapes
/// honoured); a document that is not JSON gives `None` here and its error from the
/// parser. Runs in one pass without allocating per value.
pub fn first_inexact_number(bytes: &[u8]) -> Option<InexactNumber> {
    inexact_numbers(bytes, 1).into_iter().next()
}

/// Every number of the document that cannot be held as written (up to `max` of
/// them), in document order.
pub fn inexact_numbers(bytes: &[u8], max: usize) -> Vec<InexactNumber> {
    let mut found = Vec::new();
    // The path: one entry per open container, the current key or array index.
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0usize;
    let n = bytes.len();
    // Whether the next string in an object is a key.
    let mut expect_key = false;
    while i < n {
        let b = bytes[i];
        match b {
            b'{' => {
                stack.push(Frame::Object(None));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array(0));
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object(_)) => expect_key = true,
                    Some(Frame::Array(k)) => *k += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                let mut escaped = false;
                while j < n {
                    match bytes[j] {
                        b'\\' => {
                            escaped = true;
                            j += 2;
                        }
                        b'"' => break,
                        _ => j += 1,
                    }
                }
                if expect_key {
                    if let Some(Frame::Object(key)) = stack.last_mut() {
                        let text = &bytes[start..j.min(n)];
                        *key = Some(if escaped {
                            serde_json::from_slice::<String>(&bytes[i..(j + 1).min(n)])
                                .unwrap_or_else(|_| String::from_utf8_lossy(text).into_owned())
                        } else {
                            String::from_utf8_lossy(text).into_owned()
                        });
                    }
                    expect_key = false;
                }
                i = j + 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < n && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                let raw = std::str::from_utf8(&bytes[start..i]).unwrap_or_default();
                if let Some(why) = inexact(raw) {
                    let path = stack
                        .iter()
                        .map(|f| match f {
                            Frame::Object(k) => k.clone().unwrap_or_default(),
                            Frame::Array(k) => format!("[{k}]"),
                        })
                        .collect();
                    let raw = if raw.len() > 80 { format!("{}…", &raw[..79]) } else { raw.to_string() };
                    found.push(InexactNumber { path, raw, why, span: (start, i) });
                    if found.len() >= max {
                        return found;
                    }
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// Why a number literal cannot be held as written, or `None` when it can.
fn inexact(raw: &str) -> Option<&'static str> {
    let fractional = raw.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if !fractional {
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let fits = if raw.starts_with('-') { raw.parse::<i64>().is_ok() } else { raw.parse::<u64>().is_ok() };
        return (!fits).then_some("integers up to 64 bits are read");
    }
    match raw.parse::<f64>() {
        Ok(f) if !f.is_finite() => Some("beyond what a 64-bit float holds"),
        Ok(f) if f.abs() >= EXACT_FLOAT => Some("fractions and exponents are read below 2^53"),
        _ => None,
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
