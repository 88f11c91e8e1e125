//! Peak memory of one run of a program: [`run_measured`] starts it from a small process that reaps it
//! and reports its `ru_maxrss` (GNU `time`, else Python's `resource` module). The test process cannot
//! start it itself: a child records the resident size of the process it was spawned from as its own peak
//! when it executes the program, and a test process holding large generated inputs would be counted.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `program` with `args` in `dir` (scrubbed of the variables of [`super::LEAKY_VARIABLES`]): its
/// output, and its peak resident set size in KiB; `Err` when neither GNU `time` nor Python 3 is there.
pub fn run_measured(program: &Path, args: &[&str], dir: &Path) -> Result<(Output, u64), String> {
    let report = tempfile::NamedTempFile::new().expect("a temporary file");
    let mut command = if Path::new("/usr/bin/time").exists() {
        let mut command = super::scrubbed("/usr/bin/time");
        command.arg("-f").arg("%M").arg("-o").arg(report.path()).arg(program);
        command
    } else if Command::new("python3").arg("-c").arg("import resource").output().is_ok_and(|out| out.status.success()) {
        let script = "import resource, subprocess, sys\ncode = subprocess.call(sys.argv[2:])\n\
                      open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
                      sys.exit(code)\n";
        let mut command = super::scrubbed("python3");
        command.arg("-c").arg(script).arg(report.path()).arg(program);
        command
    } else {
        return Err("neither /usr/bin/time nor python3 is installed to measure peak memory".to_string());
    };
    let output = command.args(args).current_dir(dir).stdin(Stdio::null()).output().expect("the command starts");
    let text = std::fs::read_to_string(report.path()).expect("the report is written");
    // GNU time writes a line about a non-zero exit status before the figure.
    let rss = text.split_whitespace().last().and_then(|figure| figure.parse().ok()).expect("a peak RSS in KiB");
    Ok((output, rss))
}
