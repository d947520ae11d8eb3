//! `bench scale`: how the cost of each command grows with the window. The preset's
//! world is generated at several sizes (its number of jobs times each factor), then
//! each command runs as users run it, as a child process of this one, on a fresh
//! store: `fetch` from the world's mirror, `import` of its latest dashboards,
//! `metrics`, `cluster` and `triage`. Each child's wall time, CPU time (user +
//! system) and peak resident memory (the kernel's accounting of that child, as
//! `wait4` returns it) are printed side by side per size, with the growth factor
//! from one size to the next.
//!
//! The world is generated and fetched a day slice at a time (`synth --day-slice`, the
//! slice fetched into the store, its folder removed), so the disk holds the store and
//! one slice, never the whole mirror; the last slice is the world's last day alone,
//! and the day-by-day figure is what a user pays each morning: that day's `fetch`,
//! then `metrics`, `cluster` and `triage` over the store holding every day. With
//! `last_days`, only the world's last days are generated and fetched (the analyses'
//! 14-day window and the days before it that are asked for), which is what makes the
//! larger sizes affordable to measure: generating and fetching are most of the run.

use crate::{json_line, put, Lines};
use citriage_app::{Error, Progress, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// What `bench scale` is asked to do.
#[derive(Debug, Clone)]
pub struct ScaleBench {
    /// Synthetic world preset (tiny, demo, k8s).
    pub preset: String,
    /// Size factors: the preset's number of jobs times each.
    pub sizes: Vec<f64>,
    /// Where the worlds, stores and outputs go (kept); else a temporary folder,
    /// removed after.
    pub dir: Option<PathBuf>,
    /// The program each step runs (`citriage`).
    pub program: PathBuf,
    /// Days per slice the world is generated and fetched in (the last day always a
    /// slice of its own); 0: the whole world at once (a program without
    /// `synth --day-slice`), no day-by-day figure.
    pub slice_days: u32,
    /// Keep every size's store; else only the last size's (each other one removed once
    /// measured: a 4× k8s store takes about 7 GB).
    pub keep_stores: bool,
    /// Only the world's last this many days generated and fetched (every build of the
    /// world still planned, so those days are the whole world's); 0: every day. The
    /// analyses read a 14-day window, so 15 days or more give them the same window
    /// as the whole world at a fraction of the generating and fetching.
    pub last_days: u32,
}

/// The day-by-day figure's target: one new day fetched, measured, clustered and
/// triaged in under this many seconds.
pub const DAY_TARGET_SECONDS: f64 = 60.0;

/// One child process's cost.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cost {
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    pub peak_rss_mib: f64,
}

/// `fetch` of a world's (or slice's) mirror, after `--db STORE`.
fn fetch_args(world: &Path) -> Vec<String> {
    vec!["fetch".into(), "--mirror".into(), world.join("gcs/kubernetes-ci-logs").display().to_string(), "--all".into()]
}

/// The commands measured at each size once every build is fetched, in order: (name,
/// arguments after `--db STORE`).
fn steps(world: &Path, out: &Path) -> Vec<(&'static str, Vec<String>)> {
    let s = |p: PathBuf| p.display().to_string();
    let metrics = world.join("k8s-metrics");
    vec![
        (
            "import",
            vec!["import".into(), s(metrics.join("failures-latest.json")), s(metrics.join("flakes-latest.json"))],
        ),
        ("metrics", vec!["metrics".into(), "--format".into(), "json".into()]),
        ("cluster", vec!["cluster".into(), "--out".into(), s(out.join("clusters"))]),
        ("triage", vec!["triage".into(), "--offline".into(), "--out".into(), s(out.join("triage"))]),
    ]
}

/// Runs `program args`, its stdout to `stdout_to` and its stderr kept for an error;
/// returns its wall time, CPU time and peak RSS as the kernel accounted them.
pub fn measure(program: &Path, args: &[String], stdout_to: &Path) -> Result<Cost> {
    measure_with(program, args, stdout_to, &RunLimits::default()).map(|(cost, _)| cost)
}

