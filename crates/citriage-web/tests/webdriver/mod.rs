//! A small W3C WebDriver client for browser tests: it owns a `chromedriver`
//! process, one headless Chromium session on it, and the HTTP/JSON commands the
//! dashboard's tests need (navigate, find, click, type, read text and attributes,
//! page source, PNG screenshots, the browser console log, bounded waits).
//!
//! A test file includes it with `mod webdriver;` and uses it like this:
//!
//! ```ignore
//! if let Some(why) = webdriver::unavailable() {
//!     eprintln!("skipped: {why}");
//!     return;
//! }
//! let s = webdriver::Session::start().expect("browser session");
//! s.goto("http://127.0.0.1:PORT/clusters").expect("load");
//! s.find("input[name=include]").expect("field").send_keys("timeout").expect("type");
//! let errors: Vec<_> = s.browser_log().expect("log").into_iter().filter(|e| e.level == "SEVERE").collect();
//! ```
//!
//! Process hygiene: `chromedriver` runs in its own process group on a free port
//! (a port taken in between is retried); dropping the `Session` deletes the
//! WebDriver session (Chromium quits) and then kills the whole group, so neither
//! the driver nor a browser outlives a test, panicking or not. Sessions in one test
//! binary take turns (a process-wide lock), so parallel tests never run several
//! browsers at once on a small machine.
//!
//! Every failure is an [`Error`] carrying the command that failed (method, path,
//! body) and the WebDriver error code and message.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::fs::File;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key under which WebDriver returns an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long chromedriver may take to answer `GET /status` with `ready: true`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Ports tried before giving up when another process takes the chosen one first.
const PORT_ATTEMPTS: usize = 5;
/// Upper bound on any single command (page loads are bounded lower, see `start`).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(90);
/// Largest response body read (page sources and base64 screenshots).
const BODY_LIMIT: u64 = 256 << 20;

static TURN: Mutex<()> = Mutex::new(());

/// Why browser tests cannot run here, or `None` when both binaries are installed.
pub fn unavailable() -> Option<String> {
    [CHROMIUM, CHROMEDRIVER]
        .iter()
        .find(|p| !Path::new(p).exists())
        .map(|p| format!("{p} is not installed (Debian packages chromium and chromium-driver)"))
}

/// A failed WebDriver command: what was sent, and the error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Method, path and (shortened) body, e.g. `POST /session/ID/element {...}`.
    pub command: String,
    /// The W3C error code (`no such element`, `timeout`, ...) or a local one
    /// (`transport`, `bad response`, `chromedriver not ready`).
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.command, self.code, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn err(command: &str, code: &str, message: impl Into<String>) -> Error {
    Error { command: command.to_string(), code: code.to_string(), message: message.into() }
}

/// One entry of the browser's console log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// `SEVERE` (console.error, uncaught exceptions, CSP refusals, failed loads),
    /// `WARNING`, `INFO` or `DEBUG`.
    pub level: String,
    pub message: String,
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).proxy(None).timeout_global(Some(timeout)).build().into()
}

/// Sends one command and returns its `value`, or the WebDriver error it answered.
fn request(http: &ureq::Agent, method: &str, url: &str, body: Option<&Value>) -> Result<Value> {
    let path = url.find("/session").or_else(|| url.find("/status")).map_or(url, |i| &url[i..]);
    let mut command = format!("{method} {path}");
    if let Some(b) = body {
        let b = b.to_string();
        let short: String = b.chars().take(200).collect();
        command.push(' ');
        command.push_str(&short);
        if short.len() < b.len() {
            command.push_str("...");
        }
    }
    let sent = match (method, body) {
        ("GET", _) => http.get(url).call(),
        ("DELETE", _) => http.delete(url).call(),
        ("POST", b) => {
            http.post(url).content_type("application/json").send(b.map_or_else(|| "{}".to_string(), Value::to_string))
        }
        _ => return Err(err(&command, "unsupported method", method)),
    };
    let mut res = sent.map_err(|e| err(&command, "transport", e.to_string()))?;
    let status = res.status().as_u16();
    let text = res
        .body_mut()
        .with_config()
        .limit(BODY_LIMIT)
        .read_to_string()
        .map_err(|e| err(&command, "transport", format!("reading the answer: {e}")))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        let head: String = text.chars().take(200).collect();
        err(&command, "bad response", format!("HTTP {status}, not JSON ({e}): {head}"))
    })?;
    let value = v.get("value").cloned().unwrap_or(Value::Null);
    if let Some(code) = value.get("error").and_then(Value::as_str) {
        let message = value.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(err(&command, code, message));
    }
    if status != 200 {
        return Err(err(&command, "bad response", format!("HTTP {status}: {text}")));
    }
    Ok(value)
}

