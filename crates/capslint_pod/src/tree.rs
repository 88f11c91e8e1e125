//! The probe's process tree: its own session and process group, killed as a whole, and every
//! helper it abandoned found and killed too.
//!
//! Imported code can fork: a helper started at import outlives the interpreter (it is reparented),
//! and one that calls `setsid` leaves the probe's process group. So the probe runs in a new session,
//! this process becomes the reaper of its orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`), and
//! when the probe ends or times out its group is killed and every adopted orphan is killed and
//! reaped, round after round, until none is left.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::time::{Duration, Instant};

/// How long [`kill_adopted`] keeps looking for orphans that are still being reparented.
const REAP_WITHIN: Duration = Duration::from_secs(2);

/// Makes this process the reaper of its orphaned descendants (`on`), or stops it (before `exec`,
/// since the setting survives `execve`).
pub fn adopt_orphans(on: bool) -> io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, libc::c_ulong::from(on), 0, 0, 0) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Kills every process in the process group `pgid`.
pub fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else { return };
    // SAFETY: kill has no memory effects; a group that is already gone gives ESRCH, ignored.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// The process IDs of this process's children, read from `/proc`.
pub fn children() -> BTreeSet<u32> {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else { return BTreeSet::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect()
}

/// The parent of `pid` from `/proc/PID/stat` (the field after the parenthesised command name,
/// which may itself contain parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Kills and reaps every child of this process that is not in `keep` (the children it had before
/// the probe started): the orphans of the probe's tree adopted by this process. Looks again while
/// killing one orphans others, for at most two seconds.
pub fn kill_adopted(keep: &BTreeSet<u32>) {
    let deadline = Instant::now() + REAP_WITHIN;
    loop {
        let strays: Vec<u32> = children().difference(keep).copied().collect();
        if strays.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in strays {
            let Ok(pid) = libc::pid_t::try_from(pid) else { continue };
            // SAFETY: kill and waitpid on a child of ours; a null status pointer is allowed.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        // Grandchildren of a killed orphan are reparented to us asynchronously.
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parent_of_a_process() {
        assert_eq!(parent_of(std::process::id()), Some(std::os::unix::process::parent_id()));
        assert_eq!(parent_of(u32::MAX), None);
    }
}
