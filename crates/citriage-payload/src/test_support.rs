//! What the crate's unit tests share: a build-log line, a pull request with its diff,
//! the window's index of candidates, a failure mode's evidence.

use crate::candidate::{Candidate, CandidateKind};
use crate::evidence::{Location, LogLine};
use crate::links::ModeEvidence;
use citriage_suspects::diff::parse_unified;
use citriage_suspects::window::{CandidateIndex, WindowIndex};

pub(crate) fn ll(t: &str, line: u32) -> LogLine {
    LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(line) } }
}

pub(crate) fn cand(id: &str, repo: &str, title: &str, diff: &str) -> Candidate {
    Candidate {
        id: id.into(),
        kind: CandidateKind::Pr,
        title: title.into(),
        url: None,
        component: repo.rsplit('/').next().unwrap().into(),
        repo: Some(repo.into()),
        number: Some(1),
        images: vec![repo.rsplit('/').next().unwrap().into()],
        payload: Some("p".into()),
        date: None,
        rpm: None,
        diff_available: true,
        diff: Some(parse_unified(diff)),
        presubmits: None,
        is_rebase: false,
    }
}

pub(crate) fn window(cs: &[&Candidate]) -> WindowIndex {
    WindowIndex::new(cs.iter().map(|c| (c.id.clone(), CandidateIndex::new(c.diff.as_ref(), &c.title))).collect())
}

pub(crate) fn evidence(lines: Vec<LogLine>, tests: Vec<String>) -> ModeEvidence {
    ModeEvidence::new(lines, tests, vec![], false)
}