/// This process's own peak resident memory so far in MiB (`VmHWM`), where the system
/// reports it. A child starts as a copy of its parent and the kernel counts that copy in
/// the child's peak, so no child measured here reads below it.
pub fn own_peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib / 1024.0)
}

/// Where a measured child runs and how long it may take.
#[derive(Debug, Clone, Default)]
pub struct RunLimits<'a> {
    /// Its working folder; none: this process's.
    pub cwd: Option<&'a Path>,
    /// Stopped (SIGKILL) once it has run this long; none: waited for to the end.
    pub limit: Option<std::time::Duration>,
}

/// [`measure`] in a working folder and with a time limit: returns the cost and
/// whether the child was stopped at the limit (its figures then cover the time it
/// ran; a stopped child is not a failure).
pub fn measure_with(program: &Path, args: &[String], stdout_to: &Path, how: &RunLimits) -> Result<(Cost, bool)> {
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| Error::failed(format!("{}: {e}", p.display())));
    let err_path = stdout_to.with_extension("stderr");
    let t = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(file(stdout_to)?).stderr(file(&err_path)?);
    if let Some(dir) = how.cwd {
        cmd.current_dir(dir);
    }
    let child = cmd.spawn().map_err(|e| Error::failed(format!("{}: cannot run: {e}", program.display())))?;
    let (end, usage) = wait_with_usage(child.id(), how.limit)?;
    let wall = t.elapsed().as_secs_f64();
    if end == End::Failed {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(Error::failed(format!(
            "{} {} failed: {}",
            program.display(),
            args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        )));
    }
    Ok((Cost { wall_seconds: wall, cpu_seconds: usage.0, peak_rss_mib: usage.1 }, end == End::Stopped))
}

/// How a measured child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Succeeded,
    Failed,
    /// Killed by us at its time limit.
    Stopped,
}

/// How often a child with a time limit is checked on.
const POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Waits for the child `pid` (stopping it with SIGKILL once `limit` has passed);
/// returns how it ended, and its CPU seconds (user + system) and peak RSS in MiB.
fn wait_with_usage(pid: u32, limit: Option<std::time::Duration>) -> Result<(End, (f64, f64))> {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data the kernel fills; an all-zero value is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let started = Instant::now();
    let mut stopped = false;
    loop {
        let flags = if limit.is_some() && !stopped { libc::WNOHANG } else { 0 };
        // SAFETY: waits for our own child with valid pointers to `status` and `ru`; the
        // `Child` handle is not waited on afterwards (dropping it neither waits nor kills).
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, flags, &mut ru) };
        if r < 0 {
            return Err(Error::failed(format!("waiting for process {pid}: {}", std::io::Error::last_os_error())));
        }
        if r > 0 {
            break;
        }
        if limit.is_some_and(|l| started.elapsed() >= l) {
            // SAFETY: signals our own child, not yet reaped (wait4 returned 0 above).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            stopped = true;
        } else {
            std::thread::sleep(POLL);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let end = if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        End::Succeeded
    } else if stopped {
        End::Stopped
    } else {
        End::Failed
    };
    // ru_maxrss is in KiB on Linux.
    Ok((end, (secs(ru.ru_utime) + secs(ru.ru_stime), ru.ru_maxrss as f64 / 1024.0)))
}

/// One size's world and its commands' costs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SizeRun {
    pub size: f64,
    pub jobs: usize,
    /// The first day generated and fetched (1: every day), of `days`.
    pub first_day: u32,
    pub days: u32,
    pub builds: u64,
    pub test_results: u64,
    pub store_bytes: u64,
    /// Generating the world (`synth`, every slice: wall and CPU summed, the largest
    /// peak), not a triage command.
    pub generate: Cost,
    /// Day slices the world was generated and fetched in (1: the whole world at once).
    pub slices: usize,
    /// The largest slice's bytes on disk (the whole mirror when not sliced).
    pub largest_slice_bytes: u64,
    /// (command, cost), in order: `fetch` (every slice summed), `fetch, last day` when
    /// sliced, then [`steps`].
    pub commands: Vec<(String, Cost)>,
    /// The day-by-day figure, when sliced.
    pub day: Option<DayRun>,
}

