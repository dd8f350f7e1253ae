//! Durations and data sizes as users write them in WITH clauses:
//! `INTERVAL '5' SECOND`, `INTERVAL '30 seconds'`, `'10 minutes'`, `'64mb'`.

/// Parse an interval's text into microseconds. Accepts `INTERVAL '5' SECOND`,
/// `INTERVAL '1 hour 30 minutes'` and the bare quantity `5 seconds`.
pub fn parse_interval_micros(text: &str) -> Result<i64, String> {
    let mut t = text.trim();
    if t.len() >= 8 && t[..8].eq_ignore_ascii_case("interval") {
        t = t[8..].trim();
    }
    let cleaned: String = t.chars().map(|c| if c == '\'' { ' ' } else { c }).collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    if words.is_empty() {
        return Err("the interval is empty".into());
    }
    let mut total: i128 = 0;
    let mut i = 0;
    while i < words.len() {
        let (number, unit_inline) = split_number(words[i]);
        let n: f64 = number
            .parse()
            .map_err(|_| format!("'{}' is not a number", words[i]))?;
        let unit = if !unit_inline.is_empty() {
            i += 1;
            unit_inline.to_string()
        } else if i + 1 < words.len() {
            i += 2;
            words[i - 1].to_string()
        } else {
            return Err(format!(
                "the quantity '{number}' has no unit (second, minute, hour, day, ...)"
            ));
        };
        let micros = unit_micros(&unit)?;
        if n < 0.0 {
            return Err("the interval must not be negative".into());
        }
        total += (n * micros as f64) as i128;
    }
    i64::try_from(total).map_err(|_| "the interval is too large".to_string())
}

fn split_number(word: &str) -> (&str, &str) {
    let end = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(word.len());
    (&word[..end], &word[end..])
}

fn unit_micros(unit: &str) -> Result<i64, String> {
    Ok(match unit.to_ascii_lowercase().as_str() {
        "us" | "microsecond" | "microseconds" | "µs" => 1,
        "ms" | "millisecond" | "milliseconds" => 1_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000,
        "d" | "day" | "days" => 86_400_000_000,
        "w" | "week" | "weeks" => 604_800_000_000,
        "month" | "months" | "mon" | "mons" | "year" | "years" => {
            return Err("months and years are not supported in this interval".into());
        }
        other => return Err(format!("unknown interval unit '{other}'")),
    })
}

/// Parse a data size, `1024`, `64kb`, `5 MiB`, into bytes (units are powers of 1024).
pub fn parse_data_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = (&t[..end], t[end..].trim());
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{t}' is not a data size such as '64mb'"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        other => {
            return Err(format!(
                "unknown data size unit '{other}'; use b, kb, mb, gb, tb or pb"
            ));
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("the data size '{t}' is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(
            parse_interval_micros("INTERVAL '5' SECOND").unwrap(),
            5_000_000
        );
        assert_eq!(
            parse_interval_micros("interval '1 hour 30 minutes'").unwrap(),
            5_400_000_000
        );
        assert_eq!(parse_interval_micros("250ms").unwrap(), 250_000);
        assert_eq!(parse_interval_micros("1.5 seconds").unwrap(), 1_500_000);
        assert!(
            parse_interval_micros("INTERVAL '1' MONTH")
                .unwrap_err()
                .contains("months")
        );
        assert!(parse_interval_micros("5").unwrap_err().contains("no unit"));
        assert!(
            parse_interval_micros("-5 seconds")
                .unwrap_err()
                .contains("negative")
        );
    }

    #[test]
    fn data_sizes() {
        assert_eq!(parse_data_size("1024").unwrap(), 1024);
        assert_eq!(parse_data_size("64kb").unwrap(), 65_536);
        assert_eq!(parse_data_size("5 MiB").unwrap(), 5 * 1024 * 1024);
        assert!(parse_data_size("5 parsecs").is_err());
        assert!(parse_data_size("mb").is_err());
    }
}
