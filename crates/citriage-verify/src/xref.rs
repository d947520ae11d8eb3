//! References from one part of a report to another: "See V3 and V4 under Pattern F",
//! "same root cause as Pattern A", "see B.1". A section that points elsewhere carries
//! what is written there, so the checks of a pattern's causal chain and depth read the
//! sections it refers to (and theirs, without going round in circles) before judging
//! it. A reference names a pattern (`Pattern F`) or a label (`V3`, `B.1`, `C.Q.1`) that
//! starts a heading or a line of the report, optionally under a pattern.

use crate::report::{strip_decorations, Report, Section, SectionKind};
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

fn re(cell: &'static OnceLock<Regex>, p: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(p).expect("static regex"))
}

/// The words that send the reader elsewhere, and what follows them up to the end of
/// the sentence.
fn pointer_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(?:see(?: also)?|same (?:root )?cause as|same as|as in|as under|cf\.|covered (?:in|by|under)|described (?:in|under)|explained (?:in|under)|written (?:in|under)|duplicate of|part of|folds into|belongs to)\s+((?:[^.;!?]|\.[A-Za-z0-9])*)",
    )
}

/// `Pattern F` in a pointer's text.
fn pattern_name_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(?:Pattern|Cluster)\s+([A-Z]{1,2}|[0-9]{1,2})\b(?:\.([A-Za-z0-9.]+))?")
}

/// A label of a part of a pattern: `V3`, `B.1`, `C.Q.1`, `H.A1`, `K.6`.
fn label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b([A-Z]{1,2}[0-9]{1,2}(?:\.[a-z0-9]{1,3})?|[A-Z](?:\.[A-Z0-9]{1,3}){1,3})\b")
}

/// A line that starts a labelled part (`V4 — …`, `**B.2** …`, `#### C.Q.1 — …`).
fn starts_with_label(line: &str) -> Option<String> {
    let t = line.trim_start().trim_start_matches(['#', '•', '-', '*', '>', ' ']).trim_start_matches("**");
    let m = label_re().find(t)?;
    if m.start() != 0 {
        return None;
    }
    let rest = &t[m.end()..];
    // A label stands apart from the words after it (`V4 — x`, `B.1:`), not `V4s`.
    (rest.is_empty() || rest.starts_with([' ', '—', '–', ':', ')', '*', '/'])).then(|| m.as_str().to_string())
}

/// The label of a pattern section (`Pattern F — …` → `F`).
fn pattern_label(s: &Section) -> Option<String> {
    let t = strip_decorations(&s.title);
    pattern_name_re().captures(&t).filter(|c| c.get(0).is_some_and(|m| m.start() == 0)).map(|c| c[1].to_string())
}

/// One reference and where it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    /// 1-based line of the pointer.
    pub line: usize,
    /// As written: `Pattern F`, `V3 under Pattern F`.
    pub target: String,
    /// The lines it leads to (a section, or a labelled part of one), if found.
    pub found: Option<Section>,
}

/// The labelled part starting at line `n` within `scope`: up to the next labelled line
/// or heading, or the end of the scope.
fn part_at(r: &Report, scope: &Section, n: usize, label: &str) -> Section {
    if let Some(s) = r.sections.iter().find(|s| s.line == n) {
        return s.clone();
    }
    // Its own sub-parts (`V4.a` under `V4`) belong to it.
    let own = format!("{label}.");
    let end = (n + 1..=scope.end)
        .find(|&k| {
            r.sections.iter().any(|s| s.line == k) || starts_with_label(r.line(k)).is_some_and(|l| !l.starts_with(&own))
        })
        .map_or(scope.end, |k| k - 1);
    Section { line: n, level: scope.level + 1, title: label.to_string(), kind: SectionKind::SubPattern, end }
}

fn find_label(r: &Report, scope: &Section, label: &str, skip: &Section) -> Option<Section> {
    (scope.line..=scope.end)
        .filter(|n| !r.fenced.contains(n) && skip.line != *n)
        .find(|&n| starts_with_label(r.line(n)).as_deref() == Some(label))
        .map(|n| part_at(r, scope, n, label))
}

