//! The HTTP layer's policy against real servers on 127.0.0.1: retries with
//! `Retry-After` (seconds and HTTP dates), waits longer than allowed, the retry budget
//! shared by a command's clients, rate-limit resets holding back the next request,
//! same-origin redirects only, bounded bodies, the token rule, conditional requests
//! through the cache hook, and listings that repeat their page token.

use citriage_sources::artifacts::{ArtifactSource, GcsHttp};
use citriage_sources::http::{
    CachedAnswer, Freshness, HttpClient, HttpError, HttpOptions, MemoryCache, Pacer, Request, RetryBudget, Token,
    WaitKind,
};
use citriage_sources::SourceError;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOKEN: &str = "tok_SECRET_never_print";

type Reply = (u16, Vec<(String, String)>, Vec<u8>);

/// A request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    url: String,
    authorization: Option<String>,
    if_none_match: Option<String>,
    method: String,
    idempotency_key: Option<String>,
}

struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
    fn hits(&self, path: &str) -> usize {
        self.seen.lock().unwrap().iter().filter(|s| s.url == path).count()
    }
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Serves `route(path, seen before for this path, request)`.
fn serve(route: impl Fn(&str, usize, &Seen) -> Reply + Send + 'static) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let base = format!("http://{}", server.server_addr().to_ip().unwrap());
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let (srv, log) = (server.clone(), seen.clone());
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            let header = |name: &str| {
                rq.headers()
                    .iter()
                    .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
                    .map(|h| h.value.to_string())
            };
            let s = Seen {
                url: rq.url().to_string(),
                authorization: header("Authorization"),
                if_none_match: header("If-None-Match"),
                method: rq.method().as_str().to_string(),
                idempotency_key: header("Idempotency-Key"),
            };
            let before = log.lock().unwrap().iter().filter(|x: &&Seen| x.url == s.url).count();
            log.lock().unwrap().push(s.clone());
            let (status, headers, body) = route(&s.url, before, &s);
            let mut resp = tiny_http::Response::from_data(body).with_status_code(status);
            for (k, v) in headers {
                resp = resp.with_header(tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).unwrap());
            }
            let _ = rq.respond(resp);
        }
    });
    Server { base, seen, server, thread: Some(thread) }
}

fn reply(status: u16, headers: &[(&str, String)], body: &str) -> Reply {
    (status, headers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), body.as_bytes().to_vec())
}

/// The wall clock, and waits recorded instead of slept.
#[derive(Default)]
struct Recorder(Mutex<Vec<Duration>>);

impl Pacer for Recorder {
    fn now(&self) -> i64 {
        citriage_sources::http::unix_now()
    }
    fn sleep(&self, d: Duration) {
        self.0.lock().unwrap().push(d);
    }
}

impl Recorder {
    fn waits(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

fn opts() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(5),
        ..HttpOptions::default()
    }
}

fn http_date(t: i64) -> String {
    let c = citriage_model::time::civil(t);
    let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        days[t.div_euclid(86_400).rem_euclid(7) as usize],
        c.day,
        months[c.month as usize - 1],
        c.year,
        c.hour,
        c.minute,
        c.second
    )
}

#[test]
fn retry_after_in_seconds_or_as_a_date_is_waited_out() {
    let srv = serve(|path, n, _| match (path, n) {
        ("/secs", 0) => reply(503, &[("Retry-After", "2".into())], "busy"),
        ("/date", 0) => {
            let at = citriage_sources::http::unix_now() + 3;
            reply(429, &[("Retry-After", http_date(at))], "slow down")
        }
        _ => reply(200, &[], "ok"),
    });
    let c = HttpClient::new(opts());
    let pace = Recorder::default();
    let r = c.send_with(&Request::get(srv.url("/secs")), &pace).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
    assert_eq!(pace.waits(), vec![Duration::from_secs(2)]);
    let r = c.send_with(&Request::get(srv.url("/date")), &pace).unwrap();
    assert_eq!(r.status, 200);
    let waited = pace.waits()[1];
    assert!(waited >= Duration::from_secs(2) && waited <= Duration::from_secs(3), "{waited:?}");
    assert_eq!((srv.hits("/secs"), srv.hits("/date")), (2, 2));
    let st = c.stats();
    assert_eq!((st.requests, st.retries), (4, 2));
}