/// One new day: its `fetch`, then `metrics`, `cluster` and `triage` over the store
/// holding every day.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DayRun {
    /// The day (the world's last), counted from 1.
    pub day: u32,
    /// Build folders of that day.
    pub builds: u64,
    /// The four commands: wall and CPU summed, the largest peak.
    pub cost: Cost,
    pub target_seconds: f64,
}

impl Cost {
    /// Two commands one after the other: times summed, the larger peak.
    fn then(self, o: Cost) -> Cost {
        Cost {
            wall_seconds: self.wall_seconds + o.wall_seconds,
            cpu_seconds: self.cpu_seconds + o.cpu_seconds,
            peak_rss_mib: self.peak_rss_mib.max(o.peak_rss_mib),
        }
    }

    const ZERO: Cost = Cost { wall_seconds: 0.0, cpu_seconds: 0.0, peak_rss_mib: 0.0 };
}

/// The first day generated and fetched of a world of `days` days when only its last
/// `last` are (0: every day).
fn first_day(days: u32, last: u32) -> u32 {
    if last == 0 { 1 } else { days.saturating_sub(last) + 1 }.max(1)
}

/// The day slices of a world of `days` days from day `from`, `per` days each, the last
/// day alone (`None`: the whole world at once).
fn day_slices(days: u32, from: u32, per: u32) -> Vec<Option<String>> {
    if per == 0 || days < 2 {
        return vec![None];
    }
    let mut out = Vec::new();
    let mut first = from.max(1);
    while first < days {
        let last = (first + per - 1).min(days - 1);
        out.push(Some(if first == last { first.to_string() } else { format!("{first}..{last}") }));
        first = last + 1;
    }
    out.push(Some(days.to_string()));
    out
}

/// Runs the benchmark; returns the lines to print (the JSON document when `json_out`).
pub fn run(b: &ScaleBench, json_out: bool, progress: &dyn Progress) -> Result<Lines> {
    let Some(params) = citriage_synth::SynthParams::preset(&b.preset) else {
        return Err(Error::input(format!("unknown preset {:?} (tiny, demo, k8s)", b.preset)));
    };
    if b.sizes.is_empty() || b.sizes.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(Error::input("--sizes: expected positive factors, e.g. 1,2,4"));
    }
    let tmp = std::env::temp_dir().join(format!("citriage-bench-scale-{}", std::process::id()));
    let root = b.dir.clone().unwrap_or_else(|| tmp.clone());
    if b.last_days > 0 && b.slice_days == 0 {
        return Err(Error::input("--last-days needs day slices (--slice-days 1 or more)"));
    }
    let mut runs = Vec::new();
    for (i, &size) in b.sizes.iter().enumerate() {
        let jobs = ((params.jobs as f64 * size).round() as usize).max(1);
        progress.note(&format!("size {size}×: {jobs} jobs"));
        let dir = root.join(format!("size-{size}"));
        let r = one_size(b, &dir, size, jobs, params.days, progress)?;
        // Each size's figures as soon as they are measured (a long run cut short keeps them).
        let path = dir.join("costs.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&r).unwrap_or_default())
            .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
        runs.push(r);
        if !b.keep_stores && i + 1 < b.sizes.len() {
            for end in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(dir.join(format!("store.db{end}")));
            }
        }
    }
    if b.dir.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(if json_out { vec![json_line(&to_json(b, &runs))] } else { table(b, &runs) })
}

/// What one `synth` run wrote: (build folders of the slice, bytes), from its JSON.
fn synth_written(stdout: &Path) -> (u64, u64) {
    let v: Value = std::fs::read(stdout).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
    let s = &v["summary"];
    let builds = s["slice_builds"].as_u64().or_else(|| s["gcs_builds"].as_u64()).unwrap_or(0);
    (builds, s["bytes"].as_u64().unwrap_or(0))
}

