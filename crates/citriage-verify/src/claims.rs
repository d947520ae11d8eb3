//! What a report says about the state of the PRs and issues it cites, attributed by
//! the sentence's structure rather than by proximity: a state word (MERGED, closed,
//! OPEN, draft, a label, ✅ ❌ 🟢 🟡, "waiting on tide", "PR"/"issue") is given to the
//! reference it qualifies — the one it follows across a copula or a parenthesis
//! (`k/k#1 (merged)`, `#5 is still OPEN`), the one it precedes as an attribute (`the
//! merged k/k#2`, `open issue #7`), the list it heads or closes (`Merged today: #1,
//! #2`, `#1 and #2 both landed`), or, in a table, the row's subject when it sits in a
//! status cell. Each claim carries its modality: only asserted claims are checked;
//! conditional (`once #3 is merged`), future, quoted and questioned ones are not claims
//! about the present. A word with no clear target makes no claim.

use crate::prose::{self, clauses, modality, Modality, Tok, TokKind};
use serde::{Deserialize, Serialize};

/// A state a report can claim.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "kebab-case")]
pub enum Claimed {
    Merged,
    /// `CLOSED`, `closed`, `❌`. `strict` when written as GitHub's state (upper case or
    /// ❌): a merged PR is then not "closed".
    Closed {
        strict: bool,
    },
    Open,
    Draft,
    /// `WIP`: a draft, a `do-not-merge/work-in-progress` label or a WIP title.
    Wip,
    /// `✅` alone: a merged PR or a closed issue.
    Done,
    /// A label present (`present`) or absent (`needs lgtm`, `missing approved`).
    Label {
        name: String,
        present: bool,
    },
    /// `waiting on tide`, `ready to merge`: open with lgtm and approved and nothing
    /// blocking.
    Ready,
    Mergeable {
        mergeable: bool,
    },
    /// `PR #N` / `issue #N`.
    Kind {
        pr: bool,
    },
}

impl Claimed {
    /// The claim in words (`merged`, `label lgtm`, `not label do-not-merge/hold`).
    pub fn describe(&self, negated: bool) -> String {
        let base = match self {
            Claimed::Merged => "merged".to_string(),
            Claimed::Closed { .. } => "closed".into(),
            Claimed::Open => "open".into(),
            Claimed::Draft => "a draft".into(),
            Claimed::Wip => "work in progress".into(),
            Claimed::Done => "done (✅)".into(),
            Claimed::Label { name, present: true } => format!("labelled {name}"),
            Claimed::Label { name, present: false } => format!("without the {name} label"),
            Claimed::Ready => "ready to merge (lgtm, approved, nothing blocking)".into(),
            Claimed::Mergeable { mergeable: true } => "mergeable".into(),
            Claimed::Mergeable { mergeable: false } => "not mergeable".into(),
            Claimed::Kind { pr: true } => "a pull request".into(),
            Claimed::Kind { pr: false } => "an issue".into(),
        };
        if negated {
            format!("not {base}")
        } else {
            base
        }
    }

    /// The rule a false claim of this kind breaks.
    pub fn rule(&self) -> &'static str {
        match self {
            Claimed::Label { .. } | Claimed::Ready | Claimed::Mergeable { .. } => "ref-labels",
            Claimed::Kind { .. } => "ref-kind",
            _ => "ref-state",
        }
    }
}

/// One claim about one or more references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateClaim {
    /// 1-based report line.
    pub line: usize,
    /// Indices into the line's references of what the claim is about. More than one
    /// with `ambiguous` false: a list, each member claimed; with `ambiguous` true: the
    /// claim is about one of them, which the sentence does not say.
    pub targets: Vec<usize>,
    pub ambiguous: bool,
    pub claimed: Claimed,
    pub negated: bool,
    /// Written in the past tense (`was closed`): held at some time up to the report.
    pub past: bool,
    pub modality: Modality,
    /// The words as written.
    pub words: String,
    /// A day written with the claim (`MERGED 2026-05-10`), as `YYYY-MM-DD`.
    pub day: Option<String>,
}

/// A line's context for attribution.
pub struct LineContext<'a> {
    pub line: usize,
    pub text: &'a str,
    /// Byte spans of the references on the line, in order.
    pub refs: &'a [(usize, usize)],
    /// Which references denote the same object as their neighbour (a link's text and
    /// its URL): equal ids mean the same object.
    pub ids: &'a [usize],
    pub markdown: bool,
    /// The header cells of the table the line is a row of.
    pub header: Option<&'a [String]>,
    /// A row of a table whose cells a rendered page flattened into one line: its
    /// subject is the reference it opens with.
    pub rendered_row: bool,
}

/// A state word found at a token.
struct StateTok {
    claimed: Claimed,
    /// Tokens consumed (multi-word expressions).
    len: usize,
    /// Needs a strong context (a copula before it, a noun or reference after it, or a
    /// status cell): lower-case `open`, `draft`, `hold`.
    weak: bool,
}

const LABEL_PREFIXES: &[&str] =
    &["do-not-merge/", "lifecycle/", "priority/", "triage/", "kind/", "cncf-cla:", "release-note"];
const LABEL_WORDS: &[&str] = &[
    "needs-rebase",
    "needs-ok-to-test",
    "ok-to-test",
    "needs-priority",
    "needs-triage",
    "needs-sig",
    "needs-kind",
    "cherry-pick-not-approved",
    "cherry-pick-approved",
    "release-note-label-needed",
    "lgtm",
    "approved",
];

/// True for a label's name (`needs-rebase`, `do-not-merge/hold`, `kind/flake`).
fn is_label_name(w: &str) -> bool {
    LABEL_WORDS.contains(&w)
        || (LABEL_PREFIXES.iter().any(|p| w.starts_with(p)) && w.len() > 6 && !w.contains(char::is_whitespace))
}

/// A code span holding nothing but a label's name (`` `needs-rebase` ``,
/// `` `do-not-merge/hold` ``) names the label: it reads as the word. Other code stays
/// code (`` `merged` ``, `` `state == "MERGED"` ``).
fn label_spans_as_words(mut toks: Vec<Tok>) -> Vec<Tok> {
    for t in &mut toks {
        if t.kind != TokKind::Code || t.quoted {
            continue;
        }
        let inner = t.text.trim_matches('`').trim();
        let lower = inner.to_lowercase();
        if is_label_name(&lower) {
            t.kind = TokKind::Word;
            t.text = inner.to_string();
            t.lower = lower;
        }
    }
    toks
}

