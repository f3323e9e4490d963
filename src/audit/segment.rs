//! Audit log segments: naming, finding and reading the closed files of a rotated log.
//!
//! The active file keeps its configured name (`guardian-audit.jsonl`); a rotation renames it to
//! `<stem>.<first seq, 20 digits>.jsonl` (`guardian-audit.00000000000000000001.jsonl`), which
//! sorts in chain order, and optionally compresses it (`.gz`, `.zst`). Files an external
//! logrotate left (`guardian-audit.jsonl.1`, `….2.gz`) are segments too. Whatever their names,
//! segments are ordered by the `seq` of their first record. This module owns reading them
//! (decompressing transparently) and compressing a closed one; the writer and the chain are
//! [`super`]'s.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// How closed segments are stored (`[audit] compress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// As written.
    #[default]
    None,
    /// gzip (`.gz`).
    Gzip,
    /// Zstandard (`.zst`).
    Zstd,
}

impl Compression {
    /// The file-name extension, with its dot (empty for none).
    pub fn extension(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => ".gz",
            Compression::Zstd => ".zst",
        }
    }

    /// The compression a file name says.
    pub fn of(name: &str) -> Compression {
        if name.ends_with(".gz") {
            Compression::Gzip
        } else if name.ends_with(".zst") {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// One closed segment of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its path.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// The `seq` of its first record.
    pub first_seq: u64,
    /// The `prev` of its first record.
    pub first_prev: String,
}

/// The name part that segment names start with: the active file's name without `.jsonl`.
pub fn stem(active: &Path) -> String {
    let name = active
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".jsonl").unwrap_or(&name).to_string()
}

/// The name a rotation gives the active file whose first record is `first_seq`.
pub fn closed_name(active: &Path, first_seq: u64) -> String {
    format!("{}.{first_seq:020}.jsonl", stem(active))
}

/// The directory a log lives in.
pub fn dir_of(active: &Path) -> PathBuf {
    match active.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether `name` (in the log's directory) may be a closed segment of `active`: guardian's own
/// names and an external logrotate's (`<active name>.1`, `.2.gz`, `-20261130`), but not the
/// active file, its lock, or a compression in progress.
pub(crate) fn candidate(active: &Path, name: &str) -> bool {
    let active_name = active
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == active_name
        || name.ends_with(".partial")
        || name.ends_with(".lock")
        || name.ends_with(".next")
    {
        return false;
    }
    let stem = stem(active);
    let ours = name.strip_prefix(&format!("{stem}.")).is_some_and(|rest| {
        let rest = rest
            .strip_suffix(Compression::of(name).extension())
            .unwrap_or(rest);
        rest.strip_suffix(".jsonl")
            .is_some_and(|digits| digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
    });
    let logrotate = name.starts_with(&format!("{active_name}."))
        || name.starts_with(&format!("{active_name}-"));
    ours || logrotate
}

/// Glob patterns (absolute, `*` not crossing `/`) for every file of the log whose active file
/// is `active` besides the active file itself: closed segments (guardian's and an external
/// logrotate's names), the lock, a rotation's or compression's temporary file. The pipeline hands
/// them to the policy, which protects them from writes as guardian's own files.
pub fn own_globs(active: &Path) -> Vec<String> {
    let dir = globset::escape(&dir_of(active).to_string_lossy());
    let name = globset::escape(
        &active
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let stem = globset::escape(&stem(active));
    vec![
        format!("{dir}/{name}.*"),
        format!("{dir}/{name}-*"),
        format!("{dir}/{stem}.*.jsonl"),
        format!("{dir}/{stem}.*.jsonl.*"),
    ]
}

/// Opens a segment for reading, decompressing by its name. A segment compressed since it was
/// listed (the original removed) is read from its compressed copy.
pub fn open_reader(path: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    let (file, path) = match File::open(path) {
        Ok(f) => (f, path.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let name = path.to_string_lossy();
            [Compression::Gzip, Compression::Zstd]
                .iter()
                .filter(|_| Compression::of(&name) == Compression::None)
                .find_map(|c| {
                    let p = PathBuf::from(format!("{name}{}", c.extension()));
                    File::open(&p).ok().map(|f| (f, p))
                })
                .ok_or(e)?
        }
        Err(e) => return Err(e),
    };
    let name = path.to_string_lossy();
    Ok(match Compression::of(&name) {
        Compression::None => Box::new(BufReader::with_capacity(64 * 1024, file)),
        Compression::Gzip => Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file))),
        Compression::Zstd => Box::new(BufReader::new(zstd::stream::read::Decoder::new(file)?)),
    })
}

/// The `seq` and `prev` of a file's first record, if its first line is a chained record.
fn first_link(path: &Path) -> Option<(u64, String)> {
    let mut r = open_reader(path).ok()?;
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&line).ok()?;
    Some((
        v.get("seq")?.as_u64()?,
        v.get("prev")?.as_str()?.to_string(),
    ))
}

