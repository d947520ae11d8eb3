//! Serves a store without the CLI: `cargo run -p citriage-web --example serve -- STORE.db [ADDR]`.

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(db) = args.next() else {
        eprintln!("usage: serve STORE.db [ADDR]");
        std::process::exit(2);
    };
    let addr =
        args.next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_else(|| citriage_web::DEFAULT_ADDR.to_string());
    let addr: std::net::SocketAddr = match addr.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bad address {addr:?}: {e}");
            std::process::exit(2);
        }
    };
    let result = citriage_web::Server::bind(db.into(), addr).and_then(|s| {
        eprintln!("serving on http://{}", s.local_addr()?);
        s.run(citriage_web::ctrl_c())
    });
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
