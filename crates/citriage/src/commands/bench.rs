//! `citriage bench`: benchmarks that print timings and peak memory (the benchmarks
//! themselves are the `citriage-bench` crate's).

use crate::context::{Context, Failure};
use crate::outln;
use citriage_bench::serve::LoadSpec;
use citriage_bench::store::StoreBench;
use citriage_bench::Lines;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Benchmarks that print timings and peak memory.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Import and triage a generated snapshot of N jobs (both datasets).
    Triage {
        /// Jobs in each generated snapshot.
        #[arg(long, default_value_t = 100_000)]
        jobs: usize,
        /// Repetitions; the median is printed.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Generate a synthetic world, ingest it from the local mirror into a fresh
    /// store, and compute metrics: builds per minute, metrics time, peak RSS.
    Ingest {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// Builds fetched at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Keep the generated world here instead of a temporary folder.
        /// Default: none.
        #[arg(long)]
        world: Option<PathBuf>,
    },
    /// Flaky-test flags against a synthetic world's truth: for each preset and seed,
    /// generate a world, ingest it, compute `citriage metrics`' figures and print the
    /// precision of the flagged tests and the recall of the planted flaky tests that
    /// failed at least 3 times in the 7-day window.
    Flakes {
        /// Presets (tiny, demo, k8s). Repeatable.
        #[arg(long = "preset", default_values_t = ["demo".to_string()])]
        presets: Vec<String>,
        /// World seeds. Repeatable.
        #[arg(long = "seed", default_values_t = [1u64, 2, 3])]
        seeds: Vec<u64>,
        /// Number of jobs of each world (default: the preset's).
        #[arg(long)]
        jobs: Option<usize>,
        /// Also list every false flag (with the signals that fired) and every missed test.
        #[arg(long)]
        verbose: bool,
    },
    /// Suspects against the planted regressions of synthetic worlds (`synth
    /// --suspect-stories`): for each seed and each of the demo and k8s presets' shapes
    /// (at a small size), generate a world with its git histories, ingest and cluster it,
    /// run `suspects` on every story's pattern with checkouts of both histories, and
    /// print culprit inside the window, culprit@1, culprit in the top 3, false "likely
    /// introducing change" on flaky, infrastructure and no-culprit patterns, and exposing
    /// changes found, held-in and held-out seeds apart. Needs git.
    Suspects {
        /// Held-in seeds (looked at while the engine was built). Repeatable.
        #[arg(long = "held-in", default_values_t = citriage_bench::suspects::HELD_IN.to_vec())]
        held_in: Vec<u64>,
        /// Held-out seeds (never looked at before a reported run). Repeatable.
        #[arg(long = "held-out", default_values_t = citriage_bench::suspects::HELD_OUT.to_vec())]
        held_out: Vec<u64>,
        /// Generated jobs of each world besides the planted ones.
        #[arg(long, default_value_t = 12)]
        jobs: usize,
    },
    /// Template mining on labelled logs (Loghub-2k layout: DIR/<S>/<S>_2k.log_structured.csv):
    /// leave-one-system-out grouping accuracy per system (each setting chosen on the other
    /// systems) and single-threaded lines per second of the default configuration.
    Mining {
        /// The folder of systems.
        #[arg(long, value_name = "DIR")]
        data: PathBuf,
        /// Also write DIR/<S>.pred (the default configuration's template per input line).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Throughput input: every system's lines repeated this many times.
        #[arg(long, default_value_t = 30)]
        repeat: usize,
    },
    /// Failure-line extraction on CiDiff-format cases (folders with fail.log, pass.log and
    /// groundtruth, searched recursively): k-fold cross-validation of the settings by
    /// project, held-in and held-out macro F1 per fold with and without the passing log,
    /// and the macro F1 of what `citriage extract` returns.
    Extract {
        /// The folder of cases.
        #[arg(long, value_name = "DIR")]
        cases: PathBuf,
        /// Also write DIR/with-pass/<case>.txt and DIR/fail-only/<case>.txt (the lines
        /// `citriage extract` returns) for an independent scorer; <case> is the case's path
        /// from the parent of --cases with `/` as `__` (e.g. `breakages__guava_1947`).
        /// Default: write nothing.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Number of folds.
        #[arg(long, default_value_t = 6)]
        folds: usize,
    },
    /// Generate a synthetic world and ingest it from its local mirror into a fresh
    /// SQLite file and a fresh PostgreSQL database (a throwaway cluster started here,
    /// unless --postgres names one), one process each; then cluster each store and
    /// load-test the dashboard over it. Prints side by side: builds per minute, peak
    /// RSS, store size, clustering and view times, and the p50/p99 of the dashboard's
    /// main pages.
    Store {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// Builds fetched at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Keep the generated world here (reused when it is already there) instead
        /// of a temporary folder.
        /// Default: none.
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
        /// An empty PostgreSQL database to ingest into. Default: a throwaway cluster
        /// started for the benchmark (the server programs must be installed).
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// Do not cluster the stores (the dashboard then has no cluster pages).
        #[arg(long)]
        no_cluster: bool,
        /// Concurrent dashboard clients.
        #[arg(long, default_value_t = 10)]
        clients: usize,
        /// Dashboard requests in all, at most.
        #[arg(long, default_value_t = 5_000)]
        requests: usize,
        /// Seconds of dashboard load, at most.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Cluster pages and job pages requested (each, at most).
        #[arg(long, default_value_t = 100)]
        pages: usize,
        /// Run one engine's process on this store and print its figures as JSON
        /// (what each benchmark process runs).
        /// Default: both engines.
        #[arg(long, value_name = "FILE|URL", hide = true)]
        one: Option<String>,
    },
    /// Alert noise on a synthetic world grown over --days days: the world generated and
    /// ingested, then replayed turn by turn (--turns-per-day), each turn re-clustering as
    /// of its instant and running the alert rules; prints alerts raised and withdrawn
    /// per day, those withdrawn within a day, duplicates and alerts about the planted
    /// flaky tests.
    Alerts {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// World seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Jobs of the world. Default: the preset's.
        #[arg(long)]
        jobs: Option<usize>,
        /// Days the world grows over.
        #[arg(long, default_value_t = 30)]
        days: u32,
        /// Alert turns per day (as `watch` would run them).
        #[arg(long, default_value_t = 4)]
        turns_per_day: u32,
        /// Keep the world and its store here. Default: a temporary folder.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
    /// "Did my PR break this?" against the planted pull requests of synthetic worlds:
    /// per class precision and recall of `citriage pr` over their failures, held-in and
    /// held-out seeds apart, and the PRs called safe to /retest that broke a test
    /// (must be 0).
    Pr {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "tiny")]
        preset: String,
        /// Keep the worlds and their stores here. Default: a temporary folder.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
    /// How each command's cost grows with the window: the preset's world generated at
    /// each size (its jobs times the factor) a day slice at a time, each slice fetched
    /// into a fresh store and removed, then `import`, `metrics`, `cluster` and `triage`
    /// run as child processes; prints each one's wall time, CPU time and peak RSS side
    /// by side, with the growth between sizes, and the new day's figure (its fetch,
    /// `metrics`, `cluster` and `triage`).
    Scale {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "k8s")]
        preset: String,
        /// Size factors (the preset's jobs times each), comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1.0, 2.0, 4.0])]
        sizes: Vec<f64>,
        /// Keep the stores and outputs here (the worlds are removed once measured).
        /// Default: a temporary folder, removed after.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The citriage program measured (e.g. an earlier build, to compare).
        /// Default: this one.
        #[arg(long, value_name = "BIN")]
        program: Option<PathBuf>,
        /// Days per slice: the world is generated (`synth --day-slice`), fetched and
        /// removed a slice at a time, so the disk holds the store and one slice; the
        /// last day is a slice of its own, and the day-by-day figure is its fetch plus
        /// `metrics`, `cluster` and `triage` (target: under 60 s). 0: the whole world
        /// at once, no day-by-day figure (for a program without `synth --day-slice`).
        #[arg(long, value_name = "DAYS", default_value_t = 10)]
        slice_days: u32,
        /// Keep every size's store in --dir; else only the last size's (the others
        /// removed once measured: the k8s preset's store is about 1.8 GB at 1×).
        #[arg(long)]
        keep_stores: bool,
        /// Generate and fetch only the world's last DAYS days (the builds of those days
        /// are the whole world's; every command reads the store as usual). The analyses
        /// read a 14-day window: 15 or more measure them on the window they would read
        /// in the whole world, at a fraction of the generating and fetching. 0: every day.
        #[arg(long, value_name = "DAYS", default_value_t = 0)]
        last_days: u32,
    },
    /// `citriage cluster` end to end (store read, clustering, store write, exports) as a
    /// child process, on the clustering benchmark's generated failures written into a
    /// fresh store, once per profile and once more on the same store; with
    /// --reference, go.k8s.io/triage's Python `summarize.py` on the same failures beside.
    Cluster {
        /// Failures generated.
        #[arg(long, default_value_t = 200_000)]
        failures: usize,
        /// Generator seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Profiles run (default, k8s-triage). Repeatable. Default: both.
        #[arg(long = "profile")]
        profiles: Vec<String>,
        /// A kubernetes/test-infra checkout holding 8bd0b7a55c^'s triage/summarize.py and
        /// triage/berghelroach.py. Default: citriage alone.
        #[arg(long, value_name = "CHECKOUT")]
        reference: Option<PathBuf>,
        /// Stop the reference after this many seconds if it has not finished (its
        /// figures and the speedups are then printed as lower bounds). Default: wait.
        #[arg(long, value_name = "SECONDS")]
        reference_limit: Option<u64>,
        /// An empty store to write the failures into (a PostgreSQL URL for that engine).
        /// Default: a SQLite file in the benchmark's folder.
        #[arg(long, value_name = "FILE|URL")]
        store: Option<String>,
        /// Keep the input, store and outputs here. Default: a temporary folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The citriage program measured (e.g. an earlier build, to compare).
        /// Default: this one.
        #[arg(long, value_name = "BIN")]
        program: Option<PathBuf>,
    },
    /// Every MCP tool's default answer size on the store (--db), served by this
    /// program's `mcp` on stdio: what one call costs an agent's context (budget 16 KiB).
    /// The calls follow an agent's first steps; for payloads the largest answer over
    /// every analysed payload is shown.
    Mcp,
    /// Load-test the dashboard on loopback: serve the store (--db) in-process and let
    /// concurrent clients request cluster lists, cluster pages and job pages; prints
    /// latency percentiles, errors and throughput.
    Serve {
        /// Concurrent clients (keep-alive connections).
        #[arg(long, default_value_t = 100)]
        clients: usize,
        /// Requests in all, at most.
        #[arg(long, default_value_t = 20_000)]
        requests: usize,
        /// Seconds in all, at most.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Cluster pages and job pages requested (each, at most).
        #[arg(long, default_value_t = 300)]
        pages: usize,
        /// Do not let the server render its pages ahead: measure every URL's first
        /// request rendering it.
        #[arg(long)]
        no_prewarm: bool,
    },
    /// The suspect engine on real history: in each repository, every revert whose
    /// message quotes the failure it fixes (a test name, a job, an error line, a quoted
    /// string) is a case; the engine gets only that text and the repository and ranks
    /// the --window first-parent commits before the revert; prints per repository the
    /// reverts, the cases, culprit@1, top-3 and the median place, held-in and held-out
    /// repositories apart, beside what chance would score.
    SuspectsHistory {
        /// A repository (a clone, bare or not) as PATH or NAME=PATH (the name defaults
        /// to the folder's name without `.git`). Repeatable.
        #[arg(long = "repo", value_name = "[NAME=]PATH", required = true)]
        repos: Vec<String>,
        /// First-parent commits before each revert that are ranked.
        #[arg(long, default_value_t = citriage_app::suspects_history::DEFAULT_WINDOW)]
        window: usize,
        /// Names of the repositories the settings were chosen on; the others are
        /// reported apart as held out. Repeatable.
        #[arg(long = "held-in", value_name = "NAME", default_values_t = citriage_app::suspects_history::DEFAULT_HELD_IN.iter().map(|s| s.to_string()))]
        held_in: Vec<String>,
        /// Also list every case: the revert, the culprit, its rank and links.
        #[arg(long)]
        cases: bool,
    },
}