/// The closed segments of the log whose active file is `active`, in chain order (by the `seq`
/// of their first record). A file with an uncompressed and a compressed copy (a compression
/// that finished but had not removed the original yet) counts once, uncompressed. Files whose
/// first line is not a chained record are not segments, and neither is a hard link to the
/// active file itself: a rotation interrupted between linking the segment's name and renaming
/// the next file into place, which the next writer undoes (the active file is still the chain's
/// end).
pub fn list(active: &Path) -> io::Result<Vec<Segment>> {
    use std::os::unix::fs::MetadataExt;
    let active_id = std::fs::metadata(active).ok().map(|m| (m.dev(), m.ino()));
    let dir = dir_of(active);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| candidate(active, n))
        .collect();
    names.sort();
    let mut out: Vec<Segment> = Vec::new();
    for name in &names {
        let comp = Compression::of(name);
        if comp != Compression::None {
            let plain = name.strip_suffix(comp.extension()).unwrap_or(name);
            if names.iter().any(|n| n == plain) {
                continue;
            }
        }
        let path = dir.join(name);
        if active_id.is_some()
            && std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino())) == active_id
        {
            continue;
        }
        if let Some((first_seq, first_prev)) = first_link(&path) {
            out.push(Segment {
                path,
                name: name.clone(),
                first_seq,
                first_prev,
            });
        }
    }
    out.sort_by_key(|s| s.first_seq);
    Ok(out)
}

/// The whole lines of a segment or the active file, in order, with their line numbers; `each`
/// returns false to stop. A last line without a newline is passed without one.
pub fn for_each_line(path: &Path, mut each: impl FnMut(u64, &[u8]) -> bool) -> io::Result<()> {
    let mut r = open_reader(path)?;
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        n += 1;
        if !each(n, &line) {
            return Ok(());
        }
    }
}

/// Compresses the closed segment at `path` next to it (`<name>.gz` / `.zst`): written to a
/// `.partial` file, synced, renamed into place (keeping the original's modification time), and
/// only then the original removed. A crash at any point leaves the original, or both (the
/// original counts), or the compressed copy alone.
pub fn compress(path: &Path, how: Compression) -> io::Result<PathBuf> {
    use std::io::Write as _;
    if how == Compression::None {
        return Ok(path.to_path_buf());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = path.with_file_name(format!("{name}{}", how.extension()));
    let partial = path.with_file_name(format!("{name}{}.partial", how.extension()));
    let mut input = File::open(path)?;
    let modified = input.metadata()?.modified()?;
    let out = File::create(&partial)?;
    let out = match how {
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            io::copy(&mut input, &mut enc)?;
            enc.finish()?
        }
        Compression::Zstd => {
            let mut enc = zstd::stream::write::Encoder::new(out, 3)?;
            io::copy(&mut input, &mut enc)?;
            enc.finish()?
        }
        Compression::None => unreachable!("returned above"),
    };
    let mut out = out;
    out.flush()?;
    out.set_modified(modified)?;
    out.sync_all()?;
    std::fs::rename(&partial, &target)?;
    sync_dir(&dir_of(path))?;
    std::fs::remove_file(path)?;
    sync_dir(&dir_of(path))?;
    Ok(target)
}

