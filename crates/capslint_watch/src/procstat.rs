//! Parsing `/proc/<pid>/stat` and `/proc/<pid>/task/<tid>/stat`: the fields the supervisor needs.
//!
//! The command name sits between the first `(` and the last `)`, and may itself hold spaces and
//! parentheses; the fields after it are split on whitespace (proc(5)). A line without that shape is
//! `None`: the parser never fails and never panics.

/// The fields of one `stat` line that the supervisor reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// The process (or thread) ID.
    pub pid: u32,
    /// The command name (`comm`), at most 15 bytes as the kernel keeps it.
    pub comm: String,
    /// The scheduling state: `R` runnable or running, `S` sleeping, `D` in uninterruptible wait...
    pub state: char,
    /// The parent's process ID.
    pub ppid: u32,
    /// Time in user mode, in clock ticks (for a process: all its threads, dead ones included).
    pub utime: u64,
    /// Time in kernel mode, in clock ticks.
    pub stime: u64,
    /// User time of the children it waited for, in clock ticks.
    pub cutime: u64,
    /// Kernel time of the children it waited for, in clock ticks.
    pub cstime: u64,
    /// Its number of threads.
    pub num_threads: u64,
}

impl ProcStat {
    /// Whether it is runnable (running, or waiting for a CPU: throttled threads stay `R`).
    pub fn is_runnable(&self) -> bool {
        self.state == 'R'
    }

    /// CPU time in clock ticks: its own, and that of the children it waited for.
    pub fn ticks_with_children(&self) -> u64 {
        self.utime.saturating_add(self.stime).saturating_add(self.cutime).saturating_add(self.cstime)
    }
}

/// Parses one `stat` line.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_owned();
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14) ... num_threads(17).
    let number = |index: usize| fields.get(index)?.parse::<u64>().ok();
    let mut state = fields.first()?.chars();
    let (Some(state), None) = (state.next(), state.next()) else { return None };
    // cutime and cstime are signed in the kernel's format; they are never negative in practice.
    let signed = |index: usize| fields.get(index)?.parse::<i64>().ok().map(|n| n.max(0).unsigned_abs());
    Some(ProcStat {
        pid,
        comm,
        state,
        ppid: u32::try_from(number(1)?).ok()?,
        utime: number(11)?,
        stime: number(12)?,
        cutime: signed(13)?,
        cstime: signed(14)?,
        num_threads: u64::try_from(fields.get(17)?.parse::<i64>().ok()?).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process line captured from a Python interpreter running 5 threads.
    const PYTHON: &str = "4242 (python3) R 4200 4242 4200 0 -1 4194560 31337 0 12 0 1500 250 7 3 20 0 5 0 \
                          123456 987654321 12345 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 0 0 0\n";

    #[test]
    fn parses_a_captured_process_line() {
        let stat = parse_stat(PYTHON).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                pid: 4242,
                comm: "python3".into(),
                state: 'R',
                ppid: 4200,
                utime: 1500,
                stime: 250,
                cutime: 7,
                cstime: 3,
                num_threads: 5,
            }
        );
        assert!(stat.is_runnable());
        assert_eq!(stat.ticks_with_children(), 1760);
    }

    #[test]
    fn keeps_spaces_and_parentheses_in_the_command_name() {
        let line = "77 (my (odd) name) S 1 77 77 0 -1 0 0 0 0 0 4 5 0 0 20 0 1 0 1 2 3";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.comm, "my (odd) name");
        assert_eq!((stat.state, stat.ppid, stat.utime, stat.stime, stat.num_threads), ('S', 1, 4, 5, 1));
        assert!(!stat.is_runnable());
    }

    #[test]
    fn refuses_what_is_not_a_stat_line() {
        for garbage in [
            "",
            "garbage",
            "1 (x",
            ") 1 (x) R",
            "x (y) R 1 2 3",
            "1 (x) RR 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0",
            "1 (x) R -5 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0",
            "1 (x) R 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 -1 0",
            "1 (x) R 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0",
        ] {
            assert_eq!(parse_stat(garbage), None, "{garbage:?}");
        }
    }
}
