//! Writing output files whole: each through a temporary name in its folder, then
//! renamed, so a crash never leaves half a file; errors name the file.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Creates the output folder `out` (and its parents) when missing.
pub fn create_folder(out: &Path) -> Result<()> {
    std::fs::create_dir_all(out)
        .map_err(|e| Error::failed(format!("{}: cannot create the output folder: {e}", out.display())))
}

/// Writes `body` as `out/name` through a temporary name; returns the path written.
pub fn write_whole(out: &Path, name: &str, body: &[u8]) -> Result<PathBuf> {
    let p = out.join(name);
    let tmp = out.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, body).map_err(|e| Error::failed(format!("{}: cannot write: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &p).map_err(|e| Error::failed(format!("{}: cannot write: {e}", p.display())))?;
    Ok(p)
}

/// Writes `body` as `path` directly (a data file a reader picks up whole or not at
/// all is not at stake); the error names the file.
pub fn write_plain(path: &Path, body: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, body).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
}

/// Writes `value` as JSON to `path`, streamed (never held whole as text): compact, or
/// pretty with a final newline; the same bytes as `serde_json::to_string` (or
/// `to_string_pretty` and a newline).
pub fn write_json(path: &Path, value: &impl serde::Serialize, pretty: bool) -> Result<()> {
    use std::io::Write;
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("{}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    if pretty {
        serde_json::to_writer_pretty(&mut w, value).map_err(|e| fail(&e))?;
        w.write_all(b"\n").map_err(|e| fail(&e))?;
    } else {
        serde_json::to_writer(&mut w, value).map_err(|e| fail(&e))?;
    }
    w.flush().map_err(|e| fail(&e))
}

/// Creates `dir` (and its parents); the error names it (`DIR: why`).
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::failed(format!("{}: {e}", dir.display())))
}

/// Reads a file the user named as text; a missing or unreadable file is bad input.
pub fn read_input(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_files_leave_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_whole(dir.path(), "a.md", b"x\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.md")]);
        let e = read_input(&dir.path().join("missing")).unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("missing: cannot read"), "{e}");
    }
}