fn canonical_label(w: &str) -> String {
    match w {
        "release-note-label-needed" => "do-not-merge/release-note-label-needed".into(),
        "hold" => "do-not-merge/hold".into(),
        other => other.to_string(),
    }
}

fn words_at(toks: &[Tok], i: usize, n: usize) -> Option<Vec<&str>> {
    let ws: Vec<&str> = toks.get(i..i + n)?.iter().map(|t| t.lower.as_str()).collect();
    if toks[i..i + n].iter().all(|t| t.kind == TokKind::Word) {
        Some(ws)
    } else {
        None
    }
}

/// The state word starting at token `i`, if any.
fn state_at(toks: &[Tok], i: usize) -> Option<StateTok> {
    let t = &toks[i];
    let strong = |c: Claimed, len: usize| Some(StateTok { claimed: c, len, weak: false });
    let label = |name: &str, present: bool, len: usize| {
        Some(StateTok { claimed: Claimed::Label { name: canonical_label(name), present }, len, weak: false })
    };
    if t.kind == TokKind::Emoji {
        // An emoji followed by a state word is that word (`✅ MERGED`).
        for k in i + 1..(i + 4).min(toks.len()) {
            if toks[k].kind != TokKind::Word {
                break;
            }
            if state_at(toks, k).is_some_and(|s| {
                matches!(
                    s.claimed,
                    Claimed::Merged | Claimed::Closed { .. } | Claimed::Open | Claimed::Draft | Claimed::Wip
                )
            }) {
                return None;
            }
            if !["all", "both", "now", "already", "just"].contains(&toks[k].lower.as_str()) {
                break;
            }
        }
        return match t.text.as_str() {
            "✅" | "✔" => strong(Claimed::Done, 1),
            "❌" => strong(Claimed::Closed { strict: true }, 1),
            "🟢" | "🟡" => strong(Claimed::Open, 1),
            _ => None,
        };
    }
    if t.kind != TokKind::Word {
        return None;
    }
    // Multi-word expressions first.
    for (n, phrases, claimed) in multiword() {
        let n = *n;
        if let Some(ws) = words_at(toks, i, n) {
            if phrases.iter().any(|p| p.split(' ').eq(ws.iter().copied())) {
                return Some(StateTok { claimed: claimed.clone(), len: n, weak: false });
            }
        }
    }
    let w = t.lower.trim_end_matches("'d").trim_end_matches("’d").trim_end_matches("-ed");
    let upper = t.text.chars().any(|c| c.is_alphabetic()) && t.text.chars().all(|c| !c.is_lowercase());
    match w {
        "merged" | "landed" | "shipped" => strong(Claimed::Merged, 1),
        // A negated merged claim (the caller flips it).
        "unmerged" => strong(Claimed::Merged, 1),
        "closed" => strong(Claimed::Closed { strict: upper }, 1),
        "reopened" => strong(Claimed::Open, 1),
        "open" if upper => strong(Claimed::Open, 1),
        "open" => Some(StateTok { claimed: Claimed::Open, len: 1, weak: true }),
        "draft" if upper => strong(Claimed::Draft, 1),
        "draft" => Some(StateTok { claimed: Claimed::Draft, len: 1, weak: true }),
        "wip" => strong(Claimed::Wip, 1),
        "mergeable" => strong(Claimed::Mergeable { mergeable: true }, 1),
        "unmergeable" | "conflicting" => strong(Claimed::Mergeable { mergeable: false }, 1),
        "/hold" if t.lower.ends_with("'d") || t.lower.ends_with("’d") || t.lower.ends_with("-ed") => {
            label("do-not-merge/hold", true, 1)
        }
        "held" => None,
        "hold" => Some(StateTok {
            claimed: Claimed::Label { name: canonical_label("hold"), present: true },
            len: 1,
            weak: true,
        }),
        "/lgtm" | "/approve" | "/ok-to-test" => {
            // A slash command names an action unless something says it was given.
            let given = i > 0
                && ["got", "received", "given", "granted", "has", "had", "with"].contains(&toks[i - 1].lower.as_str());
            let after = toks.get(i + 1).is_some_and(|n| n.is("granted") || n.is("given"));
            let suffixed = t.lower.ends_with("'d") || t.lower.ends_with("’d") || t.lower.ends_with("-ed");
            if given || after || suffixed {
                let name = match w {
                    "/lgtm" => "lgtm",
                    "/approve" => "approved",
                    _ => "ok-to-test",
                };
                label(name, true, 1)
            } else {
                None
            }
        }
        "lgtm" | "approved" => label(w, true, 1),
        // `no do-not-merge labels`: any label of the family.
        "do-not-merge" if toks.get(i + 1).is_some_and(|n| n.is("label") || n.is("labels")) => {
            label("do-not-merge/*", true, 2)
        }
        _ if LABEL_WORDS.contains(&w) => label(w, true, 1),
        _ if LABEL_PREFIXES.iter().any(|p| w.starts_with(p)) && w.len() > 6 => label(w, true, 1),
        _ => None,
    }
}

type Phrase = (usize, &'static [&'static str], Claimed);

