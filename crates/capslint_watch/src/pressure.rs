//! Parsing the cgroup v2 pressure file `cpu.pressure` (PSI): the share of time some (or all) of the
//! cgroup's runnable tasks waited for a CPU.
//!
//! ```text
//! some avg10=12.50 avg60=8.00 avg300=2.10 total=123456789
//! full avg10=3.00 avg60=1.00 avg300=0.20 total=2345678
//! ```

/// One line of a pressure file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PressureLine {
    /// Percentage of the last 10 seconds spent stalled.
    pub avg10: f64,
    /// Percentage of the last 60 seconds spent stalled.
    pub avg60: f64,
    /// Total time stalled, in microseconds.
    pub total_usec: u64,
}

/// What `cpu.pressure` says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pressure {
    /// Some runnable task waited for a CPU.
    pub some: PressureLine,
    /// Every runnable task waited (absent before Linux 5.13 for CPU).
    pub full: Option<PressureLine>,
}

/// Parses `cpu.pressure`; `None` without a well-formed `some` line.
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let kind = fields.next();
        let Some(parsed) = parse_line(fields) else { continue };
        match kind {
            Some("some") => some = Some(parsed),
            Some("full") => full = Some(parsed),
            _ => {}
        }
    }
    Some(Pressure { some: some?, full })
}

fn parse_line<'a>(fields: impl Iterator<Item = &'a str>) -> Option<PressureLine> {
    let (mut avg10, mut avg60, mut total) = (None, None, None);
    for field in fields {
        let (key, value) = field.split_once('=')?;
        match key {
            "avg10" => avg10 = value.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0),
            "avg60" => avg60 = value.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0),
            "total" => total = value.parse::<u64>().ok(),
            _ => {}
        }
    }
    Some(PressureLine { avg10: avg10?, avg60: avg60?, total_usec: total? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_some_and_full_lines() {
        let text = "some avg10=12.50 avg60=8.00 avg300=2.10 total=123456789\n\
                    full avg10=3.00 avg60=1.00 avg300=0.20 total=2345678\n";
        let pressure = parse_pressure(text).unwrap();
        assert_eq!(pressure.some, PressureLine { avg10: 12.5, avg60: 8.0, total_usec: 123_456_789 });
        assert_eq!(pressure.full, Some(PressureLine { avg10: 3.0, avg60: 1.0, total_usec: 2_345_678 }));
    }

    #[test]
    fn full_is_optional_and_garbage_is_none() {
        let pressure = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
        assert_eq!(pressure.full, None);
        for garbage in ["", "full avg10=1 avg60=1 total=1", "some avg10=x avg60=1 total=1", "some total=5", "\u{0}"] {
            assert_eq!(parse_pressure(garbage), None, "{garbage:?}");
        }
    }
}
