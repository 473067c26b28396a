//! Opening Bee's SQLite stores: one writer per store directory (0700, the
//! database 0600, WAL, `synchronous=NORMAL`, forward-only migrations keyed by
//! `PRAGMA user_version`), and readers that create nothing, follow no link and
//! name what kept them out (`missing`, `busy`, `corrupt`, `io`).

use bee_proto::delivery::Issue;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::storage::files::{self, PathKind};

/// Lock file the writer holds for as long as it runs.
pub const WRITER_LOCK_FILE: &str = "writer.lock";
/// Readers refuse a database larger than this: far beyond what our stores
/// grow to, so anything this size is not one of ours.
pub const MAX_DB_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Errors opening or writing a store.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("store I/O error: {0}")]
    Io(#[from] io::Error),
    #[error("store database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0} is not a store directory (a link or another kind of file)")]
    Unsupported(PathBuf),
    #[error("store schema version {found} is newer than this build understands ({known})")]
    NewerSchema { found: i64, known: i64 },
    #[error("another writer holds the store at {0}")]
    Locked(PathBuf),
    #[error("store at {path} is corrupt: {reason}; refusing to append to it")]
    Corrupt { path: PathBuf, reason: String },
    #[error("invalid record: {0}")]
    Invalid(&'static str),
}

/// A store opened by its one writer.
pub struct Writer {
    pub conn: Connection,
    /// The database file, for more connections to it.
    path: PathBuf,
    /// Checked (or built) by this writer: stamped when it closes.
    sound: bool,
    // Held for its lock: released when the writer is dropped.
    _lock: File,
}

/// Opens `dir/db_file` for writing, creating it (0700/0600) and applying
/// `migrations` (entry `n` takes the schema from version `n` to `n + 1`).
pub fn open_writer(dir: &Path, db_file: &str, migrations: &[&str]) -> Result<Writer, DbError> {
    open_writer_at(dir, db_file, migrations, None)
}

/// [`open_writer`], a new store built from `latest` (the schema and rows
/// every one of `migrations` builds, as SQL) when given.
pub fn open_writer_at(dir: &Path, db_file: &str, migrations: &[&str], latest: Option<&str>) -> Result<Writer, DbError> {
    match files::classify(dir)? {
        PathKind::Missing | PathKind::Directory => files::ensure_private_dir(dir)?,
        _ => return Err(DbError::Unsupported(dir.to_owned())),
    }
    let lock = files::open_private_file(&dir.join(WRITER_LOCK_FILE))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(DbError::Locked(dir.to_owned())),
        Err(std::fs::TryLockError::Error(err)) => return Err(err.into()),
    }
    let db = dir.join(db_file);
    let existed = match files::classify(&db)? {
        PathKind::Missing => {
            create(&db, migrations, latest)?;
            false
        }
        PathKind::RegularFile => true,
        _ => return Err(DbError::Unsupported(db)),
    };
    // A store is built whole and moved into place, so an empty file here
    // is one that lost its contents: named, never silently built anew.
    if existed && std::fs::metadata(&db)?.len() == 0 {
        let reason = "the database file is empty (0 bytes); it is left as it is: move it aside to have a new one built";
        return Err(DbError::Corrupt { path: db, reason: reason.into() });
    }
    // As its last writer left it (the stamp it wrote when it closed the
    // store matches the files now): checked then, not again.
    let as_left = existed && stamp_of(&db).is_some_and(|now| read_stamp(&db).as_deref() == Some(now.as_str()));
    let conn = connect(&db)?;
    // A damaged store is left as it is: its writer never opens on it.
    let mut sound = !existed || as_left;
    if !sound {
        match check_integrity(&conn, INTEGRITY_BUDGET) {
            Integrity::Sound => sound = true,
            Integrity::Unfinished => {
                tracing::warn!(store = %db.display(), "integrity check not finished in its time; opening the store");
            }
            Integrity::Damaged(found) => {
                let reason = format!("{found}; it is left as it is: move it aside to have a new one built");
                return Err(DbError::Corrupt { path: db, reason });
            }
        }
    }
    // Whatever happens from here, the stamp no longer speaks for the files.
    let _ = std::fs::remove_file(stamp_path(&db));
    migrate(&conn, migrations)?;
    Ok(Writer { conn, path: db, sound, _lock: lock })
}

