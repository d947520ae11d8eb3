//! The PostgreSQL backend: connections from a per-process pool (one per URL), a
//! per-connection cache of prepared statements, parameters that adapt to the type the
//! server inferred, binary `COPY` for bulk rows, and change notifications
//! (`NOTIFY citriage_store` in every write transaction) that stand in for SQLite's
//! `data_version`.

use crate::value::{pg_placeholders, DbError, Val, Value};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{FromSql, IsNull, ToSql, Type};
use postgres::{Client, GenericClient, NoTls, Statement};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// The channel every write transaction notifies.
const CHANNEL: &str = "citriage_store";
/// Connections a process keeps open to one database at most (in use and idle): 32,
/// or two per core on larger machines (threads that read in parallel each hold one).
fn pool_max() -> usize {
    std::thread::available_parallelism().map_or(32, |n| (2 * n.get()).max(32))
}
/// How long opening a store waits for a pooled connection when all are in use.
const POOL_WAIT: Duration = Duration::from_secs(60);
/// Prepared statements kept per connection.
const STATEMENTS_MAX: usize = 512;

/// Prepared statements of one connection, by their SQL as the store writes it.
#[derive(Default)]
pub(crate) struct StmtCache {
    map: HashMap<String, Statement>,
}

impl StmtCache {
    fn get<C: GenericClient>(&mut self, c: &mut C, sql: &str) -> Result<Statement, DbError> {
        if let Some(s) = self.map.get(sql) {
            return Ok(s.clone());
        }
        let st = c.prepare(&pg_placeholders(sql))?;
        if self.map.len() >= STATEMENTS_MAX {
            self.map.clear();
        }
        self.map.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// A connection as the pool keeps it.
pub(crate) struct PgSession {
    pub client: Client,
    pub stmts: StmtCache,
    listening: bool,
}

/// A pooled connection in use by one store; it goes back to the pool when dropped.
pub(crate) struct PgConn {
    session: Option<PgSession>,
    pool: Arc<Pool>,
    /// Notifications received on this connection since it started listening.
    notified: i64,
}

impl PgConn {
    pub fn session(&mut self) -> Result<&mut PgSession, DbError> {
        self.session.as_mut().ok_or_else(|| DbError::Msg("the connection was closed".into()))
    }

    /// Counts the writes other connections committed since the first call (which
    /// starts listening): PostgreSQL's stand-in for SQLite's `data_version`.
    pub fn changes(&mut self) -> Result<i64, DbError> {
        let s = self.session()?;
        if !s.listening {
            s.client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
            s.listening = true;
        } else {
            // A round trip: the server sends what was notified before it answers.
            s.client.batch_execute("SELECT 1")?;
        }
        let mut n = 0;
        {
            let mut notes = s.client.notifications();
            let mut it = notes.iter();
            while it.next()?.is_some() {
                n += 1;
            }
        }
        self.notified += n;
        Ok(self.notified)
    }

    /// Whether this connection asked for its schema check already in this process.
    pub fn pool_migrated(&self) -> bool {
        self.pool.migrated.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn set_pool_migrated(&self) {
        self.pool.migrated.store(true, std::sync::atomic::Ordering::Release);
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            self.pool.put(s);
        }
    }
}

/// The connections of one process to one database.
pub(crate) struct Pool {
    config: postgres::Config,
    state: Mutex<PoolState>,
    freed: Condvar,
    max: usize,
    migrated: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<PgSession>,
    open: usize,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self) -> Result<PgSession, DbError> {
        let deadline = std::time::Instant::now() + POOL_WAIT;
        let mut st = self.lock();
        loop {
            while let Some(s) = st.idle.pop() {
                if !s.client.is_closed() {
                    return Ok(s);
                }
                st.open -= 1;
            }
            if st.open < self.max {
                st.open += 1;
                drop(st);
                return match self.config.connect(NoTls) {
                    Ok(client) => Ok(PgSession { client, stmts: StmtCache::default(), listening: false }),
                    Err(e) => {
                        self.lock().open -= 1;
                        self.freed.notify_one();
                        Err(e.into())
                    }
                };
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(DbError::Msg(format!(
                    "all {} connections of this process's pool are in use (waited {} s)",
                    self.max,
                    POOL_WAIT.as_secs()
                )));
            }
            st = self.freed.wait_timeout(st, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn put(&self, mut s: PgSession) {
        let mut keep = !s.client.is_closed();
        if keep && s.listening {
            keep = s.client.batch_execute(&format!("UNLISTEN {CHANNEL}")).is_ok();
            s.listening = false;
            // Drop what was received while listening.
            let mut notes = s.client.notifications();
            let mut it = notes.iter();
            while let Ok(Some(_)) = it.next() {}
        }
        let mut st = self.lock();
        if keep {
            st.idle.push(s);
        } else {
            st.open -= 1;
        }
        drop(st);
        self.freed.notify_one();
    }
}

fn pools() -> &'static Mutex<HashMap<String, Arc<Pool>>> {
    static POOLS: OnceLock<Mutex<HashMap<String, Arc<Pool>>>> = OnceLock::new();
    POOLS.get_or_init(Default::default)
}

/// The connection settings of a URL: `PGPASSWORD` when the URL has no password, the
/// user from `PGUSER` or `USER` when it names none, a 10 s connect timeout unless set.
pub(crate) fn config(url: &str) -> Result<postgres::Config, DbError> {
    let mut c: postgres::Config = url.parse().map_err(|e: postgres::Error| DbError::Msg(format!("bad URL: {e}")))?;
    if c.get_password().is_none() {
        if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
            c.password(p.to_string_lossy().as_bytes());
        }
    }
    if c.get_user().is_none() {
        if let Some(u) = ["PGUSER", "USER"].iter().find_map(|k| std::env::var(k).ok().filter(|u| !u.is_empty())) {
            c.user(&u);
        }
    }
    if c.get_connect_timeout().is_none() {
        c.connect_timeout(Duration::from_secs(10));
    }
    if c.get_application_name().is_none() {
        c.application_name("citriage");
    }
    Ok(c)
}

/// A connection to `url` from this process's pool for it.
pub(crate) fn connect(url: &str) -> Result<PgConn, DbError> {
    let pool = {
        let mut all = pools().lock().unwrap_or_else(|e| e.into_inner());
        match all.get(url) {
            Some(p) => p.clone(),
            None => {
                let p = Arc::new(Pool {
                    config: config(url)?,
                    state: Mutex::new(PoolState::default()),
                    freed: Condvar::new(),
                    max: pool_max(),
                    migrated: Default::default(),
                });
                all.insert(url.to_string(), p.clone());
                p
            }
        }
    };
    let session = pool.get()?;
    Ok(PgConn { session: Some(session), pool, notified: 0 })
}

/// A transaction on a pooled connection.
pub(crate) struct PgTx<'a> {
    pub tx: postgres::Transaction<'a>,
    pub stmts: &'a mut StmtCache,
    /// The change notice was sent already (with [`PgTx::lock`]).
    notified: bool,
}

impl PgTx<'_> {
    /// Waits for, then holds until the end of the transaction, the advisory lock of
    /// `key`; sends the transaction's change notice in the same round trip.
    pub fn lock(&mut self, key: &str) -> Result<(), DbError> {
        let sql = format!("SELECT pg_advisory_xact_lock(hashtextextended(?1, 0)), pg_notify('{CHANNEL}', '')");
        exec(&mut self.tx, self.stmts, &sql, &[Val::Text(key)])?;
        self.notified = true;
        Ok(())
    }

