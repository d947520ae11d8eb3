//! `citriage serve`: the local web dashboard over the store.

use crate::context::{Context, Failure};
use clap::Args;

/// Serve the local web dashboard over the store (127.0.0.1 by default): overview,
/// jobs, tests, failure patterns, search, a JSON API under /api/v1/, the MCP
/// server's streamable-HTTP endpoint at /mcp (read-only unless --mcp-writes), and for
/// operators /healthz, /readyz, /metrics (Prometheus text) and /status (each
/// source's ingest status, as `citriage watch` records it).
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (default: the configuration's server.listen, else
    /// 127.0.0.1:8080). An address beyond loopback needs --listen-public.
    #[arg(long)]
    pub addr: Option<std::net::SocketAddr>,
    /// Allow listening on an address other machines can reach.
    #[arg(long)]
    pub listen_public: bool,
    /// The team configuration file: its server.listen, server.public_name (accepted
    /// by the Host check), server.window_days and store. Default: none (the options
    /// and the store given on the command line).
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Days of test-level history shown (flake signals, failing tests, test pages),
    /// ending with the newest build's day.
    #[arg(long, default_value_t = 14, value_name = "DAYS")]
    pub window: i64,
    /// GitHub repository of the "file an issue" and issue-search links.
    #[arg(long, default_value = "kubernetes/kubernetes", value_name = "OWNER/NAME")]
    pub issue_repo: String,
    /// A host name the dashboard may be reached by besides localhost and IP addresses
    /// (requests naming other hosts are refused against DNS rebinding). Repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
    /// Do not mount the MCP endpoint (streamable HTTP at /mcp).
    #[arg(long)]
    pub no_mcp: bool,
    /// Offer the MCP write tool `apply_action` (posting a drafted action through the
    /// GitHub API with the server's GITHUB_TOKEN) to requests that carry
    /// `Authorization: Bearer` with the token in CITRIAGE_MCP_TOKEN, or the
    /// --trusted-user-header. Refused when neither credential is set. Default: off,
    /// the endpoint is read-only.
    #[arg(long)]
    pub mcp_writes: bool,
    /// A header a trusted reverse proxy sets to the authenticated user (e.g.
    /// X-Forwarded-User): requests carrying it may ask for write actions (POST
    /// /admin/refresh; with --mcp-writes, the MCP write tool). Use only when the
    /// dashboard is reachable through that proxy alone. Otherwise write actions need
    /// `Authorization: Bearer` with the token in CITRIAGE_WRITE_TOKEN.
    /// Default: none.
    #[arg(long, value_name = "NAME")]
    pub trusted_user_header: Option<String>,
    /// GitHub API base (GitHub Enterprise: https://HOST/api/v3; a local server in
    /// tests) for the record link form's lookups, the MCP tools' pull-request states
    /// and applied actions. The token comes from GITHUB_TOKEN or GH_TOKEN only.
    /// Default: the configuration's server.github_api, else https://api.github.com.
    #[arg(long, value_name = "URL")]
    pub api: Option<String>,
    /// A local checkout of a tested repository or of the job configuration,
    /// ORG/REPO=PATH (repeatable; added to the configuration file's `checkouts`): the
    /// pattern and job pages rank their windows' commits there. Default: windows only.
    #[arg(long, value_name = "ORG/REPO=PATH")]
    pub checkout: Vec<String>,
}

/// The configuration file's checkouts and those of the command line, each checked.
fn checkouts(config: Option<&citriage_app::config::Config>, given: &[String]) -> Result<Vec<String>, Failure> {
    let mut all: Vec<String> = config.map(|c| c.checkouts.clone()).unwrap_or_default();
    for c in given {
        citriage_app::checkouts::parse_checkout(c)?;
        all.push(c.clone());
    }
    Ok(all)
}

/// The MCP write policy `serve` was asked for.
fn write_policy(a: &ServeArgs) -> Result<citriage_mcp::WritePolicy, Failure> {
    if !a.mcp_writes {
        return Ok(citriage_mcp::WritePolicy::ReadOnly);
    }
    let token = std::env::var("CITRIAGE_MCP_TOKEN").ok().and_then(citriage_mcp::writes::Secret::new);
    let header = a.trusted_user_header.as_ref().map(|h| h.trim().to_ascii_lowercase());
    if let Some(h) = &header {
        if h.is_empty() || header_name_ok(h).is_err() {
            return Err(Failure::input(format!("--trusted-user-header {h:?}: not a header name")));
        }
    }
    if token.is_none() && header.is_none() {
        return Err(Failure::input(
            "--mcp-writes needs a credential: CITRIAGE_MCP_TOKEN in the environment, or --trusted-user-header NAME",
        ));
    }
    Ok(citriage_mcp::WritePolicy::Http { token, trusted_header: header })
}

fn header_name_ok(h: &str) -> Result<(), ()> {
    if h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        Ok(())
    } else {
        Err(())
    }
}

