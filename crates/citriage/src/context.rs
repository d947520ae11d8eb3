//! What every command shares: the global options (`--db`, `--format`, `--quiet`) as a
//! [`Context`], opening the store, printing results (text with [`outln!`](crate::outln)
//! or JSON with [`print_json`]), progress on stderr (hidden with `--quiet`, plain with
//! `NO_COLOR`), the argument parsers and argument groups several commands use, and
//! [`Failure`], which carries the exit code (0 success, 1 failure, 2 bad input).
//!
//! This module imports no command and nothing else of this crate: commands and the
//! library modules use it, never the other way round.

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

    /// Opens (creating it when missing) the store.
    pub fn open_store(&self) -> Result<Store, Failure> {
        Ok(self.db_location().open()?)
    }

    /// True when results are printed as JSON.
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }

    /// A spinner with a message on stderr (hidden with `--quiet`).
    pub fn spinner(&self, msg: &str) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
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
        pb
    }

    /// A progress bar on stderr (hidden with `--quiet`) drawn with `template`, or with
    /// `plain` when `NO_COLOR` is set.
    pub fn bar(&self, template: &str, plain: &str) -> ProgressBar {
        let bar = if self.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
        let tpl = if no_color() { plain } else { template };
        if let Ok(st) = ProgressStyle::with_template(tpl) {
            bar.set_style(st.progress_chars("=> "));
        }
        bar
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some()
}

/// Prints a JSON value, pretty, on stdout.
pub fn print_json(v: &serde_json::Value) {
    crate::outln!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
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

/// A store that cannot be used as given (a malformed URL, a backend this build lacks,
/// a newer schema) is bad input; an engine failure is not.
impl From<citriage_store::StoreError> for Failure {
    fn from(e: citriage_store::StoreError) -> Self {
        if e.is_bad_input() {
            Failure::input(e.to_string())
        } else {
            Failure::other(e.to_string())
        }
    }
}

/// A read that failed: bad input (missing file, 404, corrupt data) or not.
impl From<citriage_sources::SourceError> for Failure {
    fn from(e: citriage_sources::SourceError) -> Self {
        if e.is_bad_input() {
            Failure::input(e.to_string())
        } else {
            Failure::other(e.to_string())
        }
    }
}
