//! The one error of the use cases. It says once whether the input was at fault (a
//! missing or malformed file, URL, argument or stored item: the CLI's exit code 2) or
//! something else failed (a write, the network, an engine: exit code 1). The errors of
//! the store, the sources, the payload analysis and ingestion convert here, by `From`,
//! keeping their own word on whose fault they are.

use citriage_ingest::IngestError;
use citriage_payload::PayloadError;
use citriage_sources::SourceError;
use citriage_store::StoreError;

/// Why a use case could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input was at fault; the message names it and what was wrong.
    #[error("{0}")]
    Input(String),
    /// Bad input that another citriage command remedies: the message is `before`,
    /// the command to run (`fetch`, `import`, ...) in backquotes, then `after`. Shown
    /// here with `citriage` as the program; a front end that knows how it was started
    /// spells the command as it works there ([`Error::message_for`]).
    #[error("{before}`citriage {command}`{after}")]
    Remedy { before: String, command: String, after: String },
    /// Something other than the input failed.
    #[error("{0}")]
    Failed(String),
    /// The store: a location that cannot be used as given (a malformed URL, a backend
    /// this build lacks, a newer schema) is bad input; an engine failure is not.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A read: bad input (a missing file, a 404, corrupt data) or not.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A payload analysis: bad input (a missing tag, a malformed recording) or not.
    #[error(transparent)]
    Payload(#[from] PayloadError),
}

/// The result of a use case.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Bad input, with a message naming it.
    pub fn input(message: impl Into<String>) -> Error {
        Error::Input(message.into())
    }

    /// Bad input that running `citriage COMMAND` remedies (see [`Error::Remedy`]).
    pub fn remedy(before: impl Into<String>, command: &str, after: impl Into<String>) -> Error {
        Error::Remedy { before: before.into(), command: command.to_string(), after: after.into() }
    }

    /// The message, with a command to run spelled as `program` runs it (`cargo run
    /// --`, a path, `citriage`).
    pub fn message_for(&self, program: &str) -> String {
        match self {
            Error::Remedy { before, command, after } => format!("{before}`{program} {command}`{after}"),
            other => other.to_string(),
        }
    }

    /// A failure that is not the input's fault.
    pub fn failed(message: impl Into<String>) -> Error {
        Error::Failed(message.into())
    }

    /// Whether the input was at fault.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Input(_) | Error::Remedy { .. } => true,
            Error::Failed(_) => false,
            Error::Store(e) => e.is_bad_input(),
            Error::Source(e) => e.is_bad_input(),
            Error::Payload(e) => e.is_bad_input(),
        }
    }
}

/// Ingestion stops only when the store or a listing fails: never the input's fault
/// (a build's own problems are kept in its summary).
impl From<IngestError> for Error {
    fn from(e: IngestError) -> Self {
        Error::Failed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_says_whose_fault_it_is() {
        assert!(Error::input("x").is_bad_input());
        assert!(!Error::failed("x").is_bad_input());
        let missing = SourceError::Http { location: "a.json".into(), status: 404, hint: String::new() };
        assert!(Error::from(missing).is_bad_input());
        let gone = SourceError::Http { location: "b".into(), status: 404, hint: String::new() };
        let e = Error::from(IngestError::Source(gone));
        assert!(!e.is_bad_input(), "ingestion stopping is a failure, whatever stopped it");
        assert_eq!(Error::input("the message").to_string(), "the message");
        let r = Error::remedy("no builds: run ", "fetch", " first");
        assert!(r.is_bad_input());
        assert_eq!(r.to_string(), "no builds: run `citriage fetch` first");
        assert_eq!(r.message_for("cargo run --"), "no builds: run `cargo run -- fetch` first");
    }
}
