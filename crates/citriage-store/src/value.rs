//! What both engines speak: the values bound to statements ([`Val`]) and read back
//! ([`Value`]), the engine's name ([`Backend`]), a failed statement before the store
//! names itself ([`DbError`]), and SQLite's `?N` placeholders rewritten for PostgreSQL.

use std::fmt;

/// The engine a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value bound to a statement parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
    /// A list of texts (PostgreSQL arrays only).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Texts(&'a [&'a str]),
    /// A list of integers (PostgreSQL arrays only).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Ints(&'a [i64]),
}

impl From<i64> for Val<'_> {
    fn from(v: i64) -> Self {
        Val::Int(v)
    }
}
impl From<i32> for Val<'_> {
    fn from(v: i32) -> Self {
        Val::Int(i64::from(v))
    }
}
impl From<u32> for Val<'_> {
    fn from(v: u32) -> Self {
        Val::Int(i64::from(v))
    }
}
impl From<bool> for Val<'_> {
    fn from(v: bool) -> Self {
        Val::Int(i64::from(v))
    }
}
impl From<f64> for Val<'_> {
    fn from(v: f64) -> Self {
        Val::Real(v)
    }
}
impl From<Option<i64>> for Val<'_> {
    fn from(v: Option<i64>) -> Self {
        v.map_or(Val::Null, Val::Int)
    }
}
impl From<Option<f64>> for Val<'_> {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Val::Null, Val::Real)
    }
}
impl<'a> From<&'a str> for Val<'a> {
    fn from(v: &'a str) -> Self {
        Val::Text(v)
    }
}
impl<'a> From<&'a String> for Val<'a> {
    fn from(v: &'a String) -> Self {
        Val::Text(v)
    }
}
impl<'a> From<Option<&'a str>> for Val<'a> {
    fn from(v: Option<&'a str>) -> Self {
        v.map_or(Val::Null, Val::Text)
    }
}
impl<'a> From<&'a Option<String>> for Val<'a> {
    fn from(v: &'a Option<String>) -> Self {
        v.as_deref().map_or(Val::Null, Val::Text)
    }
}
impl<'a> From<&'a [u8]> for Val<'a> {
    fn from(v: &'a [u8]) -> Self {
        Val::Blob(v)
    }
}

/// Parameters: `vals![a, b]` is `&[Val::from(a), Val::from(b)]`.
macro_rules! vals {
    ($($v:expr),* $(,)?) => { &[$($crate::value::Val::from($v)),*][..] };
}
pub(crate) use vals;

/// An owned column value (copying rows between stores, content digests).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub(crate) fn as_val(&self) -> Val<'_> {
        match self {
            Value::Null => Val::Null,
            Value::Int(v) => Val::Int(*v),
            Value::Real(v) => Val::Real(*v),
            Value::Text(v) => Val::Text(v),
            Value::Blob(v) => Val::Blob(v),
        }
    }
}

/// A failed statement, before the store names itself in the error.
#[derive(Debug)]
pub(crate) enum DbError {
    Sqlite(rusqlite::Error),
    #[cfg(feature = "postgres")]
    Pg(postgres::Error),
    Msg(String),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

#[cfg(feature = "postgres")]
impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        DbError::Pg(e)
    }
}

impl DbError {
    /// A conflict with another writer that retrying the whole transaction resolves.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            }
            #[cfg(feature = "postgres")]
            DbError::Pg(e) => {
                use postgres::error::SqlState;
                matches!(e.code(), Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE)
            }
            _ => false,
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "{e}"),
            #[cfg(feature = "postgres")]
            DbError::Pg(e) => match e.as_db_error() {
                Some(d) => {
                    write!(f, "{}: {} (SQLSTATE {})", d.severity(), d.message(), d.code().code())?;
                    if let Some(detail) = d.detail() {
                        write!(f, "; {detail}")?;
                    }
                    Ok(())
                }
                None => write!(f, "{e}"),
            },
            DbError::Msg(m) => f.write_str(m),
        }
    }
}

/// Rewrites SQLite's numbered placeholders (`?1`) as PostgreSQL's (`$1`), leaving
/// quoted literals and identifiers alone.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn pg_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) => out.push('$'),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_outside_quotes() {
        assert_eq!(
            pg_placeholders("SELECT '?1', \"a?2\" FROM t WHERE a = ?1 AND b IN (?12, ?3) AND c = '?'"),
            "SELECT '?1', \"a?2\" FROM t WHERE a = $1 AND b IN ($12, $3) AND c = '?'"
        );
    }
}