fn multiword() -> &'static [Phrase] {
    static P: std::sync::OnceLock<Vec<Phrase>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let absent = |n: &str| Claimed::Label { name: n.into(), present: false };
        let present = |n: &str| Claimed::Label { name: n.into(), present: true };
        vec![
            (
                4,
                &["waiting on merge tide", "awaiting the merge", "in the tide pool", "in the merge pool"][..],
                Claimed::Ready,
            ),
            (3, &["closed without merging", "closed without merge"][..], Claimed::Closed { strict: true }),
            (
                3,
                &[
                    "waiting on tide",
                    "waiting for tide",
                    "awaiting merge tide",
                    "in tide pool",
                    "in merge pool",
                    "needs an approver",
                    "needs a rebase",
                    "awaiting an approver",
                    "waiting on approver",
                    "waiting for approval",
                    "waiting for lgtm",
                    "waiting on lgtm",
                    "waiting for review",
                ][..],
                Claimed::Ready,
            ),
            (2, &["awaiting tide", "ready to", "ready for"][..], Claimed::Ready),
            (2, &["on hold"][..], present("do-not-merge/hold")),
            (2, &["needs rebase"][..], present("needs-rebase")),
            (
                2,
                &[
                    "needs approval",
                    "needs approver",
                    "awaiting approval",
                    "awaiting approver",
                    "missing approved",
                    "missing approval",
                    "needs approve",
                ][..],
                absent("approved"),
            ),
            (
                2,
                &["needs lgtm", "awaiting lgtm", "missing lgtm", "needs review", "awaiting review"][..],
                absent("lgtm"),
            ),
            (2, &["merge conflict", "merge conflicts", "has conflicts"][..], Claimed::Mergeable { mergeable: false }),
            (2, &["help wanted"][..], present("help wanted")),
            (3, &["good first issue"][..], present("good first issue")),
        ]
    })
    .as_slice()
}

/// The real claim of a multi-word phrase whose table above is coarse: some 3-word
/// phrases listed under `Ready` are label absences.
fn refine(toks: &[Tok], i: usize, s: StateTok) -> StateTok {
    if s.claimed != Claimed::Ready || s.len < 2 {
        return s;
    }
    let ws: Vec<&str> = toks[i..i + s.len].iter().map(|t| t.lower.as_str()).collect();
    let joined = ws.join(" ");
    let claimed = if joined.contains("approv") {
        Claimed::Label { name: "approved".into(), present: false }
    } else if joined.contains("lgtm") || joined.contains("review") {
        Claimed::Label { name: "lgtm".into(), present: false }
    } else if joined.contains("rebase") {
        Claimed::Label { name: "needs-rebase".into(), present: true }
    } else if joined.starts_with("ready") {
        // `ready to merge` / `ready for merge` only.
        let next = toks.get(i + s.len).map(|t| t.lower.as_str()).unwrap_or("");
        if next == "merge" || next == "merging" {
            return StateTok { claimed: Claimed::Ready, len: s.len + 1, weak: false };
        }
        return StateTok { claimed: Claimed::Ready, len: 0, weak: true };
    } else {
        Claimed::Ready
    };
    StateTok { claimed, len: s.len, weak: s.weak }
}

const LEFT_GLUE: &[&str] = &[
    "is",
    "was",
    "were",
    "are",
    "be",
    "been",
    "being",
    "has",
    "have",
    "had",
    "got",
    "gets",
    "get",
    "become",
    "became",
    "now",
    "already",
    "just",
    "also",
    "both",
    "all",
    "still",
    "since",
    "finally",
    "today",
    "yesterday",
    "tonight",
    "recently",
    "then",
    "currently",
    "remains",
    "remained",
    "stays",
    "stayed",
    "status",
    "state",
    "pr",
    "a",
    "an",
    "the",
    "as",
    "marked",
    "held",
    "blocked",
    "gated",
    "stuck",
    "labeled",
    "labelled",
    "with",
    "carries",
    "carrying",
    "and",
    "utc",
    "am",
    "pm",
    "z",
    "by",
    "at",
    "on",
    "not",
    "never",
    "no",
    "longer",
    "yet",
    "isn't",
    "wasn't",
    "hasn't",
    "haven't",
    "aren't",
    "weren't",
    "didn't",
    "does",
    "did",
    "do",
    "doesn't",
    "its",
    "it",
    "which",
    "that",
    "in",
    "this",
    "morning",
    "afternoon",
    "evening",
    "week",
    "so",
    "far",
    "again",
    "immediately",
    "quickly",
    "indeed",
    "fully",
    "partially",
];

const RIGHT_GLUE: &[&str] = &[
    "the",
    "a",
    "an",
    "its",
    "their",
    "this",
    "that",
    "these",
    "those",
    "now",
    "already",
    "recently",
    "just",
    "today",
    "yesterday",
    "fix",
    "fixes",
    "pr",
    "prs",
    "pull",
    "request",
    "requests",
    "attempt",
    "attempts",
    "change",
    "changes",
    "issue",
    "issues",
    "tracker",
    "trackers",
    "umbrella",
    "tracking",
    "bug",
    "bugs",
    "in",
    "via",
    "as",
    "upstream",
    "predecessor",
    "sibling",
    "earlier",
    "original",
    "follow-up",
    "followup",
    "work",
    "cherry-pick",
    "cherry-picks",
    "backport",
    "backports",
    "revert",
];

/// Nouns that make lower-case `open` / `draft` a state when they follow it.
const OBJECT_NOUNS: &[&str] =
    &["pr", "prs", "pull", "issue", "issues", "tracker", "trackers", "tracking", "umbrella", "bug", "bugs", "fix"];

fn is_glue_left(t: &Tok) -> bool {
    match t.kind {
        TokKind::Date | TokKind::Time | TokKind::Emoji => true,
        TokKind::Punct => {
            matches!(t.text.as_str(), ":" | "—" | "–" | "-" | "," | "(" | "=" | "+" | "→" | "/" | "&" | "[")
        }
        TokKind::Word => LEFT_GLUE.contains(&t.lower.as_str()) || t.text.starts_with('@'),
        _ => false,
    }
}