    /// Commits; a write transaction notifies the listeners first (once).
    pub fn commit(mut self) -> Result<(), DbError> {
        if !self.notified {
            self.tx.batch_execute(&format!("NOTIFY {CHANNEL}"))?;
        }
        Ok(self.tx.commit()?)
    }
}

pub(crate) fn exec<C: GenericClient>(
    c: &mut C,
    cache: &mut StmtCache,
    sql: &str,
    p: &[Val<'_>],
) -> Result<u64, DbError> {
    let st = cache.get(c, sql)?;
    let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
    Ok(c.execute(&st, &refs)?)
}

pub(crate) fn each<C: GenericClient>(
    c: &mut C,
    cache: &mut StmtCache,
    sql: &str,
    p: &[Val<'_>],
    f: &mut dyn FnMut(&postgres::Row) -> Result<(), DbError>,
) -> Result<u64, DbError> {
    let st = cache.get(c, sql)?;
    let mut it = c.query_raw(&st, p.iter())?;
    let mut n = 0;
    while let Some(row) = it.next()? {
        f(&row)?;
        n += 1;
    }
    Ok(n)
}

/// A binary `COPY` into `table` (`cols` in order), typed by the table's columns.
pub(crate) fn copy_in<'t>(
    t: &'t mut PgTx<'_>,
    table: &str,
    cols: &[&str],
) -> Result<postgres::binary_copy::BinaryCopyInWriter<'t>, DbError> {
    let list = cols.join(", ");
    // The columns' types, from a statement that reads them (prepared once).
    let probe = t.stmts.get(&mut t.tx, &format!("SELECT {list} FROM {table} LIMIT 0"))?;
    let types: Vec<Type> = probe.columns().iter().map(|c| c.type_().clone()).collect();
    let w = t.tx.copy_in(&format!("COPY {table} ({list}) FROM STDIN (FORMAT binary)"))?;
    Ok(postgres::binary_copy::BinaryCopyInWriter::new(w, &types))
}