/// Removes compressions a crash interrupted (`*.partial`) in the log's directory.
pub fn clean_partials(active: &Path) -> io::Result<()> {
    let stem = stem(active);
    let Ok(entries) = std::fs::read_dir(dir_of(active)) else {
        return Ok(());
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&stem) && name.ends_with(".partial") {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// `fsync` on a directory, so a rename or a removal in it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Reads a whole segment into memory (decompressed): for the last record of a compressed one.
pub fn read_all(path: &Path) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open_reader(path)?.read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_in_chain_order_and_candidates_are_recognised() {
        let a = Path::new("/var/log/guardian-audit.jsonl");
        assert_eq!(stem(a), "guardian-audit");
        assert_eq!(
            closed_name(a, 1),
            "guardian-audit.00000000000000000001.jsonl"
        );
        assert!(closed_name(a, 9) < closed_name(a, 10));
        for yes in [
            "guardian-audit.00000000000000000001.jsonl",
            "guardian-audit.00000000000000000001.jsonl.gz",
            "guardian-audit.00000000000000000001.jsonl.zst",
            "guardian-audit.jsonl.1",
            "guardian-audit.jsonl.2.gz",
            "guardian-audit.jsonl-20261130",
        ] {
            assert!(candidate(a, yes), "{yes}");
        }
        for no in [
            "guardian-audit.jsonl",
            "guardian-audit.jsonl.lock",
            "guardian-audit.jsonl.next",
            "guardian-audit.00000000000000000001.jsonl.gz.partial",
            "guardian-audit.1.jsonl",
            "other.jsonl",
        ] {
            assert!(!candidate(a, no), "{no}");
        }
    }

    #[test]
    fn the_logs_own_files_are_matched_by_its_globs() {
        let mut b = globset::GlobSetBuilder::new();
        for g in own_globs(Path::new("/s/guardian-audit.jsonl")) {
            b.add(
                globset::GlobBuilder::new(&g)
                    .literal_separator(true)
                    .build()
                    .unwrap(),
            );
        }
        let set = b.build().unwrap();
        for yes in [
            "/s/guardian-audit.jsonl.lock",
            "/s/guardian-audit.jsonl.next",
            "/s/guardian-audit.00000000000000000001.jsonl",
            "/s/guardian-audit.00000000000000000001.jsonl.gz.partial",
            "/s/guardian-audit.jsonl.1.gz",
            "/s/guardian-audit.jsonl-20261130",
        ] {
            assert!(set.is_match(yes), "{yes}");
        }
        for no in [
            "/s/guardian-audit.md",
            "/other/guardian-audit.jsonl.1",
            "/s/notes.jsonl",
            "/s/sub/guardian-audit.jsonl.1",
        ] {
            assert!(!set.is_match(no), "{no}");
        }
    }

    #[test]
    fn compressed_segments_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        for how in [Compression::Gzip, Compression::Zstd] {
            let p = dir.path().join(format!("guardian-audit.{:020}.jsonl", 1));
            let text = "{\"seq\":1,\"prev\":\"x\"}\n{\"seq\":2,\"prev\":\"y\"}\n";
            std::fs::write(&p, text).unwrap();
            let c = compress(&p, how).unwrap();
            assert!(!p.exists());
            assert!(c.to_string_lossy().ends_with(how.extension()));
            assert_eq!(read_all(&c).unwrap(), text.as_bytes());
            let segs = list(&dir.path().join("guardian-audit.jsonl")).unwrap();
            assert_eq!(segs.len(), 1);
            assert_eq!(segs[0].first_seq, 1);
            std::fs::remove_file(&c).unwrap();
        }
    }
}
