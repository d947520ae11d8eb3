//! The table answer, read token by token into compact rows.
//!
//! Keys may come in any order (a row's `messages` come before its `statuses` in
//! TestGrid's answers), so what depends on another field (messages on the cells they
//! belong to, every row on the column count) is checked once the answer is read.

use super::{Column, LinkTemplate, Row, RowAlert, TabMeta, TableLimits, TestStatus, TestgridError, TestgridTable};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::BufRead;

/// Reads a table answer from bytes. `tab` names the tab in messages.
pub fn parse_table(bytes: &[u8], tab: &str, limits: &TableLimits) -> Result<TestgridTable, TestgridError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    not_json(bytes, tab)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    read_with(&mut de, tab, limits)
}

/// Reads a table answer from a stream, holding only what the table keeps.
pub fn read_table<R: BufRead>(mut reader: R, tab: &str, limits: &TableLimits) -> Result<TestgridTable, TestgridError> {
    let head = reader.fill_buf().map_err(|e| err(tab, "(body)", format!("cannot read: {e}")))?.to_vec();
    not_json(&head, tab)?;
    let mut de = serde_json::Deserializer::from_reader(reader);
    read_with(&mut de, tab, limits)
}

fn err(tab: &str, field: impl Into<String>, problem: impl Into<String>) -> TestgridError {
    TestgridError { what: format!("tab {tab:?}"), field: field.into(), problem: problem.into() }
}

/// Refuses an empty answer and an HTML page (an error page, a login page) by what it
/// is, before any JSON error about its first byte.
fn not_json(head: &[u8], tab: &str) -> Result<(), TestgridError> {
    let start = head.iter().position(|b| !b.is_ascii_whitespace());
    match start.map(|i| &head[i..]) {
        None => Err(err(tab, "(body)", "the answer is empty")),
        Some(rest) if rest.starts_with(b"<") => {
            let text = String::from_utf8_lossy(&rest[..rest.len().min(4096)]);
            let title = text
                .to_ascii_lowercase()
                .find("<title>")
                .and_then(|i| text.get(i + 7..))
                .and_then(|t| t.split('<').next())
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|t| !t.is_empty())
                .map(|t| format!(" (titled {:?})", t.chars().take(80).collect::<String>()))
                .unwrap_or_default();
            Err(err(tab, "(body)", format!("an HTML page{title}, not TestGrid's JSON table")))
        }
        Some(_) => Ok(()),
    }
}

fn read_with<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    tab: &str,
    limits: &TableLimits,
) -> Result<TestgridTable, TestgridError> {
    let mut ctx = Ctx { tab, fail: None, path: String::new(), held: 0, limit: limits.max_bytes };
    let raw = TopSeed { ctx: &mut ctx }.deserialize(&mut *de).and_then(|raw| de.end().map(|()| raw));
    match raw {
        Ok(raw) => finish(raw, tab),
        Err(e) => Err(match ctx.fail.take() {
            Some((field, problem)) => err(tab, field, problem),
            None => {
                let field = if ctx.path.is_empty() { "(body)".to_string() } else { ctx.path.clone() };
                let problem = match e.classify() {
                    serde_json::error::Category::Eof => format!("the answer ends early ({e}); truncated?"),
                    serde_json::error::Category::Syntax => format!("not valid JSON: {e}"),
                    _ => e.to_string(),
                };
                err(tab, field, problem)
            }
        }),
    }
}

/// What the visitors share: where they are, the first refusal, the memory counted.
struct Ctx<'t> {
    tab: &'t str,
    /// The first problem found (field, problem); the parser's own error then only
    /// unwinds.
    fail: Option<(String, String)>,
    /// The field being read, for errors the JSON reader raises itself.
    path: String,
    held: u64,
    limit: u64,
}

impl Ctx<'_> {
    fn refuse<E: de::Error>(&mut self, field: impl Into<String>, problem: impl Into<String>) -> E {
        let (field, problem) = (field.into(), problem.into());
        let msg = format!("{field}: {problem}");
        self.fail.get_or_insert((field, problem));
        E::custom(msg)
    }

    /// Counts `bytes` more against the limit; over it, the table is refused where it went over.
    fn hold<E: de::Error>(&mut self, bytes: u64) -> Result<(), E> {
        self.held = self.held.saturating_add(bytes);
        if self.held > self.limit {
            let (limit, tab, at) = (self.limit, self.tab.to_string(), self.path.clone());
            return Err(self.refuse(
                at,
                format!(
                    "the table of tab {tab:?} would take more than {limit} bytes once read (the memory budget); \
                     refused before it is held"
                ),
            ));
        }
        Ok(())
    }
}

