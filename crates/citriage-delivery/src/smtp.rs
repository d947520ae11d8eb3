//! A small SMTP client (RFC 5321) for one message per connection: EHLO, STARTTLS when
//! the server offers it (rustls, the web's root certificates plus any the
//! configuration names; required when asked), AUTH PLAIN or LOGIN only inside TLS,
//! MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. Every read and write is bounded in
//! time, every reply in size. A 4xx reply, a timeout or a connection closed midway is
//! worth another try later; a 5xx reply is not. The password never appears in an error:
//! replies are quoted with it (and its base64 forms) removed.

use crate::Outcome;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// When the connection is encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlsMode {
    /// STARTTLS when the server offers it (the default).
    Opportunistic,
    /// STARTTLS or nothing is sent.
    Required,
    /// Never (a relay on the same host).
    Off,
}

/// A user name and password (from the environment only); the password never prints.
#[derive(Clone)]
pub struct Credentials {
    pub user: String,
    password: String,
}

impl Credentials {
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Credentials {
        Credentials { user: user.into(), password: password.into() }
    }

    /// `text` with the password and the base64 forms that carry it removed.
    pub fn redact(&self, text: &str) -> String {
        if self.password.is_empty() {
            return text.to_string();
        }
        let mut out = text.replace(&self.password, "***");
        for secret in
            [plain_token(&self.user, &self.password), citriage_alerts::message::base64(self.password.as_bytes())]
        {
            out = out.replace(&secret, "***");
        }
        out
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, ***)", self.user)
    }
}

fn plain_token(user: &str, password: &str) -> String {
    citriage_alerts::message::base64(format!("\0{user}\0{password}").as_bytes())
}

/// Where and how mail is sent.
#[derive(Debug, Clone)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
    /// PEM certificates trusted besides the web's roots (a private CA).
    pub ca_file: Option<PathBuf>,
    /// The name this client gives in EHLO.
    pub client_name: String,
    pub timeout: Duration,
    pub credentials: Option<Credentials>,
}

/// An envelope and its message.
pub struct Mail<'a> {
    pub from: &'a str,
    pub to: &'a [String],
    /// The RFC 5322 message, CRLF line ends.
    pub data: &'a [u8],
}

/// One parsed reply: its code and text lines.
#[derive(Debug)]
struct Reply {
    code: u16,
    lines: Vec<String>,
}

impl Reply {
    fn text(&self) -> String {
        self.lines.join(" / ")
    }
}

/// Why a session stopped.
enum Stop {
    /// Another try later may work (4xx, I/O, timeout, closed).
    Transient(String),
    /// It will not (5xx, a certificate, a setting).
    Permanent(String),
}

type Step<T> = Result<T, Stop>;

enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The longest reply line and the most lines of one reply read.
const MAX_LINE: usize = 4_096;
const MAX_LINES: usize = 100;

struct Session<'a> {
    io: BufReader<Stream>,
    s: &'a SmtpSettings,
    tls: bool,
}

fn io_stop(what: &str, e: std::io::Error) -> Stop {
    let why = match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out".to_string(),
        std::io::ErrorKind::UnexpectedEof => "the server closed the connection".to_string(),
        _ => e.to_string(),
    };
    Stop::Transient(format!("{what}: {why}"))
}