fn is_glue_right(t: &Tok) -> bool {
    match t.kind {
        TokKind::Date | TokKind::Time => true,
        TokKind::Punct => matches!(t.text.as_str(), ":" | "(" | "—" | "–" | "["),
        TokKind::Word => RIGHT_GLUE.contains(&t.lower.as_str()) || t.text.chars().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Words before a reference that make it something other than the row's subject: the
/// reference is what the row's object is done to, not the object itself.
const NOT_SUBJECT: &[&str] = &[
    "cherry-pick",
    "cherry-picks",
    "backport",
    "backports",
    "revert",
    "reverts",
    "reverting",
    "after",
    "see",
    "per",
    "like",
    "supersedes",
    "superseded",
    "replaces",
    "replaced",
    "duplicate",
    "dup",
    "re-do",
    "redo",
    "of",
    "from",
    "tracked",
    "tracker",
    "umbrella",
    "onto",
    "than",
    "vs",
    "versus",
    "follow-up",
    "followup",
    "predecessor",
    "sibling",
    "original",
    "instead",
    "unlike",
    "since",
    "until",
    "once",
    "beside",
    "besides",
    "closes",
    "fixes",
    "tracking",
];

/// The reference list a reference belongs to: neighbours joined only by separators
/// (`,` `and` `or` `+` `/` `&`) and parenthetical notes.
fn list_group(toks: &[Tok], at: usize, ids: &[usize]) -> Vec<usize> {
    let ref_of = |k: usize| match toks[k].kind {
        TokKind::Ref(r) => Some(r),
        _ => None,
    };
    let sep =
        |t: &Tok| t.is_punct(",") || t.is_punct("+") || t.is_punct("/") || t.is_punct("&") || t.is("and") || t.is("or");
    let mut members = vec![at];
    // Forwards.
    let mut k = at + 1;
    loop {
        let mut j = k;
        let mut saw_sep = false;
        while j < toks.len() {
            if toks[j].is_punct("(") {
                match prose::close_paren(toks, j) {
                    Some(c) if toks[j..=c].iter().all(|t| !matches!(t.kind, TokKind::Ref(_))) => j = c + 1,
                    _ => break,
                }
            } else if sep(&toks[j]) {
                saw_sep = true;
                j += 1;
            } else {
                break;
            }
        }
        match (saw_sep || same_object(toks, ids, *members.last().unwrap_or(&at), j), j < toks.len()) {
            (true, true) if ref_of(j).is_some() => {
                members.push(j);
                k = j + 1;
            }
            _ => break,
        }
    }
    // Backwards.
    let mut k = at;
    loop {
        if k == 0 {
            break;
        }
        let mut j = k - 1;
        let mut saw_sep = false;
        loop {
            if toks[j].is_punct(")") {
                match prose::open_paren(toks, j) {
                    Some(o) if toks[o..=j].iter().all(|t| !matches!(t.kind, TokKind::Ref(_))) && o > 0 => j = o - 1,
                    _ => break,
                }
            } else if sep(&toks[j]) && j > 0 {
                saw_sep = true;
                j -= 1;
            } else {
                break;
            }
        }
        if (saw_sep || same_object(toks, ids, j, k)) && ref_of(j).is_some() && j < k {
            members.insert(0, j);
            k = j;
        } else {
            break;
        }
    }
    members.into_iter().filter_map(ref_of).collect()
}

/// Two reference tokens naming the same object (`[#5](https://github.com/o/r/pull/5)`).
fn same_object(toks: &[Tok], ids: &[usize], a: usize, b: usize) -> bool {
    match (toks.get(a).map(|t| t.kind), toks.get(b).map(|t| t.kind)) {
        (Some(TokKind::Ref(x)), Some(TokKind::Ref(y))) => ids.get(x) == ids.get(y),
        _ => false,
    }
}

const VERBS: &[&str] = &[
    "is", "was", "are", "were", "has", "have", "had", "remains", "stays", "got", "gets", "carries", "carry", "holds",
    "needs", "lacks", "keeps", "shows", "wears", "bears",
];

/// Adverbs that may sit between `and` and its verb (`and still carries`).
const ADVERBS: &[&str] = &["still", "also", "now", "already", "just", "only", "currently", "meanwhile"];

/// The subject of a clause: a reference it opens with (`#5 applies ... and is open`).
fn clause_subject(toks: &[Tok], cs: usize, ids: &[usize]) -> Option<Vec<usize>> {
    // A leading label (`**Fix**:`) is not the subject.
    let start = (cs..(cs + 4).min(toks.len())).find(|k| toks[*k].is_punct(":")).map(|k| k + 1).unwrap_or(cs);
    let k = (start..toks.len()).find(|k| !matches!(toks[*k].kind, TokKind::Punct | TokKind::Emoji))?;
    matches!(toks[k].kind, TokKind::Ref(_)).then(|| list_group(toks, k, ids))
}

/// The reference a state word at `i` follows across glue (`#5 is still OPEN`,
/// `#5 (~40 jobs) DRAFT`), with its list. A predicate coordinated with `and` /
/// `but` (`#5 applies the recipe of #6 and is open`) belongs to the clause's subject.
fn postposed(toks: &[Tok], cs: usize, i: usize, ids: &[usize]) -> Option<Vec<usize>> {
    let mut k = i;
    let mut steps = 0;
    while k > cs {
        k -= 1;
        let t = &toks[k];
        let verb_after = || {
            toks[k + 1..i]
                .iter()
                .find(|n| !ADVERBS.contains(&n.lower.as_str()))
                .is_some_and(|n| VERBS.contains(&n.lower.as_str()))
        };
        if (t.is("and") || t.is("but")) && verb_after() {
            return clause_subject(toks, cs, ids);
        }
        if let TokKind::Ref(_) = t.kind {
            return Some(list_group(toks, k, ids));
        }
        if t.is_punct(")") {
            match prose::open_paren(toks, k) {
                Some(o) if o >= cs && toks[o..k].iter().all(|x| !matches!(x.kind, TokKind::Ref(_))) && k - o <= 20 => {
                    k = o;
                    continue;
                }
                _ => return None,
            }
        }
        // Another state word chains (`CLOSED unmerged`, `🟢 lgtm`).
        let chained = state_at(toks, k).is_some() || (k > 0 && state_at(toks, k - 1).is_some_and(|s| s.len >= 2));
        if !(is_glue_left(t) || chained) {
            return None;
        }
        steps += 1;
        if steps > 10 {
            return None;
        }
    }
    None
}

/// The reference (or list) a state word at `i` precedes as an attribute (`the merged
/// k/k#2`, `Merged today: #1, #2`).
fn preposed(toks: &[Tok], i: usize, len: usize, ce: usize, ids: &[usize]) -> Option<Vec<usize>> {
    let mut k = i + len;
    let mut steps = 0;
    while k < ce {
        let t = &toks[k];
        if let TokKind::Ref(_) = t.kind {
            return Some(list_group(toks, k, ids));
        }
        if !is_glue_right(t) {
            return None;
        }
        steps += 1;
        if steps > 5 {
            return None;
        }
        k += 1;
    }
    None
}

/// Whether a weak word (`open`, `draft`, `hold`) is used as a state here.
fn weak_ok(toks: &[Tok], cs: usize, i: usize, in_status_cell: bool) -> bool {
    if in_status_cell {
        return true;
    }
    let prev = (cs..i).rev().map(|k| &toks[k]).find(|t| !t.is_punct("*"));
    let next = toks.get(i + 1);
    let copula = prev.is_some_and(|p| {
        ["is", "are", "was", "were", "remains", "stays", "still", "a", "as", "in", "(", "on"]
            .contains(&p.lower.as_str())
            || p.is_punct("(")
    });
    let closes_paren = prev.is_some_and(|p| p.is_punct("(")) && next.is_some_and(|n| n.is_punct(")"));
    let attributive = next
        .is_some_and(|n| OBJECT_NOUNS.contains(&n.lower.as_str()) || matches!(n.kind, TokKind::Ref(_)))
        && prev.is_some_and(|p| {
            ["the", "an", "a", "its", "still", "one", "two", "three", "all"].contains(&p.lower.as_str())
                || OBJECT_NOUNS.contains(&toks[i + 1].lower.as_str())
        });
    copula || closes_paren || attributive
}

/// Header words of a table column whose cells state a status.
fn status_header(h: &str) -> bool {
    let h = h.to_ascii_lowercase();
    ["status", "state", "block", "label", "merged", "review"].iter().any(|w| h.contains(w))
}

/// Header words of a column that names the row's subject.
fn subject_header(h: &str) -> bool {
    let h = h.to_ascii_lowercase();
    ["pr", "pull", "item", "action", "artifact", "fix", "ref", "change", "what", "link"]
        .iter()
        .any(|w| h.split(|c: char| !c.is_alphanumeric()).any(|x| x == *w))
}

/// Words before a reference that say what kind of object it is.
fn kind_before(toks: &[Tok], k: usize) -> Option<bool> {
    // A label ending in a colon (`Fix PR: #5`, `Tracker: #7`) names the kind too.
    let mut end = k;
    while end > 0 && toks[end - 1].is_punct("*") {
        end -= 1;
    }
    if end > 0 && toks[end - 1].is_punct(":") {
        end -= 1;
    }
    let prev: Vec<&Tok> = toks[..end].iter().rev().filter(|t| !t.is_punct("*")).take(2).collect();
    let p1 = prev.first().map(|t| t.lower.as_str()).unwrap_or("");
    let p2 = prev.get(1).map(|t| t.lower.as_str()).unwrap_or("");
    match (p2, p1) {
        ("pull", "request") | (_, "pr") => Some(true),
        ("tracking", "issue") | ("umbrella", "issue") | (_, "umbrella") | (_, "tracker") => Some(false),
        (x, "issue") if !["this", "that", "the", "same", "which", "an", "one"].contains(&x) => Some(false),
        _ => None,
    }
}

/// Which references of a line name the same object as the one before them (a link's
/// text and its URL): equal ids mean one object.
pub fn object_ids(text: &str, found: &[citriage_github::FoundRef]) -> Vec<usize> {
    let mut ids: Vec<usize> = Vec::with_capacity(found.len());
    for (k, f) in found.iter().enumerate() {
        let same = k > 0 && {
            let p = &found[k - 1];
            let between = text.get(p.span().1..f.span().0).unwrap_or("x");
            (between == "](" || between.trim().is_empty())
                && (p.reference() == f.reference() || p.number() == f.number())
        };
        ids.push(if same { ids[k - 1] } else { k });
    }
    ids
}

/// A Markdown link whose text and URL name the same object (`[#5](https://.../pull/5)`)
/// becomes one reference token, so lists of links read as lists.
fn collapse_links(toks: Vec<Tok>, ids: &[usize]) -> Vec<Tok> {
    let id = |t: &Tok| match t.kind {
        TokKind::Ref(r) => ids.get(r).copied(),
        _ => None,
    };
    let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let w = toks.get(i..i + 6);
        if let Some([open, text, close, lp, url, rp]) = w {
            if open.is_punct("[")
                && close.is_punct("]")
                && lp.is_punct("(")
                && rp.is_punct(")")
                && id(text).is_some()
                && id(text) == id(url)
            {
                let mut t = text.clone();
                t.depth = open.depth;
                t.end = rp.end;
                out.push(t);
                i += 6;
                continue;
            }
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}

/// The state claims of one line.
pub fn line_claims(cx: &LineContext<'_>) -> Vec<StateClaim> {
    let toks = label_spans_as_words(collapse_links(prose::tokenize(cx.text, cx.refs, cx.markdown), cx.ids));
    let mut out: Vec<StateClaim> = Vec::new();
    if toks.is_empty() {
        return out;
    }
    // Table rows: cells, their headers, and the row's subjects.
    let cells = cx.header.map(|_| prose::cell_ranges(cx.text)).unwrap_or_default();
    let cell_of = |t: &Tok| cells.iter().position(|(a, b)| t.start >= *a && t.start < *b);
    let header_of = |c: usize| cx.header.and_then(|h| h.get(c)).map(String::as_str).unwrap_or("");
    let row_subjects: Vec<usize> = if cx.header.is_some() {
        row_subjects(&toks, &cells, cx)
    } else if cx.rendered_row {
        rendered_row_subjects(&toks, cx)
    } else {
        Vec::new()
    };
    let subject_groups = if row_subjects.is_empty() {
        0
    } else {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (k, t) in toks.iter().enumerate() {
            if let TokKind::Ref(r) = t.kind {
                if row_subjects.contains(&r) && !groups.iter().any(|g| g.contains(&r)) {
                    groups.push(list_group(&toks, k, cx.ids));
                }
            }
        }
        groups.len()
    };
    // Clauses: per cell in a table row, else for the line.
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    if cells.is_empty() {
        spans = clauses(&toks);
    } else {
        for (a, b) in &cells {
            let idx: Vec<usize> = (0..toks.len()).filter(|k| toks[*k].start >= *a && toks[*k].start < *b).collect();
            if let (Some(f), Some(l)) = (idx.first(), idx.last()) {
                for (s, e, q) in clauses(&toks[*f..=*l]) {
                    spans.push((f + s, f + e, q));
                }
            }
        }
    }
    for (cs, ce, question) in spans {
        let mut i = cs;
        while i < ce {
            let Some(st) = state_at(&toks, i) else {
                i += 1;
                continue;
            };
            let st = refine(&toks, i, st);
            if st.len == 0 {
                i += 1;
                continue;
            }
            let len = st.len;
            let cell = cell_of(&toks[i]);
            let in_status_cell = cell.is_some_and(|c| status_header(header_of(c)));
            // A Block cell lists what blocks the merge: a bare `lgtm` or `approved` there
            // is the approval that is missing, or a note; either way not a label present.
            let in_block_cell = cell.is_some_and(|c| header_of(c).to_ascii_lowercase().contains("block"));
            if in_block_cell
                && matches!(&st.claimed, Claimed::Label { name, present: true }
                    if ["lgtm", "approved", "ok-to-test"].contains(&name.as_str()))
            {
                i += st.len;
                continue;
            }
            if st.weak && !weak_ok(&toks, cs, i, in_status_cell) {
                i += len;
                continue;
            }
            let (mut modality, mut negated, past) = modality(&toks, cs, i, question);
            if toks[i].lower == "unmerged" {
                negated = !negated;
            }
            if st.claimed == Claimed::Ready && toks[i].lower.starts_with("ready") {
                // `ready to merge` is a present state, not a plan.
                modality = if modality == Modality::Future { Modality::Asserted } else { modality };
            }
            if matches!(st.claimed, Claimed::Label { present: false, .. } | Claimed::Ready)
                && toks[i].lower.starts_with("await")
                && modality == Modality::Future
            {
                modality = Modality::Asserted;
            }
            // Quantified cells (`various`, `some`) claim nothing about each member.
            let hedged_cell = cell.is_some_and(|c| {
                let (a, b) = cells[c];
                let t = cx.text[a..b].to_ascii_lowercase();
                ["various", "some ", "most ", "several", "mixed", "partly", "partially"].iter().any(|w| t.contains(w))
            });
            let target = postposed(&toks, cs, i, cx.ids).or_else(|| preposed(&toks, i, len, ce, cx.ids));
            let had_target = target.is_some();
            let (targets, ambiguous) = match target {
                Some(t) => (t, false),
                None if cell.is_some() && !row_subjects.is_empty() && !hedged_cell => {
                    // A status cell speaks for the row's subject.
                    let c = cell.unwrap_or(0);
                    let cell_has_refs = (0..toks.len())
                        .any(|k| cell_of(&toks[k]) == Some(c) && matches!(toks[k].kind, TokKind::Ref(_)));
                    if cell_has_refs
                        || !(in_status_cell
                            || matches!(st.claimed, Claimed::Merged | Claimed::Closed { strict: true } | Claimed::Done))
                    {
                        i += len;
                        continue;
                    }
                    (row_subjects.clone(), subject_groups > 1)
                }
                None if cell.is_some() && row_subjects.is_empty() && in_status_cell && !hedged_cell => {
                    // A row whose references are all objects of its action (`re-do #5`,
                    // `Cherry-pick #5`): its status may describe the object or the
                    // action's own PR. Claimed for the object but ambiguous, so it is
                    // verified when it holds and otherwise not checked.
                    let c = cell.unwrap_or(0);
                    let objects: Vec<usize> = toks
                        .iter()
                        .filter(|t| cell_of(t).is_some_and(|k| k != c && !status_header(header_of(k))))
                        .filter_map(|t| match t.kind {
                            TokKind::Ref(r) => Some(r),
                            _ => None,
                        })
                        .fold(Vec::new(), |mut v, r| {
                            if !v.contains(&r) {
                                v.push(r);
                            }
                            v
                        });
                    if objects.is_empty() {
                        i += len;
                        continue;
                    }
                    (objects, true)
                }
                None if cx.rendered_row && !row_subjects.is_empty() && !st.weak => {
                    // A flattened row's status words speak for the reference it opens
                    // with, unless another reference or a quantifier intervenes.
                    let first =
                        toks.iter().position(|t| matches!(t.kind, TokKind::Ref(r) if row_subjects.contains(&r)));
                    let hedged_row = {
                        let l = cx.text.to_ascii_lowercase();
                        ["various", "some ", "most ", "several", "mixed", "partly", "partially"]
                            .iter()
                            .any(|w| l.contains(w))
                    };
                    let other_ref_between = first.is_some_and(|f| {
                        f <= i
                            && toks[f..i]
                                .iter()
                                .any(|t| matches!(t.kind, TokKind::Ref(r) if !row_subjects.contains(&r)))
                    });
                    if first.is_none_or(|f| f > i) || hedged_row || other_ref_between {
                        i += len;
                        continue;
                    }
                    (row_subjects.clone(), subject_groups > 1)
                }
                None => {
                    i += len;
                    continue;
                }
            };
            if hedged_cell && !had_target {
                i += len;
                continue;
            }
            let words: String = toks[i..i + len].iter().map(|t| t.text.as_str()).collect::<Vec<_>>().join(" ");
            let day = toks[i + len..ce.min(i + len + 4)]
                .iter()
                .find(|t| t.kind == TokKind::Date)
                .map(|t| t.text.get(0..10).unwrap_or("").to_string());
            out.push(StateClaim {
                line: cx.line,
                targets,
                ambiguous,
                claimed: st.claimed,
                negated,
                past,
                modality,
                words,
                day,
            });
            i += len;
        }
    }
    // Kinds: `PR #5`, `issue #7`, a PR/Issue column.
    for (k, t) in toks.iter().enumerate() {
        let TokKind::Ref(r) = t.kind else { continue };
        if t.quoted {
            continue;
        }
        let col = cell_of(t).map(header_of).unwrap_or("").to_ascii_lowercase();
        let by_col = if col == "pr" || col == "prs" || col.starts_with("pull request") || col.starts_with("fix pr") {
            Some(true)
        } else if col == "issue" || col == "issues" || col.starts_with("tracker") || col.starts_with("umbrella") {
            Some(false)
        } else {
            None
        };
        let Some(pr) = kind_before(&toks, k).or(by_col) else { continue };
        let group = list_group(&toks, k, cx.ids);
        if out.iter().any(|c| matches!(c.claimed, Claimed::Kind { .. }) && c.targets.contains(&r)) {
            continue;
        }
        out.push(StateClaim {
            line: cx.line,
            targets: if kind_before(&toks, k).is_some() { group } else { vec![r] },
            ambiguous: false,
            claimed: Claimed::Kind { pr },
            negated: false,
            past: false,
            modality: Modality::Asserted,
            words: if pr { "PR".into() } else { "issue".into() },
            day: None,
        });
    }
    out
}

/// The references a flattened (rendered) table row is about: those it names, minus
/// those the row's words make objects of another action (`Cherry-pick #5`).
fn rendered_row_subjects(toks: &[Tok], cx: &LineContext<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let TokKind::Ref(r) = t.kind else { continue };
        let prev: Vec<&Tok> = toks[..k]
            .iter()
            .rev()
            .take_while(|x| !matches!(x.kind, TokKind::Ref(_)))
            .filter(|x| x.kind == TokKind::Word)
            .take(2)
            .collect();
        let excluded = prev.iter().any(|w| NOT_SUBJECT.contains(&w.lower.as_str()));
        let continues = !out.is_empty() && list_group(toks, k, cx.ids).len() > 1;
        if excluded && !continues {
            continue;
        }
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// The references a table row is about: those in its subject columns (or, with none
/// named, in any cell but status cells), minus those the row's words make objects of
/// another action (`Cherry-pick #5`, `after #6`).
fn row_subjects(toks: &[Tok], cells: &[(usize, usize)], cx: &LineContext<'_>) -> Vec<usize> {
    let header = cx.header.unwrap_or(&[]);
    let has_subject_col = header.iter().any(|h| subject_header(h));
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let TokKind::Ref(r) = t.kind else { continue };
        let Some(c) = cells.iter().position(|(a, b)| t.start >= *a && t.start < *b) else { continue };
        let h = header.get(c).map(String::as_str).unwrap_or("");
        if status_header(h) {
            continue;
        }
        if has_subject_col && !subject_header(h) {
            continue;
        }
        let prev: Vec<&Tok> = toks[..k]
            .iter()
            .rev()
            .take_while(|x| !matches!(x.kind, TokKind::Ref(_)) && !x.is_punct("|"))
            .filter(|x| x.kind == TokKind::Word)
            .take(3)
            .collect();
        // The first word before the reference decides; a list continues its head.
        let excluded = prev.iter().take(2).any(|w| NOT_SUBJECT.contains(&w.lower.as_str()));
        let continues = k > 0 && out.last().is_some() && list_group(toks, k, cx.ids).len() > 1;
        if excluded && !continues {
            continue;
        }
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use citriage_github::{extract_refs, RefContext};

    /// (reference text, claim, negated) for every asserted claim of a line.
    fn got(line: &str, header: Option<&[&str]>) -> Vec<(String, String)> {
        let found = extract_refs(line, &RefContext::kubernetes().with_default(citriage_github::RepoRef::new("o", "r")));
        let spans: Vec<(usize, usize)> = found.iter().map(|f| f.span()).collect();
        let ids = object_ids(line, &found);
        let h: Option<Vec<String>> = header.map(|h| h.iter().map(|s| s.to_string()).collect());
        let cx = LineContext {
            line: 1,
            text: line,
            refs: &spans,
            ids: &ids,
            markdown: true,
            header: h.as_deref(),
            rendered_row: false,
        };
        let mut v: Vec<(String, String)> = line_claims(&cx)
            .into_iter()
            .filter(|c| c.modality == Modality::Asserted)
            .flat_map(|c| {
                let what = format!("{}{}", c.claimed.describe(c.negated), if c.ambiguous { " (?)" } else { "" });
                c.targets.iter().map(|t| (found[*t].raw.clone(), what.clone())).collect::<Vec<_>>()
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        out.sort();
        out
    }

    #[test]
    fn conditionals_and_other_objects_are_not_claims_about_the_nearest_ref() {
        assert_eq!(got("(moot once k/k#137361 is merged)", None), pairs(&[]));
        assert_eq!(got("k/k#2 applies the recipe of the merged k/k#1", None), pairs(&[("k/k#1", "merged")]));
        assert_eq!(got("If k/k#5 gets merged, Pattern B clears.", None), pairs(&[]));
        assert_eq!(got("k/k#5 rebases onto the merged k/k#1", None), pairs(&[("k/k#1", "merged")]));
        assert_eq!(
            got("#2 applies the recipe of the merged #1 (a finalizer) and is open with lgtm.", None),
            pairs(&[("#1", "merged"), ("#2", "open"), ("#2", "labelled lgtm")])
        );
        assert_eq!(got("k/k#5 will be merged tomorrow", None), pairs(&[]));
        assert_eq!(got("Two clusters merged into one; k/k#5 is OPEN.", None), pairs(&[("k/k#5", "open")]));
    }

    #[test]
    fn assertions_negations_and_lists() {
        assert_eq!(
            got("6 fix PRs merged today: k/k#1 (coverage), kops#2 (gossip), k/k#3.", None),
            pairs(&[("k/k#1", "merged"), ("kops#2", "merged"), ("k/k#3", "merged")])
        );
        assert_eq!(
            got("Fix attempt #5 CLOSED unmerged (author-closed). Predecessor #6 MERGED.", None),
            pairs(&[("#5", "closed"), ("#5", "not merged"), ("#6", "merged")])
        );
        assert_eq!(got("k/k#8 was not merged", None), pairs(&[("k/k#8", "not merged")]));
        assert_eq!(
            got("Tracker: k/k#7 OPEN, open questions remain", None),
            pairs(&[("k/k#7", "open"), ("k/k#7", "an issue")])
        );
        assert_eq!(got("`merged` k/k#11 `MERGED`", None), pairs(&[]));
        assert_eq!(got("Cherry-pick k/k#10 to release-1.36", None), pairs(&[]));
        assert_eq!(
            got("kops#18238 (~41 jobs blocked) still DRAFT WIP.", None),
            pairs(&[("kops#18238", "a draft"), ("kops#18238", "work in progress")])
        );
        assert_eq!(
            got("k/k#3 is lgtm + approved, waiting on tide", None),
            pairs(&[
                ("k/k#3", "labelled lgtm"),
                ("k/k#3", "labelled approved"),
                ("k/k#3", "ready to merge (lgtm, approved, nothing blocking)")
            ])
        );
        assert_eq!(got("the open issue #7 tracks it", None), pairs(&[("#7", "open"), ("#7", "an issue")]));
        assert_eq!(got("We should open a PR against #7.", None), pairs(&[]));
    }

    #[test]
    fn label_names_in_code_colon_labels_and_coordinated_predicates() {
        let h = ["PR", "State", "Block"];
        assert_eq!(
            got("| k/k#1 | 🟡 OPEN, `needs-rebase` | rebase first |", Some(&h)),
            pairs(&[("k/k#1", "open"), ("k/k#1", "labelled needs-rebase"), ("k/k#1", "a pull request")])
        );
        // A Block cell's bare `lgtm` is what is missing, not a label present.
        assert_eq!(
            got("| k/k#1 | 🟢 approved | `lgtm` |", Some(&h)),
            pairs(&[("k/k#1", "open"), ("k/k#1", "labelled approved"), ("k/k#1", "a pull request")])
        );
        assert_eq!(got("k/k#1 is awaiting `lgtm`", None), pairs(&[("k/k#1", "without the lgtm label")]));
        assert_eq!(got("`merged` and `state == \"MERGED\"` for k/k#1", None), pairs(&[]));
        assert_eq!(got("Fix PR: k/k#5 (OPEN).", None), pairs(&[("k/k#5", "open"), ("k/k#5", "a pull request")]));
        assert_eq!(got("Tracker: k/k#7.", None), pairs(&[("k/k#7", "an issue")]));
        assert_eq!(
            got("k/k#5 rebases onto the merged k/k#1 and still carries `needs-rebase`.", None),
            pairs(&[("k/k#1", "merged"), ("k/k#5", "labelled needs-rebase")])
        );
        assert_eq!(
            got("k/k#5 has no do-not-merge labels left.", None),
            pairs(&[("k/k#5", "not labelled do-not-merge/*")])
        );
        assert_eq!(got("k/k#5 does not have `needs-rebase`.", None), pairs(&[("k/k#5", "not labelled needs-rebase")]));
        assert_eq!(
            got("k/k#5 is held (`do-not-merge/hold`).", None),
            pairs(&[("k/k#5", "labelled do-not-merge/hold")])
        );
    }

    #[test]
    fn flattened_rows_speak_for_the_reference_they_open_with() {
        let row = |line: &str| -> Vec<(String, String)> {
            let found =
                extract_refs(line, &RefContext::kubernetes().with_default(citriage_github::RepoRef::new("o", "r")));
            let spans: Vec<(usize, usize)> = found.iter().map(|f| f.span()).collect();
            let ids = object_ids(line, &found);
            let cx = LineContext {
                line: 1,
                text: line,
                refs: &spans,
                ids: &ids,
                markdown: false,
                header: None,
                rendered_row: true,
            };
            let mut v: Vec<(String, String)> = line_claims(&cx)
                .into_iter()
                .filter(|c| c.modality == Modality::Asserted)
                .flat_map(|c| {
                    let what = c.claimed.describe(c.negated);
                    c.targets.iter().map(|t| (found[*t].raw.clone(), what.clone())).collect::<Vec<_>>()
                })
                .collect();
            v.sort();
            v.dedup();
            v
        };
        assert_eq!(
            row("#5 G ResourceQuota terminating 🟢 OPEN, MERGEABLE awaiting approver"),
            pairs(&[("#5", "open"), ("#5", "mergeable"), ("#5", "without the approved label")])
        );
        assert_eq!(
            row("#1, #2 A TestParamRef cherry-picks 🟢 lgtm cherry-pick-not-approved"),
            pairs(&[
                ("#1", "open"),
                ("#1", "labelled lgtm"),
                ("#1", "labelled cherry-pick-not-approved"),
                ("#2", "open"),
                ("#2", "labelled lgtm"),
                ("#2", "labelled cherry-pick-not-approved")
            ])
        );
        // The object of another action is not the row's subject; quantified rows claim
        // nothing for each member.
        assert_eq!(row("1.1 Cherry-pick k/k#1 yaml to release-1.36 1 ⚪ needs new PR 🟡 OPEN"), pairs(&[]));
        assert_eq!(row("1.6 approve #1, #2 7 jobs various needs-ok-to-test 🟡 OPEN"), pairs(&[]));
    }

    #[test]
    fn table_rows_speak_for_their_subject() {
        let h = ["#", "Item", "Status"];
        assert_eq!(got("| 0.1 | k/k#1 coverage fix | ✅ MERGED 2026-05-10 |", Some(&h)), pairs(&[("k/k#1", "merged")]));
        // The object of the row's action: the status may be the cherry-pick's own, so
        // the claim is ambiguous (verified if it holds, else not checked).
        assert_eq!(
            got("| 1.1 | Cherry-pick k/k#1 to release-1.36 | 🟡 OPEN |", Some(&h)),
            pairs(&[("k/k#1", "open (?)")])
        );
        assert_eq!(
            got("| 0.8 | test-infra#36989, #36991 cleanup | ✅ all MERGED |", Some(&h)),
            pairs(&[("#36991", "merged"), ("test-infra#36989", "merged")])
        );
        assert_eq!(
            got("| 1.2 | k/k#1 and then k/k#2 | 🟡 OPEN |", Some(&h)),
            pairs(&[("k/k#1", "open (?)"), ("k/k#2", "open (?)")])
        );
        let h2 = ["PR", "State", "Block"];
        assert_eq!(
            got("| descheduler#1871 | 🟢 lgtm | needs-ok-to-test |", Some(&h2)),
            pairs(&[
                ("descheduler#1871", "open"),
                ("descheduler#1871", "labelled lgtm"),
                ("descheduler#1871", "labelled needs-ok-to-test"),
                ("descheduler#1871", "a pull request")
            ])
        );
        assert_eq!(
            got("| #5 | 🟡 OPEN | various needs-ok-to-test |", Some(&h2)),
            pairs(&[("#5", "open"), ("#5", "a pull request")])
        );
        let h3 = ["Change", "What", "State"];
        assert_eq!(
            got("| [#5](https://github.com/o/r/pull/5) and [#6](https://github.com/o/r/pull/6) | abandoned | ❌ closed |", Some(&h3)),
            pairs(&[("#5", "closed"), ("#6", "closed")])
        );
    }
}
