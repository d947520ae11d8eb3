//! Prow/GCS artifact sources behind one trait: a local mirror directory laid out like
//! the bucket, and GCS over HTTP (JSON listing with `delimiter` and pagination, object
//! download, gzip transfer encoding) with an on-disk cache for immutable artifacts.
//! Only the configured base URL's origin is contacted, through [`crate::http`].

use crate::http::{percent_encode as enc, HttpClient, PageGuard};
use crate::paths::{check_name, is_under, refusal};
use crate::{decode_limited, http_get, http_stream, read_file, Body, HttpOptions, SourceError};
use serde_json::Value;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The direct children of a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Objects directly under the prefix: (path from the bucket root, size).
    pub objects: Vec<(String, Option<u64>)>,
    /// Sub-prefixes ("folders"), each ending in `/`.
    pub prefixes: Vec<String>,
    /// Names the source gave that were refused (unsafe, outside the prefix, a
    /// symlink leading out of the mirror, not UTF-8), each as a problem naming it.
    pub refused: Vec<String>,
}

/// Where build artifacts are read from. Paths are relative to the bucket root.
pub trait ArtifactSource: Send + Sync {
    /// The bucket name, for evidence links.
    fn bucket(&self) -> &str;
    /// A human-readable description (root folder or base URL).
    fn describe(&self) -> String;
    /// Lists the direct children of `prefix` (which ends in `/`), sorted.
    fn list(&self, prefix: &str) -> Result<Listing, SourceError>;
    /// Reads an object (gzip content inflated); `Ok(None)` when it does not exist. The
    /// bytes count against the process's memory budget until dropped.
    fn get(&self, path: &str) -> Result<Option<Body>, SourceError>;
    /// Opens an object to be read as a stream (gzip content inflated as it is read,
    /// up to the size limit); `Ok(None)` when it does not exist. A stream holds only
    /// its buffers, not the object: readers that can go a piece at a time (JUnit,
    /// logs) use it. [`LocalMirror`] streams the file and [`GcsHttp`] the response
    /// body; by default the object is read whole with [`ArtifactSource::get`] (and
    /// held against the memory budget until the stream is dropped). An error of a
    /// read carries the [`SourceError`] it is ([`crate::source_error`]): the object
    /// could not be given to its end, and what was parsed of it must be dropped.
    fn open(&self, path: &str) -> Result<Option<Box<dyn std::io::BufRead + Send>>, SourceError> {
        Ok(self.get(path)?.map(|b| Box::new(std::io::Cursor::new(b)) as Box<dyn std::io::BufRead + Send>))
    }
    /// Where a person can open the object (a file path or a URL).
    fn locator(&self, path: &str) -> String;
    /// Lists every object below a prefix, recursively, sorted.
    fn list_recursive(&self, prefix: &str) -> Result<Vec<(String, Option<u64>)>, SourceError> {
        Ok(self.walk(prefix)?.objects)
    }
    /// Every object below a prefix, recursively, sorted, with the names refused on
    /// the way (`prefixes` is empty).
    fn walk(&self, prefix: &str) -> Result<Listing, SourceError> {
        let mut out = Listing::default();
        let mut stack = vec![prefix.to_string()];
        while let Some(p) = stack.pop() {
            let l = self.list(&p)?;
            out.objects.extend(l.objects);
            out.refused.extend(l.refused);
            stack.extend(l.prefixes.into_iter().rev());
        }
        out.objects.sort();
        out.refused.sort();
        out.refused.dedup();
        Ok(out)
    }
}

/// A local folder laid out like the bucket (`<root>/logs/<job>/<id>/...`).
#[derive(Debug, Clone)]
pub struct LocalMirror {
    root: PathBuf,
    bucket: String,
}

impl LocalMirror {
    /// A mirror rooted at `root`. Reads stay inside the root: names are checked
    /// ([`crate::paths`]) and a symlink is followed only when it leads to a place
    /// inside the root (the root itself may be a symlink).
    pub fn new(root: impl Into<PathBuf>, bucket: impl Into<String>) -> LocalMirror {
        let root = root.into();
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        LocalMirror { root, bucket: bucket.into() }
    }