/// The references written in a section (its own lines, pointers only).
pub(crate) fn references(r: &Report, s: &Section) -> Vec<Reference> {
    let patterns: Vec<&Section> = r.patterns();
    let everything = Section { line: 1, level: 0, title: String::new(), kind: SectionKind::Other, end: r.lines.len() };
    let area = r.sections_of(SectionKind::Patterns).into_iter().next().cloned().unwrap_or(everything);
    let own = pattern_label(s);
    let mut out = Vec::new();
    for n in s.line..=s.end {
        if r.fenced.contains(&n) {
            continue;
        }
        for c in pointer_re().captures_iter(r.line(n)) {
            let tail = c.get(1).map_or("", |m| m.as_str());
            let named: Vec<(usize, String)> = pattern_name_re()
                .captures_iter(tail)
                .map(|p| (p.get(0).map_or(0, |m| m.start()), p[1].to_string()))
                .collect();
            let pattern_of =
                |label: &str| patterns.iter().find(|p| pattern_label(p).as_deref() == Some(label)).copied();
            // Labels before `under Pattern F` are F's parts; a label alone is looked up
            // in the patterns area.
            let mut labels: Vec<String> = Vec::new();
            for m in label_re().find_iter(tail) {
                let inside_name = named.iter().any(|(at, _)| m.start() >= *at && m.start() <= at + 12);
                if !inside_name {
                    labels.push(m.as_str().to_string());
                }
            }
            let under = named.last().map(|(_, l)| l.clone());
            if labels.is_empty() {
                for (_, l) in &named {
                    if own.as_deref() == Some(l.as_str()) {
                        continue;
                    }
                    out.push(Reference { line: n, target: format!("Pattern {l}"), found: pattern_of(l).cloned() });
                }
                continue;
            }
            let scope: Option<Section> = match &under {
                Some(l) => pattern_of(l).cloned(),
                None => Some(area.clone()),
            };
            for label in labels {
                let target = match &under {
                    Some(p) => format!("{label} under Pattern {p}"),
                    None => label.clone(),
                };
                let found = scope.as_ref().and_then(|sc| find_label(r, sc, &label, s));
                out.push(Reference { line: n, target, found });
            }
        }
    }
    out
}

/// Every section a section leads to through references, followed transitively (each
/// once), and the references that lead nowhere.
pub(crate) fn followed(r: &Report, s: &Section) -> (Vec<Section>, Vec<Reference>) {
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::from([(s.line, s.end)]);
    let mut queue: Vec<Section> = vec![s.clone()];
    let mut found = Vec::new();
    let mut dangling = Vec::new();
    while let Some(cur) = queue.pop() {
        for x in references(r, &cur) {
            match x.found {
                Some(t) => {
                    // A part inside the section itself adds nothing.
                    if s.line <= t.line && t.end <= s.end || !seen.insert((t.line, t.end)) {
                        continue;
                    }
                    queue.push(t.clone());
                    found.push(t);
                }
                None => dangling.push(x),
            }
        }
    }
    found.sort_by_key(|t| (t.line, t.end));
    (found, dangling)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::parse;

    const RENDERED: &str = "Kubernetes CI Failures — Triage Report\n\n1. The 3 Patterns\n\nPattern E — GCE PD CSI (2 jobs)\n\nE.4 — push-images: Pattern A\n\n  • See Pattern A.\n\nPattern F — by-design + compat-versions\n\nV3 — noendpoints canary\n\n  • experiment/kind-noendpoints-e2e.sh:156 disables the controllers.\n\nV4 — compat-versions\n\n  • V4.a — introduced by k/k#138584.\n\nPattern G — kind compat-versions + KEP-4974 canary\n\nSee V3 (KEP-4974) and V4 (compat-versions) under Pattern F.\n\nPattern H — nothing here\n\nSee V9 under Pattern F; see Pattern Q.\n";

    #[test]
    fn references_lead_to_labelled_parts_and_patterns() {
        let r = parse(RENDERED);
        let g = r.patterns().into_iter().find(|p| p.title.starts_with("Pattern G")).unwrap().clone();
        let refs = references(&r, &g);
        let got: Vec<(String, Option<usize>)> =
            refs.iter().map(|x| (x.target.clone(), x.found.as_ref().map(|s| s.line))).collect();
        assert_eq!(got, vec![("V3 under Pattern F".into(), Some(13)), ("V4 under Pattern F".into(), Some(17))]);
        let v3 = refs[0].found.as_ref().unwrap();
        assert_eq!((v3.line, v3.end), (13, 16));
        let h = r.patterns().into_iter().find(|p| p.title.starts_with("Pattern H")).unwrap().clone();
        let (found, dangling) = followed(&r, &h);
        assert!(found.is_empty());
        let names: Vec<&str> = dangling.iter().map(|d| d.target.as_str()).collect();
        assert_eq!(names, vec!["V9 under Pattern F", "Pattern Q"]);
        // A sub-pattern's pointer to another pattern is followed from its pattern.
        let e = r.patterns().into_iter().find(|p| p.title.starts_with("Pattern E")).unwrap().clone();
        let (_, dangling) = followed(&r, &e);
        assert_eq!(dangling.iter().map(|d| d.target.as_str()).collect::<Vec<_>>(), vec!["Pattern A"]);
    }

    #[test]
    fn cycles_end() {
        let md = "# T — Triage Report\n## Patterns\n### Pattern A — x\nSee Pattern B.\n### Pattern B — y\nSame root cause as Pattern A.\n";
        let r = parse(md);
        let a = r.patterns()[0].clone();
        let (found, dangling) = followed(&r, &a);
        assert_eq!(found.iter().map(|s| s.line).collect::<Vec<_>>(), vec![5]);
        assert!(dangling.is_empty());
    }
}
