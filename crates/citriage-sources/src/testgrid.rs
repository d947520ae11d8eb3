//! TestGrid's JSON answers over HTTP: a dashboard's summary (`/<dashboard>/summary`)
//! and a tab's table (`/<dashboard>/table?tab=<tab>`), from one TestGrid base URL
//! (e.g. `https://testgrid.k8s.io`, the only origin contacted), through the one HTTP
//! layer. Dashboard names are checked before a URL is built from them (one path
//! segment: no `/`, no `.` or `..`, no control character; see [`check_dashboard`]); tab
//! names (which come from the summary, remote data) are sent percent-encoded in the
//! query. This module returns bytes; `citriage-formats` parses them.

use crate::http::{percent_encode, HttpClient};
use crate::{http_get, Body, HttpOptions, SourceError};

/// Why a dashboard name cannot be used, or `Ok(())`.
pub fn check_dashboard(name: &str) -> Result<(), &'static str> {
    crate::paths::check_name(name)?;
    if name.contains('/') {
        return Err("a dashboard name is one path segment (no `/`)");
    }
    if name.contains(['?', '#', '%']) {
        return Err("contains `?`, `#` or `%`");
    }
    Ok(())
}

/// Why a tab name cannot be asked for, or `Ok(())` (it is percent-encoded, so only
/// emptiness, size and control characters matter).
pub fn check_tab(name: &str) -> Result<(), &'static str> {
    if name.trim().is_empty() {
        return Err("empty tab name");
    }
    if name.len() > 1024 {
        return Err("longer than 1024 bytes");
    }
    if name.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    Ok(())
}

/// What a TestGrid URL names: the base, a dashboard, and a tab when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestgridTarget {
    /// `scheme://host[:port]` (and any path prefix before the dashboard).
    pub base: String,
    pub dashboard: String,
    pub tab: Option<String>,
}

