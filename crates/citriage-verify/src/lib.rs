//! Verifying triage reports against the runbook: code evidence from local checkouts
//! (`code`), a Markdown report parser (`report`), the checks (`rules`) and their
//! rendering (`render`), and the investigation briefs that continue from
//! verified facts (`brief`). PR/issue state comes from `citriage-github` through its
//! `RefResolver` trait; build URLs through [`rules::BuildUrlResolver`]; `path:line`
//! through [`code::CodeResolver`].

pub mod brief;
pub mod code;
pub mod render;
pub mod report;
pub mod rules;

pub use code::{Checkout, Checkouts, CodeAnswer, CodeError, CodeResolver, Git, NoCode};
pub use render::{render_json, render_markdown};
pub use report::{parse, Report, ReportFormat, SectionKind};
pub use rules::{
    verify, verify_report, BuildAnswer, BuildUrl, BuildUrlResolver, CheckStatus, Finding, KnownBuilds, NoBuilds,
    Resolvers, Unchecked, Verification, VerifyOptions, RULES,
};