/// A running chromedriver, leader of its own process group; dropping it kills the group.
struct Driver {
    child: Child,
    url: String,
    log: PathBuf,
    reaped: bool,
}

impl Driver {
    /// Starts chromedriver on a free port and waits until it says it is ready.
    fn start(dir: &Path) -> Result<Driver> {
        let mut last = String::new();
        for attempt in 1..=PORT_ATTEMPTS {
            let command = format!("{CHROMEDRIVER} (attempt {attempt})");
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| err(&command, "transport", format!("finding a free port: {e}")))?
                .port();
            let log = dir.join(format!("chromedriver-{attempt}.log"));
            let out = File::create(&log).map_err(|e| err(&command, "io", format!("{}: {e}", log.display())))?;
            let errs = out.try_clone().map_err(|e| err(&command, "io", e.to_string()))?;
            let child = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(errs)
                .process_group(0)
                .spawn()
                .map_err(|e| err(&command, "io", format!("starting {CHROMEDRIVER}: {e}")))?;
            let mut d = Driver { child, url: format!("http://127.0.0.1:{port}"), log, reaped: false };
            match d.wait_ready(&command)? {
                true => return Ok(d),
                false => last = d.output(), // lost the port race: try another one
            }
        }
        Err(err(
            CHROMEDRIVER,
            "chromedriver not ready",
            format!("no free port after {PORT_ATTEMPTS} attempts; last output:\n{last}"),
        ))
    }

    /// `Ok(true)` once ready, `Ok(false)` when the port was taken, an error otherwise.
    fn wait_ready(&mut self, command: &str) -> Result<bool> {
        let probe = agent(Duration::from_secs(2));
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.reaped = true;
                let out = self.output();
                if out.contains("Address already in use") || out.contains("port not available") {
                    return Ok(false);
                }
                return Err(err(command, "chromedriver not ready", format!("it exited ({status}); output:\n{out}")));
            }
            let ready = request(&probe, "GET", &format!("{}/status", self.url), None);
            if ready.is_ok_and(|v| v["ready"] == json!(true)) {
                // Still ours: a process that grabbed the port would have made it exit.
                if matches!(self.child.try_wait(), Ok(None)) {
                    return Ok(true);
                }
                continue;
            }
            if Instant::now() > deadline {
                return Err(err(
                    command,
                    "chromedriver not ready",
                    format!("GET /status not ready within {READY_TIMEOUT:?}; output:\n{}", self.output()),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_else(|e| format!("({}: {e})", self.log.display()))
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.reaped {
            // The group holds chromedriver and every browser process it started.
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One headless Chromium session. Fields drop in order: the driver is killed
/// before the profile directory is removed and the turn is handed on.
pub struct Session {
    http: ureq::Agent,
    /// `http://127.0.0.1:PORT/session/ID`.
    base: String,
    /// Chromium's browser process, as the session reported it.
    browser_pid: Option<u32>,
    driver: Driver,
    _dir: tempfile::TempDir,
    _turn: MutexGuard<'static, ()>,
}

impl Session {
    /// Waits for this test binary's turn, starts chromedriver and opens a session.
    pub fn start() -> Result<Session> {
        let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let dir = tempfile::tempdir().map_err(|e| err("tempdir", "io", e.to_string()))?;
        let profile = dir.path().join("profile");
        let driver = Driver::start(dir.path())?;
        let http = agent(COMMAND_TIMEOUT);
        let caps = json!({"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.display()), "--window-size=1280,1000",
                ],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let created = request(&http, "POST", &format!("{}/session", driver.url), Some(&caps)).map_err(|mut e| {
            e.message = format!("{}; chromedriver output:\n{}", e.message, driver.output());
            e
        })?;
        let id = created["sessionId"]
            .as_str()
            .ok_or_else(|| err("POST /session", "bad response", format!("no sessionId in {created}")))?;
        let browser_pid = created["capabilities"]["goog:processID"].as_u64().and_then(|p| u32::try_from(p).ok());
        let base = format!("{}/session/{id}", driver.url);
        let s = Session { http, base, browser_pid, driver, _dir: dir, _turn: turn };
        s.post("/timeouts", json!({"pageLoad": 30_000, "script": 10_000, "implicit": 0}))?;
        Ok(s)
    }

    /// The process ids of chromedriver and of the browser (when reported).
    pub fn process_ids(&self) -> (u32, Option<u32>) {
        (self.driver.child.id(), self.browser_pid)
    }

    fn get(&self, path: &str) -> Result<Value> {
        request(&self.http, "GET", &format!("{}{path}", self.base), None)
    }

    fn post(&self, path: &str, body: Value) -> Result<Value> {
        request(&self.http, "POST", &format!("{}{path}", self.base), Some(&body))
    }

    fn string(&self, path: &str) -> Result<String> {
        let v = self.get(path)?;
        v.as_str().map(str::to_string).ok_or_else(|| err(&format!("GET {path}"), "bad response", v.to_string()))
    }

    /// Navigates and waits for the page to load.
    pub fn goto(&self, url: &str) -> Result<()> {
        self.post("/url", json!({ "url": url })).map(drop)
    }

    pub fn current_url(&self) -> Result<String> {
        self.string("/url")
    }

    pub fn title(&self) -> Result<String> {
        self.string("/title")
    }

    pub fn page_source(&self) -> Result<String> {
        self.string("/source")
    }

    fn element(&self, v: &Value, css: &str) -> Result<Element<'_>> {
        let id = v[ELEMENT_KEY]
            .as_str()
            .ok_or_else(|| err(&format!("find {css}"), "bad response", format!("no element in {v}")))?;
        Ok(Element { session: self, path: format!("/element/{id}"), css: css.to_string() })
    }

    /// The first element matching a CSS selector (`no such element` when none does).
    pub fn find(&self, css: &str) -> Result<Element<'_>> {
        let v = self.post("/element", json!({"using": "css selector", "value": css}))?;
        self.element(&v, css)
    }

    /// Every element matching a CSS selector, in document order (possibly none).
    pub fn find_all(&self, css: &str) -> Result<Vec<Element<'_>>> {
        let v = self.post("/elements", json!({"using": "css selector", "value": css}))?;
        let list =
            v.as_array().ok_or_else(|| err(&format!("find all {css}"), "bad response", format!("not a list: {v}")))?;
        list.iter().map(|e| self.element(e, css)).collect()
    }

    /// Polls `ready` every 50 ms until it says yes, fails, or `timeout` passes.
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut(&Session) -> Result<bool>,
    ) -> Result<()> {
        let deadline = Instant::now() + timeout;
        while !ready(self)? {
            if Instant::now() > deadline {
                return Err(err(&format!("wait for {what}"), "timeout", format!("not true within {timeout:?}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Waits until an element matches `css` and returns it.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Result<Element<'_>> {
        self.wait_until(&format!("element {css}"), timeout, |s| match s.find(css) {
            Ok(_) => Ok(true),
            Err(e) if e.code == "no such element" => Ok(false),
            Err(e) => Err(e),
        })?;
        self.find(css)
    }

    /// The visible viewport as PNG bytes.
    pub fn screenshot_png(&self) -> Result<Vec<u8>> {
        let b64 = self.string("/screenshot")?;
        base64_decode(&b64).map_err(|m| err("GET /screenshot", "bad response", m))
    }

    /// Console entries logged since the previous call (chromedriver empties its buffer).
    pub fn browser_log(&self) -> Result<Vec<LogEntry>> {
        let v = self.post("/se/log", json!({"type": "browser"}))?;
        let list = v.as_array().ok_or_else(|| err("POST /se/log", "bad response", v.to_string()))?;
        Ok(list
            .iter()
            .map(|e| LogEntry {
                level: e["level"].as_str().unwrap_or("").to_string(),
                message: e["message"].as_str().unwrap_or("").to_string(),
            })
            .collect())
    }

    /// The text of an open `alert`/`confirm`/`prompt` dialog, `None` when there is none.
    pub fn alert_text(&self) -> Result<Option<String>> {
        match self.string("/alert/text") {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.code == "no such alert" => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Chromium quits with its session; the driver's drop then kills what is left.
        let _ = request(&agent(Duration::from_secs(20)), "DELETE", &self.base, None);
    }
}

/// A reference to one element of the current page.
pub struct Element<'s> {
    session: &'s Session,
    /// `/element/ID`.
    path: String,
    /// The selector it was found by, for messages.
    pub css: String,
}

impl Element<'_> {
    pub fn click(&self) -> Result<()> {
        self.session.post(&format!("{}/click", self.path), json!({})).map(drop)
    }

    /// The rendered text (as a user sees it, whitespace collapsed).
    pub fn text(&self) -> Result<String> {
        self.session.string(&format!("{}/text", self.path))
    }

    /// An attribute's value, `None` when the element does not have it.
    pub fn attr(&self, name: &str) -> Result<Option<String>> {
        let v = self.session.get(&format!("{}/attribute/{name}", self.path))?;
        Ok(v.as_str().map(str::to_string))
    }

    /// Types `text` into the element (focusing it first).
    pub fn send_keys(&self, text: &str) -> Result<()> {
        self.session.post(&format!("{}/value", self.path), json!({ "text": text })).map(drop)
    }

    /// Empties an editable element.
    pub fn clear(&self) -> Result<()> {
        self.session.post(&format!("{}/clear", self.path), json!({})).map(drop)
    }
}

/// Decodes standard base64 (RFC 4648 alphabet, optional `=` padding, line breaks ignored).
pub fn base64_decode(s: &str) -> std::result::Result<Vec<u8>, String> {
    let data = s.trim_end_matches('=');
    if s.len() - data.len() > 2 {
        return Err("more than two '=' padding characters".into());
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    let (mut acc, mut bits, mut n) = (0u32, 0u32, 0usize);
    for (i, c) in data.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'\r' | b'\n' => continue,
            _ => return Err(format!("invalid base64 character {:?} at offset {i}", c as char)),
        };
        n += 1;
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if n % 4 == 1 {
        return Err(format!("truncated base64: {n} characters leave a dangling 6 bits"));
    }
    if s.len() > data.len() && !(n + s.len() - data.len()).is_multiple_of(4) {
        return Err("padding does not complete a 4-character group".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    #[test]
    fn base64_rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ];
        for (enc, dec) in vectors {
            assert_eq!(base64_decode(enc).as_deref(), Ok(dec.as_bytes()), "{enc}");
        }
        // Unpadded input and the two non-alphanumeric symbols.
        assert_eq!(base64_decode("Zm8").as_deref(), Ok(&b"fo"[..]));
        assert_eq!(base64_decode("+/+/").as_deref(), Ok(&[0xfb, 0xff, 0xbf][..]));
        assert_eq!(base64_decode("iVBORw0KGgo=").as_deref(), Ok(&b"\x89PNG\r\n\x1a\n"[..]));
    }

    #[test]
    fn base64_rejects_malformed_input() {
        assert!(base64_decode("Zm9v!").unwrap_err().contains("offset 4"));
        assert!(base64_decode("Z").unwrap_err().contains("truncated"));
        assert!(base64_decode("Zg===").is_err());
        assert!(base64_decode("Zg=").is_err());
        assert!(base64_decode("Z=g=").is_err());
    }
}