/// Runs `citriage serve`.
pub fn exec(ctx: &Context, a: &ServeArgs) -> Result<(), Failure> {
    crate::logging::init(ctx.log_format, ctx.quiet);
    let config = match &a.config {
        Some(f) => Some(citriage_app::config::Config::load(f)?),
        None => None,
    };
    let db = match (&ctx.db, config.as_ref().and_then(|c| c.store.as_ref())) {
        (None, Some(s)) => std::path::PathBuf::from(s),
        _ => ctx.db_path(),
    };
    let addr = match (a.addr, &config) {
        (Some(addr), _) => addr,
        (None, Some(c)) => c.server.listen.parse().map_err(|_| Failure::input("server.listen: not an address"))?,
        (None, None) => citriage_web::DEFAULT_ADDR.parse().expect("the default address parses"),
    };
    if !addr.ip().is_loopback() && !a.listen_public {
        return Err(Failure::input(format!(
            "{addr} can be reached from other machines: pass --listen-public to serve beyond loopback"
        )));
    }
    let window = match &config {
        Some(c) if a.window == 14 => c.server.window_days,
        _ => a.window,
    };
    if a.window < 1 {
        return Err(Failure::input(format!("--window {}: must be at least 1 day", a.window)));
    }
    if a.issue_repo.split('/').filter(|p| !p.is_empty()).count() != 2 {
        return Err(Failure::input(format!("--issue-repo {:?}: expected OWNER/NAME", a.issue_repo)));
    }
    let api = a
        .api
        .clone()
        .or_else(|| config.as_ref().and_then(|c| c.server.github_api.clone()))
        .unwrap_or_else(|| citriage_github::DEFAULT_API_BASE.to_string());
    if !(api.starts_with("https://") || api.starts_with("http://")) {
        return Err(Failure::input(format!("--api {api:?}: expected an http(s) URL")));
    }
    let writes = write_policy(a)?;
    let gate = citriage_web::ops::WriteGate {
        token: std::env::var("CITRIAGE_WRITE_TOKEN").ok().filter(|t| !t.trim().is_empty()),
        trusted_header: a.trusted_user_header.as_ref().map(|h| h.trim().to_ascii_lowercase()),
    };
    if let Some(h) = &gate.trusted_header {
        if h.is_empty() || header_name_ok(h).is_err() {
            return Err(Failure::input(format!("--trusted-user-header {h:?}: not a header name")));
        }
    }
    let opts = citriage_web::ServeOptions {
        index: citriage_web::index::IndexSettings { window_days: window },
        issue_repo: a.issue_repo.clone(),
        allow_hosts: a.allow_hosts.clone(),
        public_name: config.as_ref().and_then(|c| c.server.public_name.clone()),
        writes: gate,
        github_api: api.trim_end_matches('/').to_string(),
        now: Some(citriage_sources::http::unix_now),
        checkouts: checkouts(config.as_ref(), &a.checkout)?,
        ..Default::default()
    };
    let pb = ctx.spinner(&format!("reading {}", ctx.db_location()));
    let started = std::time::Instant::now();
    let server = citriage_web::Server::bind_with(db, addr, opts).map_err(|e| match e {
        citriage_web::ServeError::MissingStore(_) | citriage_web::ServeError::Store(_) => Failure::input(e.to_string()),
        citriage_web::ServeError::Io(io) if io.kind() == std::io::ErrorKind::AddrInUse => Failure::input(format!(
            "{}: the address is already in use (another `serve`?); listen elsewhere with --addr, e.g. --addr 127.0.0.1:{}",
            addr,
            addr.port().wrapping_add(1).max(1024)
        )),
        other => Failure::other(other.to_string()),
    })?;
    pb.clear();
    let server = if a.no_mcp {
        server
    } else {
        let mcp = citriage_mcp::McpServer::new(
            server.state(),
            citriage_mcp::McpOptions {
                writes: writes.clone(),
                issue_repo: Some(a.issue_repo.clone()),
                api: api.clone(),
                github_online: false,
            },
        );
        server.mount("/mcp", mcp.http_router())
    };
    let addr = server.local_addr().map_err(|e| Failure::other(e.to_string()))?;
    let view = server.state().view();
    tracing::info!(
        store = %ctx.db_location(),
        builds = view.builds.len(),
        jobs = view.jobs.len(),
        texts = view.search.entries,
        documents = view.documents.len(),
        seconds = started.elapsed().as_secs_f64(),
        "store read"
    );
    drop(view);
    tracing::info!(%addr, mcp = !a.no_mcp, "serving");
    // The address is the command's result: on stdout, whatever --quiet says.
    crate::outln!("serving on http://{addr} (Ctrl-C to stop)");
    if !a.no_mcp && !ctx.quiet {
        eprintln!(
            "MCP (streamable HTTP) at http://{addr}/mcp, {}",
            if writes.offers_writes() { "writes allowed with a credential" } else { "read-only" }
        );
    }
    server.run(citriage_web::ctrl_c()).map_err(|e| Failure::other(e.to_string()))
}
