//! Did-you-mean suggestions by edit distance.

/// The edit distance between `a` and `b`, case-insensitively, counting a swap of two
/// neighbouring characters as one edit (optimal string alignment), since `kafak` is one
/// slip away from `kafka`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `input`, if it is close enough to be a plausible typo: at most
/// one edit per three characters of the shorter word (and at least one). A dotted
/// candidate also matches by its last part (`ofset` suggests `source.offset`).
///
/// Names longer than any real name (`limits::MAX_SUGGESTED_NAME_CHARS`) get no
/// suggestion, and pairs whose lengths alone rule them out are never compared, so the cost
/// is linear in the input.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input_chars = input.chars().count();
    if input_chars > crate::limits::MAX_SUGGESTED_NAME_CHARS {
        return None;
    }
    let close = |a: &str, a_chars: usize, b: &str| {
        let b_chars = b.chars().count();
        let limit = (a_chars.min(b_chars) / 3).max(1);
        // The distance is at least the difference in length.
        if a_chars.abs_diff(b_chars) > limit || b_chars > crate::limits::MAX_SUGGESTED_NAME_CHARS {
            return None;
        }
        let d = edit_distance(a, b);
        (d <= limit).then_some(d)
    };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let mut d = close(input, input_chars, c);
        if let Some((_, last)) = c.rsplit_once('.')
            && !input.contains('.')
        {
            d = match (d, close(input, input_chars, last)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        // A key written without its suffix or prefix (`stream` for `stream_name`) is a
        // likely slip even when the edit distance is large.
        let partial = input.len() >= 4 && (c.starts_with(input) || c.ends_with(input));
        if d.is_none() && partial {
            d = Some(c.len() - input.len());
        }
        if let Some(d) = d
            && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc))
        {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let keys = ["topic", "type", "source.offset", "bootstrap_servers"];
        assert_eq!(closest("topik", keys), Some("topic"));
        assert_eq!(closest("offset", keys), Some("source.offset"));
        assert_eq!(closest("ofset", keys), Some("source.offset"));
        assert_eq!(
            closest("bootstrap.servers", keys),
            Some("bootstrap_servers")
        );
        assert_eq!(closest("zzzzzz", keys), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("kafak", "kafka"), 1);
        assert_eq!(closest("kafak", ["kafka", "nexmark"]), Some("kafka"));
        assert_eq!(closest("type", ["lookup.cache.ttl", "event_rate"]), None);
    }

    #[test]
    fn huge_inputs_are_not_compared() {
        let huge = "k".repeat(1_000_000);
        let started = std::time::Instant::now();
        let keys: Vec<String> = (0..1000).map(|i| format!("key_{i}")).collect();
        assert_eq!(closest(&huge, keys.iter().map(String::as_str)), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