/// Opens a write transaction; [`PgTx::commit`] notifies the listeners.
pub(crate) fn begin_write(conn: &mut PgConn) -> Result<PgTx<'_>, DbError> {
    let PgSession { client, stmts, .. } = conn.session()?;
    Ok(PgTx { tx: client.transaction()?, stmts, notified: false })
}

/// Opens a read-only transaction on a single snapshot.
pub(crate) fn begin_read(conn: &mut PgConn) -> Result<PgTx<'_>, DbError> {
    let PgSession { client, stmts, .. } = conn.session()?;
    let tx =
        client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).read_only(true).start()?;
    Ok(PgTx { tx, stmts, notified: true })
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Val<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        match *self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ => Err(format!("cannot bind the integer {v} to a parameter of type {ty}").into()),
            },
            Val::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ => Err(format!("cannot bind the number {v} to a parameter of type {ty}").into()),
            },
            Val::Text(v) => match *ty {
                Type::BYTEA => v.as_bytes().to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Val::Blob(v) => v.to_sql(ty, out),
            Val::Texts(v) => v.to_sql(ty, out),
            Val::Ints(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// Any integer column (and booleans) as `i64`.
pub(crate) struct AnyInt(pub i64);

impl<'a> FromSql<'a> for AnyInt {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(AnyInt(match *ty {
            Type::INT8 => i64::from_sql(ty, raw)?,
            Type::INT4 => i64::from(i32::from_sql(ty, raw)?),
            Type::INT2 => i64::from(i16::from_sql(ty, raw)?),
            Type::OID => i64::from(u32::from_sql(ty, raw)?),
            Type::BOOL => i64::from(bool::from_sql(ty, raw)?),
            _ => return Err(format!("expected an integer, found {ty}").into()),
        }))
    }

    // Any type: a NULL of another type (an untyped `NULL` column) reads as `None`;
    // a value of another type is an error from `from_sql`.
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Any number column as `f64`.
pub(crate) struct AnyReal(pub f64);

impl<'a> FromSql<'a> for AnyReal {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(AnyReal(match *ty {
            Type::FLOAT8 => f64::from_sql(ty, raw)?,
            Type::FLOAT4 => f64::from(f32::from_sql(ty, raw)?),
            _ => AnyInt::from_sql(ty, raw)?.0 as f64,
        }))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A column's value by its type.
pub(crate) fn value(r: &postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = r.columns().get(i).map(|c| c.type_().clone()).ok_or_else(|| DbError::Msg(format!("no column {i}")))?;
    Ok(match ty {
        Type::INT8 | Type::INT4 | Type::INT2 | Type::OID | Type::BOOL => {
            r.try_get::<_, Option<AnyInt>>(i)?.map_or(Value::Null, |v| Value::Int(v.0))
        }
        Type::FLOAT8 | Type::FLOAT4 => r.try_get::<_, Option<AnyReal>>(i)?.map_or(Value::Null, |v| Value::Real(v.0)),
        Type::BYTEA => r.try_get::<_, Option<Vec<u8>>>(i)?.map_or(Value::Null, Value::Blob),
        _ => r.try_get::<_, Option<String>>(i)?.map_or(Value::Null, Value::Text),
    })
}