/// Where a store's writer leaves the stamp of the files it closed.
fn stamp_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".closed");
    PathBuf::from(name)
}

/// The store's files as the file system shows them: the database's and
/// its write-ahead log's inode, size and modification time.
fn stamp_of(db: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let stamp =
        |meta: &std::fs::Metadata| format!("{}:{}:{}.{}", meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec());
    let main = stamp(&std::fs::symlink_metadata(db).ok()?);
    let wal = std::fs::symlink_metadata(PathBuf::from(wal)).map(|meta| stamp(&meta)).unwrap_or_default();
    Some(format!("{main}/{wal}"))
}

fn read_stamp(db: &Path) -> Option<String> {
    files::read_text_at_most(&stamp_path(db), 256).ok().map(|text| text.trim().to_owned())
}

impl Drop for Writer {
    /// Closes the store, then stamps its files as this writer left them
    /// (while it still holds the writer's lock): the next writer's open
    /// checks it again only if the files changed since. A store this
    /// writer could not check is not stamped.
    fn drop(&mut self) {
        if !self.sound {
            return;
        }
        let Ok(placeholder) = Connection::open_in_memory() else { return };
        let conn = std::mem::replace(&mut self.conn, placeholder);
        if conn.close().is_err() {
            return;
        }
        if let Some(stamp) = stamp_of(&self.path)
            // A stamp lost is a check made again, never a check skipped.
            && let Err(err) = files::write_private_unsynced(&stamp_path(&self.path), stamp.as_bytes())
        {
            tracing::debug!(error = %err, "store's closing stamp not written");
        }
    }
}

