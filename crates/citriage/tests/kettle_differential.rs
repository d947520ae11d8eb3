//! Differential check of kettle mode: the same raw builds, ingested from a synthetic
//! Prow mirror into SQLite, run through a faithful SQLite translation of the
//! dashboards' SQL (metrics configs `failures` and `flakes`) give exactly the numbers
//! citriage's kettle mode computes — for several as-of times.

use citriage_analysis::metrics::kettle;
use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// job, build consistency, commit consistency, flakes, runs, commits, top tests.
type FlakesTuple = (String, f64, f64, u64, u64, u64, BTreeMap<String, u64>);

/// Kettle's tables: GCS builds with a start time and a `finished.json` timestamp by
/// the as-of time, that kettle's row builder did not drop; kettle's own reading of
/// result, version, commit and repos (the store's `kettle` column). No job is excluded
/// (kettle's stream applies its `exclude_jobs` regexes as literal text).
const ALL_ROWS: &str = "
  SELECT b.id, CASE WHEN b.kind IN ('presubmit', 'batch') THEN 'pr:' || b.job ELSE b.job END AS job,
         b.started, json_extract(b.kettle, '$.result') AS result,
         json_extract(b.kettle, '$.repo_commit') AS repo_commit,
         ifnull(json_extract(b.kettle, '$.version'), 'unknown') AS version,
         json_extract(b.kettle, '$.repos') AS repo
  FROM builds b
  WHERE b.origin = 'gcs' AND b.started IS NOT NULL AND b.finished IS NOT NULL AND b.finished <= :as_of
    AND json_extract(b.kettle, '$.dropped') IS NULL";

const ROWS: &str = ALL_ROWS;

fn failures_sql() -> String {
    format!(
        "WITH all_rows AS ({ALL_ROWS}),
         jobs AS (SELECT job, count(1) AS weekly_builds FROM all_rows WHERE started > :as_of - 7 * 86400 GROUP BY job),
         runs AS (SELECT job, min(started) / 86400 AS first_run, max(started) / 86400 AS latest_run FROM all_rows GROUP BY job),
         passes AS (SELECT job, max(started) AS latest_pass FROM all_rows WHERE result = 'SUCCESS' GROUP BY job)
         SELECT jobs.job, passes.latest_pass, jobs.weekly_builds,
                :as_of / 86400 - CASE WHEN passes.latest_pass IS NULL THEN runs.first_run ELSE passes.latest_pass / 86400 END AS broken_days
         FROM jobs LEFT JOIN runs ON jobs.job = runs.job LEFT JOIN passes ON jobs.job = passes.job
         ORDER BY jobs.job"
    )
}

fn flakes_sql() -> String {
    format!(
        "WITH all_rows AS ({ROWS}),
         filtered AS (
           SELECT id, job, result,
                  CASE WHEN substr(job, 1, 3) = 'pr:' THEN regexp_extract(repo, '[^,]+,\\d+:([a-f0-9]+)\"')
                       ELSE ifnull(repo_commit, version) END AS [commit]
           FROM all_rows
           WHERE started > :as_of - 7 * 86400
             AND (version != 'unknown' OR repo_commit IS NOT NULL)
             AND (substr(job, 1, 3) = 'ci-' OR
                  length(replace(repo, ', ', '')) - length(replace(replace(repo, ', ', ''), ',', '')) + 1 = 2)),
         grp AS (SELECT job, [commit], sum(result = 'SUCCESS') AS passed, count(result) AS runs FROM filtered GROUP BY job, [commit]),
         flagged AS (SELECT *, CASE WHEN passed = runs OR passed = 0 THEN 0 ELSE 1 END AS flaked FROM grp),
         tests AS (SELECT f.job, f.[commit], s.text AS n, sum(t.status = 1) AS failures
                   FROM filtered f JOIN test_results t ON t.build = f.id JOIN strings s ON s.id = t.kettle_name
                   GROUP BY f.job, f.[commit], n),
         flaky AS (SELECT tests.job, tests.n FROM tests JOIN grp ON grp.job = tests.job AND grp.[commit] IS tests.[commit]
                   WHERE tests.failures > 0 AND tests.failures < grp.runs)
         SELECT job,
                round(1.0 * sum(CASE WHEN flaked = 1 THEN passed ELSE runs END) / sum(runs), 3),
                round(1 - 1.0 * sum(flaked) / count(DISTINCT [commit]), 3),
                sum(flaked), sum(runs), count(DISTINCT [commit]),
                (SELECT group_concat(n || '=' || c, '\u{1}') FROM (
                    SELECT n, count(*) AS c FROM flaky WHERE flaky.job = flagged.job
                      AND n NOT IN ('Test', 'DiffResources', 'DumpClusterLogs', 'DumpFederationLogs')
                    GROUP BY n ORDER BY c DESC, n LIMIT 10))
         FROM flagged GROUP BY job HAVING sum(runs) > 0 AND count(DISTINCT [commit]) > 0 ORDER BY job"
    )
}