    fn full(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The file system path of a checked name; an error when the name is unsafe.
    fn checked(&self, path: &str) -> Result<PathBuf, SourceError> {
        if !path.is_empty() {
            check_name(path).map_err(|why| SourceError::unsafe_name(&self.describe(), path, why))?;
        }
        Ok(self.full(path))
    }

    /// True when `p` (which exists) resolves to a place inside the root.
    fn inside(&self, p: &Path) -> bool {
        std::fs::canonicalize(p).map(|c| c.starts_with(&self.root)).unwrap_or(false)
    }
}

impl ArtifactSource for LocalMirror {
    fn bucket(&self) -> &str {
        &self.bucket
    }
    fn describe(&self) -> String {
        format!("local mirror {}", self.root.display())
    }
    fn list(&self, prefix: &str) -> Result<Listing, SourceError> {
        let dir = self.checked(prefix)?;
        let mut l = Listing::default();
        if dir.exists() && !self.inside(&dir) {
            return Err(SourceError::unsafe_name(&self.describe(), prefix, "a symlink out of the mirror"));
        }
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(l),
            Err(source) => return Err(SourceError::Io { location: dir.display().to_string(), source }),
        };
        for entry in rd {
            let entry = entry.map_err(|source| SourceError::Io { location: dir.display().to_string(), source })?;
            let raw = entry.file_name();
            let Some(name) = raw.to_str() else {
                let shown = format!("{}{}", prefix, raw.to_string_lossy());
                l.refused.push(refusal(&shown, "not UTF-8"));
                continue;
            };
            let p = format!("{}{}", prefix, name);
            if let Err(why) = check_name(&p) {
                l.refused.push(refusal(&p, why));
                continue;
            }
            let mut ft =
                entry.file_type().map_err(|source| SourceError::Io { location: dir.display().to_string(), source })?;
            if ft.is_symlink() {
                if !self.inside(&entry.path()) {
                    l.refused.push(refusal(&p, "a symlink leading out of the mirror (or nowhere)"));
                    continue;
                }
                match std::fs::metadata(entry.path()) {
                    Ok(m) => ft = m.file_type(),
                    Err(_) => continue,
                }
            }
            if ft.is_dir() {
                l.prefixes.push(format!("{p}/"));
            } else {
                let size = entry.metadata().ok().map(|m| m.len());
                l.objects.push((p, size));
            }
        }
        l.objects.sort();
        l.prefixes.sort();
        Ok(l)
    }
    fn get(&self, path: &str) -> Result<Option<Body>, SourceError> {
        let p = self.checked(path)?;
        if p.exists() && !self.inside(&p) {
            return Err(SourceError::unsafe_name(&self.describe(), path, "a symlink leading out of the mirror"));
        }
        match read_file(&p, crate::http::DEFAULT_MAX_BYTES) {
            Ok(b) => decode_limited(&p.display().to_string(), b, crate::http::DEFAULT_MAX_BYTES).map(|f| Some(f.bytes)),
            Err(SourceError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn open(&self, path: &str) -> Result<Option<Box<dyn std::io::BufRead + Send>>, SourceError> {
        let p = self.checked(path)?;
        if p.exists() && !self.inside(&p) {
            return Err(SourceError::unsafe_name(&self.describe(), path, "a symlink leading out of the mirror"));
        }
        match std::fs::File::open(&p) {
            Ok(f) => crate::stream_limited(&p.display().to_string(), f, crate::http::DEFAULT_MAX_BYTES).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(SourceError::Io { location: p.display().to_string(), source }),
        }
    }
    fn locator(&self, path: &str) -> String {
        self.full(path).display().to_string()
    }
}

/// GCS's JSON API and object URLs over HTTP, e.g. base `https://storage.googleapis.com`.
pub struct GcsHttp {
    base: String,
    bucket: String,
    client: Arc<HttpClient>,
    cache: Option<PathBuf>,
}

impl GcsHttp {
    /// `cache`: a folder for artifacts of finished builds (immutable once written).
    pub fn new(base: &str, bucket: &str, opts: HttpOptions, cache: Option<PathBuf>) -> GcsHttp {
        let base = base.trim_end_matches('/').to_string();
        let mut client = HttpClient::new(opts);
        // A base that is not an http(s) URL leaves the client unrestricted; every
        // request to it then fails as a transport error naming the URL.
        let _ = client.allow(&base);
        GcsHttp { base, bucket: bucket.to_string(), client: Arc::new(client), cache }
    }

    fn max_bytes(&self) -> u64 {
        self.client.options().max_bytes
    }

    /// `path` when it is a safe object name.
    fn checked<'a>(&self, path: &'a str) -> Result<&'a str, SourceError> {
        check_name(path).map_err(|why| SourceError::unsafe_name(&self.describe(), path, why))?;
        Ok(path)
    }

    /// Where an object is cached; only called with checked names, so the path stays
    /// inside the cache folder.
    fn cache_path(&self, path: &str) -> Option<PathBuf> {
        // Pointers that move are never cached.
        if path.ends_with("latest-build.txt") || path.ends_with("prowjob.json") {
            return None;
        }
        self.cache.as_ref().map(|c| c.join(&self.bucket).join(path.trim_start_matches('/')))
    }
}

fn enc_path(s: &str) -> String {
    s.split('/').map(enc).collect::<Vec<_>>().join("/")
}

impl ArtifactSource for GcsHttp {
    fn bucket(&self) -> &str {
        &self.bucket
    }
    fn describe(&self) -> String {
        format!("{}/{}", self.base, self.bucket)
    }
    fn list(&self, prefix: &str) -> Result<Listing, SourceError> {
        if !prefix.is_empty() {
            self.checked(prefix)?;
        }
        let mut l = Listing::default();
        let mut token: Option<String> = None;
        let mut pages = PageGuard::new(format!("{}/storage/v1/b/{}/o?prefix={}", self.base, self.bucket, prefix));
        loop {
            let mut url =
                format!("{}/storage/v1/b/{}/o?prefix={}&delimiter=%2F", self.base, enc(&self.bucket), enc(prefix));
            if let Some(t) = &token {
                url.push_str(&format!("&pageToken={}", enc(t)));
            }
            let Some(body) = http_get(&self.client, &url)? else { return Ok(l) };
            let body = decode_limited(&url, body, self.max_bytes())?.bytes;
            let (page, next) = parse_listing_page(&body, prefix, &url)?;
            drop(body);
            l.objects.extend(page.objects);
            l.prefixes.extend(page.prefixes);
            l.refused.extend(page.refused);
            token = next;
            match &token {
                Some(t) => pages.next(t).map_err(SourceError::Refused)?,
                None => break,
            }
        }
        l.objects.sort();
        l.objects.dedup();
        l.prefixes.sort();
        l.prefixes.dedup();
        l.refused.sort();
        l.refused.dedup();
        Ok(l)
    }
    fn get(&self, path: &str) -> Result<Option<Body>, SourceError> {
        let path = self.checked(path)?;
        let cp = self.cache_path(path);
        if let Some(cp) = &cp {
            if let Ok(b) = read_file(cp, self.max_bytes()) {
                return Ok(Some(b));
            }
        }
        let url = self.object_url(path);
        let Some(body) = http_get(&self.client, &url)? else { return Ok(None) };
        let bytes = decode_limited(&url, body, self.max_bytes())?.bytes;
        if let Some(cp) = cp {
            write_cache(&cp, &bytes);
        }
        Ok(Some(bytes))
    }
    /// The object as a stream: the response body is read as the reader goes (gzip
    /// inflated on the way, up to the size limit), never held whole. A transfer cut
    /// off is resumed where the reader is ([`crate::http::BodyStream`]); when it cannot
    /// be, the read fails with the error naming the URL, and the reader discards what
    /// it parsed. With a cache, a cached object is read from its file, and an object
    /// read to its end is written to the cache as it passes (kept only when complete).
    fn open(&self, path: &str) -> Result<Option<Box<dyn BufRead + Send>>, SourceError> {
        let path = self.checked(path)?;
        let cp = self.cache_path(path);
        if let Some(cp) = &cp {
            if let Ok(f) = std::fs::File::open(cp) {
                // Cached bytes are stored inflated, as `get` stores them: only the limit.
                let location = cp.display().to_string();
                return crate::stream_plain(&location, f, self.max_bytes()).map(Some);
            }
        }
        let url = self.object_url(path);
        let Some(body) = http_stream(&self.client, &url)? else { return Ok(None) };
        let stream = crate::stream_limited(&url, body, self.max_bytes())?;
        Ok(Some(match cp {
            Some(cp) => Box::new(std::io::BufReader::with_capacity(64 << 10, CacheTee::new(stream, cp))),
            None => stream,
        }))
    }
    fn locator(&self, path: &str) -> String {
        format!("{}/{}/{}", self.base, self.bucket, path.trim_start_matches('/'))
    }
}

impl GcsHttp {
    /// The download URL of a checked object name.
    fn object_url(&self, path: &str) -> String {
        format!("{}/{}/{}", self.base, enc(&self.bucket), enc_path(path.trim_start_matches('/')))
    }
}

/// A stream that writes what passes through it to a temporary cache file, renamed into
/// place when the stream reaches its end; dropped before that (an error, a reader that
/// stopped early), the file is removed. A cache that cannot be written only costs a
/// later re-download.
struct CacheTee {
    inner: Box<dyn BufRead + Send>,
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::fs::File>,
}

impl CacheTee {
    fn new(inner: Box<dyn BufRead + Send>, path: PathBuf) -> CacheTee {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_extension(format!("part{}-{n}", std::process::id()));
        let file =
            path.parent().and_then(|d| std::fs::create_dir_all(d).ok()).and_then(|()| std::fs::File::create(&tmp).ok());
        CacheTee { inner, path, tmp, file }
    }
}

impl Read for CacheTee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(f) = self.file.as_mut() {
            if n == 0 {
                let done = f.flush().is_ok() && std::fs::rename(&self.tmp, &self.path).is_ok();
                self.file = None;
                if !done {
                    let _ = std::fs::remove_file(&self.tmp);
                }
            } else if f.write_all(&buf[..n]).is_err() {
                self.file = None;
                let _ = std::fs::remove_file(&self.tmp);
            }
        }
        Ok(n)
    }
}