/// A new store: built whole beside its place (from `latest` when given,
/// else by every migration), then moved there in one rename. Until the
/// rename there is nothing to keep, so the building needs no journal and
/// no sync but one at the end (a journalled first commit syncs four
/// times); a crash leaves no store or all of it, and a half-built file
/// left by one is built again. Created 0600 from the start: SQLite gives
/// its -wal and -shm files the database file's mode.
fn create(db: &Path, migrations: &[&str], latest: Option<&str>) -> Result<(), DbError> {
    let mut name = db.file_name().unwrap_or_default().to_owned();
    name.push(".new");
    let building = db.with_file_name(name);
    // Only this writer (it holds the lock) builds here.
    match std::fs::remove_file(&building) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err.into()),
    }
    let file = files::open_private_file(&building)?;
    let conn =
        Connection::open_with_flags(&building, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    match latest {
        Some(schema) => {
            let tx = conn.unchecked_transaction()?;
            tx.execute_batch(schema)?;
            tx.pragma_update(None, "user_version", migrations.len() as i64)?;
            tx.commit()?;
        }
        None => migrate(&conn, migrations)?,
    }
    // Recorded in the file's header: every connection to it uses the WAL.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.close().map_err(|(_, err)| err)?;
    file.sync_all()?;
    std::fs::rename(&building, db)?;
    if let Some(dir) = db.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// How long a writer waits for a lock another connection holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A read-write connection to `db`, in WAL mode.
fn connect(db: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // NORMAL (in WAL mode): a commit is in the WAL before the daemon
    // acknowledges it, so it survives any crash of beed; an OS crash or power
    // loss may take the last commits, which the delivery contract allows ("a
    // crash can lose observations"). Syncing every commit (FULL) costs about
    // 40 % of the append throughput on the machines this runs on.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

impl Writer {
    /// Leaves WAL mode for a rollback journal, for a bulk load into a
    /// store that is nearly empty: nearly every page it writes is new, so
    /// the journal holds only the few it changes, and the pages go once
    /// into the database file, where through the WAL they would be
    /// written twice. SQLite allows it only while no other connection has
    /// the store open: when one has (a reader in another process), the
    /// store stays in WAL mode, at once. Whether it left. A crash before
    /// [`Writer::return_to_wal`] leaves a journal that the next open rolls
    /// back, and that open returns the store to WAL mode.
    pub fn leave_wal(&self) -> bool {
        let left = self.conn.busy_timeout(Duration::ZERO).and_then(|()| {
            self.conn.pragma_update_and_check(None, "journal_mode", "TRUNCATE", |row| row.get::<_, String>(0))
        });
        if let Err(err) = self.conn.busy_timeout(BUSY_TIMEOUT) {
            tracing::warn!(error = %err, "the store's busy timeout not restored");
        }
        match left {
            Ok(mode) => mode == "truncate",
            Err(err) => {
                tracing::debug!(error = %err, "the store stays in WAL mode");
                false
            }
        }
    }

    /// Back to WAL mode after [`Writer::leave_wal`]; readers that opened
    /// meanwhile do not keep it from returning.
    pub fn return_to_wal(&self) -> Result<(), DbError> {
        let mode: String = self.conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if mode != "wal" {
            return Err(DbError::Invalid("the store did not return to WAL mode"));
        }
        Ok(())
    }

    /// A second connection to the writer's database, to checkpoint on
    /// another thread while this one writes: in WAL mode a passive
    /// checkpoint and a writer never wait for each other.
    pub fn checkpointer(&self) -> Result<Checkpointer, DbError> {
        Ok(Checkpointer { conn: connect(&self.path)?, db: files::open_regular(&self.path)? })
    }
}

/// See [`Writer::checkpointer`].
pub struct Checkpointer {
    conn: Connection,
    db: File,
}

impl Checkpointer {
    /// Copies what the WAL holds into the database ([`checkpoint`]) now,
    /// while the writer goes on, and again once `last_commit` says (or
    /// its sender is gone) that the writer committed for the last time:
    /// the second copy takes that commit too, so closing the store has
    /// nothing left to copy. The database is flushed to disk after each
    /// copy: SQLite syncs it only after a checkpoint that found no newer
    /// commit, and without this a copy that met one would wait for the
    /// writer's next checkpoint (at the latest when it closes) to be
    /// synced. Flushed after the first copy, the bulk of it is on disk
    /// while the writer goes on, and the last flush holds only its commit.
    pub fn copy_wal(&self, last_commit: std::sync::mpsc::Receiver<()>) -> Result<(), DbError> {
        checkpoint(&self.conn)?;
        self.db.sync_data()?;
        // Either answer means the writer is done.
        let _ = last_commit.recv();
        checkpoint(&self.conn)?;
        Ok(self.db.sync_data()?)
    }
}

/// Copies what the WAL holds into the database, waiting for no reader or
/// writer (what one still needs is copied by a later checkpoint).
pub fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

/// SQLite's default `wal_autocheckpoint`, restored after a bulk load.
pub const WAL_AUTOCHECKPOINT_PAGES: i64 = 1_000;

fn migrate(conn: &Connection, migrations: &[&str]) -> Result<(), DbError> {
    let known = migrations.len() as i64;
    let found: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > known {
        return Err(DbError::NewerSchema { found, known });
    }
    // All pending migrations in one transaction: a new store's schema is
    // written once, and a failed step leaves the store as it was.
    let pending = migrations.get(found.max(0) as usize..).unwrap_or_default();
    if pending.is_empty() {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    for sql in pending {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    Ok(())
}

/// Opens `dir/db_file` read-only, creating nothing. Returns the connection
/// and its schema version (1..=`known`), or the issue that kept us out; a
/// database never migrated is `missing` (no evidence yet).
pub fn open_reader(dir: &Path, db_file: &str, known: usize) -> Result<(Connection, u32), Issue> {
    let db = dir.join(db_file);
    let located = files::classify(dir).and_then(|kind| match kind {
        PathKind::Directory => files::classify(&db),
        other => Ok(other),
    });
    match located {
        Ok(PathKind::RegularFile) => {}
        Ok(PathKind::Missing) => return Err(Issue::Missing),
        Ok(_) | Err(_) => return Err(Issue::Io),
    }
    match std::fs::metadata(&db) {
        // A store is never an empty file (it is built whole): one that
        // lost its contents is damage, never "no store yet".
        Ok(meta) if meta.len() == 0 => return Err(Issue::Corrupt),
        Ok(meta) if meta.len() <= MAX_DB_BYTES => {}
        _ => return Err(Issue::Io),
    }
    let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|err| issue_of(&err))?;
    conn.busy_timeout(Duration::from_millis(1_000)).map_err(|_| Issue::Io)?;
    let version = match conn.pragma_query_value(None, "user_version", |row| row.get::<_, i64>(0)) {
        Ok(0) => return Err(Issue::Missing),
        Ok(version) if version <= known as i64 => version as u32,
        Ok(_) => return Err(Issue::Io),
        Err(err) => return Err(issue_of(&err)),
    };
    // A migrated store has tables. A schema that cannot be read, or that
    // lost them, is damage: `corrupt`, never `missing`.
    match conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |row| row.get::<_, i64>(0)) {
        Ok(tables) if tables > 0 => Ok((conn, version)),
        Ok(_) => Err(Issue::Corrupt),
        Err(err) if err.sqlite_error_code() == Some(ErrorCode::Unknown) => Err(Issue::Corrupt),
        Err(err) => Err(issue_of(&err)),
    }
}

/// What a store's integrity check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    Sound,
    /// What SQLite found wrong, its first few findings (tables and indexes named).
    Damaged(String),
    /// The check ran out of its time: nothing was found in what it read.
    Unfinished,
}

/// How long a writer's open may spend checking its store.
pub const INTEGRITY_BUDGET: Duration = Duration::from_secs(3);

/// Findings of an integrity check reported, at most.
const INTEGRITY_FINDINGS: u32 = 8;

/// `PRAGMA integrity_check` over the whole store — every page, every
/// row's format and every index against its table (a flipped bit in an
/// index that `quick_check` would pass) — stopped once `budget` has passed.
pub fn check_integrity(conn: &Connection, budget: Duration) -> Integrity {
    // Past the budget, a watcher interrupts the check; a check done sooner
    // lets the watcher go (its channel closes).
    let interrupt = conn.get_interrupt_handle();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watcher = std::thread::Builder::new().name("bee-check".into()).spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(budget) {
            interrupt.interrupt();
        }
    });
    let findings = (|| -> rusqlite::Result<Vec<String>> {
        let mut statement = conn.prepare(&format!("PRAGMA integrity_check({INTEGRITY_FINDINGS})"))?;
        // A finding may hold bytes that are not UTF-8 (a damaged name).
        let rows =
            statement.query_map([], |row| Ok(String::from_utf8_lossy(row.get_ref(0)?.as_bytes()?).into_owned()))?;
        rows.collect()
    })();
    drop(done);
    if let Ok(watcher) = watcher {
        let _ = watcher.join();
    }
    match findings {
        Ok(findings) if findings.len() == 1 && findings[0] == "ok" => Integrity::Sound,
        Ok(findings) => Integrity::Damaged(findings.join("; ")),
        Err(err) if err.sqlite_error_code() == Some(ErrorCode::OperationInterrupted) => Integrity::Unfinished,
        Err(err) if issue_of(&err) == Issue::Corrupt => Integrity::Damaged(err.to_string()),
        // Busy or an I/O error is no evidence of damage: the check is not done.
        Err(err) => {
            tracing::warn!(error = %err, "integrity check could not run");
            Integrity::Unfinished
        }
    }
}

