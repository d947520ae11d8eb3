//! Action drafts against a GitHub-shaped server on 127.0.0.1 (laid out like
//! api.github.com: `GET /repos/{o}/{r}/pulls/{n}`, `POST /graphql`, `POST
//! /repos/{o}/{r}/issues`, `POST /repos/{o}/{r}/issues/{n}/comments`), over the payload
//! stream of a synthetic world:
//!
//! - `act … --apply` sends exactly the requests the draft file lists, bodies
//!   included (placeholders filled from the server's answers), with the token from the
//!   environment, and nothing at all without one (a token is never an argument);
//! - a revert below the revert band is refused with its score, band and reason, and
//!   sends nothing;
//! - on the world's culprit payloads the drafts name the planted culprit (its
//!   `truth.json`), and only it.

mod common;
#[path = "common/github.rs"]
mod github;
#[path = "common/mcp.rs"]
mod mcp;
#[path = "common/world.rs"]
mod world;

use github::{expected, FakeGithub, ISSUE_NUMBER, NODE_ID, REVERT_NUMBER};
use mcp::Client;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `citriage --db DB --quiet ARGS`, with the given GitHub token (or none: both token
/// variables removed).
fn act(db: &Path, token: Option<&str>, args: &[&str]) -> Output {
    let mut c = common::bin();
    c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    if let Some(t) = token {
        c.env("GITHUB_TOKEN", t);
    }
    c.arg("--db").arg(db).arg("--quiet").args(args).output().expect("runs")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The suspect rows of a payload's `act list` with the draft they support.
fn rows(db: &Path, tag: &str) -> Vec<Value> {
    let o = world::ok(db, &["--format", "json", "act", "list", tag]);
    world::json(&o)["rows"].as_array().expect("rows").clone()
}

/// A culprit payload's suspect row that supports a draft: (tag, kind, suspect).
fn culprit_draft(w: &world::World) -> (String, String, String) {
    for (tag, who, _) in world::culprit_tags(w) {
        for r in rows(&w.db, &tag) {
            if r["row"] == "suspect" && r["id"] == json!(who) {
                if let Some(k) = r["draft"].as_str() {
                    return (tag, k.to_string(), who);
                }
            }
        }
    }
    panic!("no culprit payload of the world supports a draft");
}

fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join(name);
    (d, p)
}

#[test]
fn apply_sends_exactly_the_drafted_requests_with_the_token_from_the_environment() {
    let w = world::world();
    let gh = FakeGithub::start();
    let (tag, kind, who) = culprit_draft(w);
    let (_d, dir) = tmp("drafts");
    let o = act(
        &w.db,
        Some("test-token-123"),
        &["act", &kind, &tag, "--suspect", &who, "--out", dir.to_str().expect("path"), "--api", &gh.base, "--apply"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let printed = out(&o);
    let name = format!("{kind}-{}-{}", citriage_actions::slug(&tag), citriage_actions::slug(&who));
    let draft = read_json(&dir.join(format!("{name}.json")));
    assert!(dir.join(format!("{name}.md")).is_file());
    let want = expected(&draft);
    assert!(want.len() >= 2, "{want:?}");
    let got = gh.got();
    assert_eq!(got.len(), want.len(), "exactly the drafted requests: {got:?}");
    for (g, (m, p, b)) in got.iter().zip(&want) {
        assert_eq!((&g.method, &g.path), (m, p));
        assert_eq!(&g.body, b, "{m} {p}: the body sent is the drafted body");
        assert_eq!(g.authorization.as_deref(), Some("Bearer test-token-123"), "{m} {p}");
    }
    // The first request is the merged check; the revert carries the drafted title and body.
    assert_eq!(got[0].method, "GET");
    let vars = &got[1].body.as_ref().expect("graphql body")["variables"];
    assert_eq!(vars["title"], draft["title"]);
    assert_eq!(vars["body"], draft["body"]);
    assert_eq!(vars["pullRequestId"], NODE_ID);
    assert_eq!(vars["draft"], json!(kind == "bisect"), "a bisect opens a draft PR, a revert a ready one");
    if let Some(c) = got.get(2) {
        assert_eq!(
            c.path,
            format!("/repos/{}/issues/{REVERT_NUMBER}/comments", draft["target"]["repo"].as_str().expect("repo"))
        );
        let cmds: Vec<&str> = draft["payload_jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|p| p["command"].as_str().expect("cmd"))
            .collect();
        assert_eq!(c.body.as_ref().expect("comment")["body"], json!(cmds.join("\n")));
    }
    // Printed before sending: every request with its body, the token never.
    assert!(printed.contains(&format!("sending {} request(s) to {}", want.len(), gh.base)), "{printed}");
    assert!(printed.contains(&format!("1. GET {}/repos/", gh.base)), "{printed}");
    assert!(!printed.contains("test-token-123") && !common::stderr(&o).contains("test-token-123"));
    if kind == "bisect" {
        let tracking = std::fs::read_to_string(dir.join(format!("{}-bisect.yaml", citriage_actions::slug(&tag))))
            .expect("tracking");
        assert!(tracking.contains(&format!("number: {REVERT_NUMBER}")), "the opened PR is tracked: {tracking}");
        assert!(tracking.contains("status: \"pending\""), "{tracking}");
    }

    // A bug of the same payload's root cause: one POST of the drafted issue.
    let gh = FakeGithub::start();
    let rc = rows(&w.db, &tag)
        .into_iter()
        .find(|r| r["row"] == "root-cause" && r["draft"] == "bug")
        .expect("a root cause with a bug draft");
    let rc = rc["id"].as_str().expect("id").to_string();
    let o = act(
        &w.db,
        Some("test-token-123"),
        &["act", "bug", &tag, "--root-cause", &rc, "--out", dir.to_str().expect("path"), "--api", &gh.base, "--apply"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let draft =
        read_json(&dir.join(format!("bug-{}-{}.json", citriage_actions::slug(&tag), citriage_actions::slug(&rc))));
    let got = gh.got();
    let want = expected(&draft);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].method.as_str(), got[0].path.as_str(), got[0].body.clone()),
        (want[0].0.as_str(), want[0].1.as_str(), want[0].2.clone())
    );
    assert_eq!(got[0].body.as_ref().expect("body")["title"], draft["title"]);
}

#[test]
fn nothing_is_sent_without_a_token_and_a_token_is_never_an_argument() {
    let w = world::world();
    let gh = FakeGithub::start();
    let (tag, kind, who) = culprit_draft(w);
    let (_d, dir) = tmp("drafts");
    let args =
        ["act", &kind, &tag, "--suspect", &who, "--out", dir.to_str().expect("path"), "--api", &gh.base, "--apply"];
    let o = act(&w.db, None, &args);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("GITHUB_TOKEN") && common::stderr(&o).contains("nothing was sent"),
        "{}",
        common::stderr(&o)
    );
    assert!(gh.got().is_empty(), "no request without a token: {:?}", gh.got());
    let name = format!("{kind}-{}-{}", citriage_actions::slug(&tag), citriage_actions::slug(&who));
    assert!(dir.join(format!("{name}.json")).is_file(), "the draft is still written");
    // An empty token is no token.
    let o = act(&w.db, Some("  "), &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(gh.got().is_empty());
    // No option takes a token.
    let mut with_flag = args.to_vec();
    with_flag.extend(["--token", "abc"]);
    let o = act(&w.db, None, &with_flag);
    assert_eq!(o.status.code(), Some(2), "--token is not an option");
    assert!(gh.got().is_empty());
    // Without --apply nothing is sent even with a token.
    let o = act(&w.db, Some("t"), &args[..args.len() - 1]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(gh.got().is_empty());
}

#[test]
fn a_revert_below_the_band_is_refused_with_the_reason() {
    let w = world::world();
    let gh = FakeGithub::start();
    // Every suspect below the revert band, over the whole stream. A suspect has a row
    // per root cause; a revert is judged on its best one.
    let mut below: Vec<(String, Value)> = Vec::new();
    for tag in &w.tags {
        let mut best: BTreeMap<String, Value> = BTreeMap::new();
        for r in rows(&w.db, tag).into_iter().filter(|r| r["row"] == "suspect") {
            let id = r["id"].as_str().expect("id").to_string();
            let better = best.get(&id).is_none_or(|b| r["score"].as_u64() > b["score"].as_u64());
            if better {
                best.insert(id, r);
            }
        }
        for r in best.into_values() {
            if r["score"].as_u64().is_some_and(|s| s > 0 && s < 85) {
                below.push((tag.clone(), r));
            }
        }
    }
    assert!(!below.is_empty(), "the world's decoys score below the revert band");
    let (_d, dir) = tmp("drafts");
    for (tag, r) in &below {
        let who = r["id"].as_str().expect("id");
        let score = r["score"].as_u64().expect("score");
        let band = r["band"].as_str().expect("band");
        let o = act(
            &w.db,
            Some("test-token-123"),
            &[
                "--format",
                "json",
                "act",
                "revert",
                tag,
                "--suspect",
                who,
                "--out",
                dir.to_str().expect("path"),
                "--api",
                &gh.base,
                "--apply",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{tag} {who}: {}", common::stderr(&o));
        let err = common::stderr(&o);
        if r["action"] == "bisect" || band == "LOW" {
            assert!(
                err.contains(&format!(
                    "refused: score {score} ({band}) is below the band this action needs (≥ 85 (HIGH))"
                )),
                "{tag} {who}: {err}"
            );
            let v = world::json(&o);
            assert_eq!(v["refused"]["refused"], "below-band", "{v}");
            assert_eq!(v["refused"]["score"], json!(score));
            assert!(v["refused"]["reason"].as_str().is_some_and(|s| !s.is_empty()), "the reason is given: {v}");
            if r["action"] == "bisect" {
                assert!(
                    err.contains(&format!("citriage act bisect {tag} --suspect {who}")),
                    "what to do instead: {err}"
                );
            }
        } else {
            assert!(err.contains("refused"), "{tag} {who}: {err}");
        }
        assert!(!dir
            .join(format!("revert-{}-{}.json", citriage_actions::slug(tag), citriage_actions::slug(who)))
            .exists());
    }
    assert!(gh.got().is_empty(), "a refused revert sends nothing");
}

#[test]
fn culprit_payloads_drafts_name_the_planted_culprit() {
    let w = world::world();
    let culprits = world::culprit_tags(w);
    assert!(culprits.len() >= 2, "the world plants a culprit PR and a CI configuration change: {culprits:?}");
    // A payload whose failing runs lost their evidence gets no revert or bisect draft.
    let missing = world::evidence_missing_tags(w);
    assert!(!missing.is_empty());
    for tag in &missing {
        for r in rows(&w.db, tag) {
            assert!(r["row"] != "suspect" || r["draft"].is_null(), "{tag}: drafted without evidence: {r}");
        }
    }
    let mut drafted = 0;
    for (tag, who, c) in &culprits {
        for r in rows(&w.db, tag) {
            let Some(kind) = r["draft"].as_str() else { continue };
            if r["row"] == "suspect" {
                assert_eq!(r["id"], json!(who), "{tag}: a {kind} is drafted only for the planted culprit");
            }
        }
        let (_d, dir) = tmp("drafts");
        for r in rows(&w.db, tag) {
            let Some(kind) = r["draft"].as_str() else { continue };
            let id = r["id"].as_str().expect("id");
            let args: Vec<&str> = if r["row"] == "suspect" {
                vec!["--format", "json", "act", kind, tag, "--suspect", id, "--out", dir.to_str().expect("path")]
            } else {
                vec!["--format", "json", "act", "bug", tag, "--root-cause", id, "--out", dir.to_str().expect("path")]
            };
            let v = world::json(&world::ok(&w.db, &args));
            for d in v["drafts"].as_array().expect("drafts") {
                let body = d["body"].as_str().expect("body");
                assert!(!d["earned_by"].as_array().expect("earned").is_empty());
                assert!(!d["would_change"].as_array().expect("would change").is_empty());
                if r["row"] == "suspect" {
                    assert_eq!(d["suspect"]["repo"], c["repo"], "{tag}");
                    assert_eq!(d["suspect"]["number"], c["pr"], "{tag}");
                    if let Some(symbol) = c["symbol"].as_str() {
                        assert!(body.contains(symbol), "{tag}: the draft quotes the planted symbol {symbol}");
                    }
                    // The added line the truth plants, and the file its diff adds it to.
                    let diff = std::fs::read_to_string(w.root.join(c["diff_file"].as_str().expect("diff file")))
                        .expect("the culprit's diff");
                    let lines: Vec<&str> = diff.lines().collect();
                    let at = c["diff_line"].as_u64().expect("diff line") as usize;
                    let added = lines[at - 1].strip_prefix('+').expect("an added line").trim();
                    let file = lines[..at]
                        .iter()
                        .rev()
                        .find_map(|l| l.strip_prefix("+++ b/"))
                        .expect("the file of the added line");
                    assert!(body.contains(added), "{tag}: the draft quotes the added line {added:?}");
                    assert!(body.contains(file), "{tag}: and names its file {file}");
                    assert!(d["commands"]
                        .as_array()
                        .expect("commands")
                        .iter()
                        .any(|x| x.as_str().is_some_and(|s| s.contains("git revert -m1"))));
                } else {
                    // A root cause's bug is routed to the culprit's repository, or not at all.
                    assert!(d["target"].is_null() || d["target"]["repo"] == c["repo"], "{tag}: {}", d["target"]);
                    assert_eq!(d["target"].is_null(), !d["apply_blocked"].is_null(), "{tag}: unrouted is unapplicable");
                }
                drafted += 1;
            }
        }
    }
    assert!(drafted > 0, "the culprit payloads support drafts");
}

/// The analysis of the first culprit payload with the culprit's best row moved into
/// the bisect band (score 70, MEDIUM, no second link), as an analysis file: the band
/// the tiny world's stream does not reach.
fn bisect_band_analysis(w: &world::World, dir: &Path) -> (String, String, PathBuf) {
    let (tag, who, _) = world::culprit_tags(w).into_iter().next().expect("a culprit");
    let o = common::bin()
        .args(["--quiet", "--format", "json", "payload", &tag, "--from"])
        .arg(&w.root)
        .arg("--no-store")
        .output()
        .expect("payload");
    let mut a: Value = serde_json::from_slice(&o.stdout).expect("the analysis as JSON");
    let id = format!("pr:{who}");
    let mut moved = 0;
    for s in a["suspects"].as_array_mut().expect("suspects") {
        if s["candidate"] == json!(id) && s["action"] == "StageRevert" {
            s["score"]["total"] = json!(70);
            s["score"]["cap"] = json!("no second, independent link");
            s["band"] = json!("Medium");
            s["action"] = json!("Bisect");
            s["action_reason"] = json!("score 70 in 60-84");
            moved += 1;
        } else if s["candidate"] == json!(id) && s["score"]["total"].as_u64().is_some_and(|t| t >= 70) {
            // The culprit's rows for other root causes stay below the moved row, so the
            // moved row is its best.
            s["score"]["total"] = json!(65);
        }
    }
    assert!(moved > 0, "the culprit is at the revert band in {tag}");
    let p = dir.join("analysis.json");
    std::fs::write(&p, serde_json::to_vec(&a).expect("json")).expect("write");
    (tag, who, p)
}

#[test]
fn bisect_band_reverts_are_refused_and_bisects_open_draft_prs() {
    let w = world::world();
    let gh = FakeGithub::start();
    let (_d, dir) = tmp("drafts");
    std::fs::create_dir_all(&dir).expect("dir");
    let (tag, who, analysis) = bisect_band_analysis(w, &dir);
    let a = analysis.to_str().expect("path");
    let d = dir.to_str().expect("path");
    // The revert is refused, saying why and what to do instead; nothing is sent.
    let o = act(
        &w.db,
        Some("tok"),
        &["act", "revert", &tag, "--suspect", &who, "--analysis", a, "--out", d, "--api", &gh.base, "--apply"],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = common::stderr(&o);
    assert!(
        err.contains(
            "refused: score 70 (MEDIUM) is below the band this action needs (≥ 85 (HIGH)): no second, independent link"
        ),
        "{err}"
    );
    assert!(err.contains(&format!("citriage act bisect {tag} --suspect {who}")), "{err}");
    assert!(gh.got().is_empty());
    // The bisect: a draft revert PR with the payload jobs asked for, and the tracking file.
    let o =
        act(&w.db, Some("tok"), &["act", "bisect", &tag, "--analysis", a, "--out", d, "--api", &gh.base, "--apply"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let name = format!("bisect-{}-{}", citriage_actions::slug(&tag), citriage_actions::slug(&who));
    let draft = read_json(&dir.join(format!("{name}.json")));
    assert_eq!(draft["band"], "MEDIUM");
    assert!(draft["body"].as_str().expect("body").contains("Do not merge on this evidence alone"));
    let want = expected(&draft);
    let got = gh.got();
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, (m, p, b)) in got.iter().zip(&want) {
        assert_eq!((&g.method, &g.path, &g.body), (m, p, b));
    }
    assert_eq!(got[1].body.as_ref().expect("graphql")["variables"]["draft"], true, "a bisect opens a draft PR");
    let cmds: Vec<String> = draft["payload_jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|p| p["command"].as_str().expect("command").to_string())
        .collect();
    assert!(
        !cmds.is_empty() && cmds.iter().all(|c| c.starts_with("/payload-job ") || c.starts_with("/payload-aggregate "))
    );
    assert_eq!(got[2].body.as_ref().expect("comment")["body"], json!(cmds.join("\n")));
    let tracking =
        std::fs::read_to_string(dir.join(format!("{}-bisect.yaml", citriage_actions::slug(&tag)))).expect("tracking");
    assert!(tracking.contains(&format!("payload_tag: \"{tag}\"")), "{tracking}");
    assert!(
        tracking.contains(&format!("number: {REVERT_NUMBER}")) && tracking.contains("status: \"pending\""),
        "{tracking}"
    );
    for c in &cmds {
        assert!(tracking.contains(&serde_json::to_string(c).expect("json")), "{c} is tracked");
    }
}

/// The MCP write tool, over both transports: offered only when writes are allowed,
/// refused over HTTP without the write token (or with another), and with it sends
/// exactly the requests `draft_action` drafts, with the server's GitHub token.
#[test]
fn mcp_apply_action_sends_the_drafted_requests_behind_the_write_gate() {
    let w = world::world();
    let (tag, _, planted) = world::culprit_tags(w).into_iter().next().expect("a culprit");
    let args = json!({"action": "revert", "payload": tag, "suspect": format!("{}#{}", planted["repo"].as_str().expect("repo"), planted["pr"])});
    let check = |c: &mut Client, gh: &FakeGithub, transport: &str| {
        let drafted = c.answer("draft_action", args.clone());
        assert!(gh.got().is_empty(), "{transport}: drafting sends nothing");
        let draft = &drafted["result"]["drafts"][0];
        let v = c.answer("apply_action", args.clone());
        let want = expected(draft);
        let got = gh.got();
        assert_eq!(got.len(), want.len(), "{transport}: {got:?}");
        for (g, (m, p, b)) in got.iter().zip(&want) {
            assert_eq!((&g.method, &g.path, &g.body), (m, p, b), "{transport}");
            assert_eq!(g.authorization.as_deref(), Some("Bearer gh-token"), "{transport}");
        }
        let sent = v["result"]["applied"][0]["sent"].as_array().expect("sent").len();
        assert_eq!(sent, want.len(), "{transport}: the answer lists what was sent");
    };

    // stdio: --allow-writes is the local user's.
    let gh = FakeGithub::start();
    let mut c = Client::stdio(&w.db, &["--allow-writes", "--api", &gh.base], &[("GITHUB_TOKEN", "gh-token")]);
    c.initialize();
    check(&mut c, &gh, "stdio");

    // HTTP: the bearer token from CITRIAGE_MCP_TOKEN, else nothing is sent.
    let gh = FakeGithub::start();
    let mut c = Client::http(
        &w.db,
        &["--mcp-writes", "--api", &gh.base],
        &[("CITRIAGE_MCP_TOKEN", "write-secret"), ("GITHUB_TOKEN", "gh-token")],
    );
    c.initialize();
    let tools = c.ok("tools/list", json!({}));
    let apply = tools["tools"].as_array().expect("tools").iter().find(|t| t["name"] == "apply_action").cloned();
    assert_eq!(apply.expect("apply_action is offered with --mcp-writes")["annotations"]["readOnlyHint"], false);
    let (err, msg) = c.call("apply_action", args.clone());
    assert!(err && msg.as_str().is_some_and(|m| m.contains("Authorization")), "{msg}");
    c.set_bearer("wrong");
    let (err, msg) = c.call("apply_action", args.clone());
    assert!(err && msg.as_str().is_some_and(|m| m.contains("does not match")), "{msg}");
    assert!(gh.got().is_empty(), "a refused caller sends nothing");
    c.set_bearer("write-secret");
    check(&mut c, &gh, "http");
}

/// A failure pattern's bug, filed through the GitHub-shaped server: one POST of the
/// drafted issue, routed by the pattern's owner (or `--repo`); the issue it opened is
/// linked to the pattern's triage record (source `bug-draft`, by `act bug`), which is
/// triaged by it.
#[test]
fn a_pattern_bug_is_filed_exactly_as_drafted() {
    let w = world::world();
    let gh = FakeGithub::start();
    let (_d, dir) = tmp("drafts");
    let d = dir.to_str().expect("path");
    let st = citriage_store::Store::open(&w.db).expect("store");
    let top = st
        .clusters("default")
        .expect("clusters")
        .into_iter()
        .max_by_key(|c| (c.size, std::cmp::Reverse(c.stable_id.clone())))
        .expect("a pattern");
    let o = act(
        &w.db,
        Some("tok"),
        &[
            "act",
            "bug",
            "--pattern",
            &top.stable_id,
            "--repo",
            "example/tracker",
            "--out",
            d,
            "--api",
            &gh.base,
            "--apply",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let name = std::fs::read_dir(&dir)
        .expect("drafts")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("bug-") && n.ends_with(".json"))
        .expect("the bug draft");
    let draft = read_json(&dir.join(name));
    assert_eq!(draft["target"]["repo"], "example/tracker");
    let got = gh.got();
    let want = expected(&draft);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].method.as_str(), got[0].path.as_str()), ("POST", "/repos/example/tracker/issues"));
    assert_eq!((&got[0].method, &got[0].path, &got[0].body), (&want[0].0, &want[0].1, &want[0].2));
    let body = &got[0].body.as_ref().expect("body");
    assert_eq!(body["title"], draft["title"]);
    assert_eq!(body["labels"], draft["labels"]);
    let text = body["body"].as_str().expect("body");
    assert!(text.contains(&format!("citriage pattern {}", top.stable_id)), "{text}");
    let newest = st.cluster_failures("default", &top.stable_id, 1).expect("failures");
    let first = newest[0].failure_text.as_deref().and_then(|t| t.lines().next()).expect("a failure line");
    assert!(text.contains(first), "the newest failure's line is quoted: {first:?} in {text}");
    let issue = format!("example/tracker#{ISSUE_NUMBER}");
    let subject = format!("pattern:default/{}", top.stable_id);
    assert!(out(&o).contains(&format!("linked {issue} to {subject} (act bug)")), "{}", out(&o));
    let r = world::ok(&w.db, &["--format", "json", "triage", "records", &subject]);
    let r = world::json(&r);
    let link = r["links"].as_array().expect("links").iter().find(|l| l["reference"] == issue.as_str()).cloned();
    let link = link.unwrap_or_else(|| panic!("{issue} is linked: {r}"));
    assert_eq!((&link["source"], &link["linked_by"]), (&json!("bug-draft"), &json!("act bug")), "{link}");
    assert_eq!((&link["ref_kind"], &link["ref_state"]), (&json!("issue"), &json!("open")), "{link}");
    assert!(link["note"].as_str().unwrap_or("").starts_with("filed from the bug draft bug-"), "{link}");
    assert_ne!(r["state"], "new", "{r}");
    let got = gh.got();
    assert_eq!(got.len(), 1, "the filing's answer says what the issue is; nothing more is asked: {got:?}");
}
