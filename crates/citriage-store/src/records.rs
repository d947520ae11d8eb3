//! Triage records: one row per subject (a failure pattern by profile and stable id, a
//! job, or a payload root cause) with its state, the issues and pull requests linked
//! to it, and every state transition with its time, the evidence ids it rests on and
//! its reason. The store does not decide states (`citriage_analysis::resolution`
//! does); it keeps them safely:
//!
//! - every change to a record (a transition, a link, an unlink, a new GitHub state of
//!   a link) adds one to its `version`, and a transition is written only if the
//!   version is still the one the writer read (one conditional `UPDATE`, atomic on
//!   both engines: SQLite's write lock; PostgreSQL re-checks the row after the other
//!   writer commits). A writer that lost the race gets [`RecordWrite::Conflict`] with
//!   the record as it is now, re-reads and decides again: no transition is lost or
//!   written twice;
//! - transitions are appended, never rewritten (`seq` counts them per record); their
//!   evidence items go into the ledger in the same transaction, so every id resolves;
//! - links are never deleted: unlinking stamps `unlinked_at`/`unlinked_by`, and a
//!   reference linked again gets a new row (`n`).
//!
//! [`Store::record_history`] lists the transitions recorded after an instant in
//! recording order: what an alerting module reads to learn "failed after fix" or
//! "fix confirmed" without deriving them again (`subject` + `seq` is a stable key).

use crate::db::{vals, DbError, Exec, Row, Tx};
use crate::{Store, StoreError};
use citriage_model::Evidence;
use serde::Serialize;

/// What a record is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Subject {
    /// A failure pattern: the clustering profile and the pattern's stable id.
    Pattern { profile: String, id: String },
    /// A job, by name as stored.
    Job { job: String },
    /// An OpenShift payload root cause, by its key.
    Payload { cause: String },
}

impl Subject {
    /// The record's key: `pattern:PROFILE/ID`, `job:NAME`, `payload:CAUSE`.
    pub fn key(&self) -> String {
        match self {
            Subject::Pattern { profile, id } => format!("pattern:{profile}/{id}"),
            Subject::Job { job } => format!("job:{job}"),
            Subject::Payload { cause } => format!("payload:{cause}"),
        }
    }

    /// `pattern`, `job` or `payload`.
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Pattern { .. } => "pattern",
            Subject::Job { .. } => "job",
            Subject::Payload { .. } => "payload",
        }
    }

    /// Reads [`Subject::key`] back; `None` for anything else.
    pub fn parse(key: &str) -> Option<Subject> {
        let (kind, rest) = key.split_once(':')?;
        if rest.is_empty() {
            return None;
        }
        match kind {
            "pattern" => {
                let (profile, id) = rest.split_once('/')?;
                (!profile.is_empty() && !id.is_empty())
                    .then(|| Subject::Pattern { profile: profile.into(), id: id.into() })
            }
            "job" => Some(Subject::Job { job: rest.into() }),
            "payload" => Some(Subject::Payload { cause: rest.into() }),
            _ => None,
        }
    }

    fn parts(&self) -> (&str, &str) {
        match self {
            Subject::Pattern { profile, id } => (profile, id),
            Subject::Job { job } => ("", job),
            Subject::Payload { cause } => ("", cause),
        }
    }
}

/// The states a record can be in, as stored.
pub const RECORD_STATES: &[&str] = &["new", "triaged", "fix-merged", "fix-confirmed", "failed-after-fix"];

/// A stored record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredRecord {
    /// [`Subject::key`].
    pub subject: String,
    /// `pattern`, `job`, `payload`.
    pub kind: String,
    /// The clustering profile of a pattern; empty for jobs and payloads.
    pub profile: String,
    /// The pattern's stable id, the job's name, the payload root cause's key.
    pub key: String,
    pub title: String,
    /// One of [`RECORD_STATES`].
    pub state: String,
    /// When the record entered its state (the evidence's time, Unix seconds).
    pub since: i64,
    pub created_at: i64,
    /// Counts every change; writes are conditional on it.
    pub version: i64,
}

/// Who or what linked a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkSource {
    /// The `--links` file of `triage`.
    LinksFile,
    /// A bug draft of `act bug` that was filed.
    BugDraft,
    /// A GitHub issue or pull request that names the pattern (search).
    Github,
    /// By hand (`triage link`, the dashboard's form).
    Hand,
}

impl LinkSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkSource::LinksFile => "links-file",
            LinkSource::BugDraft => "bug-draft",
            LinkSource::Github => "github",
            LinkSource::Hand => "hand",
        }
    }

    pub fn parse(s: &str) -> Option<LinkSource> {
        [LinkSource::LinksFile, LinkSource::BugDraft, LinkSource::Github, LinkSource::Hand]
            .into_iter()
            .find(|l| l.as_str() == s)
    }
}