/// The report issue an SQLite error stands for.
pub fn issue_of(err: &rusqlite::Error) -> Issue {
    match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Issue::Busy,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Issue::Corrupt,
        _ => Issue::Io,
    }
}

/// A count as an SQLite INTEGER, which is signed 64-bit: larger counts saturate.
pub fn sql_integer(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A record's checksum: CRC-32 over each value, length-prefixed, in order.
/// Written with the record and checked whenever it is read, so a flipped
/// bit is named `corrupt` instead of believed.
pub fn values_crc<'a>(values: impl IntoIterator<Item = rusqlite::types::ValueRef<'a>>) -> i64 {
    values_crc_grown(values, usize::MAX)
}

/// [`values_crc`] of a record whose table grew columns after its first
/// `base`: a later column counts only when it holds a value (tagged with its
/// position), so every record written before the column existed keeps its
/// checksum.
pub fn values_crc_grown<'a>(values: impl IntoIterator<Item = rusqlite::types::ValueRef<'a>>, base: usize) -> i64 {
    use rusqlite::types::ValueRef;
    // Small values gathered in one buffer and hashed together: many tiny
    // updates cost more than the bytes themselves. A large value (a pack's
    // body) is hashed where it lies, not copied; the CRC of the bytes in
    // order is the same either way.
    const GATHERED: usize = 512;
    let mut hasher = crc32fast::Hasher::new();
    let mut bytes: Vec<u8> = Vec::with_capacity(GATHERED);
    for (at, value) in values.into_iter().enumerate() {
        if at >= base {
            if value == ValueRef::Null {
                continue;
            }
            bytes.extend_from_slice(&(at as u64).to_le_bytes());
        }
        // A number's bytes live here: no allocation per column.
        let number: [u8; 8];
        let (tag, data): (u8, &[u8]) = match value {
            ValueRef::Null => (0, &[]),
            ValueRef::Integer(n) => {
                number = n.to_le_bytes();
                (1, &number)
            }
            ValueRef::Real(f) => {
                number = f.to_le_bytes();
                (2, &number)
            }
            ValueRef::Text(t) => (3, t),
            ValueRef::Blob(b) => (4, b),
        };
        bytes.push(tag);
        bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
        if data.len() > GATHERED {
            hasher.update(&bytes);
            bytes.clear();
            hasher.update(data);
        } else {
            bytes.extend_from_slice(data);
        }
    }
    hasher.update(&bytes);
    i64::from(hasher.finalize())
}

