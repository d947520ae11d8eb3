//! Structured logs: `tracing` events written on stderr as text lines or JSON objects
//! (`--log-format`), filtered by `CITRIAGE_LOG`, else `RUST_LOG` (the `EnvFilter`
//! syntax: `debug`, `citriage=debug,warn`, ...), else `info` for citriage's own crates
//! and `warn` for the rest (`warn` everywhere with `--quiet`). Stdout stays for
//! results. Events carry their figures as fields (`source`, `kind`, `builds_stored`,
//! `error`, `status`, `millis`, ...); no event carries a token or a request header.

use crate::context::LogFormat;
use tracing_subscriber::EnvFilter;

/// The variables the filter is read from, in order.
pub const FILTER_VARS: &[&str] = &["CITRIAGE_LOG", "RUST_LOG"];

/// The filter when no variable sets one.
pub fn default_filter(quiet: bool) -> &'static str {
    if quiet {
        "warn"
    } else {
        "warn,citriage=info"
    }
}

/// Installs the process's subscriber (once; later calls do nothing). A filter that
/// does not parse is reported on stderr and the default is used.
pub fn init(format: LogFormat, quiet: bool) {
    let given =
        FILTER_VARS.iter().find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()).map(|s| (*v, s)));
    let filter = match given {
        Some((var, spec)) => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("warning: {var}={spec:?} is not a log filter ({e}); using {:?}", default_filter(quiet));
            EnvFilter::new(default_filter(quiet))
        }),
        None => EnvFilter::new(default_filter(quiet)),
    };
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(true);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().with_current_span(false).with_span_list(false).try_init(),
    };
}