/// What GitHub last said about a linked reference.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct RefFacts {
    /// `pr`, `issue`, or `unknown` (not read yet, offline).
    pub ref_kind: String,
    /// `open`, `merged`, `closed-unmerged`, `closed`, `not-found`, `unknown`.
    pub ref_state: String,
    pub merged_at: Option<i64>,
    pub merge_commit: Option<String>,
    /// The branch a pull request merged into.
    pub base_branch: Option<String>,
    /// When GitHub's answer was read.
    pub read_at: Option<i64>,
}

/// A link as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredLink {
    pub subject: String,
    /// `owner/repo#N`.
    pub reference: String,
    /// 0 for the first time the reference was linked, 1 for the next, ...
    pub n: i64,
    pub source: LinkSource,
    pub linked_by: String,
    pub linked_at: i64,
    pub unlinked_at: Option<i64>,
    pub unlinked_by: Option<String>,
    #[serde(flatten)]
    pub facts: RefFacts,
    pub note: String,
}

impl StoredLink {
    /// Linked and not unlinked.
    pub fn active(&self) -> bool {
        self.unlinked_at.is_none()
    }
}

/// A link to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLink {
    pub reference: String,
    pub source: LinkSource,
    pub linked_by: String,
    pub linked_at: i64,
    pub facts: RefFacts,
    pub note: String,
}

/// A transition to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransition {
    pub from: String,
    pub to: String,
    /// When the evidence says it happened (Unix seconds).
    pub at: i64,
    /// The evidence (recorded in the ledger with the transition).
    pub evidence: Vec<Evidence>,
    pub reason: String,
}

/// A transition as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredTransition {
    pub subject: String,
    /// 1 for the first transition of the record, then 2, ...
    pub seq: i64,
    pub from: String,
    pub to: String,
    pub at: i64,
    /// When it was written (Unix seconds, the writer's clock).
    pub recorded_at: i64,
    /// Evidence ledger ids ([`Store::evidence`] resolves each).
    pub evidence: Vec<String>,
    pub reason: String,
}

/// What a conditional write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordWrite {
    /// Written; the record's version now, and the `seq` of each transition written.
    Applied { version: i64, seqs: Vec<i64> },
    /// The record changed since it was read (another writer): nothing written; the
    /// record as it is now.
    Conflict { found: StoredRecord },
    /// No such record.
    Missing,
}

/// What a link or unlink did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkWrite {
    /// Done; the record's version now.
    Done { version: i64 },
    /// Nothing to do: the reference is already linked (link) or is not linked (unlink).
    Unchanged { version: i64 },
    /// No such record.
    Missing,
}

/// A build of a job a pattern touched, and whether the pattern is among its failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatternRun {
    pub job: String,
    pub bucket: String,
    pub path: String,
    pub build_id: String,
    pub started: i64,
    /// `SUCCESS`, `FAILURE`, `ABORTED`, `ERROR`, or `None` while running.
    pub result: Option<String>,
    pub complete: bool,
    pub failed_tests: i64,
    /// The commit the build tested (`repo-commit`), and its refs (`started.json` repos).
    pub repo_commit: Option<String>,
    pub repos: Option<String>,
    /// A failure of the build carries the pattern's stable id (in the latest clustering
    /// run, or first given it by an earlier one).
    pub hit: bool,
}

const RECORD_COLS: &str = "subject, kind, profile, key, title, state, since, created_at, version";
const LINK_COLS: &str = "subject, reference, n, source, linked_by, linked_at, unlinked_at, unlinked_by, ref_kind,
    ref_state, merged_at, merge_commit, base_branch, read_at, note";
const TRANSITION_COLS: &str = "subject, seq, from_state, to_state, at, recorded_at, evidence, reason";

fn record_row(r: &Row<'_>) -> Result<StoredRecord, DbError> {
    Ok(StoredRecord {
        subject: r.string(0)?,
        kind: r.string(1)?,
        profile: r.string(2)?,
        key: r.string(3)?,
        title: r.string(4)?,
        state: r.string(5)?,
        since: r.i64(6)?,
        created_at: r.i64(7)?,
        version: r.i64(8)?,
    })
}

