//! `citriage store`: look at a store (engine, schema, rows, size, content digest) and
//! copy one into another (a SQLite file into PostgreSQL, or back). Ingestion into
//! both engines side by side is `bench store`.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_store::Location;
use clap::{Args, Subcommand};
use serde_json::json;
use std::time::Instant;

/// Inspect the store and copy it to another engine (SQLite file ⇄ PostgreSQL);
/// `bench store` benchmarks both engines side by side.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub what: StoreWhat,
}

#[derive(Subcommand, Debug)]
pub enum StoreWhat {
    /// The store (--db): its engine, location (password hidden), schema version, rows
    /// per table and bytes on disk.
    Info {
        /// Also a content digest of everything stored, which leaves out row ids and
        /// import times: two stores with the same content have the same digest, on
        /// either engine (reads the whole store).
        #[arg(long)]
        digest: bool,
    },
    /// Copy every row of a store into a new, empty one: e.g. an existing SQLite file
    /// into PostgreSQL (`--from sqlite:FILE --to postgres://USER@HOST/DB`). The
    /// source is only read (its schema is brought up to date first); the copy is one
    /// transaction of the target, so a failed copy leaves it empty; afterwards both
    /// stores' content digests are compared.
    Migrate {
        /// The store to copy (a SQLite file, sqlite:FILE, or postgres://…).
        /// Default: the store (--db).
        #[arg(long, value_name = "FILE|URL")]
        from: Option<String>,
        /// The store to fill; it must be empty (a new file, or a new database).
        #[arg(long, value_name = "FILE|URL")]
        to: String,
        /// Skip comparing the two stores' content digests after the copy (each reads
        /// its whole store).
        #[arg(long)]
        no_verify: bool,
    },
}

/// Runs `citriage store`.
pub fn exec(ctx: &Context, a: &StoreArgs) -> Result<(), Failure> {
    match &a.what {
        StoreWhat::Info { digest } => info(ctx, *digest),
        StoreWhat::Migrate { from, to, no_verify } => {
            let from = from.as_deref().map(Location::parse).unwrap_or_else(|| ctx.db_location());
            migrate(ctx, &from, &Location::parse(to), !*no_verify)
        }
    }
}

fn info(ctx: &Context, digest: bool) -> Result<(), Failure> {
    let loc = ctx.db_location();
    if !loc.exists() {
        return Err(Failure::input(format!("{loc}: no store there")));
    }
    let store = loc.open()?;
    let pb = ctx.spinner(if digest { "reading the whole store" } else { "counting rows" });
    let info = store.info(digest)?;
    pb.finish_and_clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&info).unwrap_or_default());
        return Ok(());
    }
    outln!("store:   {} ({})", info.location, info.backend);
    outln!("schema:  version {}", info.schema_version);
    outln!("size:    {}", crate::context::human_bytes(info.bytes));
    for t in &info.tables {
        outln!("  {:<22} {:>12} rows", t.table, t.rows);
    }
    if let Some(d) = &info.digest {
        outln!("digest:  {d}");
    }
    Ok(())
}

fn migrate(ctx: &Context, from: &Location, to: &Location, verify: bool) -> Result<(), Failure> {
    if !from.exists() {
        return Err(Failure::input(format!("--from {from}: no store there")));
    }
    if from == to {
        return Err(Failure::input(format!("--from and --to are the same store ({from})")));
    }
    let source = from.open()?;
    let mut target = to.open()?;
    let started = Instant::now();
    let pb = ctx.spinner(&format!("copying {from} into {to}"));
    let report = source
        .copy_into(&mut target, &mut |table, rows| pb.set_message(format!("copying {table}: {rows} rows")))
        .map_err(Failure::from)?;
    pb.finish_and_clear();
    let copy_s = started.elapsed().as_secs_f64();
    let verified = if verify {
        let pb = ctx.spinner("comparing the stores' content digests");
        let (a, b) = (source.content_digest()?, target.content_digest()?);
        pb.finish_and_clear();
        if a != b {
            return Err(Failure::other(format!(
                "the copy in {to} differs from {from} (digest {b} against {a}); the target keeps the copy for inspection"
            )));
        }
        Some(a)
    } else {
        None
    };
    if ctx.json() {
        print_json(&json!({
            "from": report.from, "to": report.to, "tables": report.tables, "seconds": copy_s, "digest": verified,
        }));
        return Ok(());
    }
    let rows: u64 = report.tables.iter().map(|t| t.rows).sum();
    outln!(
        "copied {rows} rows in {} tables from {} into {} in {copy_s:.1} s",
        report.tables.len(),
        report.from,
        report.to
    );
    for t in report.tables.iter().filter(|t| t.rows > 0) {
        outln!("  {:<22} {:>12} rows", t.table, t.rows);
    }
    match verified {
        Some(d) => outln!("same content on both sides (digest {d})"),
        None => outln!("not verified (--no-verify)"),
    }
    Ok(())
}