/// Bytes a kept string costs.
fn cost(s: &str) -> u64 {
    s.len() as u64 + 24
}

#[derive(Default)]
struct RawTable {
    changelists: Option<Vec<String>>,
    timestamps: Option<Vec<Option<i64>>>,
    custom: Option<Vec<Vec<String>>>,
    column_ids: Option<usize>,
    groups: Option<usize>,
    row_ids: Option<usize>,
    rows: Option<Vec<RawRow>>,
    meta: TabMeta,
    ignored: Vec<String>,
}

#[derive(Default)]
struct RawRow {
    name: Option<String>,
    cells: Option<Vec<TestStatus>>,
    /// Non-empty entries by their position in the array, and the array's length.
    messages: Option<(usize, Vec<(u32, String)>)>,
    short_texts: Option<(usize, Vec<(u32, String)>)>,
    alert: Option<RowAlert>,
    linked_bugs: Vec<String>,
    ignored: Vec<String>,
}

/// Keys of the answer that carry nothing citriage keeps (timings, cache state, the
/// frontend's options), skipped without a remark.
const SKIPPED: &[&str] = &[
    "status",
    "phase-timer",
    "cached",
    "summary",
    "bugs",
    "test_id_map",
    "test-metadata",
    "add-tabular-names-option",
    "show-tabular-names",
    "triage-enabled",
    "notifications",
    "metrics",
];

const ROW_SKIPPED: &[&str] = &["original-name", "target", "metric", "metrics", "user_property", "properties"];

struct TopSeed<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = RawTable;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawTable, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = RawTable;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("TestGrid's table (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTable, A::Error> {
        let ctx = self.ctx;
        let mut t = RawTable::default();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            ctx.path = format!("field {key:?}");
            if !seen.insert(key.clone()) {
                return Err(ctx.refuse(ctx.path.clone(), "appears twice"));
            }
            let text = |ctx: &mut Ctx<'_>, v: Option<String>| -> Result<Option<String>, A::Error> {
                let v = v.filter(|s| !s.is_empty());
                ctx.hold(v.as_deref().map_or(0, cost))?;
                Ok(v)
            };
            match key.as_str() {
                "tests" => t.rows = Some(map.next_value_seed(RowsSeed { ctx: &mut *ctx })?),
                "changelists" => t.changelists = Some(map.next_value_seed(Strings { ctx: &mut *ctx })?),
                "column-header-names" => t.meta.header_names = map.next_value_seed(Strings { ctx: &mut *ctx })?,
                "timestamps" => t.timestamps = Some(map.next_value_seed(Times { ctx: &mut *ctx })?),
                "custom-columns" => t.custom = Some(map.next_value_seed(CustomColumns { ctx: &mut *ctx })?),
                "column_ids" => t.column_ids = Some(map.next_value_seed(Count)?),
                "groups" => t.groups = Some(map.next_value_seed(Count)?),
                "row_ids" => t.row_ids = Some(map.next_value_seed(Count)?),
                "clusters" => t.meta.clusters = map.next_value_seed(Count)? as u64,
                "test-group-name" => t.meta.test_group = text(ctx, map.next_value()?)?,
                "query" => t.meta.query = text(ctx, map.next_value()?)?,
                "description" => t.meta.description = text(ctx, map.next_value()?)?,
                "code-search-path" => t.meta.code_search_path = text(ctx, map.next_value()?)?,
                "results-text" => t.meta.results_text = text(ctx, map.next_value()?)?,
                "about-dashboard-url" => t.meta.about_dashboard_url = text(ctx, map.next_value()?)?,
                "latest-green" => t.meta.latest_green = text(ctx, map.next_value()?)?,
                "bug-component" => t.meta.bug_component = map.next_value()?,
                "stale-test-threshold" => t.meta.stale_test_threshold = map.next_value()?,
                "num-stale-tests" => t.meta.num_stale_tests = map.next_value()?,
                "overall-status" => t.meta.overall_status = map.next_value()?,
                k if k.ends_with("-template") => {
                    let tpl: Option<TemplateJson> = map.next_value()?;
                    if let Some(tpl) = tpl.filter(|t| !t.url.is_empty()) {
                        let t2 = LinkTemplate { url: tpl.url, options: tpl.options.unwrap_or_default() };
                        ctx.hold(cost(&t2.url) + t2.options.iter().map(|(k, v)| cost(k) + cost(v)).sum::<u64>())?;
                        t.meta.templates.insert(key.clone(), t2);
                    }
                }
                k if SKIPPED.contains(&k) => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    t.ignored.push(key);
                }
            }
        }
        ctx.path.clear();
        Ok(t)
    }
}