#[test]
fn a_write_is_sent_once_unless_its_idempotency_key_makes_a_repeat_harmless() {
    let srv = serve(|path, n, _| match (path, n) {
        ("/plain", _) => reply(500, &[], "down"),
        ("/keyed", 0) => reply(500, &[], "down"),
        ("/keyed", 1) => reply(429, &[("Retry-After", "2".into())], "slow down"),
        ("/keyed", _) => reply(202, &[], "accepted"),
        _ => reply(404, &[], ""),
    });
    let c = HttpClient::new(opts());
    let pace = Recorder::default();
    let e = c.send_with(&Request::write(false, srv.url("/plain"), b"{}".to_vec()), &pace).unwrap_err();
    assert!(matches!(e, HttpError::GaveUp { status: 500, attempts: 1, .. }), "{e}");
    assert_eq!(srv.hits("/plain"), 1, "a write without a key is never repeated");
    let r = c.send_with(&Request::write(false, srv.url("/keyed"), b"{}".to_vec()).idempotent("al-1"), &pace).unwrap();
    assert_eq!(r.status, 202);
    let keyed: Vec<Seen> = srv.seen().into_iter().filter(|s| s.url == "/keyed").collect();
    assert_eq!(keyed.len(), 3);
    assert!(keyed.iter().all(|s| s.method == "POST" && s.idempotency_key.as_deref() == Some("al-1")), "{keyed:?}");
    assert_eq!(pace.waits()[1], Duration::from_secs(2), "Retry-After is honoured");
}

