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
        "report {path} is larger than the {MAX_REPORT_BYTES}-byte limit; write less into conditions and data"
    )]
    TooLarge {
        path: PathBuf,
        /// The bytes read before stopping: one more than the limit.
        size: u64,
    },
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

/// Why an input file could not be read by [`read_limited`].
#[derive(Debug, thiserror::Error)]
pub enum LimitedReadError {
    /// More than `limit` bytes: the file, device or pipe was not read past `limit + 1`.
    #[error("{path} is larger than {limit} bytes")]
    TooLarge { path: PathBuf, limit: u64 },
    /// Missing, not permitted, a directory, …
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Reads all of `path` when it holds at most `limit` bytes; never reads (nor allocates) more
/// than `limit + 1` bytes, whatever the file is: a regular file, `/dev/zero`, a pipe fed
/// forever. The size is not taken from `stat` (a device or pipe has none, and a file can grow
/// between the stat and the read): the read itself is bounded.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, LimitedReadError> {
    let io_err = |source| LimitedReadError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > limit {
        return Err(LimitedReadError::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// Reads the report at `path`: `Ok(None)` when there is no file yet, an error when it is larger
/// than [`MAX_REPORT_BYTES`] (never reading more than one byte past the limit) or unreadable.
pub fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    match read_limited(path, MAX_REPORT_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(LimitedReadError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(LimitedReadError::Io { path, source }) => Err(ReadError::Io { path, source }),
        Err(LimitedReadError::TooLarge { path, limit }) => Err(ReadError::TooLarge {
            path,
            size: limit + 1,
        }),
    }
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
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_refused_naming_path_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        fs::write(&path, vec![b'a'; 64]).unwrap();
        assert_eq!(read_limited(&path, 64).unwrap().len(), 64);
        fs::write(&path, vec![b'a'; 65]).unwrap();
        let err = read_limited(&path, 64).unwrap_err();
        assert!(matches!(err, LimitedReadError::TooLarge { limit: 64, .. }));
        let text = err.to_string();
        assert!(
            text.contains(&path.display().to_string()) && text.contains("64 bytes"),
            "{text}"
        );
    }

    #[test]
    fn an_endless_device_is_refused_after_limit_plus_one_bytes() {
        // Unbounded, this read would never end (and exhaust memory).
        let err = read_limited(Path::new("/dev/zero"), 4096).unwrap_err();
        assert!(
            matches!(err, LimitedReadError::TooLarge { limit: 4096, .. }),
            "{err}"
        );
    }

    #[test]
    fn a_pipe_fed_forever_is_refused_and_its_writer_sees_the_reader_go() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("spec.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let writer_path = fifo.clone();
        // Writes until the reader closes its end (then a write fails with a broken pipe): the
        // join below returns only because the reader stopped reading.
        let writer = std::thread::spawn(move || {
            let mut pipe = OpenOptions::new().write(true).open(writer_path).unwrap();
            let chunk = [b' '; 8192];
            let mut written = 0u64;
            loop {
                match pipe.write_all(&chunk) {
                    Ok(()) => written += chunk.len() as u64,
                    Err(e) => return (written, e.kind()),
                }
            }
        });
        let err = read_limited(&fifo, 64 * 1024).unwrap_err();
        assert!(matches!(err, LimitedReadError::TooLarge { .. }), "{err}");
        let (written, why) = writer.join().unwrap();
        assert_eq!(why, io::ErrorKind::BrokenPipe);
        assert!(written > 64 * 1024, "{written}");
    }

    #[test]
    fn a_missing_input_file_is_an_io_error_naming_the_path() {
        let err = read_limited(Path::new("/nonexistent-dir/token"), 10).unwrap_err();
        assert!(
            matches!(&err, LimitedReadError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
        assert!(err.to_string().contains("/nonexistent-dir/token"), "{err}");
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
