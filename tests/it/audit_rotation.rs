//! The audit log over months: rotation into segments with one unbroken chain, retention that
//! records what it deletes, compressed segments, verification that names a missing, truncated or
//! edited segment, several writers and external renames, crash recovery, a tailer following the
//! active file by inode (as Vector's and Fluent Bit's file sources do), `guardian audit rotate`,
//! SIGHUP and `mirror = "stdout"`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use guardian::audit::segment;
use guardian::request::ReviewRequest;
use guardian::{Config, Guardian};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

fn guardian_at(audit: &Path, keys: &str) -> Arc<Guardian> {
    let text = format!(
        "[policy]\ndeny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]\n\n[reviewer]\nbackend = \"none\"\n\n[audit]\npath = \"{}\"\n{keys}\n",
        audit.display()
    );
    let cfg = Config::parse(&text, "guardian.toml").expect("config");
    Arc::new(Guardian::from_config(cfg).expect("guardian"))
}

/// `n` reviews, alternating an allow and a deny; returns the review ids in order.
async fn decide(g: &Arc<Guardian>, n: usize, tag: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let cmd = if i % 2 == 0 { "git status" } else { "git push" };
        let r = g
            .review(
                ReviewRequest::shell(format!("{cmd} # {tag}{i}"), Some("/work".into())),
                "test",
            )
            .await;
        ids.push(r.id.clone());
    }
    ids
}

/// Every record across segments and the active file, in order.
fn records(audit: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    guardian::audit_report::for_each_record(
        audit,
        &guardian::audit_report::Filter::default(),
        |_, v| out.push(v.clone()),
    )
    .expect("records");
    out
}

fn review_ids(audit: &Path) -> Vec<String> {
    records(audit)
        .iter()
        .filter_map(|v| v["review_id"].as_str().map(str::to_string))
        .collect()
}

fn closed(audit: &Path) -> Vec<segment::Segment> {
    segment::list(audit).expect("segments")
}

fn verify_err(audit: &Path) -> String {
    guardian::audit::verify(audit)
        .expect_err("the chain must be reported broken")
        .to_string()
}

fn assert_seq_contiguous(audit: &Path) {
    let seqs: Vec<u64> = records(audit)
        .iter()
        .map(|v| v["seq"].as_u64().expect("seq"))
        .collect();
    for w in seqs.windows(2) {
        assert_eq!(
            w[1],
            w[0] + 1,
            "records out of order or duplicated: {seqs:?}"
        );
    }
}

#[tokio::test]
async fn rotation_by_size_keeps_one_chain_across_segments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 3000");
    let ids = decide(&g, 20, "a").await;
    g.flush_audit().await.expect("flush");
    let segs = closed(&audit);
    assert!(segs.len() >= 5, "{} segments", segs.len());
    assert_eq!(
        segs[0].name, "audit.00000000000000000001.jsonl",
        "closed segments are named by their first seq"
    );
    let v = guardian::audit::verify(&audit).expect("verifies");
    assert_eq!(v.files, segs.len() as u64 + 1);
    assert_eq!(v.pruned, None);
    assert_eq!(review_ids(&audit), ids, "every decision once, in order");
    assert_seq_contiguous(&audit);
    // Each later file starts with a header naming the previous segment and linking to it.
    let mut prev_name = String::new();
    let mut prev_last = 0;
    for (i, s) in segs.iter().enumerate() {
        let text = segment::read_all(&s.path).expect("read");
        let lines: Vec<Value> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("json"))
            .collect();
        if i > 0 {
            assert_eq!(lines[0]["event"], "segment_start");
            assert_eq!(lines[0]["segment"]["previous"], prev_name.as_str());
            assert_eq!(lines[0]["segment"]["previous_last_seq"], prev_last);
        }
        prev_name = s.name.clone();
        prev_last = lines.last().expect("records")["seq"].as_u64().expect("seq");
    }
    // The summary counts decisions only, not the headers.
    let s = guardian::audit_report::summarize(&audit, &Default::default()).expect("summary");
    assert_eq!(s.records, 20);
    assert_eq!((s.allowed, s.denied), (10, 10));
    assert!(s.chain.is_ok(), "{:?}", s.chain);
}

