//! The two SQL engines behind one interface: every query of the store is written once
//! (SQLite's `?N` placeholders, rewritten to `$N` for PostgreSQL) and runs through
//! [`Exec`], which binds portable [`Val`]ues and reads portable [`Row`]s. Writes go
//! through [`Conn::write`]: one transaction (SQLite `BEGIN IMMEDIATE`, so a busy store
//! waits for its turn instead of failing halfway; PostgreSQL `READ COMMITTED`), retried
//! as a whole when the engine reports a transient conflict (deadlock, serialization
//! failure, busy). Bulk rows go through [`Bulk`]: prepared inserts on SQLite, binary
//! `COPY` on PostgreSQL. The values, errors and placeholders both engines share are in
//! `value.rs`; this file dispatches to SQLite (here) or to PostgreSQL (`pg.rs`), which
//! knows nothing of this file's types.

pub(crate) use crate::value::vals;
pub use crate::value::Backend;
pub(crate) use crate::value::{DbError, Val, Value};

fn type_error(i: usize, want: &str, found: &str) -> DbError {
    DbError::Msg(format!("column {i}: expected {want}, found {found}"))
}

/// One result row, read by column position.
pub(crate) enum Row<'a> {
    Sqlite(&'a rusqlite::Row<'a>),
    #[cfg(feature = "postgres")]
    Pg(&'a postgres::Row),
}

impl<'a> Row<'a> {
    pub fn len(&self) -> usize {
        match self {
            Row::Sqlite(r) => r.as_ref().column_count(),
            #[cfg(feature = "postgres")]
            Row::Pg(r) => r.len(),
        }
    }

    pub fn opt_i64(&self, i: usize) -> Result<Option<i64>, DbError> {
        match self {
            Row::Sqlite(r) => Ok(r.get::<_, Option<i64>>(i)?),
            #[cfg(feature = "postgres")]
            Row::Pg(r) => Ok(r.try_get::<_, Option<crate::pg::AnyInt>>(i)?.map(|v| v.0)),
        }
    }

    pub fn i64(&self, i: usize) -> Result<i64, DbError> {
        self.opt_i64(i)?.ok_or_else(|| type_error(i, "an integer", "NULL"))
    }

    pub fn bool(&self, i: usize) -> Result<bool, DbError> {
        Ok(self.i64(i)? != 0)
    }

    pub fn opt_f64(&self, i: usize) -> Result<Option<f64>, DbError> {
        match self {
            Row::Sqlite(r) => Ok(r.get::<_, Option<f64>>(i)?),
            #[cfg(feature = "postgres")]
            Row::Pg(r) => Ok(r.try_get::<_, Option<crate::pg::AnyReal>>(i)?.map(|v| v.0)),
        }
    }

    pub fn opt_str(&self, i: usize) -> Result<Option<&'a str>, DbError> {
        match self {
            Row::Sqlite(r) => match r.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Ok(None),
                rusqlite::types::ValueRef::Text(t) => {
                    std::str::from_utf8(t).map(Some).map_err(|e| DbError::Msg(format!("column {i}: {e}")))
                }
                other => Err(type_error(i, "text", &format!("{:?}", other.data_type()))),
            },
            #[cfg(feature = "postgres")]
            Row::Pg(r) => Ok(r.try_get::<_, Option<&str>>(i)?),
        }
    }

    pub fn str(&self, i: usize) -> Result<&'a str, DbError> {
        self.opt_str(i)?.ok_or_else(|| type_error(i, "text", "NULL"))
    }

    pub fn string(&self, i: usize) -> Result<String, DbError> {
        self.str(i).map(str::to_string)
    }

    pub fn opt_string(&self, i: usize) -> Result<Option<String>, DbError> {
        Ok(self.opt_str(i)?.map(str::to_string))
    }

    pub fn blob(&self, i: usize) -> Result<Vec<u8>, DbError> {
        match self {
            Row::Sqlite(r) => Ok(r.get::<_, Vec<u8>>(i)?),
            #[cfg(feature = "postgres")]
            Row::Pg(r) => Ok(r.try_get::<_, Vec<u8>>(i)?),
        }
    }

    /// The column's value, whatever its type.
    pub fn value(&self, i: usize) -> Result<Value, DbError> {
        match self {
            Row::Sqlite(r) => {
                use rusqlite::types::ValueRef;
                Ok(match r.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                })
            }
            #[cfg(feature = "postgres")]
            Row::Pg(r) => crate::pg::value(r, i),
        }
    }
}