impl Drop for CacheTee {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// One page of a GCS JSON listing of `prefix` (fetched from `url`, for messages):
/// the objects and sub-prefixes under it, the names refused, and the next page token.
pub fn parse_listing_page(body: &[u8], prefix: &str, url: &str) -> Result<(Listing, Option<String>), SourceError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| SourceError::Transport {
        location: url.to_string(),
        detail: format!("listing is not valid JSON: {e}"),
    })?;
    let mut l = Listing::default();
    for it in v.get("items").and_then(Value::as_array).into_iter().flatten() {
        if let Some(name) = it.get("name").and_then(Value::as_str) {
            let size = match it.get("size") {
                Some(Value::String(s)) => s.parse().ok(),
                Some(Value::Number(n)) => n.as_u64(),
                _ => None,
            };
            if name == prefix {
                continue;
            }
            if is_under(name, prefix) {
                l.objects.push((name.to_string(), size));
            } else {
                l.refused.push(refusal(name, outside_why(name, prefix)));
            }
        }
    }
    for p in v.get("prefixes").and_then(Value::as_array).into_iter().flatten() {
        if let Some(p) = p.as_str() {
            if is_under(p, prefix) && p.ends_with('/') {
                l.prefixes.push(p.to_string());
            } else {
                l.refused.push(refusal(p, outside_why(p, prefix)));
            }
        }
    }
    let next = v.get("nextPageToken").and_then(Value::as_str).map(String::from).filter(|t| !t.is_empty());
    Ok((l, next))
}

/// Why a listed name is refused: unsafe, or outside the prefix listed.
fn outside_why(name: &str, prefix: &str) -> &'static str {
    match check_name(name) {
        Err(why) => why,
        Ok(()) if !name.starts_with(prefix) => "outside the prefix listed",
        Ok(()) => "a folder name without a trailing /",
    }
}

/// Writes a cache file atomically; a failure only costs a later re-download.
fn write_cache(path: &Path, bytes: &[u8]) {
    if let Some(dir) = path.parent() {
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}
