//! The file hand-off between adapter and status-reporter: atomic write, bounded read.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::{MAX_REPORT_BYTES, Report, Violation, validate};

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(
        "report {path} is {size} bytes, more than the {MAX_REPORT_BYTES}-byte limit; write less into conditions and data"
    )]
    TooLarge { path: PathBuf, size: u64 },
    #[error("cannot read report {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("refusing to write an invalid report: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Violation>),
    #[error("report would be {size} bytes, more than the {MAX_REPORT_BYTES}-byte limit")]
    TooLarge { size: usize },
    #[error("cannot write report {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Reads the report at `path`: `Ok(None)` when there is no file yet, an error when it is larger
/// than [`MAX_REPORT_BYTES`] (never reading more than one byte past the limit) or unreadable.
pub fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    let io_err = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    let size = file.metadata().map_err(io_err)?.len();
    if size > MAX_REPORT_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            size,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    let read = bytes.len() as u64;
    if read > MAX_REPORT_BYTES {
        // The file grew while we read it.
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            size: read,
        });
    }
    Ok(Some(bytes))
}

/// Validates `report` and writes it to `path` atomically: a temp file in the same directory,
/// written, fsynced, given mode 0644 and renamed over `path`; then the directory is fsynced.
/// A reader sees either no file or the whole report, never a part.
pub fn write_atomic(path: &Path, report: &Report) -> Result<(), WriteError> {
    validate(report).map_err(WriteError::Invalid)?;
    let mut json = serde_json::to_vec_pretty(report).map_err(|e| WriteError::Io {
        path: path.to_owned(),
        source: io::Error::other(e),
    })?;
    json.push(b'\n');
    if json.len() as u64 > MAX_REPORT_BYTES {
        return Err(WriteError::TooLarge { size: json.len() });
    }
    write_bytes_atomic(path, &json).map_err(|source| WriteError::Io {
        path: path.to_owned(),
        source,
    })
}

fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);

    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&tmp)?;
        file.write_all(bytes)?;
        // The umask may have narrowed the mode; readers in other containers need 0644.
        file.set_permissions(fs::Permissions::from_mode(0o644))?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    // Make the rename itself durable.
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Condition, ConditionStatus, parse};

    fn report() -> Report {
        Report::new(vec![Condition::new(
            "Available",
            ConditionStatus::True,
            "Ready",
            "all good",
        )])
    }

    #[test]
    fn write_then_read_round_trips_with_mode_0644_and_no_temp_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("adapter-report.json");
        write_atomic(&path, &report()).unwrap();
        let bytes = read_bounded(&path).unwrap().unwrap();
        assert_eq!(parse(&bytes, "Available").unwrap(), report());
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("adapter-report.json")]);
    }

    #[test]
    fn missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_bounded(&dir.path().join("nope.json"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn oversized_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        fs::write(&path, vec![b' '; MAX_REPORT_BYTES as usize + 1]).unwrap();
        assert!(
            matches!(read_bounded(&path), Err(ReadError::TooLarge { size, .. }) if size == MAX_REPORT_BYTES + 1)
        );
    }

    #[test]
    fn invalid_report_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut bad = report();
        bad.conditions[0].reason = "not camel case".into();
        assert!(
            matches!(write_atomic(&path, &bad), Err(WriteError::Invalid(v)) if v[0].path == "conditions[0].reason")
        );
        assert!(!path.exists());
    }

    #[test]
    fn unwritable_directory_is_an_io_error_naming_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/r.json"), &report()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir/r.json"), "{err}");
    }
}
