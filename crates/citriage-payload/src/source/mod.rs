//! Where payload data comes from: the [`PayloadSource`] trait and two of its
//! implementations, [`HttpSource`] (a live release controller) and [`RecordedDir`]
//! (a directory of recorded API responses). The payload-snapshot layout is in
//! [`crate::snapshot`].
//!
//! ## Recorded-response layout
//!
//! Paths mirror the API under a root directory (`<root>` itself, or
//! `<root>/release-controller` when that exists):
//!
//! ```text
//! api/v1/releasestream/<stream>/tags.json                      GET .../tags
//! api/v1/releasestream/<stream>/release/<tag>.json             GET .../release/<tag>
//! api/v1/releasestream/<stream>/release/<tag>?from=<from>.json GET .../release/<tag>?from=<from>
//! ```
//!
//! Each file may also be stored without the `.json` suffix (the exact request
//! path). A `?from=` answer may be the HTML "changelog is still loading" page.
//! Optional extras beside them (in `<root>` or the world root):
//!
//! ```text
//! github/<org>/<repo>/pull/<n>.diff          PR diff (also pulls/<n>.diff, pull/<n>/code.diff)
//! github/<org>/<repo>/pull/<n>.jobs.json     presubmit job names (array, or {"statusCheckRollup":[{"name"}]})
//! job-runs/*.json | job-runs.json            job runs in the BigQuery export shape
//! sippy/api/jobs?release=<X.Y>.json | sippy/jobs.json   Sippy `/api/jobs` (pass-rate fallback)
//! ci-config/changes.json | ci-config-changes.json | openshift/ci-config-changes.json
//!                                            recorded CI-configuration changes (a `diff`
//!                                            path is resolved against the same root)
//! ```
//!
//! ## HTTP
//!
//! [`HttpSource`] is a thin user of citriage's HTTP layer
//! ([`citriage_sources::http`]): it contacts only the configured release-controller
//! origin (and, when configured, the GitHub diff and Sippy origins), follows redirects
//! only within an origin, times out, and retries 429 / 5xx / transport errors a
//! bounded number of times within the command's retry budget, waiting for
//! `Retry-After` when the server gives one (up to a cap).

mod api;
pub mod ci_config;
mod http;
mod recorded;

pub use api::{Changelog, CiConfigAnswer, CiWindow, PayloadSource};
pub use http::{encode_component, HttpConfig, HttpSource};
pub(crate) use recorded::read_under;
pub use recorded::{parse_presubmits, RecordedDir};
