//! A draft as a Markdown document for people: what it is, the gate it passed, the
//! text to post, the commands, the evidence that earned it, what would change the
//! verdict and the requests `--apply` would send.

use crate::Draft;
use citriage_model::escape::{md_cell as cell, md_code, md_fence as fence};
use std::fmt::Write as _;

impl Draft {
    /// The draft as a Markdown document (title, body, commands, evidence, what would
    /// change the verdict, the requests `--apply` sends).
    pub fn markdown(&self) -> String {
        markdown(self)
    }
}

fn markdown(d: &Draft) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Draft {}: {}\n", d.kind.as_str(), d.subject);
    let band = match (d.score, &d.band) {
        (Some(s), Some(b)) => format!(" · **Score**: {s} ({b})"),
        _ => String::new(),
    };
    let _ = writeln!(o, "**Action**: {}{band}  ", d.kind.as_str());
    let _ = writeln!(o, "**Gate passed**: {}  ", d.gate);
    match &d.target {
        Some(t) => {
            let _ = writeln!(
                o,
                "**Where**: {}{} (routed by {})  ",
                t.repo,
                t.number.map(|n| format!("#{n}")).unwrap_or_default(),
                t.routed_by
            );
        }
        None => {
            let _ = writeln!(o, "**Where**: not routed  ");
        }
    }
    if let Some(sha) = &d.merge_sha {
        let _ = writeln!(o, "**Merge commit**: {sha}  ");
    }
    let _ = writeln!(
        o,
        "**Status**: drafted — nothing has been sent. `--apply` sends the requests listed at the end, with the token in `GITHUB_TOKEN`.\n"
    );
    if let Some(why) = &d.apply_blocked {
        let _ = writeln!(o, "> Cannot be applied as it stands: {why}\n");
    }
    if let Some(c) = &d.conflict_check {
        let verdict = match (&c.error, c.clean) {
            (Some(e), _) => format!("could not be tried: {e}"),
            (None, true) => "applies cleanly".to_string(),
            (None, false) => format!("conflicts in {}", c.conflicts.join(", ")),
        };
        let _ = writeln!(
            o,
            "**Revert pre-check** in `{}` on {}: `git revert -m1 {}` {verdict}.\n",
            c.checkout, c.base, c.merge_sha
        );
    }
    let _ = writeln!(o, "## Title\n\n{}\n", d.title);
    if !d.labels.is_empty() {
        let _ = writeln!(o, "Labels: {}\n", d.labels.join(", "));
    }
    let f = fence(&d.body);
    let _ = writeln!(
        o,
        "## Body\n\n{f}markdown\n{}{f}\n",
        if d.body.ends_with('\n') { d.body.clone() } else { format!("{}\n", d.body) }
    );
    if !d.commands.is_empty() {
        let cmds = d.commands.join("\n");
        let f = fence(&cmds);
        let _ = writeln!(o, "## Commands\n\n{f}sh\n{cmds}\n{f}\n");
    }
    let _ = writeln!(o, "## Evidence that earned it\n");
    let _ = writeln!(o, "| id | kind | where | says | shows |\n|---|---|---|---|---|");
    for e in &d.earned_by {
        let kind =
            serde_json::to_value(e.evidence.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            e.evidence.id,
            kind,
            cell(&e.evidence.locator),
            md_code(&e.evidence.excerpt),
            cell(&e.shows)
        );
    }
    let _ = writeln!(o, "\nEach id resolves with `citriage evidence ID`.\n");
    let _ = writeln!(o, "## What would change the verdict\n");
    for w in &d.would_change {
        let _ = writeln!(o, "- {w}");
    }
    let _ = writeln!(o, "\n## Requests `--apply` sends\n");
    if d.requests.is_empty() {
        let _ = writeln!(o, "None.");
    } else {
        let text = crate::request::describe(&d.requests, "https://api.github.com");
        let f = fence(&text);
        let _ = writeln!(o, "{f}text\n{text}{f}");
    }
    o
}
