//! What every command shares: the global options (`--db`, `--format`, `--quiet`) as a
//! [`Context`], where the store is and opening it, printing results (text with
//! [`outln!`](crate::outln) or JSON with [`print_json`]), progress on stderr ([`Bar`]:
//! the use cases' [`Progress`], hidden with `--quiet`, plain with `NO_COLOR`), how to
//! spell a command for the user ([`invocation`]), the argument parsers and argument
//! groups several commands use, and [`Failure`], which carries the exit code (0
//! success, 1 failure, 2 bad input).
//!
//! This module imports no command and nothing else of this crate: commands and the
//! library modules use it, never the other way round.

use citriage_app::Progress;
use citriage_model::{Dataset, Day};
use citriage_sources::HttpOptions;
use citriage_store::{Location, Store};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Prints a line on stdout, ignoring a closed pipe (`citriage ... | head`).
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout());
    }};
    ($($t:tt)*) => {{
        use std::io::Write;
        // CI text reaches the terminal with its control characters shown escaped.
        let _ = writeln!(std::io::stdout(), "{}", citriage_model::escape::terminal(&format!($($t)*)));
    }};
}

// The global options, given before or after the subcommand. (A plain comment: a doc
// comment on a flattened struct would replace the program's description in --help.)
#[derive(Args, Debug, Clone)]
pub struct Context {
    /// The store: a SQLite file (or sqlite:FILE), or a PostgreSQL database
    /// (postgres://USER@HOST:PORT/DB; the password from PGPASSWORD, never printed).
    /// Default: $CITRIAGE_DB, else $XDG_DATA_HOME/citriage/citriage.db, else
    /// ~/.local/share/citriage/citriage.db.
    #[arg(long, global = true, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// Output format of the results printed on stdout.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// No progress output on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Memory budget for downloaded and inflated bodies in flight, in MiB, shared by
    /// all of a command's requests and files (a larger body fails naming it).
    #[arg(long, global = true, value_name = "MIB", env = "CITRIAGE_MEMORY_BUDGET_MIB", default_value_t = 512)]
    pub memory_budget: u64,
    /// Format of the log events written on stderr (`watch` and `serve` log what they
    /// fetch, store, fail at and serve). The level comes from CITRIAGE_LOG, else
    /// RUST_LOG (e.g. `debug`, `citriage=debug,warn`); default `info`, `warn` with --quiet.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// How log events are written on stderr.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One line per event: time, level, target, message and fields.
    Text,
    /// One JSON object per line (`timestamp`, `level`, `target`, `fields`).
    Json,
}

/// How results are printed on stdout.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

impl Context {
    /// The store's path or URL as given: `--db`, else the default (see
    /// [`citriage_store::default_path`]). Print [`Context::db_location`] instead: a URL
    /// may carry a password.
    pub fn db_path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(citriage_store::default_path)
    }

    /// Where the store lives (a SQLite file or a PostgreSQL database); printed
    /// without a password.
    pub fn db_location(&self) -> Location {
        Location::from_path(&self.db_path())
    }

    /// Opens the store for a command that writes, creating it when missing (and saying
    /// so on stderr, even with `--quiet`: a new file should never go unnoticed).
    pub fn open_store(&self) -> Result<Store, Failure> {
        let loc = self.db_location();
        let created = !loc.exists() && matches!(loc, citriage_store::Location::Sqlite(_));
        let store = open(&loc)?;
        if created {
            eprintln!("created a new store at {loc}");
        }
        Ok(store)
    }

    /// Opens the store for a command that only reads it: a SQLite file that does not
    /// exist is refused (bad input, naming the path) instead of being created empty.
    pub fn open_existing_store(&self) -> Result<Store, Failure> {
        let loc = self.db_location();
        if !loc.exists() {
            return Err(missing_store(&loc, self.db.is_some()));
        }
        open(&loc)
    }

    /// Refuses a missing store for a command that only reads it (see
    /// [`Context::open_existing_store`]).
    pub fn require_store(&self) -> Result<(), Failure> {
        let loc = self.db_location();
        if loc.exists() {
            Ok(())
        } else {
            Err(missing_store(&loc, self.db.is_some()))
        }
    }

    /// True when results are printed as JSON.
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }

    /// A spinner with a message on stderr (hidden with `--quiet`).
    pub fn spinner(&self, msg: &str) -> Bar {
        if self.quiet {
            return Bar { pb: ProgressBar::hidden(), quiet: true };
        }
        let pb = ProgressBar::new_spinner();
        let style = if no_color() {
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
        } else {
            ProgressStyle::with_template("{spinner:.cyan} {msg} [{elapsed}]")
        };
        if let Ok(s) = style {
            pb.set_style(s);
        }
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        Bar { pb, quiet: false }
    }

    /// A progress bar on stderr (hidden with `--quiet`) drawn with `template`, or with
    /// `plain` when `NO_COLOR` is set.
    pub fn bar(&self, template: &str, plain: &str) -> Bar {
        let pb = if self.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
        let tpl = if no_color() { plain } else { template };
        if let Ok(st) = ProgressStyle::with_template(tpl) {
            pb.set_style(st.progress_chars("=> "));
        }
        Bar { pb, quiet: self.quiet }
    }
}

