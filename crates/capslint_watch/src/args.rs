//! The options of `capslint exec --watch`, and the durations they take (`5s`, `500ms`, `2m`, `1h`).

use std::path::PathBuf;

use std::time::Duration;

/// The longest duration an option takes: a day.
const LONGEST: Duration = Duration::from_secs(86_400);

/// The options that turn `capslint exec` into a supervisor.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Stay the parent of CMD and watch it: report oversubscription and suspected livelock as
    /// `event=...` lines on stderr while it runs.
    #[arg(long, conflicts_with = "no_init")]
    pub watch: bool,
    /// Time between two samples of the workload (with --watch).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration, requires = "watch")]
    pub interval: Duration,
    /// How long a condition must hold before a verdict changes (with --watch).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration, requires = "watch")]
    pub window: Duration,
    /// Share of CFS periods throttled over the window (0 to 1) from which a livelock is suspected.
    #[arg(long, value_name = "SHARE", default_value_t = 0.5, value_parser = share, requires = "watch")]
    pub throttle_threshold: f64,
    /// A file the workload touches as it makes progress: a livelock is suspected when it is throttled
    /// and the file's modification time is older than the window.
    #[arg(long, value_name = "FILE", requires = "watch")]
    pub heartbeat: Option<PathBuf>,
    /// SIGTERM the workload's process group once livelock has been suspected this long, SIGKILL it
    /// after --grace, and exit with 75.
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "watch")]
    pub terminate_after: Option<Duration>,
    /// Serve the watch's metrics in the Prometheus text format at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR", requires = "watch")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Time between the SIGTERM and the SIGKILL of --terminate-after.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration, requires = "terminate_after")]
    pub grace: Duration,
}

/// Parses a duration: a number followed by `ms`, `s`, `m` or `h` (a bare number is seconds),
/// above 0 and at most a day.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("unknown unit {unit:?}: expected ms, s, m or h")),
    };
    let number: f64 = number.parse().map_err(|_| "expected a duration such as 5s, 500ms or 2m".to_owned())?;
    let seconds = number * scale;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= LONGEST.as_secs_f64()) {
        return Err("expected a duration above 0 and at most 24h".to_owned());
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 1.0 => Ok(s),
        _ => Err("expected a share above 0 and at most 1".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations_with_units() {
        assert_eq!(duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(duration("5"), Ok(Duration::from_secs(5)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(duration("0.25s"), Ok(Duration::from_millis(250)));
        for bad in ["", "s", "0s", "-1s", "5x", "5 s", "25h", "1e3s", "nan", "inf"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_shares() {
        assert_eq!(share("0.5"), Ok(0.5));
        assert_eq!(share("1"), Ok(1.0));
        for bad in ["0", "1.1", "-0.1", "x"] {
            assert!(share(bad).is_err(), "{bad:?}");
        }
    }
}
