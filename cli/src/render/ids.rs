//! Ids for people: the shortest prefix that tells each id apart from the
//! others shown beside it, as `git` abbreviates commits, so a table never
//! holds two rows that read alike.

/// Each of `ids` cut to its shortest prefix of at least `min` characters
/// that no other id (different from it) shares; an id shorter than that
/// stays whole. Equal ids read alike by nature and keep the same prefix.
pub fn unique_prefixes(ids: &[&str], min: usize) -> Vec<String> {
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    ids.iter()
        .map(|id| {
            // The neighbours in sorted order share the longest prefixes with it.
            let at = sorted.partition_point(|other| other < id);
            let shared = |other: Option<&&str>| other.map_or(0, |other| common_chars(id, other));
            let need =
                shared(at.checked_sub(1).and_then(|before| sorted.get(before))).max(shared(sorted.get(at + 1))) + 1;
            id.chars().take(need.max(min)).collect()
        })
        .collect()
}

/// [`unique_prefixes`], but an id whose unique prefix would be longer than
/// `max` characters (ids that differ only near their end, as
/// `T-7f3a1c2e-…-000000000001` and `…-000000000002` do) is shown as its
/// first `min` characters, `…`, and the shortest ending that tells it apart:
/// a table stays narrow and no two of its rows read alike.
pub fn unique_abbreviations(ids: &[&str], min: usize, max: usize) -> Vec<String> {
    let prefixes = unique_prefixes(ids, min);
    let head = |id: &str| id.chars().take(min).collect::<String>();
    prefixes
        .into_iter()
        .zip(ids)
        .map(|(prefix, id)| {
            if prefix.chars().count() <= max {
                return prefix;
            }
            // Only ids that share its head could read like it.
            let own_head = head(id);
            let ending_shared = ids
                .iter()
                .filter(|other| *other != id && head(other) == own_head)
                .map(|other| id.chars().rev().zip(other.chars().rev()).take_while(|(a, b)| a == b).count())
                .max()
                .unwrap_or(0);
            let ending: String = {
                let keep = (ending_shared + 1).max(4);
                let chars: Vec<char> = id.chars().collect();
                chars[chars.len().saturating_sub(keep)..].iter().collect()
            };
            if own_head.chars().count() + 1 + ending.chars().count() < id.chars().count() {
                format!("{own_head}…{ending}")
            } else {
                prefix
            }
        })
        .collect()
}

/// How many leading characters `a` and `b` share.
fn common_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::unique_prefixes;

    #[test]
    fn each_id_is_cut_where_it_differs_from_its_neighbours() {
        let ids = ["01a249a4-aaaa", "01a249a4-bbbb", "ses_db65x1", "ses_db65x2", "short", "c0ffee123456"];
        let shown = unique_prefixes(&ids, 8);
        assert_eq!(shown, ["01a249a4-a", "01a249a4-b", "ses_db65x1", "ses_db65x2", "short", "c0ffee12"]);
        let distinct: std::collections::BTreeSet<&String> = shown.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "no two read alike");
        assert_eq!(unique_prefixes(&["same", "same"], 8), ["same", "same"], "equal ids stay equal");
        assert_eq!(unique_prefixes(&["ab€cd", "ab€ce"], 2), ["ab€cd", "ab€ce"], "cut on characters");
        assert!(unique_prefixes(&[], 8).is_empty());
    }

    #[test]
    fn ids_that_differ_only_at_their_end_are_shown_by_both_ends() {
        let ids = [
            "T-7f3a1c2e-0000-4000-8000-000000000001",
            "T-7f3a1c2e-0000-4000-8000-000000000002",
            "7a1e0000-0000-4000-8000-000000000001",
            "g1",
            "ses_a",
        ];
        let shown = super::unique_abbreviations(&ids, 8, 16);
        assert_eq!(shown, ["T-7f3a1c…0001", "T-7f3a1c…0002", "7a1e0000", "g1", "ses_a"]);
        let ids = ["01a249a4-aaaa", "01a249a4-bbbb"];
        assert_eq!(super::unique_abbreviations(&ids, 8, 16), ["01a249a4-a", "01a249a4-b"], "short enough as prefixes");
    }
}
