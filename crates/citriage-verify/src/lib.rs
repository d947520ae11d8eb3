//! Verifying triage reports against the runbook: code evidence from local checkouts
//! (`code`), a Markdown report parser (`report`), the checks (`rules`, with `builds`, `content`,
//! `refcheck` and `wording`), what they say (`outcome`: findings, claims and verdicts,
//! below every check module) and its rendering (`render`), and the investigation briefs that continue from
//! verified facts (`brief`). PR/issue state comes from `citriage-github` through its
//! `RefResolver` trait; build URLs through [`rules::BuildUrlResolver`]; `path:line`
//! through [`code::CodeResolver`].

pub mod brief;
pub mod builds;
pub mod claims;
pub mod code;
pub mod content;
pub mod outcome;
pub mod prose;
pub mod refcheck;
pub mod render;
pub mod report;
pub mod rules;
pub mod tense;
pub mod wording;
pub mod xref;

pub use citriage_git::GitProgram;
pub use code::{Checkout, Checkouts, CodeAnswer, CodeError, CodeResolver, CommitAnswer, FileAnswer, FileText, NoCode};
pub use render::{render_json, render_markdown};
pub use report::{parse, Report, ReportFormat, SectionKind};
pub use rules::{
    verify, verify_report, BuildAnswer, BuildUrl, BuildUrlResolver, CheckStatus, ClaimRecord, Finding, KnownBuilds,
    NoBuilds, Resolvers, Severity, Unchecked, Verdict, Verification, VerifyOptions, RULES,
};