/// The checksum of `params` as they will be stored.
pub fn params_crc(params: &[&dyn rusqlite::ToSql]) -> rusqlite::Result<i64> {
    params_crc_grown(params, usize::MAX)
}

/// [`params_crc`] of a record whose table grew columns after its first `base`.
pub fn params_crc_grown(params: &[&dyn rusqlite::ToSql], base: usize) -> rusqlite::Result<i64> {
    use rusqlite::types::ToSqlOutput;
    let outputs = params.iter().map(|param| param.to_sql()).collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(values_crc_grown(
        outputs.iter().map(|output| match output {
            ToSqlOutput::Borrowed(value) => *value,
            ToSqlOutput::Owned(value) => value.into(),
            // Zero blobs and the like are not used by Bee's stores.
            _ => rusqlite::types::ValueRef::Null,
        }),
        base,
    ))
}

/// How many columns a comma-separated column list names (at compile time
/// for the constant lists, so a checksum never covers a stale count).
pub const fn column_count(columns: &str) -> usize {
    let bytes = columns.as_bytes();
    let (mut at, mut commas) = (0, 0);
    while at < bytes.len() {
        if bytes[at] == b',' {
            commas += 1;
        }
        at += 1;
    }
    commas + 1
}

/// Whether the `count` columns of `row` from `first` on, followed by their
/// stored checksum, verify. A row without a checksum predates them: it is
/// unverifiable, not corrupt.
pub fn row_verifies(row: &rusqlite::Row<'_>, first: usize, count: usize) -> rusqlite::Result<bool> {
    row_verifies_grown(row, first, count, count)
}