/// A use case's progress on stderr: a spinner or a bar (hidden with `--quiet`), with
/// notes above it (not with `--quiet`) and warnings (always); cleared when dropped.
#[derive(Clone)]
pub struct Bar {
    pb: ProgressBar,
    quiet: bool,
}

impl Bar {
    /// Ticks on its own every `millis` (a spinner for counts that grow).
    pub fn tick_every(&self, millis: u64) {
        self.pb.enable_steady_tick(Duration::from_millis(millis));
    }

    /// Clears it now (before printing results).
    pub fn clear(&self) {
        self.pb.finish_and_clear();
    }
}

impl Progress for Bar {
    fn doing(&self, what: &str) {
        self.pb.set_message(what.to_string());
    }
    fn found(&self, n: u64) {
        self.pb.inc_length(n);
    }
    fn total(&self, n: u64) {
        self.pb.set_length(n);
    }
    fn advance(&self, n: u64) {
        self.pb.inc(n);
    }
    fn position(&self, n: u64) {
        self.pb.set_position(n);
    }
    fn note(&self, line: &str) {
        if !self.quiet {
            self.pb.suspend(|| eprintln!("{line}"));
        }
    }
    fn warning(&self, text: &str) {
        self.pb.suspend(|| eprintln!("warning: {text}"));
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.pb.finish_and_clear();
    }
}

/// Opens the store at `loc` (a location a command chose itself).
pub fn open(loc: &Location) -> Result<Store, Failure> {
    Ok(loc.open().map_err(citriage_app::Error::from)?)
}

fn missing_store(loc: &Location, given: bool) -> Failure {
    let whence = if given {
        "given with --db"
    } else if std::env::var_os("CITRIAGE_DB").is_some() {
        "given with $CITRIAGE_DB"
    } else {
        "the default store: no --db or $CITRIAGE_DB given"
    };
    Failure::input(format!(
        "no store at {loc} ({whence}); this command only reads a store. Create one with `{cmd} demo`, \
         `{cmd} import SNAPSHOT` or `{cmd} fetch ...`, or name an existing one with --db FILE",
        cmd = invocation()
    ))
}

/// How to run this program again, as a user can paste it: `cargo run -- ` or
/// `cargo run --release -- ` when it runs from a Cargo target folder, `citriage` when
/// that name on the `PATH` is this program, else the program's path.
pub fn invocation() -> String {
    let Ok(exe) = std::env::current_exe() else { return "citriage".to_string() };
    invocation_for(&exe, std::env::var_os("PATH").as_deref())
}