#[tokio::test]
async fn verify_names_a_missing_truncated_or_edited_segment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 3000");
    decide(&g, 20, "b").await;
    g.flush_audit().await.expect("flush");
    let segs = closed(&audit);
    assert!(segs.len() >= 4);
    let mid = &segs[1];
    let next = &segs[2];
    let original = std::fs::read(&mid.path).expect("read");

    // Missing: a middle segment deleted.
    std::fs::remove_file(&mid.path).expect("rm");
    let err = verify_err(&audit);
    assert!(
        err.starts_with(&next.name) && err.contains("missing") && err.contains(&mid.name),
        "{err}"
    );
    std::fs::write(&mid.path, &original).expect("restore");
    guardian::audit::verify(&audit).expect("restored");

    // Truncated: its last record cut off.
    let body = &original[..original.len() - 1];
    let cut = body.iter().rposition(|&b| b == b'\n').expect("lines") + 1;
    std::fs::write(&mid.path, &original[..cut]).expect("truncate");
    let err = verify_err(&audit);
    assert!(
        err.starts_with(&next.name) && err.contains(&format!("{} was truncated", mid.name)),
        "{err}"
    );
    std::fs::write(&mid.path, &original).expect("restore");

    // Edited: a decision flipped inside a closed segment.
    let text = String::from_utf8(original.clone()).expect("utf8");
    let edited = text.replacen("\"decision\":\"deny\"", "\"decision\":\"allow\"", 1);
    assert_ne!(edited, text);
    std::fs::write(&mid.path, edited).expect("edit");
    let err = verify_err(&audit);
    assert!(
        err.starts_with(&mid.name) && err.contains("modified"),
        "{err}"
    );
    std::fs::write(&mid.path, &original).expect("restore");

    // Reordered by renaming: segments are ordered by their first seq, not their names.
    let renamed = dir.path().join("audit.jsonl.9");
    std::fs::rename(&mid.path, &renamed).expect("rename");
    guardian::audit::verify(&audit).expect("order comes from the chain");
    std::fs::rename(&renamed, &mid.path).expect("rename back");

    // The oldest segment deleted without a prune record: named, not accepted.
    std::fs::remove_file(&segs[0].path).expect("rm");
    let err = verify_err(&audit);
    assert!(err.contains("no prune record accounts for"), "{err}");

    // The CLI names it too, exit 1.
    let o = Command::new(BIN)
        .args(["audit", "verify", "--file"])
        .arg(&audit)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no prune record"));
}

#[tokio::test]
async fn retention_records_what_it_deletes_and_verify_accepts_only_that() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 3000\nkeep_segments = 2");
    let ids = decide(&g, 30, "c").await;
    g.flush_audit().await.expect("flush");
    let segs = closed(&audit);
    assert_eq!(segs.len(), 2, "keep_segments = 2");
    let v = guardian::audit::verify(&audit).expect("the kept part verifies");
    let (first, last) = v.pruned.expect("pruned range reported");
    assert_eq!(first, 1);
    assert_eq!(last + 1, segs[0].first_seq);
    let all = records(&audit);
    let prunes: Vec<&Value> = all.iter().filter(|r| r["event"] == "prune").collect();
    assert!(!prunes.is_empty());
    let p = &prunes.last().expect("prune")["pruned"];
    assert_eq!(p["reason"], "keep_segments = 2");
    assert!(p["segments"].as_array().is_some_and(|a| !a.is_empty()));
    // The newest decisions are all still there, in order.
    let kept = review_ids(&audit);
    assert!(ids.ends_with(&kept), "kept ids are the newest, in order");

    // keep_days: segments last written long ago go at the next rotation.
    let g2 = guardian_at(&audit, "rotate_bytes = 3000\nkeep_days = 30");
    for s in closed(&audit) {
        let f = std::fs::File::options()
            .write(true)
            .open(&s.path)
            .expect("open");
        f.set_modified(std::time::SystemTime::now() - Duration::from_secs(40 * 86_400))
            .expect("mtime");
    }
    decide(&g2, 6, "d").await;
    g2.flush_audit().await.expect("flush");
    let all = records(&audit);
    let last_prune = all
        .iter()
        .rev()
        .find(|r| r["event"] == "prune")
        .expect("prune");
    assert!(
        last_prune["pruned"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("keep_days = 30")),
        "{last_prune}"
    );
    guardian::audit::verify(&audit).expect("verifies after keep_days");
}

