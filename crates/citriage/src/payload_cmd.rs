//! The `payload` command: analyze an OpenShift release payload (online against a
//! release controller, or offline from recorded responses or a payload-snapshot
//! directory) and write the HTML, Markdown, JSON and results-YAML reports; and
//! `payload eval` over a synthetic world's payload stream.

use crate::cli::{print_json, Cli, Format, PayloadArgs};
use crate::outln;
use crate::pipeline::Failure;
use citriage_payload::{
    analyze, AnalyzeOptions, GcsMirror, HttpConfig, HttpSource, NoEvidence, RecordedDir, SnapshotDir,
};

fn fail(e: citriage_payload::PayloadError) -> Failure {
    if e.is_bad_input() {
        Failure::input(e.to_string())
    } else {
        Failure::other(e.to_string())
    }
}

pub(crate) fn payload(cli: &Cli, a: &PayloadArgs) -> Result<(), Failure> {
    if a.tag == "eval" {
        let world =
            a.from.as_ref().ok_or_else(|| Failure::input("payload eval needs --from WORLD (a synthetic world)"))?;
        let r = citriage_payload::eval::eval_world(world).map_err(fail)?;
        if cli.format == Format::Json {
            print_json(&serde_json::to_value(&r).unwrap_or_default());
        } else {
            outln!("{}", citriage_payload::eval::render_eval(&r));
        }
        return Ok(());
    }
    let mut opts = AnalyzeOptions::new(&a.tag);
    opts.as_of = a.as_of.clone();
    if let Some(s) = &a.stream {
        opts.stream = Some(s.clone());
    }
    opts.ci_config_changes = a.ci_config.clone();
    let analysis = match (&a.from, &a.url) {
        (Some(dir), _) => {
            if !dir.is_dir() {
                return Err(Failure::input(format!("{}: not a folder", dir.display())));
            }
            if dir.join("release-controller").is_dir() || dir.join("api").is_dir() {
                let src = RecordedDir::open(dir);
                let ev = GcsMirror::new(a.mirror.clone().unwrap_or_else(|| dir.join("gcs")));
                analyze(&src, &ev, &opts).map_err(fail)?
            } else {
                let snap = SnapshotDir::open(dir).map_err(fail)?;
                analyze(&snap, &snap, &opts).map_err(fail)?
            }
        }
        (None, Some(url)) => {
            let mut src = HttpSource::new(url, HttpConfig::default()).map_err(fail)?;
            if let Some(g) = &a.github {
                src = src.with_github_diffs(g).map_err(fail)?;
            }
            if let Some(sp) = &a.sippy {
                src = src.with_sippy(sp).map_err(fail)?;
            }
            match &a.mirror {
                Some(m) => analyze(&src, &GcsMirror::new(m.clone()), &opts).map_err(fail)?,
                None => analyze(&src, &NoEvidence, &opts).map_err(fail)?,
            }
        }
        (None, None) => {
            return Err(Failure::input(
                "say where the payload comes from: --from DIR (recorded responses or a payload snapshot) or --url RELEASE_CONTROLLER",
            ))
        }
    };
    let files = match &a.out {
        Some(out) => citriage_payload::write_reports(&analysis, out).map_err(fail)?,
        None => Vec::new(),
    };
    if cli.format == Format::Json {
        outln!("{}", citriage_payload::render_json(&analysis));
    } else {
        outln!("{}", citriage_payload::render_markdown(&analysis));
        for f in files {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}
