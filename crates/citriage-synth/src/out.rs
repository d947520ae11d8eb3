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
    pub count: Counter,
}

impl Sink {
    pub fn new(root: &Path) -> Sink {
        Sink { root: root.to_path_buf(), last_dir: PathBuf::new(), count: Counter::default() }
    }

    /// Writes `data` to `rel` (a `/`-separated path under the root).
    pub fn write(&mut self, rel: &str, data: &[u8]) -> Result<(), SynthError> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            if parent != self.last_dir {
                fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
                self.last_dir = parent.to_path_buf();
            }
        }
        fs::write(&path, data).map_err(|e| io_err(&path, e))?;
        self.count.files += 1;
        self.count.bytes += data.len() as u64;
        Ok(())
    }
}

/// A buffered file written piece by piece.
pub struct Stream {
    path: PathBuf,
    w: BufWriter<File>,
    pub bytes: u64,
}

impl Stream {
    pub fn create(root: &Path, rel: &str) -> Result<Stream, SynthError> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        let f = File::create(&path).map_err(|e| io_err(&path, e))?;
        Ok(Stream { path, w: BufWriter::with_capacity(1 << 20, f), bytes: 0 })
    }

    pub fn put(&mut self, data: &[u8]) -> Result<(), SynthError> {
        self.bytes += data.len() as u64;
        self.w.write_all(data).map_err(|e| io_err(&self.path, e))
    }

    pub fn finish(mut self) -> Result<Counter, SynthError> {
        self.w.flush().map_err(|e| io_err(&self.path, e))?;
        Ok(Counter { files: 1, bytes: self.bytes })
    }
}
