//! Bands for a regression window's suspects, from the families of their
//! specific links: a change with no specific link stays in the *window only*;
//! one family of specific evidence makes it a *suspect*; two independent
//! families make it the *likely introducing change*. The payload analysis maps
//! its scores to revert / bisect / report instead (its own bands).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::links::{Family, Link};

/// How far the evidence takes a change of a regression window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JobBand {
    /// In the window, with no specific link to the failure.
    WindowOnly,
    /// One kind of specific link.
    Suspect,
    /// Two independent kinds of specific link.
    LikelyIntroducing,
}

impl JobBand {
    /// The band of a change's links (and of its onset, when the user knows it:
    /// the failure began in the build that first tested the change).
    pub fn of(links: &[Link], onset: bool) -> JobBand {
        let mut families: BTreeSet<Family> = links.iter().filter(|l| l.specific).map(|l| l.kind.family()).collect();
        if onset && !families.is_empty() {
            families.insert(Family::Onset);
        }
        match families.len() {
            0 => JobBand::WindowOnly,
            1 => JobBand::Suspect,
            _ => JobBand::LikelyIntroducing,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobBand::WindowOnly => "window only",
            JobBand::Suspect => "suspect",
            JobBand::LikelyIntroducing => "likely introducing change",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::LinkKind;

    fn link(kind: LinkKind, specific: bool) -> Link {
        Link { kind, points: 20, specific, evidence: String::new() }
    }

    #[test]
    fn two_independent_kinds_make_the_likely_introducing_change() {
        assert_eq!(JobBand::of(&[], true), JobBand::WindowOnly);
        assert_eq!(JobBand::of(&[link(LinkKind::Component, false)], true), JobBand::WindowOnly);
        assert_eq!(JobBand::of(&[link(LinkKind::Verbatim, true)], false), JobBand::Suspect);
        // A removed and an added string are the same family: still one kind.
        assert_eq!(
            JobBand::of(&[link(LinkKind::Verbatim, true), link(LinkKind::Removed, true)], false),
            JobBand::Suspect
        );
        assert_eq!(
            JobBand::of(&[link(LinkKind::Verbatim, true), link(LinkKind::StackFile, true)], false),
            JobBand::LikelyIntroducing
        );
        assert_eq!(JobBand::of(&[link(LinkKind::Verbatim, true)], true), JobBand::LikelyIntroducing);
    }
}