#[derive(serde::Deserialize)]
struct TemplateJson {
    #[serde(default)]
    url: String,
    #[serde(default)]
    options: Option<BTreeMap<String, String>>,
}

/// Counts an array's items without keeping them.
struct Count;

impl<'de> DeserializeSeed<'de> for Count {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array or null")
    }
    fn visit_unit<E>(self) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}

/// An array of strings, each counted against the limit.
struct Strings<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for Strings<'_, '_> {
    type Value = Vec<String>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Strings<'_, '_> {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of strings")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::new();
        while let Some(s) = seq.next_element::<String>()? {
            self.ctx.hold(cost(&s))?;
            out.push(s);
        }
        Ok(out)
    }
}

/// `timestamps`: milliseconds since the epoch, integers or floats (TestGrid keeps a
/// double); anything that is not a finite number in `i64`'s range is `None`.
struct Times<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for Times<'_, '_> {
    type Value = Vec<Option<i64>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Option<i64>>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Times<'_, '_> {
    type Value = Vec<Option<i64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of numbers (milliseconds since the epoch)")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Option<i64>>, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = seq.next_element::<Option<f64>>()? {
            self.ctx.hold(16)?;
            // Every integer up to 2^53 is exact in a double; milliseconds stay far below.
            out.push(n.filter(|n| n.is_finite() && n.abs() < 9.0e15).map(|n| n.floor() as i64));
        }
        Ok(out)
    }
}

/// `custom-columns`: one array of values per custom column.
struct CustomColumns<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for CustomColumns<'_, '_> {
    type Value = Vec<Vec<String>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Vec<String>>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CustomColumns<'_, '_> {
    type Value = Vec<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of arrays of strings, or null")
    }
    fn visit_unit<E>(self) -> Result<Vec<Vec<String>>, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Vec<String>>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Strings { ctx: &mut *self.ctx })? {
            out.push(v);
        }
        Ok(out)
    }
}

/// `tests`: the rows.
struct RowsSeed<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for RowsSeed<'_, '_> {
    type Value = Vec<RawRow>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<RawRow>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowsSeed<'_, '_> {
    type Value = Vec<RawRow>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<RawRow>, A::Error> {
        let mut out = Vec::new();
        loop {
            self.ctx.path = format!("tests[{}]", out.len());
            self.ctx.hold(128)?;
            match seq.next_element_seed(RowSeed { ctx: &mut *self.ctx, index: out.len() })? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }
}

struct RowSeed<'c, 't> {
    ctx: &'c mut Ctx<'t>,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_, '_> {
    type Value = RawRow;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawRow, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_, '_> {
    type Value = RawRow;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawRow, A::Error> {
        let ctx = self.ctx;
        let mut r = RawRow::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = row_at(self.index, r.name.as_deref());
            ctx.path = format!("{at} field {key:?}");
            if seen.contains(&key) {
                return Err(ctx.refuse(ctx.path.clone(), "appears twice"));
            }
            seen.push(key.clone());
            match key.as_str() {
                "name" => {
                    let n: String = map.next_value()?;
                    ctx.hold(cost(&n))?;
                    r.name = Some(n);
                }
                "statuses" => r.cells = Some(map.next_value_seed(Statuses { ctx: &mut *ctx })?),
                "messages" => r.messages = Some(map.next_value_seed(Texts { ctx: &mut *ctx })?),
                "short_texts" => r.short_texts = Some(map.next_value_seed(Texts { ctx: &mut *ctx })?),
                "alert" => {
                    let a: Option<AlertJson> = map.next_value()?;
                    r.alert = a.map(AlertJson::into_alert);
                    if let Some(a) = &r.alert {
                        ctx.hold(
                            [&a.fail_build, &a.pass_build, &a.text, &a.message]
                                .iter()
                                .map(|s| s.as_deref().map_or(0, cost))
                                .sum::<u64>()
                                + 64,
                        )?;
                    }
                }
                "linked_bugs" => {
                    let bugs: Option<Vec<serde_json::Value>> = map.next_value()?;
                    for b in bugs.unwrap_or_default() {
                        let s = match b {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        ctx.hold(cost(&s))?;
                        r.linked_bugs.push(s);
                    }
                }
                k if ROW_SKIPPED.contains(&k) => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    r.ignored.push(key);
                }
            }
        }
        Ok(r)
    }
}

fn row_at(index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("tests[{index}] ({})", shown(n)),
        None => format!("tests[{index}]"),
    }
}