fn link_row(r: &Row<'_>) -> Result<StoredLink, DbError> {
    let source = r.str(3)?;
    Ok(StoredLink {
        subject: r.string(0)?,
        reference: r.string(1)?,
        n: r.i64(2)?,
        source: LinkSource::parse(source).ok_or_else(|| DbError::Msg(format!("link source {source:?}")))?,
        linked_by: r.string(4)?,
        linked_at: r.i64(5)?,
        unlinked_at: r.opt_i64(6)?,
        unlinked_by: r.opt_string(7)?,
        facts: RefFacts {
            ref_kind: r.string(8)?,
            ref_state: r.string(9)?,
            merged_at: r.opt_i64(10)?,
            merge_commit: r.opt_string(11)?,
            base_branch: r.opt_string(12)?,
            read_at: r.opt_i64(13)?,
        },
        note: r.string(14)?,
    })
}

fn transition_row(r: &Row<'_>) -> Result<StoredTransition, DbError> {
    let evidence: Vec<String> = serde_json::from_str(r.str(6)?)
        .map_err(|e| DbError::Msg(format!("transition evidence is not a JSON list of ids: {e}")))?;
    Ok(StoredTransition {
        subject: r.string(0)?,
        seq: r.i64(1)?,
        from: r.string(2)?,
        to: r.string(3)?,
        at: r.i64(4)?,
        recorded_at: r.i64(5)?,
        evidence,
        reason: r.string(7)?,
    })
}

fn read_record(tx: &mut impl Exec, subject: &str) -> Result<Option<StoredRecord>, DbError> {
    tx.opt(&format!("SELECT {RECORD_COLS} FROM records WHERE subject = ?1"), vals![subject], record_row)
}

/// Adds one to the record's version (locking its row until the end of the
/// transaction on PostgreSQL); the new version, or `None` when there is no record.
fn bump(tx: &mut Tx<'_>, subject: &str) -> Result<Option<i64>, DbError> {
    if tx.exec("UPDATE records SET version = version + 1 WHERE subject = ?1", vals![subject])? == 0 {
        return Ok(None);
    }
    tx.opt("SELECT version FROM records WHERE subject = ?1", vals![subject], |r| r.i64(0))
}

fn check_state(s: &str) -> Result<(), DbError> {
    if RECORD_STATES.contains(&s) {
        Ok(())
    } else {
        Err(DbError::Msg(format!("{s:?} is not a record state (one of {})", RECORD_STATES.join(", "))))
    }
}

impl Store {
    /// The record of a subject, created in state `new` at `created_at` when missing
    /// (a record that exists is returned as it is).
    pub fn ensure_record(
        &mut self,
        subject: &Subject,
        title: &str,
        created_at: i64,
    ) -> Result<StoredRecord, StoreError> {
        let key = subject.key();
        let (profile, name) = subject.parts();
        self.conn
            .write(&mut |tx| {
                tx.exec(
                    "INSERT INTO records (subject, kind, profile, key, title, state, since, created_at, version)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'new', ?6, ?6, 0) ON CONFLICT (subject) DO NOTHING",
                    vals![key.as_str(), subject.kind(), profile, name, title, created_at],
                )?;
                read_record(tx, &key)?.ok_or_else(|| DbError::Msg(format!("record {key} vanished")))
            })
            .map_err(|e| self.err(e))
    }

    /// One record.
    pub fn record(&self, subject: &str) -> Result<Option<StoredRecord>, StoreError> {
        read_record(&mut self.conn.reader(), subject).map_err(|e| self.err(e))
    }

