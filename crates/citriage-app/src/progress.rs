//! How a use case tells its caller what it is doing while it works: the CLI draws it
//! as a spinner or a bar on stderr (hidden with `--quiet`, plain with `NO_COLOR`), the
//! worker of `watch` and the MCP server show nothing. Every method has a default that
//! does nothing, so a caller implements only what it shows; [`Silent`] shows nothing.

/// Progress of a running use case.
pub trait Progress: Sync {
    /// What is being done now (`"clustering 1,234 failures"`).
    fn doing(&self, _what: &str) {}
    /// More items of work were found: the total grows by `n`.
    fn found(&self, _n: u64) {}
    /// The total is known: `n` items.
    fn total(&self, _n: u64) {}
    /// `n` more items are done.
    fn advance(&self, _n: u64) {}
    /// The number of items done so far.
    fn position(&self, _n: u64) {}
    /// A line worth showing above the progress while it runs (a wait and why); shown
    /// only when progress is.
    fn note(&self, _line: &str) {}
    /// A warning about the input (a field a snapshot should not have): shown even when
    /// progress is not.
    fn warning(&self, _text: &str) {}
}

/// Progress that shows nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {}