/// A name as messages show it: quoted, at most 100 characters.
fn shown(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{:?}…", s.chars().take(100).collect::<String>())
    } else {
        format!("{s:?}")
    }
}

#[derive(serde::Deserialize)]
struct AlertJson {
    #[serde(rename = "fail-count", default)]
    fail_count: Option<u64>,
    #[serde(rename = "fail-cl", default)]
    fail_cl: Option<String>,
    #[serde(rename = "fail-time", default)]
    fail_time: Option<f64>,
    #[serde(rename = "pass-cl", default)]
    pass_cl: Option<String>,
    #[serde(rename = "pass-time", default)]
    pass_time: Option<f64>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl AlertJson {
    fn into_alert(self) -> RowAlert {
        let ms = |t: Option<f64>| t.filter(|n| n.is_finite() && n.abs() < 9.0e15).map(|n| n.floor() as i64);
        let text = |s: Option<String>| s.filter(|s| !s.is_empty());
        RowAlert {
            fail_count: self.fail_count,
            fail_build: text(self.fail_cl),
            fail_time_ms: ms(self.fail_time),
            pass_build: text(self.pass_cl),
            pass_time_ms: ms(self.pass_time),
            text: text(self.text),
            message: text(self.message),
        }
    }
}

/// `messages` / `short_texts`: the non-empty entries by position, and the length.
struct Texts<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for Texts<'_, '_> {
    type Value = (usize, Vec<(u32, String)>);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Texts<'_, '_> {
    type Value = (usize, Vec<(u32, String)>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of strings, or null")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((0, Vec::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        let mut n = 0usize;
        while let Some(s) = seq.next_element_seed(NonEmpty)? {
            if let Some(s) = s {
                self.ctx.hold(cost(&s) + 8)?;
                kept.push((u32::try_from(n).unwrap_or(u32::MAX), s));
            }
            n += 1;
        }
        Ok((n, kept))
    }
}

/// A string, allocated only when it is not empty.
struct NonEmpty;

impl<'de> DeserializeSeed<'de> for NonEmpty {
    type Value = Option<String>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NonEmpty {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<Option<String>, E> {
        Ok((!v.is_empty()).then(|| v.to_string()))
    }
}

/// `statuses`: `{"count": n, "value": status}` runs, expanded as they are read, each
/// run's count checked against the limit before it is expanded.
struct Statuses<'c, 't> {
    ctx: &'c mut Ctx<'t>,
}

impl<'de> DeserializeSeed<'de> for Statuses<'_, '_> {
    type Value = Vec<TestStatus>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<TestStatus>, D::Error> {
        d.deserialize_seq(self)
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RunJson {
    count: u64,
    value: u64,
}

impl<'de> Visitor<'de> for Statuses<'_, '_> {
    type Value = Vec<TestStatus>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of {\"count\", \"value\"} runs")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<TestStatus>, A::Error> {
        let ctx = self.ctx;
        let mut cells = Vec::new();
        let mut i = 0usize;
        while let Some(run) = seq.next_element::<RunJson>()? {
            let at = format!("{} run {i}", ctx.path);
            let Some(status) = TestStatus::from_number(run.value) else {
                return Err(ctx.refuse(at, format!("status {} is not one of TestGrid's statuses (0 to 15)", run.value)));
            };
            if run.count == 0 {
                return Err(ctx.refuse(at, "a run of 0 cells"));
            }
            ctx.hold(run.count)?;
            cells.resize(cells.len() + run.count as usize, status);
            i += 1;
        }
        Ok(cells)
    }
}

/// Checks what depends on several fields and builds the table.
fn finish(raw: RawTable, tab: &str) -> Result<TestgridTable, TestgridError> {
    let Some(builds) = raw.changelists else {
        return Err(err(tab, "field \"changelists\"", "missing (the build id of each column)"));
    };
    let n = builds.len();
    let times = raw.timestamps.unwrap_or_default();
    if times.len() != n {
        return Err(err(
            tab,
            "field \"timestamps\"",
            format!("{} start times for {n} columns (\"changelists\")", times.len()),
        ));
    }
    for (field, len) in [("column_ids", raw.column_ids), ("groups", raw.groups)] {
        if let Some(len) = len.filter(|l| *l != n) {
            return Err(err(
                tab,
                format!("field {field:?}"),
                format!("{len} entries for {n} columns (\"changelists\")"),
            ));
        }
    }
    let custom = raw.custom.unwrap_or_default();
    for (i, c) in custom.iter().enumerate() {
        if c.len() != n {
            return Err(err(
                tab,
                format!("field \"custom-columns\"[{i}]"),
                format!("{} values for {n} columns (\"changelists\")", c.len()),
            ));
        }
    }
    let mut first_of: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, b) in builds.iter().enumerate() {
        if b.trim().is_empty() {
            return Err(err(tab, format!("field \"changelists\"[{i}]"), "a column without a build id"));
        }
        if let Some(j) = first_of.insert(b.as_str(), i) {
            return Err(err(
                tab,
                format!("field \"changelists\"[{i}]"),
                format!("duplicate column: columns {j} and {i} both have build id {b:?}"),
            ));
        }
    }
    drop(first_of);
    // The header names end with the custom columns' names (before them: Date, Time
    // and the build id's row).
    let headers = &raw.meta.header_names;
    let custom_headers: Vec<String> = (0..custom.len())
        .map(|i| {
            headers
                .len()
                .checked_sub(custom.len())
                .and_then(|base| headers.get(base + i).cloned())
                .unwrap_or_else(|| format!("custom-{i}"))
        })
        .collect();
    let columns: Vec<Column> = builds
        .into_iter()
        .zip(times)
        .enumerate()
        .map(|(i, (build, started_ms))| Column {
            build,
            started_ms,
            custom: custom.iter().map(|c| c[i].clone()).collect(),
        })
        .collect();
    let raw_rows = raw.rows.unwrap_or_default();
    if let Some(len) = raw.row_ids.filter(|l| *l != raw_rows.len()) {
        return Err(err(tab, "field \"row_ids\"", format!("{len} entries for {} rows (\"tests\")", raw_rows.len())));
    }
    let mut rows = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut row_ignored: BTreeMap<String, usize> = BTreeMap::new();
    for (i, r) in raw_rows.into_iter().enumerate() {
        let row = finish_row(r, i, n, tab, &mut row_ignored)?;
        if let Some(j) = names.insert(row.name.clone(), i) {
            return Err(err(
                tab,
                row_at(i, Some(&row.name)),
                format!("duplicate row: rows {j} and {i} have this name"),
            ));
        }
        rows.push(row);
    }
    let mut warnings: Vec<String> =
        raw.ignored.iter().map(|k| format!("tab {tab:?}: ignored field {k:?} citriage does not read")).collect();
    warnings.extend(row_ignored.iter().map(|(k, c)| format!("tab {tab:?}: ignored row field {k:?} on {c} row(s)")));
    Ok(TestgridTable { tab: tab.to_string(), columns, custom_headers, rows, meta: raw.meta, warnings })
}

fn finish_row(
    r: RawRow,
    i: usize,
    columns: usize,
    tab: &str,
    ignored: &mut BTreeMap<String, usize>,
) -> Result<Row, TestgridError> {
    for k in &r.ignored {
        *ignored.entry(k.clone()).or_default() += 1;
    }
    // An empty name is TestGrid's name for a JUnit case without one.
    let Some(name) = r.name else {
        return Err(err(tab, format!("tests[{i}] field \"name\""), "missing"));
    };
    let at = row_at(i, Some(&name));
    let Some(cells) = r.cells else {
        return Err(err(tab, format!("{at} field \"statuses\""), "missing"));
    };
    if cells.len() != columns {
        return Err(err(
            tab,
            format!("{at} field \"statuses\""),
            format!("the runs add up to {} cells, but the table has {columns} columns", cells.len()),
        ));
    }
    // Messages and short texts are given for every column with a result (TestGrid's
    // `Row`), or for every column.
    let filled: Vec<u32> = (0..columns)
        .filter(|c| cells[*c] != TestStatus::NoResult)
        .map(|c| u32::try_from(c).unwrap_or(u32::MAX))
        .collect();
    let place =
        |field: &str, texts: Option<(usize, Vec<(u32, String)>)>| -> Result<Vec<(u32, String)>, TestgridError> {
            let Some((len, kept)) = texts else { return Ok(Vec::new()) };
            if len == columns {
                return Ok(kept);
            }
            if len == filled.len() {
                return Ok(kept.into_iter().map(|(k, s)| (filled[k as usize], s)).collect());
            }
            Err(err(
                tab,
                format!("{at} field {field:?}"),
                format!("{len} entries, but the row has {} cells with a result (and {columns} columns)", filled.len()),
            ))
        };
    let messages = place("messages", r.messages)?;
    let short_texts = place("short_texts", r.short_texts)?;
    Ok(Row { name, cells, messages, short_texts, alert: r.alert, linked_bugs: r.linked_bugs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &str, columns: &str) -> String {
        format!(r#"{{"query":"bucket/logs/job-a",{columns},"tests":[{rows}]}}"#)
    }

    const COLS: &str = r#""changelists":["3","2","1"],"timestamps":[3000,2000,1000],"custom-columns":[["c3","c2","c1"]],"column-header-names":["Date","Time","Build","Commit"]"#;

    fn parse(doc: &str) -> Result<TestgridTable, TestgridError> {
        parse_table(doc.as_bytes(), "tab-a", &TableLimits::default())
    }

    #[test]
    fn reads_columns_rows_and_sparse_messages() {
        let t = parse(&table(
            r#"{"name":"Overall","messages":["","boom",""],"short_texts":["","F",""],"statuses":[{"count":1,"value":1},{"count":1,"value":12},{"count":1,"value":13}]},
               {"name":"t1","statuses":[{"count":1,"value":0},{"count":2,"value":12}],"messages":["m2","m1"],"alert":{"fail-count":2,"fail-cl":"2","text":"x"}}"#,
            COLS,
        ))
        .unwrap();
        assert_eq!(t.columns.len(), 3);
        assert_eq!(t.columns[0], Column { build: "3".into(), started_ms: Some(3000), custom: vec!["c3".into()] });
        assert_eq!(t.custom_headers, ["Commit"]);
        assert_eq!(t.rows[0].cells, [TestStatus::Pass, TestStatus::Fail, TestStatus::Flaky]);
        assert_eq!(t.rows[0].message(1), Some("boom"));
        assert_eq!(t.rows[0].short_texts, [(1, "F".to_string())]);
        // Sparse: the two messages belong to the two columns with a result.
        assert_eq!(t.rows[1].messages, [(1, "m2".to_string()), (2, "m1".to_string())]);
        assert_eq!(t.rows[1].alert.as_ref().unwrap().fail_build.as_deref(), Some("2"));
        assert_eq!(t.meta.query.as_deref(), Some("bucket/logs/job-a"));
        let c = t.status_counts();
        assert_eq!(c.len(), 16);
        assert_eq!((c[&TestStatus::Fail], c[&TestStatus::NoResult], c[&TestStatus::Flaky]), (3, 1, 1));
        assert_eq!(c.values().sum::<u64>(), 6);
    }

    #[test]
    fn bad_tables_are_refused_naming_the_tab_and_field() {
        let e = |doc: &str| parse(doc).unwrap_err().to_string();
        let rle = e(&table(r#"{"name":"t","statuses":[{"count":2,"value":1}]}"#, COLS));
        assert_eq!(
            rle,
            r#"TestGrid tab "tab-a": tests[0] ("t") field "statuses": the runs add up to 2 cells, but the table has 3 columns"#
        );
        let bad = e(&table(r#"{"name":"t","statuses":[{"count":3,"value":16}]}"#, COLS));
        assert!(
            bad.contains(r#"tests[0] ("t") field "statuses" run 0: status 16 is not one of TestGrid's statuses"#),
            "{bad}"
        );
        let none = e(&table("", r#""changelists":["3","","1"],"timestamps":[3,2,1]"#));
        assert_eq!(none, r#"TestGrid tab "tab-a": field "changelists"[1]: a column without a build id"#);
        let dup = e(&table("", r#""changelists":["3","2","3"],"timestamps":[3,2,1]"#));
        assert!(
            dup.contains(r#"field "changelists"[2]: duplicate column: columns 0 and 2 both have build id "3""#),
            "{dup}"
        );
        let html = e("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>");
        assert!(
            html.contains(r#"(body): an HTML page (titled "502 Bad Gateway"), not TestGrid's JSON table"#),
            "{html}"
        );
        assert!(e("").contains("the answer is empty"));
        assert!(e(r#"{"changelists":["1"],"timestamps":[1],"tests":[{"name":"t","statuses":[{"count":1"#)
            .contains("ends early"));
        assert!(e(r#"{"changelists":["1"],"changelists":["1"]}"#).contains(r#"field "changelists": appears twice"#));
        let msgs = e(&table(r#"{"name":"t","messages":["a"],"statuses":[{"count":3,"value":1}]}"#, COLS));
        assert!(msgs.contains(r#"field "messages": 1 entries, but the row has 3 cells with a result"#), "{msgs}");
        let rows = e(&table(
            r#"{"name":"t","statuses":[{"count":3,"value":1}]},{"name":"t","statuses":[{"count":3,"value":1}]}"#,
            COLS,
        ));
        assert!(rows.contains("duplicate row: rows 0 and 1"), "{rows}");
        let wrong = e(&table(r#"{"name":"t","statuses":[{"count":"3","value":1}]}"#, COLS));
        assert!(wrong.contains(r#"tests[0] ("t") field "statuses""#) && wrong.contains("invalid type"), "{wrong}");
        let zero = e(&table(r#"{"name":"t","statuses":[{"count":0,"value":1},{"count":3,"value":1}]}"#, COLS));
        assert!(zero.contains("a run of 0 cells"), "{zero}");
        assert!(e(r#"{"changelists":["1","2"],"timestamps":[1]}"#)
            .contains(r#"field "timestamps": 1 start times for 2 columns"#));
        assert!(e(r#"{"changelists":["1"],"timestamps":[1],"custom-columns":[["a","b"]]}"#)
            .contains(r#""custom-columns"[0]: 2 values for 1 columns"#));
        assert!(e(r#"{"tests":[]}"#).contains(r#"field "changelists": missing"#));
    }

    #[test]
    fn a_table_over_the_limit_is_refused_before_it_is_expanded() {
        // One run claims a trillion cells: refused by its count, never allocated.
        let doc = table(r#"{"name":"t","statuses":[{"count":1000000000000,"value":1}]}"#, COLS);
        let e = parse_table(doc.as_bytes(), "big", &TableLimits { max_bytes: 1 << 20 }).unwrap_err();
        assert!(e.to_string().contains(r#"tests[0] ("t") field "statuses""#), "{e}");
        assert!(e.problem.contains("would take more than 1048576 bytes once read"), "{e}");
        // The same table within a larger limit reads (the count then fails the column check).
        let small = table(r#"{"name":"t","statuses":[{"count":3,"value":1}]}"#, COLS);
        assert!(parse_table(small.as_bytes(), "ok", &TableLimits { max_bytes: 1 << 20 }).is_ok());
        assert!(parse_table(small.as_bytes(), "tiny", &TableLimits { max_bytes: 100 }).is_err());
    }

    #[test]
    fn a_stream_reads_the_same_as_bytes() {
        let doc = table(r#"{"name":"t","statuses":[{"count":3,"value":12}],"messages":["a","","c"]}"#, COLS);
        let a = parse(&doc).unwrap();
        let b = read_table(std::io::BufReader::new(doc.as_bytes()), "tab-a", &TableLimits::default()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.rows[0].messages, [(0, "a".to_string()), (2, "c".to_string())]);
    }

    #[test]
    fn unknown_fields_are_remarked_once() {
        let t = parse(&table(
            r#"{"name":"t","statuses":[{"count":3,"value":1}],"new":1}"#,
            &format!("{COLS},\"extra\":[]"),
        ))
        .unwrap();
        assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    }
}