/// [`row_verifies`] for a table that grew columns after its first `base`.
pub fn row_verifies_grown(row: &rusqlite::Row<'_>, first: usize, base: usize, count: usize) -> rusqlite::Result<bool> {
    let stored: Option<i64> = row.get(first + count)?;
    let Some(stored) = stored else { return Ok(true) };
    let values = (first..first + count).map(|column| row.get_ref(column)).collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(values_crc_grown(values, base) == stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::ValueRef;

    /// Pending migrations apply together: one that fails leaves the store
    /// at the version it had, none of the steps before it applied; the next
    /// open with good migrations takes it the whole way.
    #[test]
    fn a_failed_migration_leaves_the_store_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let first = "CREATE TABLE one (x INTEGER) STRICT;";
        drop(open_writer(dir.path(), "t.sqlite3", &[first]).unwrap());
        let broken = ["CREATE TABLE two (x INTEGER) STRICT;", "CREATE TABLE one (x INTEGER) STRICT;"];
        let failed = open_writer(dir.path(), "t.sqlite3", &[first, broken[0], broken[1]]);
        assert!(matches!(failed, Err(DbError::Sqlite(_))), "{:?}", failed.err());
        let conn = Connection::open(dir.path().join("t.sqlite3")).unwrap();
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        let tables: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'two'", [], |row| row.get(0)).unwrap();
        assert_eq!((version, tables), (1, 0));
        drop(conn);
        let good = [first, broken[0], "CREATE TABLE three (x INTEGER) STRICT;"];
        let writer = open_writer(dir.path(), "t.sqlite3", &good).unwrap();
        let version: i64 = writer.conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        assert_eq!(version, 3);
    }

    /// A store its writer closed is stamped, and checked again at the next
    /// open only once its files changed: an index damaged since is found,
    /// named and left as it is; an emptied file is damage.
    #[test]
    fn a_writer_checks_a_store_that_changed_since_it_was_closed() {
        let dir = tempfile::tempdir().unwrap();
        let schema = ["CREATE TABLE t (k TEXT NOT NULL) STRICT; CREATE INDEX t_k ON t (k);"];
        let writer = open_writer(dir.path(), "t.sqlite3", &schema).unwrap();
        for n in 0..200 {
            writer.conn.execute("INSERT INTO t VALUES (?1)", [format!("key-{n:05}")]).unwrap();
        }
        drop(writer);
        let db = dir.path().join("t.sqlite3");
        assert_eq!(read_stamp(&db), stamp_of(&db), "stamped as it was left");
        let writer = open_writer(dir.path(), "t.sqlite3", &schema).unwrap();
        assert!(read_stamp(&db).is_none(), "an open store has no stamp");
        drop(writer);
        // One byte of the index's root page (its last cell's key) flipped.
        let conn = Connection::open(&db).unwrap();
        let root: i64 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = 't_k'", [], |row| row.get(0)).unwrap();
        let page: i64 = conn.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap();
        drop(conn);
        let mut bytes = std::fs::read(&db).unwrap();
        bytes[(root * page) as usize - 4] ^= 0x20;
        std::fs::write(&db, &bytes).unwrap();
        match open_writer(dir.path(), "t.sqlite3", &schema) {
            Err(DbError::Corrupt { reason, .. }) => assert!(reason.contains("t_k"), "{reason}"),
            other => panic!("{:?}", other.err()),
        }
        assert_eq!(std::fs::read(&db).unwrap(), bytes, "left as it is");
        std::fs::write(&db, b"").unwrap();
        assert!(matches!(open_writer(dir.path(), "t.sqlite3", &schema), Err(DbError::Corrupt { .. })));
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    }

    /// The bytes a checksum covers, spelled out: stored checksums stay
    /// valid whatever the code computing them becomes.
    #[test]
    fn a_checksum_covers_each_value_tagged_and_sized() {
        let values =
            [ValueRef::Null, ValueRef::Integer(-7), ValueRef::Real(1.5), ValueRef::Text(b"ab"), ValueRef::Blob(b"c")];
        let mut bytes = Vec::new();
        let parts: [(u8, Vec<u8>); 5] = [
            (0, vec![]),
            (1, (-7i64).to_le_bytes().to_vec()),
            (2, 1.5f64.to_le_bytes().to_vec()),
            (3, b"ab".to_vec()),
            (4, b"c".to_vec()),
        ];
        for (tag, data) in &parts {
            bytes.push(*tag);
            bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
            bytes.extend_from_slice(data);
        }
        assert_eq!(values_crc(values), i64::from(crc32fast::hash(&bytes)));
        // A grown column counts only with a value, after its position.
        let mut grown = bytes[..bytes.len() - (1 + 8 + 1)].to_vec();
        grown.extend_from_slice(&4u64.to_le_bytes());
        grown.extend_from_slice(&[4]);
        grown.extend_from_slice(&1u64.to_le_bytes());
        grown.extend_from_slice(b"c");
        assert_eq!(values_crc_grown(values, 4), i64::from(crc32fast::hash(&grown)));
        assert_eq!(values_crc_grown([ValueRef::Integer(1), ValueRef::Null], 1), values_crc([ValueRef::Integer(1)]));
    }

    /// A value too large to gather (a pack's body) is hashed where it lies:
    /// the checksum is still that of the bytes spelled out in order.
    #[test]
    fn a_large_value_is_covered_as_a_small_one_is() {
        let body: Vec<u8> = (0..5_000u32).map(|n| (n * 7 % 251) as u8).collect();
        let text = "t".repeat(513);
        let values = [ValueRef::Integer(3), ValueRef::Blob(&body), ValueRef::Text(text.as_bytes()), ValueRef::Null];
        let mut bytes = Vec::new();
        let parts: [(u8, &[u8]); 4] = [(1, &3i64.to_le_bytes()), (4, &body), (3, text.as_bytes()), (0, &[])];
        for (tag, data) in parts {
            bytes.push(tag);
            bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
            bytes.extend_from_slice(data);
        }
        assert_eq!(values_crc(values), i64::from(crc32fast::hash(&bytes)));
    }
}