#[tokio::test]
async fn compressed_segments_are_verified_and_queried_transparently() {
    for (how, ext) in [("gzip", ".gz"), ("zstd", ".zst")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let audit = dir.path().join("audit.jsonl");
        let g = guardian_at(
            &audit,
            &format!("rotate_bytes = 3000\ncompress = \"{how}\""),
        );
        let ids = decide(&g, 16, how).await;
        g.flush_audit().await.expect("flush");
        // Compression runs in the background after each rotation.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let segs = closed(&audit);
            if !segs.is_empty() && segs.iter().all(|s| s.name.ends_with(ext)) {
                break;
            }
            assert!(Instant::now() < deadline, "{how}: not compressed: {segs:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        guardian::audit::verify(&audit).expect("verifies");
        assert_eq!(review_ids(&audit), ids, "{how}");
        let o = Command::new(BIN)
            .args(["audit", "summary", "--format", "json", "--file"])
            .arg(&audit)
            .output()
            .expect("summary");
        let v: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["records"], 16, "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotation_under_concurrent_load_never_loses_duplicates_or_reorders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 4096\ncompress = \"gzip\"");
    let mut tasks = Vec::new();
    for w in 0..16 {
        let g = Arc::clone(&g);
        tasks.push(tokio::spawn(async move {
            decide(&g, 25, &format!("w{w}-")).await
        }));
    }
    let mut acked = HashSet::new();
    for t in tasks {
        acked.extend(t.await.expect("task"));
    }
    g.flush_audit().await.expect("flush");
    assert_eq!(acked.len(), 400);
    let ids = review_ids(&audit);
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "a record was duplicated");
    assert_eq!(ids.len(), 400, "a record was lost");
    assert!(acked.iter().all(|id| unique.contains(id)));
    assert_seq_contiguous(&audit);
    guardian::audit::verify(&audit).expect("verifies");
    assert!(closed(&audit).len() > 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_writers_and_an_external_rename_keep_one_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    // Two pipelines (as two guardian processes would) on one log, both rotating.
    let a = guardian_at(&audit, "rotate_bytes = 5000");
    let b = guardian_at(&audit, "rotate_bytes = 5000");
    let (ta, tb) = (Arc::clone(&a), Arc::clone(&b));
    let (ia, ib) = tokio::join!(
        tokio::spawn(async move { decide(&ta, 60, "A").await }),
        tokio::spawn(async move { decide(&tb, 60, "B").await }),
    );
    let mut acked: Vec<String> = ia.expect("a");
    acked.extend(ib.expect("b"));
    // An external rename (logrotate without copytruncate), then a file created in its place.
    std::fs::rename(&audit, dir.path().join("audit.jsonl.1")).expect("rename");
    acked.extend(decide(&a, 3, "after-rename").await);
    std::fs::rename(&audit, dir.path().join("audit.jsonl.2")).expect("rename");
    std::fs::File::create(&audit).expect("create");
    acked.extend(decide(&b, 3, "after-create").await);
    a.flush_audit().await.expect("flush");
    b.flush_audit().await.expect("flush");
    guardian::audit::verify(&audit).expect("one chain");
    assert_seq_contiguous(&audit);
    let ids: HashSet<String> = review_ids(&audit).into_iter().collect();
    assert_eq!(ids.len(), acked.len());
    assert!(acked.iter().all(|id| ids.contains(id)));
    // SIGHUP after such a rename (logrotate's postrotate) closes nothing more: the new file holds
    // only its header.
    let before = closed(&audit).len();
    std::fs::rename(&audit, dir.path().join("audit.jsonl.3")).expect("rename");
    std::fs::File::create(&audit).expect("create");
    assert!(
        !a.rotate_audit().await.expect("rotate"),
        "a header-only file is not rotated"
    );
    assert_eq!(
        closed(&audit).len(),
        before + 1,
        "only the renamed file is new"
    );
    acked.extend(decide(&a, 2, "after-hup").await);
    assert!(
        a.rotate_audit().await.expect("rotate"),
        "with records it rotates"
    );
    guardian::audit::verify(&audit).expect("one chain after the HUP");
    let ids: HashSet<String> = review_ids(&audit).into_iter().collect();
    assert!(acked.iter().all(|id| ids.contains(id)));
    // The header after the external rename names the renamed file.
    let headers: Vec<Value> = records(&audit)
        .into_iter()
        .filter(|r| r["event"] == "segment_start")
        .collect();
    assert!(
        headers
            .iter()
            .any(|h| h["segment"]["previous"] == "audit.jsonl.1"),
        "{headers:?}"
    );
}

#[tokio::test]
async fn a_crash_in_the_middle_of_a_rotation_recovers_to_a_verifiable_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    {
        let g = guardian_at(&audit, "rotate_bytes = 0");
        decide(&g, 5, "pre").await;
        g.flush_audit().await.expect("flush");
    }
    // Crash right after the rename: the segment exists, no active file.
    let seg = dir.path().join(segment::closed_name(&audit, 1));
    std::fs::rename(&audit, &seg).expect("rename");
    // ... and a compression of it cut short, and one finished but not cleaned up.
    std::fs::write(
        dir.path()
            .join("audit.00000000000000000001.jsonl.gz.partial"),
        b"junk",
    )
    .expect("partial");
    let g = guardian_at(&audit, "rotate_bytes = 0");
    let ids = decide(&g, 3, "post").await;
    g.flush_audit().await.expect("flush");
    assert!(
        !dir.path()
            .join("audit.00000000000000000001.jsonl.gz.partial")
            .exists()
    );
    let v = guardian::audit::verify(&audit).expect("verifies");
    assert_eq!(v.files, 2);
    let all = review_ids(&audit);
    assert_eq!(all.len(), 8);
    assert!(all.ends_with(&ids));
    // A crash while the header was being written: a torn header is cut and written again.
    drop(g);
    let seg2 = dir.path().join(segment::closed_name(&audit, 7));
    std::fs::rename(&audit, &seg2).expect("rename");
    std::fs::write(&audit, b"{\"seq\":13,\"prev\":\"ab").expect("torn");
    let g = guardian_at(&audit, "rotate_bytes = 0");
    decide(&g, 1, "last").await;
    g.flush_audit().await.expect("flush");
    guardian::audit::verify(&audit).expect("verifies after a torn header");
    assert_eq!(review_ids(&audit).len(), 9);
    // A crash after the closed segment's hard link was made, before the new file (already
    // written as `.next`) was renamed over the active name: the rotation did not happen.
    drop(g);
    let last_first = guardian::audit::last_seq(&audit).expect("seq");
    let link = dir.path().join(segment::closed_name(&audit, 13));
    std::fs::hard_link(&audit, &link).expect("link");
    std::fs::write(dir.path().join("audit.jsonl.next"), b"{\"seq\":99}\n").expect("next");
    // As the crash left it, before any writer reopens it, the log verifies and reads once: the
    // link to the active file is no closed segment yet.
    let v = guardian::audit::verify(&audit).expect("verifies as the crash left it");
    assert_eq!(v.files, 3, "the link is not counted as a segment");
    assert_eq!(review_ids(&audit).len(), 9, "no record is read twice");
    let g = guardian_at(&audit, "rotate_bytes = 0");
    decide(&g, 1, "after-link").await;
    g.flush_audit().await.expect("flush");
    assert!(!link.exists(), "the half-made segment link is removed");
    assert!(!dir.path().join("audit.jsonl.next").exists());
    guardian::audit::verify(&audit).expect("verifies after a crash mid-link");
    assert_eq!(
        guardian::audit::last_seq(&audit).expect("seq"),
        last_first + 1
    );
    assert_eq!(review_ids(&audit).len(), 10);
}

