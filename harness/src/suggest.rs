//! "Did you mean": the closest of a closed set of names to a misspelled one (lint messages,
//! `conformance explain` of an unknown id).

/// The candidate closest to `word`, when one is close enough to be a plausible misspelling:
/// at most a third of its characters edited (at least two), or one containing the other.
/// Ties go to the candidate sharing the longest prefix (Jaro-Winkler), then the first.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let mut best: Option<(usize, f64, &'a str)> = None;
    for candidate in candidates {
        let other = candidate.to_lowercase();
        if other == lower {
            return Some(candidate);
        }
        let distance = strsim::levenshtein(&lower, &other);
        let limit = (lower.chars().count().max(other.chars().count()) / 3).max(2);
        let contained = lower.len() >= 3 && (other.contains(&lower) || lower.contains(&other));
        if distance > limit && !contained {
            continue;
        }
        let similarity = strsim::jaro_winkler(&lower, &other);
        let better = match best {
            None => true,
            Some((d, s, _)) => distance < d || (distance == d && similarity > s),
        };
        if better {
            best = Some((distance, similarity, candidate));
        }
    }
    best.map(|(_, _, candidate)| candidate)
}

/// The `candidates` ranked by closeness to `word` (fewest edits first, then the longest shared
/// prefix by Jaro-Winkler), at most `n`.
pub fn ranked<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let lower = word.to_lowercase();
    let mut scored: Vec<(usize, f64, &'a str)> = candidates
        .into_iter()
        .map(|c| {
            let other = c.to_lowercase();
            (
                strsim::levenshtein(&lower, &other),
                strsim::jaro_winkler(&lower, &other),
                c,
            )
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    scored.into_iter().take(n).map(|(_, _, c)| c).collect()
}

/// `; did you mean `x`?` when a candidate is close, else nothing.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_misspelling_and_nothing_for_an_unrelated_word() {
        let fixtures = [
            "conformance-noop",
            "conformance-multi-node",
            "conformance-delay",
        ];
        assert_eq!(
            closest("conformance-multinode", fixtures),
            Some("conformance-multi-node")
        );
        assert_eq!(
            closest("conformance-dealy", fixtures),
            Some("conformance-delay")
        );
        assert_eq!(closest("wings", fixtures), None);
        assert_eq!(
            closest("stauts", ["status", "status_in", "json"]),
            Some("status")
        );
        assert_eq!(
            did_you_mean("debgu", ["debug", "values"]),
            "; did you mean `debug`?"
        );
        assert_eq!(did_you_mean("zzzzzz", ["debug", "values"]), "");
    }

    #[test]
    fn ranks_by_closeness() {
        let ids = [
            "x.cursors.end-of-log",
            "w.cursor.end-of-log",
            "x.usage.facts",
        ];
        assert_eq!(
            ranked("x.cursor.end-of-log", ids, 2)[0],
            "x.cursors.end-of-log"
        );
        assert_eq!(ranked("x.cursor.end-of-log", ids, 2).len(), 2);
    }
}