fn one_size(b: &ScaleBench, dir: &Path, size: f64, jobs: usize, days: u32, progress: &dyn Progress) -> Result<SizeRun> {
    let _ = std::fs::remove_dir_all(dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).map_err(|e| Error::failed(format!("{}: {e}", out.display())))?;
    let world = dir.join("world");
    let db = dir.join("store.db");
    let db_args = |rest: Vec<String>| {
        let mut a = vec!["--db".to_string(), db.display().to_string(), "--quiet".to_string()];
        a.extend(rest);
        a
    };
    let from = first_day(days, b.last_days);
    let slices = day_slices(days, from, b.slice_days);
    let (mut generate, mut fetch, mut last_fetch) = (Cost::ZERO, Cost::ZERO, Cost::ZERO);
    let (mut largest, mut last_builds) = (0u64, 0u64);
    for (i, slice) in slices.iter().enumerate() {
        let label = slice.as_deref().map_or(String::new(), |s| format!(" days {s} of {days}"));
        progress.doing(&format!("{size}×: generating the {} world{label} ({jobs} jobs)", b.preset));
        let _ = std::fs::remove_dir_all(&world);
        let mut gen_args = db_args(vec![
            "synth".into(),
            "--preset".into(),
            b.preset.clone(),
            "--jobs".into(),
            jobs.to_string(),
            "--out".into(),
            world.display().to_string(),
            "--format".into(),
            "json".into(),
        ]);
        if let Some(s) = slice {
            gen_args.extend(["--day-slice".to_string(), s.clone()]);
        }
        generate = generate.then(measure(&b.program, &gen_args, &out.join(format!("synth-{i}.out")))?);
        let (builds, bytes) = synth_written(&out.join(format!("synth-{i}.out")));
        largest = largest.max(bytes);
        progress.doing(&format!("{size}×: fetch{label}"));
        let cost = measure(&b.program, &db_args(fetch_args(&world)), &out.join(format!("fetch-{i}.out")))?;
        fetch = fetch.then(cost);
        if i + 1 == slices.len() {
            // The last slice holds the world's dashboards, imported below.
            (last_fetch, last_builds) = (cost, builds);
        } else {
            let _ = std::fs::remove_dir_all(&world);
        }
    }
    let sliced = slices.len() > 1;
    let mut commands = vec![("fetch".to_string(), fetch)];
    if sliced {
        commands.push(("fetch, last day".to_string(), last_fetch));
    }
    let mut day_cost = last_fetch;
    for (name, args) in steps(&world, &out) {
        progress.doing(&format!("{size}×: {name}"));
        let cost = measure(&b.program, &db_args(args), &out.join(format!("{name}.out")))?;
        if name != "import" {
            day_cost = day_cost.then(cost);
        }
        commands.push((name.to_string(), cost));
    }
    // The world's last slice (or whole mirror) is the largest part on disk: only the
    // figures are kept.
    let _ = std::fs::remove_dir_all(&world);
    let store = citriage_store::Store::open(&db)?;
    let (builds, test_results, _) = store.build_counts()?;
    drop(store);
    let size_of = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let store_bytes = size_of(db.clone()) + size_of(PathBuf::from(format!("{}-wal", db.display())));
    let day =
        sliced.then_some(DayRun { day: days, builds: last_builds, cost: day_cost, target_seconds: DAY_TARGET_SECONDS });
    Ok(SizeRun {
        size,
        jobs,
        first_day: from,
        days,
        builds,
        test_results,
        store_bytes,
        generate,
        slices: slices.len(),
        largest_slice_bytes: largest,
        commands,
        day,
    })
}

/// The ratio of one figure between consecutive sizes, against the ratio of sizes
/// (1.0 = grows exactly linearly).
fn growth(prev: f64, cur: f64) -> f64 {
    if prev > 0.0 {
        cur / prev
    } else {
        0.0
    }
}

