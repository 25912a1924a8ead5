//! Local files, through `std::fs`.
//!
//! Writes never leave a half-written file visible: the bytes go to a temporary
//! file in the same directory, which is then renamed into place (or, for
//! `write_if_absent`, hard-linked, which fails when the target exists: the
//! same atomic create-if-absent a Hadoop table's commit relies on). The file's
//! bytes and then its directory entry are fsynced, so a committed metadata file
//! survives a crash of the machine, not only of the process.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::FileInfo;
use crate::error::{Error, Result};

/// Maps an OS error on `location` to frazil's error, naming the location.
pub(super) fn error(location: &str, e: std::io::Error) -> Error {
    match e.kind() {
        ErrorKind::NotFound => Error::NotFound(format!("no such file: {location}")),
        ErrorKind::PermissionDenied => {
            Error::PermissionDenied(format!("permission denied: {location} ({e})"))
        }
        _ => Error::Io(format!("{location}: {e}")),
    }
}

pub fn read(location: &str, path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| error(location, e))
}

pub fn read_range(location: &str, path: &Path, start: u64, len: u64) -> Result<Vec<u8>> {
    let mut file = File::open(path).map_err(|e| error(location, e))?;
    let size = file.metadata().map_err(|e| error(location, e))?.len();
    check_range(location, start, len, size)?;
    file.seek(SeekFrom::Start(start))
        .map_err(|e| error(location, e))?;
    let mut out = vec![0; len as usize];
    file.read_exact(&mut out).map_err(|e| error(location, e))?;
    Ok(out)
}

/// Refuses a range that does not lie within an object of `size` bytes.
pub(super) fn check_range(location: &str, start: u64, len: u64, size: u64) -> Result<()> {
    match start.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(Error::InvalidValue(format!(
            "{location}: cannot read {len} bytes at offset {start} of a {size}-byte file"
        ))),
    }
}

pub fn size(location: &str, path: &Path) -> Result<u64> {
    let meta = fs::metadata(path).map_err(|e| error(location, e))?;
    if meta.is_dir() {
        return Err(Error::NotFound(format!(
            "no such file: {location} (it is a directory)"
        )));
    }
    Ok(meta.len())
}

pub fn exists(location: &str, path: &Path) -> Result<bool> {
    match fs::metadata(path) {
        Ok(meta) => Ok(meta.is_file()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(error(location, e)),
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Makes the rename or link of `path` durable: fsync of its directory (POSIX leaves a new
/// directory entry in the page cache until then).
#[cfg(unix)]
fn sync_dir(location: &str, path: &Path) -> Result<()> {
    File::open(parent_dir(path))
        .and_then(|dir| dir.sync_all())
        .map_err(|e| error(location, e))
}

#[cfg(not(unix))]
fn sync_dir(_location: &str, _path: &Path) -> Result<()> {
    // Windows cannot open a directory as a file; NTFS journals the entry itself.
    Ok(())
}

/// Writes `data` to a new temporary file beside `path`; returns its path.
fn write_temp(location: &str, path: &Path, data: &[u8]) -> Result<PathBuf> {
    let parent = parent_dir(path);
    fs::create_dir_all(&parent).map_err(|e| error(location, e))?;
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidValue(format!("{location}: names a directory, not a file")))?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = parent.join(format!(
        ".{}.{}-{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(data)?;
        file.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(error(location, e));
    }
    Ok(temp)
}

pub fn write(location: &str, path: &Path, data: &[u8]) -> Result<()> {
    let temp = write_temp(location, path, data)?;
    fs::rename(&temp, path).map_err(|e| {
        let _ = fs::remove_file(&temp);
        error(location, e)
    })?;
    sync_dir(location, path)
}

/// Returns false, writing nothing, when `path` already exists.
pub fn write_if_absent(location: &str, path: &Path, data: &[u8]) -> Result<bool> {
    let temp = write_temp(location, path, data)?;
    let linked = fs::hard_link(&temp, path);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => sync_dir(location, path).map(|()| true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(error(location, e)),
    }
}

/// Deleting a file that does not exist succeeds, as it does in object stores.
pub fn delete(location: &str, path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(error(location, e)),
    }
}

/// Milliseconds from the epoch of a file's modification time, when the platform has one.
fn modified_ms(meta: &fs::Metadata) -> Option<i64> {
    let modified = meta.modified().ok()?;
    match modified.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).ok(),
        Err(before) => i64::try_from(before.duration().as_millis())
            .ok()
            .map(|ms| -ms),
    }
}

/// Every file under the directory `path`, recursively, as
/// `(path, size, modified ms)`; nothing when the directory does not exist.
pub fn list(location: &str, path: &Path) -> Result<Vec<(PathBuf, u64, Option<i64>)>> {
    let mut out = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound && dir == path => return Ok(out),
            Err(e) => return Err(error(location, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| error(location, e))?;
            let meta = entry.metadata().map_err(|e| error(location, e))?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                out.push((entry.path(), meta.len(), modified_ms(&meta)));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The files directly in the directory `path` (as `list` gives them) and its
/// subdirectories, each sorted; nothing when the directory does not exist.
#[allow(clippy::type_complexity)]
pub fn list_dir(
    location: &str,
    path: &Path,
) -> Result<(Vec<(PathBuf, u64, Option<i64>)>, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let entries = match fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok((files, dirs)),
        Err(e) => return Err(error(location, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| error(location, e))?;
        let meta = entry.metadata().map_err(|e| error(location, e))?;
        if meta.is_dir() {
            dirs.push(entry.path());
        } else {
            files.push((entry.path(), meta.len(), modified_ms(&meta)));
        }
    }
    files.sort();
    dirs.sort();
    Ok((files, dirs))
}

fn utf8<'a>(location: &str, p: &'a Path) -> Result<&'a str> {
    p.to_str()
        .ok_or_else(|| Error::InvalidData(format!("{location}: lists a non-UTF-8 path {p:?}")))
}

/// `list_dir` with locations in the caller's form.
pub fn list_dir_infos(
    location: &str,
    path: &Path,
    form: &super::location::Location,
) -> Result<(Vec<FileInfo>, Vec<String>)> {
    let (files, dirs) = list_dir(location, path)?;
    let files = files
        .into_iter()
        .map(|(p, size, last_modified_ms)| {
            Ok(FileInfo {
                location: form.sibling(utf8(location, &p)?),
                size,
                last_modified_ms,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let dirs = dirs
        .iter()
        .map(|p| Ok(form.sibling(utf8(location, p)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok((files, dirs))
}

/// `list` with locations in the caller's form.
pub fn list_infos(
    location: &str,
    path: &Path,
    form: &super::location::Location,
) -> Result<Vec<FileInfo>> {
    list(location, path)?
        .into_iter()
        .map(|(p, size, last_modified_ms)| {
            let p = p.to_str().ok_or_else(|| {
                Error::InvalidData(format!("{location}: lists a non-UTF-8 path {p:?}"))
            })?;
            Ok(FileInfo {
                location: form.sibling(p),
                size,
                last_modified_ms,
            })
        })
        .collect()
}