impl Session<'_> {
    fn read_reply(&mut self, after: &str) -> Step<Reply> {
        let mut lines = Vec::new();
        loop {
            let mut buf = Vec::new();
            let n =
                (&mut self.io).take(MAX_LINE as u64 + 2).read_until(b'\n', &mut buf).map_err(|e| io_stop(after, e))?;
            if n == 0 {
                return Err(Stop::Transient(format!("{after}: the server closed the connection")));
            }
            if !buf.ends_with(b"\n") {
                return Err(Stop::Transient(format!("{after}: a reply line longer than {MAX_LINE} bytes")));
            }
            let line = String::from_utf8_lossy(&buf).trim_end().to_string();
            let code = line.get(..3).and_then(|c| c.parse::<u16>().ok()).filter(|c| (200..600).contains(c));
            let Some(code) = code else {
                return Err(Stop::Transient(format!(
                    "{after}: not an SMTP reply: {:?}",
                    citriage_model::escape::one_line(&line)
                )));
            };
            lines.push(line.get(4..).unwrap_or("").to_string());
            if lines.len() > MAX_LINES {
                return Err(Stop::Transient(format!("{after}: a reply of more than {MAX_LINES} lines")));
            }
            if line.as_bytes().get(3) != Some(&b'-') {
                return Ok(Reply { code, lines });
            }
        }
    }

    fn send_line(&mut self, line: &str) -> Step<()> {
        let w = self.io.get_mut();
        w.write_all(line.as_bytes()).and_then(|_| w.write_all(b"\r\n")).and_then(|_| w.flush()).map_err(|e| {
            let verb = line.split(' ').next().unwrap_or("");
            io_stop(&format!("sending {verb}"), e)
        })
    }

    /// Sends a command and expects one of `ok` (a code's first digit, or exact codes).
    fn command(&mut self, line: &str, shown: &str, ok: &[u16]) -> Step<Reply> {
        self.send_line(line)?;
        let r = self.read_reply(shown)?;
        self.expect(r, shown, ok)
    }

    fn expect(&self, r: Reply, shown: &str, ok: &[u16]) -> Step<Reply> {
        if ok.contains(&r.code) {
            return Ok(r);
        }
        let text = self.redact(&format!("{shown}: the server answered {} {}", r.code, r.text()));
        Err(if r.code >= 500 { Stop::Permanent(text) } else { Stop::Transient(text) })
    }

    fn redact(&self, text: &str) -> String {
        match &self.s.credentials {
            Some(c) => c.redact(text),
            None => text.to_string(),
        }
    }

    fn ehlo(&mut self) -> Step<Vec<String>> {
        let name = self.s.client_name.clone();
        self.send_line(&format!("EHLO {name}"))?;
        let r = self.read_reply("EHLO")?;
        if r.code == 250 {
            return Ok(r.lines.iter().skip(1).map(|l| l.to_ascii_uppercase()).collect());
        }
        // A server without ESMTP: HELO, no extensions.
        self.command(&format!("HELO {name}"), "HELO", &[250])?;
        Ok(Vec::new())
    }
}

fn tls_config(s: &SmtpSettings) -> Step<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(f) = &s.ca_file {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(f)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| Stop::Permanent(format!("{}: cannot read certificates: {e}", f.display())))?;
        if certs.is_empty() {
            return Err(Stop::Permanent(format!("{}: holds no certificate", f.display())));
        }
        for c in certs {
            roots.add(c).map_err(|e| Stop::Permanent(format!("{}: {e}", f.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Stop::Permanent(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Wraps the plain connection in TLS after the server's 220 to STARTTLS. Anything the
/// server sent before the handshake is refused (it could be a reply injected in clear).
fn upgrade<'a>(session: Session<'a>) -> Step<Session<'a>> {
    let Session { io, s, .. } = session;
    if !io.buffer().is_empty() {
        return Err(Stop::Permanent("STARTTLS: the server sent data before the TLS handshake".into()));
    }
    let Stream::Plain(tcp) = io.into_inner() else {
        return Err(Stop::Permanent("STARTTLS: the connection is already encrypted".into()));
    };
    let name = ServerName::try_from(s.host.clone())
        .map_err(|e| Stop::Permanent(format!("STARTTLS: {:?} is not a host name: {e}", s.host)))?;
    let conn = rustls::ClientConnection::new(tls_config(s)?, name).map_err(|e| Stop::Permanent(format!("TLS: {e}")))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    // Complete the handshake now, so a certificate problem is reported as such.
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                Stop::Permanent(format!("STARTTLS: TLS handshake failed: {e}"))
            } else {
                io_stop("STARTTLS: TLS handshake", e)
            }
        })?;
    }
    Ok(Session { io: BufReader::new(Stream::Tls(Box::new(tls))), s, tls: true })
}

fn connect(s: &SmtpSettings) -> Step<TcpStream> {
    let addrs: Vec<_> = (s.host.as_str(), s.port)
        .to_socket_addrs()
        .map_err(|e| Stop::Transient(format!("cannot resolve {}: {e}", s.host)))?
        .collect();
    let mut last = format!("{} resolves to no address", s.host);
    for a in addrs {
        match TcpStream::connect_timeout(&a, s.timeout) {
            Ok(t) => {
                let _ = t.set_read_timeout(Some(s.timeout));
                let _ = t.set_write_timeout(Some(s.timeout));
                let _ = t.set_nodelay(true);
                return Ok(t);
            }
            Err(e) => last = format!("cannot connect to {}:{}: {e}", s.host, s.port),
        }
    }
    Err(Stop::Transient(last))
}

/// The message with every line starting with a dot doubled, CRLF line ends throughout,
/// and the end-of-data line.
fn dot_stuffed(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16);
    for line in data.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.first() == Some(&b'.') {
            out.push(b'.');
        }
        out.extend_from_slice(line);
        out.extend_from_slice(b"\r\n");
    }
    // `split` leaves an empty last piece after a final line end.
    if data.ends_with(b"\n") {
        out.truncate(out.len() - 2);
    }
    out.extend_from_slice(b".\r\n");
    out
}