#[test]
fn a_wait_longer_than_allowed_fails_at_once_and_says_so() {
    let srv = serve(|_, _, _| reply(429, &[("Retry-After", "600".into())], "later"));
    let pace = Recorder::default();
    let e = HttpClient::new(opts()).send_with(&Request::get(srv.url("/x")), &pace).unwrap_err();
    assert!(
        matches!(
            e,
            HttpError::WaitTooLong { wait_secs: 600, limit_secs: 5, status: Some(429), kind: WaitKind::RetryAfter, .. }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("600s") && e.to_string().contains("/x"), "{e}");
    assert_eq!(srv.hits("/x"), 1);
    assert!(pace.waits().is_empty());
}

#[test]
fn persistent_failures_give_up_after_the_attempts_with_the_server_message() {
    let srv = serve(|_, _, _| reply(500, &[], r#"{"message":"database on fire"}"#));
    let pace = Recorder::default();
    let e = HttpClient::new(opts()).send_with(&Request::get(srv.url("/x")), &pace).unwrap_err();
    assert!(matches!(&e, HttpError::GaveUp { status: 500, attempts: 3, rate_limited: None, .. }), "{e:?}");
    assert!(e.to_string().contains("database on fire"), "{e}");
    assert_eq!(srv.hits("/x"), 3);
    // Doubling backoff between the attempts.
    assert_eq!(pace.waits(), vec![Duration::from_millis(10), Duration::from_millis(20)]);
    // Nothing listens on port 9: the transport error names the URL after the retries.
    let e = HttpClient::new(opts()).send_with(&Request::get("http://127.0.0.1:9/y"), &pace).unwrap_err();
    assert!(matches!(&e, HttpError::Transport { url, .. } if url == "http://127.0.0.1:9/y"), "{e:?}");
}

#[test]
fn the_retry_budget_bounds_the_waiting_of_all_clients_of_a_command() {
    let srv = serve(|_, _, _| reply(503, &[], "down"));
    let o = HttpOptions {
        attempts: 10,
        backoff: Duration::from_secs(1),
        max_retry_after: Duration::from_secs(60),
        retry_budget: RetryBudget::new(Duration::from_secs(4)),
        ..opts()
    };
    let (a, b) = (HttpClient::new(o.clone()), HttpClient::new(o.clone()));
    let pace = Recorder::default();
    // Waits of 1 s and 2 s fit in 4 s; the next (4 s) does not.
    let e = a.send_with(&Request::get(srv.url("/a")), &pace).unwrap_err();
    assert!(matches!(e, HttpError::BudgetSpent { budget_secs: 4, status: Some(503), .. }), "{e:?}");
    assert!(e.to_string().contains("retry budget"), "{e}");
    assert_eq!(pace.waits(), vec![Duration::from_secs(1), Duration::from_secs(2)]);
    assert_eq!(srv.hits("/a"), 3);
    // The second client shares the budget: 1 s left, its first wait (1 s) fits, then no more.
    let e = b.send_with(&Request::get(srv.url("/b")), &pace).unwrap_err();
    assert!(matches!(e, HttpError::BudgetSpent { .. }), "{e:?}");
    assert_eq!(srv.hits("/b"), 2);
    assert_eq!(o.retry_budget.spent(), Duration::from_secs(4));
}

#[test]
fn a_rate_limit_reset_holds_back_the_next_request() {
    let srv = serve(|path, _, _| {
        let now = citriage_sources::http::unix_now();
        match path {
            "/soon" => reply(
                200,
                &[("X-RateLimit-Remaining", "0".into()), ("X-RateLimit-Reset", (now + 1).to_string())],
                "last one",
            ),
            "/hour" => reply(
                403,
                &[("X-RateLimit-Remaining", "0".into()), ("X-RateLimit-Reset", (now + 3600).to_string())],
                r#"{"message":"API rate limit exceeded"}"#,
            ),
            _ => reply(200, &[], "ok"),
        }
    });
    let c = HttpClient::new(opts());
    let pace = Recorder::default();
    // The answer says the limit is used up until the next second: the next request waits.
    assert_eq!(c.send_with(&Request::get(srv.url("/soon")), &pace).unwrap().status, 200);
    assert!(pace.waits().is_empty());
    assert_eq!(c.send_with(&Request::get(srv.url("/ok")), &pace).unwrap().status, 200);
    let w = pace.waits();
    assert!(w.len() == 1 && w[0] >= Duration::from_secs(1) && w[0] <= Duration::from_secs(3), "{w:?}");
    // A reset an hour away: refused, and the next request is not even sent.
    let e = c.send_with(&Request::get(srv.url("/hour")), &pace).unwrap_err();
    assert!(matches!(e, HttpError::WaitTooLong { kind: WaitKind::RateLimitReset, .. }), "{e:?}");
    let before = srv.seen().len();
    let e = c.send_with(&Request::get(srv.url("/ok")), &pace).unwrap_err();
    assert!(matches!(e, HttpError::WaitTooLong { kind: WaitKind::RateLimitReset, status: None, .. }), "{e:?}");
    assert_eq!(srv.seen().len(), before);
}

#[test]
fn redirects_are_followed_within_the_origin_only() {
    let other = serve(|_, _, _| reply(200, &[], "elsewhere"));
    let away = other.url("/stolen");
    let srv = serve(move |path, _, _| match path {
        "/old" => reply(301, &[("Location", "/new".into())], ""),
        "/dir/rel" => reply(302, &[("Location", "next".into())], ""),
        "/new" | "/dir/next" => reply(200, &[], "moved here"),
        "/away" => reply(302, &[("Location", away.clone())], ""),
        _ => reply(307, &[("Location", "/loop".into())], ""),
    });
    let c = HttpClient::new(opts()).restricted_to(&srv.base).unwrap().with_token(Token::new(TOKEN));
    let r = c.send(&Request::get(srv.url("/old"))).unwrap();
    assert_eq!((r.status, r.url.as_str(), r.body.as_slice()), (200, srv.url("/new").as_str(), &b"moved here"[..]));
    assert_eq!(c.send(&Request::get(srv.url("/dir/rel"))).unwrap().url, srv.url("/dir/next"));
    let e = c.send(&Request::get(srv.url("/away"))).unwrap_err();
    assert!(matches!(&e, HttpError::CrossOrigin { status: 302, to, .. } if to.ends_with("/stolen")), "{e:?}");
    assert!(e.to_string().contains("another origin"), "{e}");
    assert!(other.seen().is_empty(), "the other origin was never contacted");
    let e = c.send(&Request::get(srv.url("/loop"))).unwrap_err();
    assert!(matches!(e, HttpError::TooManyRedirects { max: 5, .. }), "{e:?}");
    // The token followed the same-origin redirects only.
    assert!(srv.seen().iter().all(|s| s.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")[..])));
}

#[test]
fn the_token_goes_to_its_origin_only_and_never_comes_back_in_errors() {
    let srv = serve(|path, _, s| match path {
        "/echo" => reply(401, &[], &format!("bad credentials {}", s.authorization.clone().unwrap_or_default())),
        _ => reply(500, &[], &format!("crash while using {}", s.authorization.clone().unwrap_or_default())),
    });
    let other = serve(|_, _, _| reply(200, &[], "hi"));
    let c = HttpClient::new(HttpOptions { attempts: 1, ..opts() })
        .restricted_to(&srv.base)
        .unwrap()
        .with_token(Token::new(TOKEN));
    let r = c.send(&Request::get(srv.url("/echo"))).unwrap();
    assert_eq!(r.status, 401);
    let e = c.send(&Request::get(srv.url("/boom"))).unwrap_err();
    let shown = format!("{e} {e:?} {c:?}");
    assert!(!shown.contains(TOKEN) && shown.contains("[redacted]"), "{shown}");
    assert!(matches!(c.send(&Request::get(other.url("/x"))), Err(HttpError::ForeignOrigin { .. })));
    // A client allowed everywhere sends its token nowhere.
    let open = HttpClient::new(opts()).with_token(Token::new(TOKEN));
    assert_eq!(open.send(&Request::get(other.url("/x"))).unwrap().status, 200);
    assert!(other.seen().iter().all(|s| s.authorization.is_none()));
}

#[test]
fn bodies_are_bounded() {
    let srv = serve(|path, _, _| match path {
        "/big" => (200, vec![], vec![b'x'; 5000]),
        _ => (404, vec![], vec![b'e'; 200_000]),
    });
    let c = HttpClient::new(HttpOptions { max_bytes: 4096, ..opts() });
    let e = c.send(&Request::get(srv.url("/big"))).unwrap_err();
    assert!(matches!(e, HttpError::TooLarge { limit: 4096, .. }), "{e:?}");
    let r = c.send(&Request::get(srv.url("/missing"))).unwrap();
    assert_eq!((r.status, r.body.len() as u64), (404, citriage_sources::http::ERROR_BODY_LIMIT));
    // A gzip body may not inflate past the limit either.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; 1 << 20]).unwrap();
    let bomb = gz.finish().unwrap();
    assert!(bomb.len() < 4096);
    let e = citriage_sources::decode_limited("bomb.gz", bomb.clone(), 4096).unwrap_err();
    assert!(matches!(e, SourceError::Inflated { limit: 4096, .. }), "{e:?}");
    assert_eq!(citriage_sources::decode_limited("ok.gz", bomb, 1 << 20).unwrap().bytes.len(), 1 << 20);
}

#[test]
fn conditional_requests_revalidate_the_cache() {
    let srv = serve(|path, _, s| match path {
        "/doc" if s.if_none_match.as_deref() == Some("\"v1\"") => reply(304, &[("ETag", "\"v1\"".into())], ""),
        "/doc" => reply(200, &[("ETag", "\"v1\"".into()), ("Link", "</doc?page=2>; rel=\"next\"".into())], "body v1"),
        "/gone" => reply(410, &[], "gone"),
        _ => reply(418, &[], "teapot"),
    });
    let c = HttpClient::new(opts());
    let cache = MemoryCache::new();
    let pace = Recorder::default();
    let get = |p: &str| c.send_cached(&Request::get(srv.url(p)), &cache, &pace).unwrap();
    let CachedAnswer::Stored { answer: first, freshness: Freshness::Live } = get("/doc") else { panic!() };
    assert_eq!((first.body.as_slice(), first.next.as_deref()), (&b"body v1"[..], Some("/doc?page=2")));
    let CachedAnswer::Stored { answer: again, freshness: Freshness::Revalidated } = get("/doc") else { panic!() };
    assert_eq!(again.body, first.body, "the 304 served the stored body");
    assert_eq!(srv.seen()[1].if_none_match.as_deref(), Some("\"v1\""));
    let CachedAnswer::Stored { answer: gone, .. } = get("/gone") else { panic!() };
    assert_eq!(gone.status, 404, "a 410 is stored as not found");
    assert!(matches!(get("/tea"), CachedAnswer::Other(r) if r.status == 418));
    assert_eq!(cache.len(), 2);
}

#[test]
fn a_listing_that_repeats_its_page_token_is_refused() {
    let srv = serve(|_, _, _| {
        reply(200, &[], r#"{"items": [{"name": "logs/a/1/x.json", "size": "1"}], "nextPageToken": "again"}"#)
    });
    let gcs = GcsHttp::new(&srv.base, "b", opts(), None);
    let e = gcs.list("logs/a/1/").unwrap_err();
    assert!(matches!(&e, SourceError::Refused(HttpError::RepeatedPage { page, .. }) if page == "again"), "{e:?}");
    assert!(e.to_string().contains("repeats page"), "{e}");
    assert_eq!(srv.seen().len(), 2, "stopped at the first repeat");
}

#[test]
fn a_bounded_timeout_ends_requests_and_retries_together() {
    let srv = serve(|path, _, _| match path {
        "/119" => reply(503, &[("Retry-After", "119".into())], "later"),
        _ => reply(503, &[("Retry-After", "1".into())], "busy"),
    });
    // `import --timeout 10` against Retry-After: 119 fails at once, naming the wait.
    let c = HttpClient::new(HttpOptions::bounded(Duration::from_secs(10)));
    let e = c.send(&Request::get(srv.url("/119"))).unwrap_err();
    assert!(matches!(e, HttpError::WaitTooLong { wait_secs: 119, limit_secs: 10, .. }), "{e:?}");
    assert_eq!(srv.hits("/119"), 1);
    // Many attempts allowed, but the 2 s deadline ends them (one 1 s wait fits, the
    // next does not), with an error that says so.
    let c = HttpClient::new(HttpOptions { attempts: 50, ..HttpOptions::bounded(Duration::from_secs(2)) });
    let e = c.send(&Request::get(srv.url("/busy"))).unwrap_err();
    assert!(matches!(e, HttpError::DeadlinePassed { total_secs: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("timeout") && e.to_string().contains("/busy"), "{e}");
    assert!(srv.hits("/busy") <= 3, "{} requests", srv.hits("/busy"));
}