/// Runs statements: a connection outside a transaction ([`Reader`]) or a transaction
/// ([`Tx`]).
pub(crate) trait Exec {
    fn backend(&self) -> Backend;

    /// Runs one statement; returns the rows it changed.
    fn exec(&mut self, sql: &str, p: &[Val<'_>]) -> Result<u64, DbError>;

    /// Runs a query and calls `f` with each row, streaming; returns the row count.
    fn each(
        &mut self,
        sql: &str,
        p: &[Val<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
    ) -> Result<u64, DbError>;

    /// Runs statements separated by `;` without parameters.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;

    /// Every row mapped by `f`.
    fn rows<T>(
        &mut self,
        sql: &str,
        p: &[Val<'_>],
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        self.each(sql, p, &mut |r| {
            out.push(f(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row mapped by `f`, if any.
    fn opt<T>(
        &mut self,
        sql: &str,
        p: &[Val<'_>],
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Option<T>, DbError>
    where
        Self: Sized,
    {
        let mut out = None;
        self.each(sql, p, &mut |r| {
            if out.is_none() {
                out = Some(f(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row mapped by `f`; an error when there is none.
    fn one<T>(&mut self, sql: &str, p: &[Val<'_>], f: impl FnMut(&Row<'_>) -> Result<T, DbError>) -> Result<T, DbError>
    where
        Self: Sized,
    {
        self.opt(sql, p, f)?.ok_or_else(|| DbError::Msg(format!("no row from {}", sql.trim())))
    }

    /// A single integer (`count(*)`, an id).
    fn int(&mut self, sql: &str, p: &[Val<'_>]) -> Result<i64, DbError>
    where
        Self: Sized,
    {
        self.one(sql, p, |r| r.i64(0))
    }
}

/// An open connection.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    #[cfg(feature = "postgres")]
    Pg(Box<std::cell::RefCell<crate::pg::PgConn>>),
}

/// How many times a transaction that met a transient conflict is tried in all.
const ATTEMPTS: u32 = 8;

impl Conn {
    pub fn backend(&self) -> Backend {
        match self {
            Conn::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => Backend::Postgres,
        }
    }

    /// Statements outside a transaction (each its own snapshot).
    pub fn reader(&self) -> Reader<'_> {
        Reader(self)
    }

    /// Runs `f` in one write transaction and commits it; on a transient conflict with
    /// another writer the transaction is rolled back and `f` runs again (a few times,
    /// with a short growing pause). Any other error rolls back and is returned.
    pub fn write<T>(&self, f: &mut dyn FnMut(&mut Tx<'_>) -> Result<T, DbError>) -> Result<T, DbError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.write_once(f) {
                Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                    std::thread::sleep(std::time::Duration::from_millis(5 << attempt.min(6)));
                }
                r => return r,
            }
        }
    }

    fn write_once<T>(&self, f: &mut dyn FnMut(&mut Tx<'_>) -> Result<T, DbError>) -> Result<T, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
                let mut t = Tx::Sqlite(tx);
                let out = f(&mut t)?;
                match t {
                    Tx::Sqlite(tx) => tx.commit()?,
                    #[cfg(feature = "postgres")]
                    Tx::Pg(_) => unreachable!("a SQLite connection opens SQLite transactions"),
                }
                Ok(out)
            }
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let mut g = c.try_borrow_mut().map_err(|_| DbError::Msg("the connection is in use".into()))?;
                let mut t = Tx::Pg(crate::pg::begin_write(&mut g)?);
                let out = f(&mut t)?;
                match t {
                    Tx::Pg(p) => p.commit()?,
                    Tx::Sqlite(_) => unreachable!("a PostgreSQL connection opens PostgreSQL transactions"),
                }
                Ok(out)
            }
        }
    }

    /// Runs `f` on one consistent snapshot of the store (a read-only transaction), so
    /// several queries see the same state even while other writers commit.
    pub fn read<T>(&self, f: &mut dyn FnMut(&mut Tx<'_>) -> Result<T, DbError>) -> Result<T, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Deferred)?;
                let mut t = Tx::Sqlite(tx);
                let out = f(&mut t)?;
                match t {
                    Tx::Sqlite(tx) => tx.commit()?,
                    #[cfg(feature = "postgres")]
                    Tx::Pg(_) => unreachable!("a SQLite connection opens SQLite transactions"),
                }
                Ok(out)
            }
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let mut g = c.try_borrow_mut().map_err(|_| DbError::Msg("the connection is in use".into()))?;
                let mut t = Tx::Pg(crate::pg::begin_read(&mut g)?);
                let out = f(&mut t)?;
                if let Tx::Pg(p) = t {
                    p.commit()?;
                }
                Ok(out)
            }
        }
    }
}

/// A connection used outside a transaction.
pub(crate) struct Reader<'a>(&'a Conn);

fn sqlite_each(
    c: &rusqlite::Connection,
    sql: &str,
    p: &[Val<'_>],
    f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
) -> Result<u64, DbError> {
    let mut st = c.prepare_cached(sql)?;
    let mut rows = st.query(rusqlite::params_from_iter(p.iter()))?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        f(&Row::Sqlite(r))?;
        n += 1;
    }
    Ok(n)
}

fn sqlite_exec(c: &rusqlite::Connection, sql: &str, p: &[Val<'_>]) -> Result<u64, DbError> {
    let mut st = c.prepare_cached(sql)?;
    Ok(st.execute(rusqlite::params_from_iter(p.iter()))? as u64)
}

impl Exec for Reader<'_> {
    fn backend(&self) -> Backend {
        self.0.backend()
    }

    fn exec(&mut self, sql: &str, p: &[Val<'_>]) -> Result<u64, DbError> {
        match self.0 {
            Conn::Sqlite(c) => sqlite_exec(c, sql, p),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let mut g = c.try_borrow_mut().map_err(|_| DbError::Msg("the connection is in use".into()))?;
                let s = g.session()?;
                crate::pg::exec(&mut s.client, &mut s.stmts, sql, p)
            }
        }
    }

    fn each(
        &mut self,
        sql: &str,
        p: &[Val<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
    ) -> Result<u64, DbError> {
        match self.0 {
            Conn::Sqlite(c) => sqlite_each(c, sql, p, f),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let mut g = c.try_borrow_mut().map_err(|_| DbError::Msg("the connection is in use".into()))?;
                let s = g.session()?;
                crate::pg::each(&mut s.client, &mut s.stmts, sql, p, &mut |r| f(&Row::Pg(r)))
            }
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self.0 {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let mut g = c.try_borrow_mut().map_err(|_| DbError::Msg("the connection is in use".into()))?;
                Ok(g.session()?.client.batch_execute(sql)?)
            }
        }
    }
}

/// An open transaction.
pub(crate) enum Tx<'a> {
    Sqlite(rusqlite::Transaction<'a>),
    #[cfg(feature = "postgres")]
    Pg(crate::pg::PgTx<'a>),
}

impl Tx<'_> {
    /// Makes writers that name the same `key` take turns until the end of their
    /// transactions: PostgreSQL's transaction-level advisory lock. SQLite needs none
    /// (its write transactions take turns anyway).
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub fn take_turns(&mut self, key: &str) -> Result<(), DbError> {
        match self {
            Tx::Sqlite(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Pg(t) => t.lock(key),
        }
    }

    /// Inserts many rows into `table` (`cols` in order): `f` hands each row to the
    /// [`Bulk`] writer. SQLite runs one prepared insert per row; PostgreSQL streams
    /// the rows with binary `COPY`. Returns the number of rows written.
    pub fn bulk(
        &mut self,
        table: &str,
        cols: &[&str],
        f: &mut dyn FnMut(&mut Bulk<'_>) -> Result<(), DbError>,
    ) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(tx) => {
                let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
                let sql = format!("INSERT INTO {table} ({}) VALUES ({})", cols.join(", "), marks.join(", "));
                let st = tx.prepare_cached(&sql)?;
                let mut b = Bulk::Sqlite(st, 0);
                f(&mut b)?;
                Ok(match b {
                    Bulk::Sqlite(_, n) => n,
                    #[cfg(feature = "postgres")]
                    Bulk::Pg(_) => 0,
                })
            }
            #[cfg(feature = "postgres")]
            Tx::Pg(t) => {
                let mut b = Bulk::Pg(crate::pg::copy_in(t, table, cols)?);
                f(&mut b)?;
                match b {
                    Bulk::Pg(w) => Ok(w.finish()?),
                    Bulk::Sqlite(..) => unreachable!("a PostgreSQL transaction copies with COPY"),
                }
            }
        }
    }
}

impl Exec for Tx<'_> {
    fn backend(&self) -> Backend {
        match self {
            Tx::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Tx::Pg(_) => Backend::Postgres,
        }
    }

    fn exec(&mut self, sql: &str, p: &[Val<'_>]) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(tx) => sqlite_exec(tx, sql, p),
            #[cfg(feature = "postgres")]
            Tx::Pg(t) => crate::pg::exec(&mut t.tx, t.stmts, sql, p),
        }
    }

    fn each(
        &mut self,
        sql: &str,
        p: &[Val<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
    ) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(tx) => sqlite_each(tx, sql, p, f),
            #[cfg(feature = "postgres")]
            Tx::Pg(t) => crate::pg::each(&mut t.tx, t.stmts, sql, p, &mut |r| f(&Row::Pg(r))),
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Tx::Sqlite(tx) => Ok(tx.execute_batch(sql)?),
            #[cfg(feature = "postgres")]
            Tx::Pg(t) => Ok(t.tx.batch_execute(sql)?),
        }
    }
}

/// Writes the rows of one [`Tx::bulk`] call.
pub(crate) enum Bulk<'a> {
    Sqlite(rusqlite::CachedStatement<'a>, u64),
    #[cfg(feature = "postgres")]
    Pg(postgres::binary_copy::BinaryCopyInWriter<'a>),
}

impl Bulk<'_> {
    /// Writes one row (values in the order of the columns).
    pub fn row(&mut self, v: &[Val<'_>]) -> Result<(), DbError> {
        match self {
            Bulk::Sqlite(st, n) => {
                st.execute(rusqlite::params_from_iter(v.iter()))?;
                *n += 1;
                Ok(())
            }
            #[cfg(feature = "postgres")]
            Bulk::Pg(w) => Ok(w.write_raw(v.iter())?),
        }
    }
}

impl rusqlite::ToSql for Val<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match *self {
            Val::Null => ValueRef::Null,
            Val::Int(v) => ValueRef::Integer(v),
            Val::Real(v) => ValueRef::Real(v),
            Val::Text(v) => ValueRef::Text(v.as_bytes()),
            Val::Blob(v) => ValueRef::Blob(v),
            Val::Texts(_) | Val::Ints(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure("a list binds only to PostgreSQL".into()))
            }
        }))
    }
}