fn to_json(b: &ScaleBench, runs: &[SizeRun]) -> Value {
    let growths: Vec<Value> = runs
        .windows(2)
        .map(|w| {
            let per: Vec<Value> = w[1]
                .commands
                .iter()
                .zip(&w[0].commands)
                .map(|((name, c), (_, p))| {
                    json!({"command": name, "wall": growth(p.wall_seconds, c.wall_seconds),
                        "cpu": growth(p.cpu_seconds, c.cpu_seconds), "peak_rss": growth(p.peak_rss_mib, c.peak_rss_mib)})
                })
                .collect();
            json!({"from": w[0].size, "to": w[1].size, "size_ratio": w[1].size / w[0].size, "commands": per})
        })
        .collect();
    json!({"preset": b.preset, "slice_days": b.slice_days, "last_days": b.last_days, "sizes": runs, "growth": growths})
}

fn table(b: &ScaleBench, runs: &[SizeRun]) -> Lines {
    let mut out = Lines::new();
    put!(out, "bench scale: preset {}, sizes {}", b.preset, sizes_label(runs));
    put!(out, "(each command a child process on the size's store; wall s / CPU s / peak RSS MiB)");
    put!(
        out,
        "(fetch: every day slice summed, the largest peak; new day: the last day's fetch, metrics, cluster and triage)"
    );
    put!(out);
    let mut head = format!("{:<16}", "");
    for r in runs {
        head.push_str(&format!(" | {:>26}", format!("{}× ({} jobs)", r.size, r.jobs)));
    }
    for w in runs.windows(2) {
        head.push_str(&format!(" | {:>17}", format!("growth {}→{}", w[0].size, w[1].size)));
    }
    put!(out, "{head}");
    let rows = |name: &str, costs: Vec<Cost>| {
        let mut l = format!("{name:<16}");
        for c in &costs {
            l.push_str(&format!(" | {:>8.1} {:>8.1} {:>8.0}", c.wall_seconds, c.cpu_seconds, c.peak_rss_mib));
        }
        for w in costs.windows(2) {
            l.push_str(&format!(
                " | {:>5.2} {:>5.2} {:>5.2}",
                growth(w[0].wall_seconds, w[1].wall_seconds),
                growth(w[0].cpu_seconds, w[1].cpu_seconds),
                growth(w[0].peak_rss_mib, w[1].peak_rss_mib)
            ));
        }
        l
    };
    put!(out, "{}", rows("(generate)", runs.iter().map(|r| r.generate).collect()));
    if let Some(first) = runs.first() {
        for (i, (name, _)) in first.commands.iter().enumerate() {
            put!(out, "{}", rows(name, runs.iter().map(|r| r.commands[i].1).collect()));
        }
    }
    let days: Vec<Cost> = runs.iter().filter_map(|r| r.day.as_ref().map(|d| d.cost)).collect();
    if days.len() == runs.len() && !days.is_empty() {
        put!(out, "{}", rows("new day", days));
    }
    put!(out);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    for r in runs {
        put!(
            out,
            "{}×: days {}..{} of {}: {} builds, {} test results, store {:.0} MiB; generated in {} slice(s), the largest {:.0} MiB on disk",
            r.size,
            r.first_day,
            r.days,
            r.days,
            r.builds,
            r.test_results,
            mib(r.store_bytes),
            r.slices,
            mib(r.largest_slice_bytes)
        );
        if let Some(d) = &r.day {
            put!(
                out,
                "{}×: new day (day {}, {} builds): fetch + metrics + cluster + triage {:.1} s wall, {:.1} CPU s, peak {:.0} MiB (target < {:.0} s: {})",
                r.size,
                d.day,
                d.builds,
                d.cost.wall_seconds,
                d.cost.cpu_seconds,
                d.cost.peak_rss_mib,
                d.target_seconds,
                if d.cost.wall_seconds < d.target_seconds { "met" } else { "not met" }
            );
        }
    }
    put!(out, "growth: each figure at a size over the same figure at the size before (the sizes' ratio is linear)");
    out
}