fn connect(path: &std::path::Path) -> Connection {
    let c = Connection::open(path).unwrap();
    c.create_scalar_function(
        "regexp_extract",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            let pat: String = ctx.get(1)?;
            let re = regex::Regex::new(&pat).map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?;
            Ok(text.and_then(|t| re.captures(&t).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())))
        },
    )
    .unwrap();
    c
}

#[test]
fn kettle_mode_equals_the_sql_on_the_same_builds() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let params = citriage_synth::SynthParams::preset("tiny").unwrap();
    citriage_synth::generate(&params, &world, &mut |_| {}).unwrap();
    let db = dir.path().join("s.db");
    let mut store = Store::open(&db).unwrap();
    let src = LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).unwrap();
    assert!(jobs.len() >= 10, "{jobs:?}");
    let summary = ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    assert!(summary.builds_stored > 100);
    let builds = citriage_app::builds::load_builds(&mut store).unwrap();
    let conn = connect(&db);
    let end = builds.iter().filter_map(|b| b.started).max().unwrap();
    let mut compared_flakes = 0;
    let mut compared_failures = 0;
    for back in [0i64, 1, 2, 5, 9] {
        let as_of = end - back * 86_400 + 3_600;
        // failures
        let rust: Vec<(String, Option<i64>, u64, i64)> = kettle::failures_rows(&builds, as_of)
            .into_iter()
            .map(|r| (r.job, r.latest_pass, r.weekly_builds, r.broken_days))
            .collect();
        let mut stmt = conn.prepare(&failures_sql()).unwrap();
        let sql: Vec<(String, Option<i64>, u64, i64)> = stmt
            .query_map(rusqlite::named_params! {":as_of": as_of}, |r| {
                Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get(3)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rust, sql, "failures as of {as_of}");
        compared_failures += rust.len();
        // flakes
        let rust: Vec<FlakesTuple> = kettle::flakes_rows(&builds, as_of)
            .into_iter()
            .map(|r| {
                (
                    r.job,
                    r.build_consistency,
                    r.commit_consistency,
                    r.flakes,
                    r.runs,
                    r.commits,
                    r.flakiest.into_iter().collect(),
                )
            })
            .collect();
        let mut stmt = conn.prepare(&flakes_sql()).unwrap();
        let sql: Vec<FlakesTuple> = stmt
            .query_map(rusqlite::named_params! {":as_of": as_of}, |r| {
                let tests: Option<String> = r.get(6)?;
                let map = tests
                    .unwrap_or_default()
                    .split('\u{1}')
                    .filter(|s| !s.is_empty())
                    .map(|kv| {
                        let (k, v) = kv.rsplit_once('=').unwrap();
                        (k.to_string(), v.parse().unwrap())
                    })
                    .collect();
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, n(3)?, n(4)?, n(5)?, map))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rust, sql, "flakes as of {as_of}");
        compared_flakes += rust.len();
    }
    assert!(compared_failures > 20 && compared_flakes > 20, "{compared_failures} {compared_flakes}");
}

/// The synthetic world's dashboards (computed by the generator from its own model of
/// every build) equal what citriage's kettle mode computes from the ingested mirror,
/// for every dated snapshot: two independent implementations of the same SQL.
#[test]
fn kettle_mode_reproduces_the_worlds_dashboards() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let params = citriage_synth::SynthParams::preset("tiny").unwrap();
    citriage_synth::generate(&params, &world, &mut |_| {}).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let src = LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).unwrap();
    ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    let builds = citriage_app::builds::load_builds(&mut store).unwrap();
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(world.join("truth.json")).unwrap()).unwrap();
    let dashboards = truth["dashboards"].as_array().unwrap();
    assert!(dashboards.len() >= 2);
    let mut jobs_compared = 0;
    for d in dashboards {
        let at = citriage_model::time::parse_rfc3339(d["snapshot_time"].as_str().unwrap()).unwrap();
        let read = |k: &str| -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(world.join(d[k].as_str().unwrap())).unwrap()).unwrap()
        };
        let ours_f: serde_json::Value =
            serde_json::from_str(&kettle::failures_json(&kettle::failures_rows(&builds, at))).unwrap();
        let ours_k: serde_json::Value =
            serde_json::from_str(&kettle::flakes_json(&kettle::flakes_rows(&builds, at))).unwrap();
        assert_eq!(ours_f, read("failures"), "failures dashboard of {}", d["date"]);
        assert_eq!(ours_k, read("flakes"), "flakes dashboard of {}", d["date"]);
        jobs_compared += ours_f.as_object().unwrap().len() + ours_k.as_object().unwrap().len();
    }
    assert!(jobs_compared > 30, "{jobs_compared}");
}
