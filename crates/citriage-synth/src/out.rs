//! Writing the world to disk: the error type (always naming the path that
//! failed), per-worker file sinks that count files and bytes, and buffered
//! streaming writers for the big aggregate files.

use std::fmt;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why generation failed.
#[derive(Debug)]
pub enum SynthError {
    /// Reading or writing `path` failed.
    Io { path: PathBuf, source: std::io::Error },
    /// The parameters are unusable.
    Params(String),
    /// The output directory exists and is not empty.
    NotEmpty(PathBuf),
}

impl fmt::Display for SynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SynthError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            SynthError::Params(m) => write!(f, "invalid synth parameters: {m}"),
            SynthError::NotEmpty(p) => {
                write!(f, "{}: output directory is not empty (generate into a new or empty directory)", p.display())
            }
        }
    }
}

impl std::error::Error for SynthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SynthError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub fn io_err(path: &Path, source: std::io::Error) -> SynthError {
    SynthError::Io { path: path.to_path_buf(), source }
}

/// Files and bytes written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counter {
    pub files: u64,
    pub bytes: u64,
}

impl Counter {
    pub fn add(&mut self, o: Counter) {
        self.files += o.files;
        self.bytes += o.bytes;
    }
}

/// Writes whole files under the output root, creating folders as needed.
pub struct Sink {
    root: PathBuf,
    last_dir: PathBuf,
    /// Files and bytes of the whole world (those skipped included).
    pub count: Counter,
    /// Files and bytes written (those skipped left out).
    pub written: Counter,
    /// Files are counted but not written (a build outside the day slice asked for).
    pub skip: bool,
}

impl Sink {
    pub fn new(root: &Path) -> Sink {
        Sink {
            root: root.to_path_buf(),
            last_dir: PathBuf::new(),
            count: Counter::default(),
            written: Counter::default(),
            skip: false,
        }
    }

    /// Writes `data` to `rel` (a `/`-separated path under the root); while `skip` is
    /// set, only counts it.
    pub fn write(&mut self, rel: &str, data: &[u8]) -> Result<(), SynthError> {
        let n = Counter { files: 1, bytes: data.len() as u64 };
        if self.skip {
            self.count.add(n);
            return Ok(());
        }
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            if parent != self.last_dir {
                fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
                self.last_dir = parent.to_path_buf();
            }
        }
        fs::write(&path, data).map_err(|e| io_err(&path, e))?;
        self.count.add(n);
        self.written.add(n);
        Ok(())
    }
}

/// A buffered file written piece by piece (or, made by [`Stream::discard`], nowhere).
pub struct Stream {
    path: PathBuf,
    w: Option<BufWriter<File>>,
    pub bytes: u64,
}

impl Stream {
    pub fn create(root: &Path, rel: &str) -> Result<Stream, SynthError> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        let f = File::create(&path).map_err(|e| io_err(&path, e))?;
        Ok(Stream { path, w: Some(BufWriter::with_capacity(1 << 20, f)), bytes: 0 })
    }

    /// A stream whose pieces go nowhere (a world file a day slice does not write).
    pub fn discard() -> Stream {
        Stream { path: PathBuf::new(), w: None, bytes: 0 }
    }

    pub fn put(&mut self, data: &[u8]) -> Result<(), SynthError> {
        match &mut self.w {
            Some(w) => {
                self.bytes += data.len() as u64;
                w.write_all(data).map_err(|e| io_err(&self.path, e))
            }
            None => Ok(()),
        }
    }

    pub fn finish(self) -> Result<Counter, SynthError> {
        match self.w {
            Some(mut w) => {
                w.flush().map_err(|e| io_err(&self.path, e))?;
                Ok(Counter { files: 1, bytes: self.bytes })
            }
            None => Ok(Counter::default()),
        }
    }
}