fn authenticate(sess: &mut Session<'_>, exts: &[String], c: &Credentials) -> Step<()> {
    if !sess.tls {
        return Err(Stop::Permanent(
            "the server did not offer STARTTLS: refusing to send the SMTP password in clear".into(),
        ));
    }
    let mechanisms: Vec<&str> =
        exts.iter().filter_map(|e| e.strip_prefix("AUTH")).flat_map(|m| m.split([' ', '='])).collect();
    if mechanisms.contains(&"PLAIN") {
        let token = plain_token(&c.user, &c.password);
        sess.command(&format!("AUTH PLAIN {token}"), "AUTH PLAIN", &[235])?;
    } else if mechanisms.contains(&"LOGIN") {
        sess.command("AUTH LOGIN", "AUTH LOGIN", &[334])?;
        sess.command(&citriage_alerts::message::base64(c.user.as_bytes()), "AUTH LOGIN (user)", &[334])?;
        sess.command(&citriage_alerts::message::base64(c.password.as_bytes()), "AUTH LOGIN (password)", &[235])?;
    } else {
        return Err(Stop::Permanent("the server offers neither AUTH PLAIN nor AUTH LOGIN".into()));
    }
    Ok(())
}

fn transaction(s: &SmtpSettings, mail: &Mail<'_>) -> Step<()> {
    let tcp = connect(s)?;
    let mut sess = Session { io: BufReader::new(Stream::Plain(tcp)), s, tls: false };
    let greeting = sess.read_reply("greeting")?;
    sess.expect(greeting, "greeting", &[220])?;
    let mut exts = sess.ehlo()?;
    let offered = exts.iter().any(|e| e == "STARTTLS");
    match (s.tls, offered) {
        (TlsMode::Off, _) | (TlsMode::Opportunistic, false) => {}
        (TlsMode::Required, false) => {
            return Err(Stop::Permanent("the server does not offer STARTTLS and TLS is required".into()));
        }
        (_, true) => {
            sess.command("STARTTLS", "STARTTLS", &[220])?;
            sess = upgrade(sess)?;
            exts = sess.ehlo()?;
        }
    }
    if let Some(c) = &s.credentials {
        authenticate(&mut sess, &exts, c)?;
    }
    sess.command(&format!("MAIL FROM:<{}>", mail.from), "MAIL FROM", &[250])?;
    for to in mail.to {
        sess.command(&format!("RCPT TO:<{to}>"), &format!("RCPT TO {to}"), &[250, 251])?;
    }
    sess.command("DATA", "DATA", &[354])?;
    let body = dot_stuffed(mail.data);
    let w = sess.io.get_mut();
    w.write_all(&body).and_then(|_| w.flush()).map_err(|e| io_stop("sending the message", e))?;
    let r = sess.read_reply("end of message")?;
    sess.expect(r, "end of message", &[250])?;
    // Accepted: whatever QUIT does changes nothing.
    let _ = sess.send_line("QUIT");
    Ok(())
}

/// Sends one message. Accepted when the server said 250 to its end.
pub fn send(s: &SmtpSettings, mail: &Mail<'_>) -> Outcome {
    for a in std::iter::once(mail.from).chain(mail.to.iter().map(String::as_str)) {
        if !citriage_alerts::message::valid_address(a) {
            return Outcome::GiveUp { error: format!("{a:?} is not an e-mail address citriage sends to or from") };
        }
    }
    let at = format!("SMTP {}:{}", s.host, s.port);
    match transaction(s, mail) {
        Ok(()) => Outcome::Accepted,
        Err(Stop::Transient(e)) => Outcome::Retry { error: format!("{at}: {e}"), after: None },
        Err(Stop::Permanent(e)) => Outcome::GiveUp { error: format!("{at}: {e}") },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_start_with_a_dot_are_doubled() {
        assert_eq!(dot_stuffed(b"a\r\n.b\r\n..c\r\n"), b"a\r\n..b\r\n...c\r\n.\r\n");
        assert_eq!(dot_stuffed(b"a\nb"), b"a\r\nb\r\n.\r\n");
        assert_eq!(dot_stuffed(b"."), b"..\r\n.\r\n");
    }

    #[test]
    fn the_password_never_shows() {
        let c = Credentials::new("me", "s3cret!");
        let leak = format!(
            "535 no: s3cret! {} {}",
            plain_token("me", "s3cret!"),
            citriage_alerts::message::base64(b"s3cret!")
        );
        let r = c.redact(&leak);
        assert!(!r.contains("s3cret") && !r.contains(&plain_token("me", "s3cret!")), "{r}");
        assert_eq!(format!("{c:?}"), "Credentials(me, ***)");
    }
}
