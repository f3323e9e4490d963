//! An exclusive `flock(2)` held for as long as a value lives: how the audit log's writers and
//! the labels file's writers (threads or processes) take turns.

use std::fs::File;
use std::io;

/// An exclusive `flock` on a file's descriptor, released when dropped. The caller keeps the
/// file open for as long as it holds the lock.
pub struct Exclusive(std::os::fd::RawFd);

impl Exclusive {
    /// Waits for the lock (a signal's interruption is retried).
    pub fn take(file: &File) -> io::Result<Exclusive> {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        loop {
            // SAFETY: flock(2) on a descriptor of a file the caller keeps open for as long as
            // the lock lives.
            if unsafe { libc::flock(fd, libc::LOCK_EX) } == 0 {
                return Ok(Exclusive(fd));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        // SAFETY: flock(2) on a descriptor this process owns.
        unsafe {
            libc::flock(self.0, libc::LOCK_UN);
        }
    }
}