/// The program given, else this one.
fn this_or(program: &Option<PathBuf>) -> Result<PathBuf, Failure> {
    match program {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe().map_err(|e| Failure::other(e.to_string())),
    }
}

fn print(lines: Lines) {
    for l in lines {
        outln!("{l}");
    }
}

/// Runs `citriage bench`.
pub fn exec(ctx: &Context, a: &BenchArgs) -> Result<(), Failure> {
    let json = ctx.json();
    match &a.what {
        BenchWhat::Mining { data, out, repeat } => {
            let pb = ctx.spinner("leave-one-system-out");
            let lines = citriage_bench::patterns::mining(data, out.as_deref(), *repeat, json, &pb)?;
            pb.clear();
            print(lines);
        }
        BenchWhat::Extract { cases, out, folds } => {
            let pb = ctx.spinner("reading cases");
            let lines = citriage_bench::patterns::extract(cases, out.as_deref(), *folds, json, &pb)?;
            pb.clear();
            print(lines);
        }
        BenchWhat::Suspects { held_in, held_out, jobs } => {
            print(citriage_bench::suspects::run(held_in, held_out, *jobs, json, &mut print)?)
        }
        BenchWhat::Triage { jobs, repeat } => print(citriage_bench::triage::triage(*jobs, *repeat, json)?),
        BenchWhat::Flakes { presets, seeds, jobs, verbose } => {
            print(citriage_bench::flakes::run(presets, seeds, *jobs, *verbose, json, &mut print)?)
        }
        BenchWhat::Alerts { preset, seed, jobs, days, turns_per_day, keep } => {
            let o = citriage_bench::alerts::NoiseOptions {
                preset: preset.clone(),
                seed: *seed,
                jobs: *jobs,
                days: (*days).max(1),
                turns_per_day: (*turns_per_day).max(1),
                keep: keep.clone(),
            };
            let pb = ctx.bar("{bar:30} {pos}/{len} turns {msg}", "{pos}/{len} turns {msg}");
            let r = citriage_bench::alerts::noise(&o, &pb)?;
            pb.clear();
            print(citriage_bench::alerts::lines(&r, json));
        }
        BenchWhat::Pr { preset, keep } => {
            let o =
                citriage_bench::pr::PrBenchOptions { preset: preset.clone(), keep: keep.clone(), ..Default::default() };
            let pb = ctx.spinner("generating");
            let r = citriage_bench::pr::run(&o, &pb)?;
            pb.clear();
            print(citriage_bench::pr::lines(&r, json));
        }
        BenchWhat::Ingest { preset, concurrency, world } => {
            print(citriage_bench::ingest::ingest(preset, *concurrency, world.as_deref(), json)?)
        }
        BenchWhat::Store {
            preset,
            concurrency,
            world,
            postgres,
            no_cluster,
            clients,
            requests,
            seconds,
            pages,
            one,
        } => {
            let b = StoreBench {
                preset: preset.clone(),
                concurrency: (*concurrency).max(1),
                world: world.clone(),
                postgres: postgres.clone(),
                cluster: !*no_cluster,
                load: LoadSpec {
                    clients: (*clients).max(1),
                    requests: *requests,
                    seconds: *seconds,
                    pages_per_kind: *pages,
                    prewarm: true,
                },
                program: std::env::current_exe().map_err(|e| Failure::other(e.to_string()))?,
            };
            match one {
                Some(store) => {
                    let w = world.as_deref().ok_or_else(|| Failure::input("--one needs --world"))?;
                    print(citriage_bench::store::one(w, store, &b)?)
                }
                None => {
                    let pb = ctx.spinner("benchmarking the stores");
                    let lines = citriage_bench::store::run(&b, json, &pb)?;
                    pb.clear();
                    print(lines);
                }
            }
        }
        BenchWhat::Scale { preset, sizes, dir, program, slice_days, keep_stores, last_days } => {
            let b = citriage_bench::scale::ScaleBench {
                preset: preset.clone(),
                sizes: sizes.clone(),
                dir: dir.clone(),
                program: this_or(program)?,
                slice_days: *slice_days,
                keep_stores: *keep_stores,
                last_days: *last_days,
            };
            let pb = ctx.spinner("measuring");
            let lines = citriage_bench::scale::run(&b, json, &pb)?;
            pb.clear();
            print(lines);
        }
        BenchWhat::Cluster { failures, seed, profiles, reference, reference_limit, store, dir, program } => {
            let b = citriage_bench::cluster::ClusterBench {
                failures: (*failures).max(1),
                seed: *seed,
                profiles: if profiles.is_empty() {
                    citriage_patterns::normalize::Profile::ALL.iter().map(|p| p.name().to_string()).collect()
                } else {
                    profiles.clone()
                },
                reference: reference.clone(),
                reference_limit: reference_limit.map(std::time::Duration::from_secs),
                store: store.clone(),
                dir: dir.clone(),
                program: this_or(program)?,
            };
            let pb = ctx.spinner("measuring");
            let lines = citriage_bench::cluster::run(&b, json, &pb)?;
            pb.clear();
            print(lines);
        }
        BenchWhat::Mcp => {
            let program = std::env::current_exe().map_err(|e| Failure::other(e.to_string()))?;
            let db = ctx.db_path();
            let pb = ctx.spinner("calling every MCP tool");
            let sizes = citriage_bench::mcp::sizes(&program, &db)?;
            pb.clear();
            print(citriage_bench::mcp::lines(&db, &sizes, json));
        }
        BenchWhat::Serve { clients, requests, seconds, pages, no_prewarm } => {
            let spec = LoadSpec {
                clients: *clients,
                requests: *requests,
                seconds: *seconds,
                pages_per_kind: *pages,
                prewarm: !*no_prewarm,
            };
            let served = citriage_bench::serve::serve(&ctx.db_path(), &spec, json)?;
            print(served.lines.clone());
            served.outcome()?;
        }
        BenchWhat::SuspectsHistory { repos, window, held_in, cases } => {
            let o = citriage_app::suspects_history::HistoryOptions {
                repos: repos.clone(),
                window: *window,
                held_in: held_in.clone(),
            };
            let pb = ctx.bar("{bar:30} {pos}/{len} cases {msg}", "{pos}/{len} cases {msg}");
            let lines = citriage_bench::history::run(&o, *cases, json, &pb)?;
            pb.clear();
            print(lines);
        }
    }
    Ok(())
}