/// A shipper as Vector's file source works with `include = ["…/audit*.jsonl"]` and
/// `fingerprint.strategy = "device_and_inode"` (Fluent Bit's tail input with a `Path` glob and
/// its offset DB does the same): every poll lists the files matching the glob, reads each from
/// the offset it reached in that inode, and starts new inodes from 0. A rotation renames the
/// active file (same inode, so no record is read twice) and creates a new one (a new inode, read
/// from its start), so nothing is missed even when rotations come faster than the polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shipper_following_files_by_inode_sees_every_record_once() {
    use std::collections::HashMap;
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 8192");
    decide(&g, 1, "first").await;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let root = dir.path().to_path_buf();
    let stop = Arc::clone(&done);
    let shipper = std::thread::spawn(move || {
        // inode -> (offset, the part of a line read so far)
        let mut files: HashMap<u64, (u64, Vec<u8>)> = HashMap::new();
        let mut shipped: Vec<Vec<Value>> = Vec::new();
        let mut per_inode: HashMap<u64, usize> = HashMap::new();
        loop {
            let last_round = stop.load(std::sync::atomic::Ordering::Acquire);
            let mut names: Vec<String> = std::fs::read_dir(&root)
                .expect("dir")
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("audit") && n.ends_with(".jsonl"))
                .collect();
            names.sort();
            for n in names {
                let Ok(mut f) = std::fs::File::open(root.join(&n)) else {
                    continue; // renamed between the listing and the open: next poll
                };
                let ino = f.metadata().expect("meta").ino();
                let (offset, partial) = files.entry(ino).or_insert((0, Vec::new()));
                f.seek(SeekFrom::Start(*offset)).expect("seek");
                let mut buf = Vec::new();
                f.read_to_end(&mut buf).expect("read");
                *offset += buf.len() as u64;
                partial.extend_from_slice(&buf);
                let whole = partial
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let lines: Vec<Value> = partial[..whole]
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(|l| serde_json::from_slice(l).expect("a whole record"))
                    .collect();
                partial.drain(..whole);
                let slot = *per_inode.entry(ino).or_insert_with(|| {
                    shipped.push(Vec::new());
                    shipped.len() - 1
                });
                shipped[slot].extend(lines);
            }
            if last_round {
                return shipped;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let mut tasks = Vec::new();
    for w in 0..8 {
        let g = Arc::clone(&g);
        tasks.push(tokio::spawn(async move {
            decide(&g, 30, &format!("t{w}-")).await
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    g.flush_audit().await.expect("flush");
    done.store(true, std::sync::atomic::Ordering::Release);
    let per_file = shipper.join().expect("shipper");
    // Within each file, in order; across files, every record exactly once.
    let mut seqs: Vec<u64> = Vec::new();
    for f in &per_file {
        let s: Vec<u64> = f.iter().filter_map(|r| r["seq"].as_u64()).collect();
        assert!(s.windows(2).all(|w| w[1] == w[0] + 1), "{s:?}");
        seqs.extend(s);
    }
    seqs.sort_unstable();
    let expected: Vec<u64> = records(&audit)
        .iter()
        .filter_map(|r| r["seq"].as_u64())
        .collect();
    assert_eq!(seqs, expected, "the shipper saw every record exactly once");
    assert!(
        closed(&audit).len() > 5,
        "rotations happened while it shipped"
    );
}

fn server(dir: &Path, audit_keys: &str) -> (std::process::Child, String, PathBuf) {
    use std::io::BufRead;
    let audit = dir.join("server-audit.jsonl");
    let cfg = dir.join("guardian.toml");
    std::fs::write(
        &cfg,
        format!(
            "[policy]\n{}\n[audit]\npath = \"{}\"\n{audit_keys}\n",
            crate::common::PUSH_DENIED,
            audit.display()
        ),
    )
    .expect("config");
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .env("GUARDIAN_NO_LOCAL_MODEL", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("guardian listening on ").map(str::to_string))
        .expect("address");
    std::thread::spawn(move || for _ in lines {});
    (child, addr, cfg)
}

async fn post(addr: &str, n: usize) {
    let client = reqwest::Client::new();
    for i in 0..n {
        let cmd = if i % 2 == 0 { "git status" } else { "git push" };
        let r = client
            .post(format!("{addr}/v1/review"))
            .json(&serde_json::json!({"action": {"kind": "shell", "command": cmd, "cwd": "/w"}}))
            .send()
            .await
            .expect("send");
        assert!(r.status().is_success());
    }
}

#[tokio::test]
async fn audit_rotate_and_sighup_rotate_a_running_servers_log_and_mirror_goes_to_stdout() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, addr, cfg) = server(dir.path(), "mirror = \"stdout\"");
    let audit = dir.path().join("server-audit.jsonl");
    post(&addr, 3).await;
    // `guardian audit rotate` from another process, while the server writes.
    let o = Command::new(BIN)
        .args(["audit", "rotate", "--config"])
        .arg(&cfg)
        .output()
        .expect("rotate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("rotated"));
    assert_eq!(closed(&audit).len(), 1);
    post(&addr, 3).await;
    // SIGHUP: the server rotates itself.
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(pid, libc::SIGHUP);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while closed(&audit).len() < 2 {
        assert!(Instant::now() < deadline, "SIGHUP did not rotate");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    post(&addr, 2).await;
    let o = Command::new(BIN)
        .args(["audit", "verify", "--config"])
        .arg(&cfg)
        .output()
        .expect("verify");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("in 3 files, chain intact"));
    let decisions = records(&audit)
        .iter()
        .filter(|r| r.get("decision").is_some())
        .count();
    assert_eq!(decisions, 8);
    // mirror = "stdout": the server's stdout carries the records it wrote itself (the
    // `audit rotate` process wrote its header to its own stdout), as JSON lines.
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let out = child.wait_with_output().expect("wait");
    let mirrored: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let in_file: Vec<Value> = records(&audit);
    assert_eq!(
        mirrored
            .iter()
            .filter(|r| r.get("decision").is_some())
            .count(),
        8
    );
    for m in &mirrored {
        assert!(
            in_file.contains(m),
            "mirrored a record the file does not have: {m}"
        );
    }
}

/// The closed segments, the lock and the temporary files are guardian's own files, like the
/// active log: an agent may not delete or overwrite them, even where a rule allows writes.
#[tokio::test]
async fn segments_are_protected_like_the_active_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let text = format!(
        "[policy]\nallow = [\"Edit(/**)\", \"Bash(rm *)\", \"Bash(echo *)\"]\n[reviewer]\nbackend = \"none\"\n[audit]\npath = \"{}\"\nrotate_bytes = 2000\n",
        audit.display()
    );
    let g =
        Arc::new(Guardian::from_config(Config::parse(&text, "g.toml").expect("cfg")).expect("g"));
    let d = dir.path().display();
    for (cmd, protected) in [
        (format!("rm {d}/audit.00000000000000000001.jsonl"), true),
        (format!("rm {d}/audit.00000000000000000001.jsonl.gz"), true),
        (format!("echo x > {d}/audit.jsonl.lock"), true),
        (format!("rm {d}/audit.jsonl.1"), true),
        (format!("rm {d}/notes.jsonl"), false),
    ] {
        let r = g
            .review(ReviewRequest::shell(cmd.clone(), Some(d.to_string())), "t")
            .await;
        assert_eq!(
            r.decision == guardian::Decision::Deny,
            protected,
            "{cmd}: {}",
            r.rationale
        );
        if protected {
            assert!(
                r.rationale.contains("guardian's own file"),
                "{}",
                r.rationale
            );
        }
    }
}

#[tokio::test]
async fn rotate_interval_closes_an_old_active_file_and_bad_settings_name_their_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let g = guardian_at(&audit, "rotate_bytes = 0\nrotate_interval = \"1s\"");
    decide(&g, 2, "old").await;
    assert_eq!(closed(&audit).len(), 0);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    decide(&g, 1, "new").await;
    g.flush_audit().await.expect("flush");
    assert_eq!(closed(&audit).len(), 1, "the first record was over 1 s old");
    guardian::audit::verify(&audit).expect("verifies");

    for (keys, field) in [
        ("rotate_interval = \"soon\"", "audit.rotate_interval"),
        ("rotate_interval = \"10ms\"", "audit.rotate_interval"),
        ("keep_segments = 0", "audit.keep_segments"),
        ("keep_days = 0", "audit.keep_days"),
        ("compress = \"lz4\"", "compress"),
    ] {
        let text = format!("[audit]\npath = \"a.jsonl\"\n{keys}\n");
        let err = Config::parse(&text, "g.toml").expect_err(keys).to_string();
        assert!(err.contains(field), "{keys}: {err}");
    }
}
