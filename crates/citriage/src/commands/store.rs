//! `citriage store`: look at a store (engine, schema, rows, size, content digest) and
//! copy one into another (a SQLite file into PostgreSQL, or back). Ingestion into
//! both engines side by side is `bench store`.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::store_admin::Migrated;
use citriage_store::Location;
use clap::{Args, Subcommand};
use serde_json::json;

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
    let store = ctx.open_existing_store()?;
    let pb = ctx.spinner(if digest { "reading the whole store" } else { "counting rows" });
    let info = citriage_app::store_admin::info(&store, digest)?;
    pb.clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&info).unwrap_or_default());
        return Ok(());
    }
    outln!("store:   {} ({})", info.location, info.backend);
    outln!("schema:  version {}", info.schema_version);
    outln!("size:    {}", citriage_app::store_admin::human_bytes(info.bytes));
    for t in &info.tables {
        outln!("  {:<22} {:>12} rows", t.table, t.rows);
    }
    if let Some(d) = &info.digest {
        outln!("digest:  {d}");
    }
    Ok(())
}

fn migrate(ctx: &Context, from: &Location, to: &Location, verify: bool) -> Result<(), Failure> {
    let pb = ctx.spinner("opening the stores");
    let Migrated { report, seconds: copy_s, digest: verified } =
        citriage_app::store_admin::migrate(from, to, verify, &pb)?;
    pb.clear();
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