    /// Every record (or those in one state), by subject.
    pub fn records(&self, state: Option<&str>) -> Result<Vec<StoredRecord>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!(
                    "SELECT {RECORD_COLS} FROM records WHERE CAST(?1 AS TEXT) IS NULL OR state = ?1 ORDER BY subject"
                ),
                vals![state],
                record_row,
            )
            .map_err(|e| self.err(e))
    }

    /// A record's links (active and unlinked), by reference then `n`.
    pub fn record_links(&self, subject: &str) -> Result<Vec<StoredLink>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!("SELECT {LINK_COLS} FROM record_links WHERE subject = ?1 ORDER BY reference, n"),
                vals![subject],
                link_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Every record's links, by subject, reference and `n`.
    pub fn all_record_links(&self) -> Result<Vec<StoredLink>, StoreError> {
        self.conn
            .reader()
            .rows(&format!("SELECT {LINK_COLS} FROM record_links ORDER BY subject, reference, n"), &[], link_row)
            .map_err(|e| self.err(e))
    }

    /// A record's transitions, oldest first.
    pub fn record_transitions(&self, subject: &str) -> Result<Vec<StoredTransition>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!("SELECT {TRANSITION_COLS} FROM record_transitions WHERE subject = ?1 ORDER BY seq"),
                vals![subject],
                transition_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The transitions of every record recorded at or after `recorded_since` (Unix
    /// seconds), in recording order (then subject and seq): the history an alerting
    /// module reads. `subject` + `seq` identifies a transition for good.
    pub fn record_history(&self, recorded_since: i64) -> Result<Vec<StoredTransition>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!(
                    "SELECT {TRANSITION_COLS} FROM record_transitions WHERE recorded_at >= ?1
                     ORDER BY recorded_at, subject, seq"
                ),
                vals![recorded_since],
                transition_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Every build with a start of the jobs where a pattern (`profile`, `stable_id`) has
    /// failed, started at or after `since`, oldest first (ties by job and path), each
    /// saying whether the pattern is among its failures.
    pub fn pattern_runs(&self, profile: &str, stable_id: &str, since: i64) -> Result<Vec<PatternRun>, StoreError> {
        self.conn
            .read(&mut |tx| {
                tx.rows(
                    "WITH hit AS (
                        SELECT build FROM cluster_members WHERE profile = ?1 AND stable_id = ?2
                        UNION SELECT build FROM cluster_failure_ids WHERE profile = ?1 AND stable_id = ?2
                     )
                     SELECT b.job, b.bucket, b.path, b.build_id, b.started, b.result, b.complete, b.failed_tests,
                        b.repo_commit, b.repos, CASE WHEN b.id IN (SELECT build FROM hit) THEN 1 ELSE 0 END
                     FROM builds b
                     WHERE b.job IN (SELECT DISTINCT j.job FROM builds j WHERE j.id IN (SELECT build FROM hit))
                        AND b.started IS NOT NULL AND b.started >= ?3
                     ORDER BY b.started, b.job, b.path",
                    vals![profile, stable_id, since],
                    |r| {
                        Ok(PatternRun {
                            job: r.string(0)?,
                            bucket: r.string(1)?,
                            path: r.string(2)?,
                            build_id: r.string(3)?,
                            started: r.i64(4)?,
                            result: r.opt_string(5)?,
                            complete: r.bool(6)?,
                            failed_tests: r.i64(7)?,
                            repo_commit: r.opt_string(8)?,
                            repos: r.opt_string(9)?,
                            hit: r.bool(10)?,
                        })
                    },
                )
            })
            .map_err(|e| self.err(e))
    }

    /// Appends transitions to a record if its version is still `expected_version`:
    /// the first must start from the stored state and each from where the previous
    /// ended; the record takes the last one's state and time. Their evidence goes into
    /// the ledger (read at `recorded_at`) in the same transaction.
    pub fn apply_record_transitions(
        &mut self,
        subject: &str,
        expected_version: i64,
        transitions: &[NewTransition],
        recorded_at: i64,
    ) -> Result<RecordWrite, StoreError> {
        let read_at = citriage_model::time::rfc3339(recorded_at);
        self.conn
            .write(&mut |tx| {
                let Some(current) = read_record(tx, subject)? else {
                    return Ok(RecordWrite::Missing);
                };
                // A writer that read an older version decided from stale facts.
                if current.version != expected_version {
                    return Ok(RecordWrite::Conflict { found: current });
                }
                let Some(last) = transitions.last() else {
                    return Ok(RecordWrite::Applied { version: current.version, seqs: Vec::new() });
                };
                let mut from = current.state.as_str();
                for t in transitions {
                    check_state(&t.to)?;
                    if t.from != from {
                        return Err(DbError::Msg(format!(
                            "record {subject}: a transition from {:?} follows state {from:?}",
                            t.from
                        )));
                    }
                    from = &t.to;
                }
                let n = tx.exec(
                    "UPDATE records SET state = ?3, since = ?4, version = version + 1
                     WHERE subject = ?1 AND version = ?2",
                    vals![subject, expected_version, last.to.as_str(), last.at],
                )?;
                if n == 0 {
                    let found = read_record(tx, subject)?.unwrap_or(current);
                    return Ok(RecordWrite::Conflict { found });
                }
                let mut seq =
                    tx.int("SELECT coalesce(max(seq), 0) FROM record_transitions WHERE subject = ?1", vals![subject])?;
                let mut seqs = Vec::with_capacity(transitions.len());
                for t in transitions {
                    seq += 1;
                    let mut ids: Vec<&str> = t.evidence.iter().map(|e| e.id.as_str()).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    let ids = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
                    tx.exec(
                        "INSERT INTO record_transitions (subject, seq, from_state, to_state, at, recorded_at, evidence, reason)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        vals![subject, seq, t.from.as_str(), t.to.as_str(), t.at, recorded_at, ids.as_str(), t.reason.as_str()],
                    )?;
                    crate::ledger::insert_evidence(tx, &t.evidence, &read_at)?;
                    seqs.push(seq);
                }
                Ok(RecordWrite::Applied { version: expected_version + 1, seqs })
            })
            .map_err(|e| self.err(e))
    }

    /// Links a reference to a record (unless it is linked already), whatever the
    /// record's version: a link is a fact, not a decision; the version moves so that a
    /// writer deciding from the links it read before must decide again.
    pub fn link_record(&mut self, subject: &str, link: &NewLink) -> Result<LinkWrite, StoreError> {
        self.conn
            .write(&mut |tx| {
                let Some(version) = bump(tx, subject)? else {
                    return Ok(LinkWrite::Missing);
                };
                let active = tx.int(
                    "SELECT count(*) FROM record_links WHERE subject = ?1 AND reference = ?2 AND unlinked_at IS NULL",
                    vals![subject, link.reference.as_str()],
                )?;
                if active > 0 {
                    // Nothing changed: undo the bump.
                    tx.exec("UPDATE records SET version = version - 1 WHERE subject = ?1", vals![subject])?;
                    return Ok(LinkWrite::Unchanged { version: version - 1 });
                }
                let n = tx.int(
                    "SELECT count(*) FROM record_links WHERE subject = ?1 AND reference = ?2",
                    vals![subject, link.reference.as_str()],
                )?;
                let f = &link.facts;
                tx.exec(
                    "INSERT INTO record_links (subject, reference, n, source, linked_by, linked_at, ref_kind, ref_state,
                        merged_at, merge_commit, base_branch, read_at, note)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    vals![
                        subject,
                        link.reference.as_str(),
                        n,
                        link.source.as_str(),
                        link.linked_by.as_str(),
                        link.linked_at,
                        f.ref_kind.as_str(),
                        f.ref_state.as_str(),
                        f.merged_at,
                        &f.merge_commit,
                        &f.base_branch,
                        f.read_at,
                        link.note.as_str()
                    ],
                )?;
                Ok(LinkWrite::Done { version })
            })
            .map_err(|e| self.err(e))
    }

    /// Unlinks a reference (its active link gets `unlinked_at` and `unlinked_by`; the
    /// row stays).
    pub fn unlink_record(
        &mut self,
        subject: &str,
        reference: &str,
        by: &str,
        at: i64,
    ) -> Result<LinkWrite, StoreError> {
        self.conn
            .write(&mut |tx| {
                let Some(version) = bump(tx, subject)? else {
                    return Ok(LinkWrite::Missing);
                };
                let n = tx.exec(
                    "UPDATE record_links SET unlinked_at = ?3, unlinked_by = ?4
                     WHERE subject = ?1 AND reference = ?2 AND unlinked_at IS NULL",
                    vals![subject, reference, at, by],
                )?;
                if n == 0 {
                    tx.exec("UPDATE records SET version = version - 1 WHERE subject = ?1", vals![subject])?;
                    return Ok(LinkWrite::Unchanged { version: version - 1 });
                }
                Ok(LinkWrite::Done { version })
            })
            .map_err(|e| self.err(e))
    }

    /// Stores what GitHub said about a linked reference (on its active link). The
    /// version moves only when the facts changed.
    pub fn set_link_facts(
        &mut self,
        subject: &str,
        reference: &str,
        facts: &RefFacts,
    ) -> Result<LinkWrite, StoreError> {
        self.conn
            .write(&mut |tx| {
                let Some(current) = read_record(tx, subject)? else {
                    return Ok(LinkWrite::Missing);
                };
                let n = tx.exec(
                    "UPDATE record_links SET ref_kind = ?3, ref_state = ?4, merged_at = ?5, merge_commit = ?6,
                        base_branch = ?7, read_at = ?8
                     WHERE subject = ?1 AND reference = ?2 AND unlinked_at IS NULL
                        AND (ref_kind <> ?3 OR ref_state <> ?4 OR merged_at IS DISTINCT FROM ?5
                            OR merge_commit IS DISTINCT FROM ?6 OR base_branch IS DISTINCT FROM ?7)",
                    vals![
                        subject,
                        reference,
                        facts.ref_kind.as_str(),
                        facts.ref_state.as_str(),
                        facts.merged_at,
                        &facts.merge_commit,
                        &facts.base_branch,
                        facts.read_at
                    ],
                )?;
                if n == 0 {
                    return Ok(LinkWrite::Unchanged { version: current.version });
                }
                let version = bump(tx, subject)?.unwrap_or(current.version);
                Ok(LinkWrite::Done { version })
            })
            .map_err(|e| self.err(e))
    }
}