fn sizes_label(runs: &[SizeRun]) -> String {
    runs.iter().map(|r| format!("{}×", r.size)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_measured_and_a_failure_named() {
        let dir = std::env::temp_dir().join(format!("citriage-scale-measure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sh = PathBuf::from("/bin/sh");
        if !sh.exists() {
            eprintln!("skipped: no /bin/sh");
            return;
        }
        // A child that holds ~64 MiB resident: its peak is its own, not this process's.
        let args = vec!["-c".to_string(), "head -c 67108864 /dev/zero | tail -c 1 > /dev/null; echo done".to_string()];
        let c = measure(&sh, &args, &dir.join("ok.out")).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("ok.out")).unwrap(), "done\n");
        assert!(c.wall_seconds >= 0.0 && c.cpu_seconds >= 0.0 && c.peak_rss_mib > 0.0, "{c:?}");
        let bad = vec!["-c".to_string(), "echo broken >&2; exit 3".to_string()];
        let e = measure(&sh, &bad, &dir.join("bad.out")).unwrap_err().to_string();
        assert!(e.contains("broken"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_child_runs_in_its_folder_and_is_stopped_at_its_limit() {
        let dir = std::env::temp_dir().join(format!("citriage-scale-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sh = PathBuf::from("/bin/sh");
        if !sh.exists() {
            eprintln!("skipped: no /bin/sh");
            return;
        }
        let pwd = vec!["-c".to_string(), "pwd -P".to_string()];
        let how = RunLimits { cwd: Some(&dir), limit: None };
        let (_, stopped) = measure_with(&sh, &pwd, &dir.join("pwd.out"), &how).unwrap();
        let printed = std::fs::read_to_string(dir.join("pwd.out")).unwrap();
        assert_eq!(printed.trim(), dir.canonicalize().unwrap().display().to_string());
        assert!(!stopped);
        // A child that would run for a minute is stopped at its limit, not waited for.
        let long = vec!["-c".to_string(), "exec sleep 60".to_string()];
        let how = RunLimits { cwd: None, limit: Some(std::time::Duration::from_millis(300)) };
        let (c, stopped) = measure_with(&sh, &long, &dir.join("long.out"), &how).unwrap();
        assert!(stopped && c.wall_seconds < 30.0, "{c:?}");
        // One that ends within its limit is not called stopped.
        let quick = vec!["-c".to_string(), "exit 0".to_string()];
        let how = RunLimits { cwd: None, limit: Some(std::time::Duration::from_secs(30)) };
        assert!(!measure_with(&sh, &quick, &dir.join("quick.out"), &how).unwrap().1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn slices_cover_every_day_once_the_last_alone() {
        let s = |v: Vec<Option<String>>| v.into_iter().map(|x| x.unwrap_or_default()).collect::<Vec<_>>();
        assert_eq!(s(day_slices(90, 1, 10)).len(), 10);
        assert_eq!(s(day_slices(90, 1, 10))[0], "1..10");
        assert_eq!(s(day_slices(90, 1, 10))[8], "81..89");
        assert_eq!(s(day_slices(90, 1, 10))[9], "90");
        assert_eq!(s(day_slices(5, 1, 3)), vec!["1..3", "4", "5"]);
        assert_eq!(s(day_slices(2, 1, 1)), vec!["1", "2"]);
        assert_eq!(day_slices(90, 1, 0), vec![None]);
        // Only the last days: the window's 14 and one more.
        assert_eq!(first_day(90, 15), 76);
        assert_eq!(first_day(90, 0), 1);
        assert_eq!(first_day(10, 15), 1);
        assert_eq!(s(day_slices(90, first_day(90, 15), 20)), vec!["76..89", "90"]);
        assert_eq!(s(day_slices(90, first_day(90, 1), 20)), vec!["90"]);
    }

    #[test]
    fn this_process_knows_its_own_peak() {
        if !Path::new("/proc/self/status").exists() {
            eprintln!("skipped: no /proc/self/status");
            return;
        }
        let before = own_peak_mib().unwrap();
        // 64 MiB touched: the peak grows by about that much.
        let v = vec![1u8; 64 << 20];
        let after = own_peak_mib().unwrap();
        assert!(v.iter().map(|&b| b as u64).sum::<u64>() == 64 << 20);
        assert!(before > 0.0 && after >= before + 60.0, "{before} → {after}");
    }

    #[test]
    fn growth_is_the_ratio_to_the_size_before() {
        assert_eq!(growth(2.0, 4.0), 2.0);
        assert_eq!(growth(0.0, 4.0), 0.0);
    }
}