/// [`invocation`] for a given program path and `PATH`.
pub fn invocation_for(exe: &std::path::Path, path_var: Option<&std::ffi::OsStr>) -> String {
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    let profile = exe.parent().and_then(|d| Some((d.file_name()?.to_str()?, d.parent()?.file_name()?.to_str()?)));
    match profile {
        Some(("debug", "target")) => return "cargo run --".to_string(),
        Some(("release", "target")) => return "cargo run --release --".to_string(),
        _ => {}
    }
    let name = exe.file_name().and_then(|n| n.to_str()).unwrap_or("citriage");
    let on_path = path_var
        .map(|p| std::env::split_paths(p).any(|d| d.join(name).canonicalize().is_ok_and(|c| c == exe)))
        .unwrap_or(false);
    if on_path {
        name.to_string()
    } else {
        exe.display().to_string()
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some()
}

/// Prints a JSON value, pretty, on stdout.
pub fn print_json(v: &serde_json::Value) {
    crate::outln!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

/// Prints the object `head` with `items` as its field `key`, byte for byte as
/// [`print_json`] prints it, the list written one item at a time: a large answer (every
/// job's figures) is never held whole as one JSON value and one string.
pub fn print_json_with_list<T: serde::Serialize>(
    head: serde_json::Map<String, serde_json::Value>,
    key: &str,
    items: &[T],
) {
    let _ = write_json_with_list(&mut std::io::stdout().lock(), head, key, items);
}

fn write_json_with_list<T: serde::Serialize>(
    out: &mut dyn std::io::Write,
    mut head: serde_json::Map<String, serde_json::Value>,
    key: &str,
    items: &[T],
) -> std::io::Result<()> {
    use citriage_model::escape::terminal;
    head.insert(key.to_string(), serde_json::Value::Array(Vec::new()));
    let doc = serde_json::to_string_pretty(&serde_json::Value::Object(head)).unwrap_or_default();
    // The empty list's place: a line break followed by structure can only be the
    // document's own (a line break inside a string is written `\n`).
    let mark = format!("\n  {}: []", serde_json::Value::String(key.to_string()));
    let at = doc.find(&mark).filter(|_| !items.is_empty());
    // Up to the list's `[` (the whole document when the list is empty).
    let open = at.map_or(doc.len(), |at| at + mark.len() - 1);
    out.write_all(terminal(&doc[..open]).as_bytes())?;
    if at.is_some() {
        for (i, item) in items.iter().enumerate() {
            let text =
                serde_json::to_string_pretty(&serde_json::to_value(item).unwrap_or_default()).unwrap_or_default();
            let mut chunk = String::with_capacity(text.len() + text.len() / 4 + 8);
            chunk.push_str(if i == 0 { "\n" } else { ",\n" });
            for (j, line) in text.split('\n').enumerate() {
                if j > 0 {
                    chunk.push('\n');
                }
                chunk.push_str("    ");
                chunk.push_str(line);
            }
            out.write_all(terminal(&chunk).as_bytes())?;
        }
        out.write_all(b"\n  ")?;
        out.write_all(terminal(&doc[open..]).as_bytes())?;
    }
    out.write_all(b"\n")
}

/// Parses `--dataset`.
pub fn parse_dataset(s: &str) -> Result<Dataset, String> {
    s.parse()
}

/// Parses a `YYYY-MM-DD` argument.
pub fn parse_day(s: &str) -> Result<Day, String> {
    Day::parse(s).ok_or_else(|| format!("{s:?} is not a YYYY-MM-DD date"))
}

// Where a dashboard snapshot comes from (`import`, `triage`). (A plain comment: see
// `Context`.)
#[derive(Args, Debug)]
pub struct SnapshotSourceArgs {
    /// Force the dataset instead of detecting it from the fields.
    /// Default: detected from the snapshot's fields (`triage` without --snapshot: failures).
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
    /// The day the snapshot describes (YYYY-MM-DD). Default: a date in the file
    /// name, else today (UTC).
    #[arg(long, value_parser = parse_day)]
    pub date: Option<Day>,
    /// HTTP timeout in seconds: bounds reading a URL in all, retries and their waits
    /// included.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

impl SnapshotSourceArgs {
    /// The HTTP options these arguments ask for.
    pub fn http(&self) -> HttpOptions {
        HttpOptions::bounded(Duration::from_secs(self.timeout.max(1)))
    }
}

/// A failed command: the message and whether the input was at fault.
#[derive(Debug)]
pub struct Failure {
    pub bad_input: bool,
    pub message: String,
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Failure {
        Failure { bad_input: true, message: message.into() }
    }
    pub fn other(message: impl Into<String>) -> Failure {
        Failure { bad_input: false, message: message.into() }
    }
    /// The process exit code: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.bad_input {
            2
        } else {
            1
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A use case's error: bad input is exit code 2, anything else 1; a command it names
/// to run is spelled as this program runs ([`invocation`]).
impl From<citriage_app::Error> for Failure {
    fn from(e: citriage_app::Error) -> Self {
        Failure { bad_input: e.is_bad_input(), message: e.message_for(&invocation()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What `print_json` prints for the same object.
    fn whole(v: &serde_json::Value) -> String {
        citriage_model::escape::terminal(&serde_json::to_string_pretty(v).unwrap()) + "\n"
    }

    #[test]
    fn a_list_written_item_by_item_is_the_whole_document() {
        let items = [
            json!({"job": "ci-a", "tests": [{"name": "x\ny", "fired": true}], "rate": 0.5}),
            json!({"job": "pr:b\u{1b}[31m", "tests": [], "nested": {"z": 1, "a": [1, 2]}}),
            json!({"job": "  \"jobs\": []", "empty": {}}),
        ];
        for n in [0, 1, 3] {
            let head = serde_json::Map::from_iter([("as_of".to_string(), json!(7)), ("window_days".into(), json!(14))]);
            let mut out = Vec::new();
            write_json_with_list(&mut out, head, "jobs", &items[..n]).unwrap();
            let expected = whole(&json!({"as_of": 7, "window_days": 14, "jobs": items[..n]}));
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{n} item(s)");
        }
    }
}