/// Reads a TestGrid URL as a user copies it: `BASE/<dashboard>` (every tab),
/// `BASE/<dashboard>#<tab>` (the page of a tab), `BASE/<dashboard>/table?tab=<tab>`
/// (the table answer) or `BASE/<dashboard>/summary`. The dashboard is the last path
/// segment before `table`/`summary` (or the last one); its name and the tab's are
/// checked ([`check_dashboard`], [`check_tab`]).
pub fn parse_target(url: &str) -> Result<TestgridTarget, String> {
    let bad = |why: String| format!("--testgrid {url}: {why}");
    if !crate::is_url(url) {
        return Err(bad("not an http(s) URL".into()));
    }
    let (rest, fragment) = match url.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (url, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let scheme_end = rest.find("://").map(|i| i + 3).unwrap_or(0);
    let path_start = rest[scheme_end..].find('/').map(|i| i + scheme_end).unwrap_or(rest.len());
    let origin = &rest[..path_start];
    let raw_segments: Vec<&str> = rest[path_start..].split('/').filter(|s| !s.is_empty()).collect();
    let mut segments = Vec::with_capacity(raw_segments.len());
    for s in &raw_segments {
        let decoded =
            percent_decode(s).ok_or_else(|| bad(format!("path segment {s:?} is not valid percent-encoded UTF-8")))?;
        segments.push(decoded);
    }
    if segments.iter().any(|s| s == ".." || s == ".") {
        return Err(bad("a `.` or `..` path segment is refused: the dashboard must be named".into()));
    }
    let (prefix, dashboard, api) = match segments.split_last() {
        None => return Err(bad("names no dashboard (BASE/<dashboard>, BASE/<dashboard>#<tab>)".into())),
        Some((last, before)) if last == "table" || last == "summary" => match before.split_last() {
            Some((d, p)) => (p.to_vec(), d.clone(), Some(last.clone())),
            None => return Err(bad(format!("names no dashboard before /{last}"))),
        },
        Some((d, p)) => (p.to_vec(), d.clone(), None),
    };
    check_dashboard(&dashboard).map_err(|why| bad(format!("dashboard {dashboard:?} refused: {why}")))?;
    let mut tab = None;
    if api.as_deref() == Some("table") || api.is_none() {
        for pair in query.unwrap_or_default().split('&') {
            if let Some(v) = pair.strip_prefix("tab=") {
                tab = Some(
                    percent_decode(&v.replace('+', " "))
                        .ok_or_else(|| bad("the tab is not valid percent-encoded UTF-8".into()))?,
                );
            }
        }
    }
    if tab.is_none() && api.is_none() {
        if let Some(f) = fragment.filter(|f| !f.is_empty()) {
            // The page's fragment may carry options after `&`.
            let name = f.split('&').next().unwrap_or(f);
            tab = Some(percent_decode(name).ok_or_else(|| bad("the tab is not valid percent-encoded UTF-8".into()))?);
        }
    }
    if api.as_deref() == Some("table") && tab.is_none() {
        return Err(bad("a table URL needs ?tab=<tab>".into()));
    }
    if let Some(t) = &tab {
        check_tab(t).map_err(|why| bad(format!("tab {t:?} refused: {why}")))?;
    }
    let mut base = origin.to_string();
    for p in prefix {
        check_dashboard(&p).map_err(|why| bad(format!("path segment {p:?} refused: {why}")))?;
        base.push('/');
        base.push_str(&percent_encode(&p));
    }
    Ok(TestgridTarget { base, dashboard, tab })
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A TestGrid instance over HTTP.
pub struct TestgridHttp {
    base: String,
    client: HttpClient,
}

impl TestgridHttp {
    /// A client of the TestGrid at `base` (`scheme://host[:port][/prefix]`), allowed to
    /// contact that origin only.
    pub fn new(base: &str, opts: HttpOptions) -> Result<TestgridHttp, SourceError> {
        let base = base.trim_end_matches('/').to_string();
        let client = HttpClient::new(opts).restricted_to(&base).map_err(SourceError::from_http)?;
        Ok(TestgridHttp { base, client })
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The summary's URL of a dashboard (its name checked).
    pub fn summary_url(&self, dashboard: &str) -> Result<String, SourceError> {
        check_dashboard(dashboard).map_err(|why| SourceError::unsafe_name(&self.base, dashboard, why))?;
        Ok(format!("{}/{}/summary", self.base, percent_encode(dashboard)))
    }

    /// The table's URL of a tab (both names checked).
    pub fn table_url(&self, dashboard: &str, tab: &str) -> Result<String, SourceError> {
        check_dashboard(dashboard).map_err(|why| SourceError::unsafe_name(&self.base, dashboard, why))?;
        check_tab(tab).map_err(|why| SourceError::unsafe_name(&self.base, tab, why))?;
        Ok(format!("{}/{}/table?tab={}", self.base, percent_encode(dashboard), percent_encode(tab)))
    }

    /// A dashboard's summary answer (a 404 is an error naming the URL).
    pub fn summary(&self, dashboard: &str) -> Result<Body, SourceError> {
        let url = self.summary_url(dashboard)?;
        http_get(&self.client, &url)?.ok_or_else(|| SourceError::from_status(&url, 404))
    }

    /// A tab's table answer, counted against the process's memory budget while held
    /// (a body larger than the budget is refused by the HTTP layer, naming the URL).
    pub fn table(&self, dashboard: &str, tab: &str) -> Result<Body, SourceError> {
        let url = self.table_url(dashboard, tab)?;
        http_get(&self.client, &url)?.ok_or_else(|| SourceError::from_status(&url, 404))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_users_copy_them() {
        let t = parse_target("https://testgrid.k8s.io/sig-release-master-blocking").unwrap();
        assert_eq!(
            t,
            TestgridTarget {
                base: "https://testgrid.k8s.io".into(),
                dashboard: "sig-release-master-blocking".into(),
                tab: None
            }
        );
        let t = parse_target("https://testgrid.k8s.io/sig-release-master-blocking#gce-cos-master-default&width=20")
            .unwrap();
        assert_eq!(t.tab.as_deref(), Some("gce-cos-master-default"));
        let t = parse_target("http://127.0.0.1:9/pre/fix/dash/table?tab=a%20b&width=10").unwrap();
        assert_eq!(
            (t.base.as_str(), t.dashboard.as_str(), t.tab.as_deref()),
            ("http://127.0.0.1:9/pre/fix", "dash", Some("a b"))
        );
        let t = parse_target("http://h/dash/summary").unwrap();
        assert_eq!((t.dashboard.as_str(), t.tab), ("dash", None));
        for bad in [
            "http://h/../etc/summary",
            "http://h/dash/..",
            "http://h/%2e%2e/summary",
            "http://h/a%2Fb",
            "http://h/",
            "http://h/dash/table",
            "ftp://h/dash",
            "http://h/dash/table?tab=%0a",
        ] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
        assert!(parse_target("http://h/../x").unwrap_err().contains("`..` path segment is refused"));
    }

    #[test]
    fn names_are_checked_before_urls_are_built() {
        let tg = TestgridHttp::new("http://127.0.0.1:9", HttpOptions::default()).unwrap();
        assert_eq!(tg.table_url("d", "a b/c").unwrap(), "http://127.0.0.1:9/d/table?tab=a%20b%2Fc");
        assert_eq!(tg.summary_url("d").unwrap(), "http://127.0.0.1:9/d/summary");
        for bad in ["../x", "..", "a/b", "", "a\nb", "x%2f"] {
            let e = tg.summary_url(bad).unwrap_err();
            assert!(matches!(e, SourceError::UnsafeName { .. }), "{bad}: {e}");
        }
        assert!(tg.table_url("d", "").is_err());
        assert!(tg.table_url("d", "t\u{7}").is_err());
    }
}
