//! What a campaign's configuration decides beyond its items: how batches are
//! handed out, what participants are asked first, whether a review wins,
//! and what a release says about the rules. A kind computes it once per
//! campaign version
//! ([`TypedKind::policy`](crate::core::kind::typed::TypedKind::policy)) and
//! the core reads the values.

use crate::core::campaign::profiles::BackgroundQuestion;
use serde_json::Value;
use std::collections::BTreeMap;

/// What one campaign's configuration decides.
#[derive(Debug, Clone)]
pub struct Policy {
    /// How batches are handed out.
    pub batches: BatchPolicy,
    /// Background questions asked before a participant's first task.
    pub background: Vec<BackgroundQuestion>,
    /// Whether a reviewer's answer replaces the answer under review.
    pub reviewed_answer_wins: bool,
    /// Parameters fixed in code that shape the ground truth (a release's
    /// manifest records them beside the configuration).
    pub release_parameters: Value,
    /// Markdown for a datasheet: what annotators were asked and the scale.
    pub datasheet_task: String,
}

impl Policy {
    /// The plain policy of a kind called `title`: batches as
    /// [`BatchPolicy::default`], no background questions, reviews kept
    /// beside the answers, no fixed parameters.
    pub fn plain(title: &str) -> Self {
        Self {
            batches: BatchPolicy::default(),
            background: Vec::new(),
            reviewed_answer_wins: false,
            release_parameters: Value::Null,
            datasheet_task: format!("Annotators completed {title} tasks."),
        }
    }
}

/// How batches are handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchPolicy {
    /// Whether items within a batch are shown in a per-annotator random order.
    pub shuffle_items: bool,
    /// How many batches one annotator may take (`None`: no limit).
    pub max_batches_per_annotator: Option<i64>,
    /// Whether gold items are shared by every batch (sanity tasks), so that
    /// batches formed later for new items get them too.
    pub shares_gold_across_batches: bool,
    /// Whether gold items may meet an annotator again in a later batch.
    pub gold_may_repeat: bool,
    /// Batch groups (e.g. attribute super-categories) reserved for some
    /// annotators (account names or worker ids); other groups, and groups
    /// listed with nobody, go to anyone.
    pub reserved_groups: BTreeMap<String, Vec<String>>,
}

impl Default for BatchPolicy {
    /// Items in their formed order, no limit, gold items per batch and free
    /// to repeat, every group open to anyone.
    fn default() -> Self {
        Self {
            shuffle_items: false,
            max_batches_per_annotator: None,
            shares_gold_across_batches: false,
            gold_may_repeat: true,
            reserved_groups: BTreeMap::new(),
        }
    }
}

impl BatchPolicy {
    /// Whether the annotator (account name or worker id) may take a batch of
    /// this group.
    pub fn may_take(&self, group: Option<&str>, annotator: &str) -> bool {
        match group.and_then(|g| self.reserved_groups.get(g)) {
            Some(names) if !names.is_empty() => names.iter().any(|n| n == annotator),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_group_goes_to_its_annotators_and_the_others_to_anyone() {
        let policy = BatchPolicy {
            reserved_groups: [("sleeve".to_owned(), vec!["ada".to_owned()]), ("neckline".to_owned(), vec![])].into(),
            ..BatchPolicy::default()
        };
        assert!(policy.may_take(Some("sleeve"), "ada"));
        assert!(!policy.may_take(Some("sleeve"), "bob"));
        assert!(policy.may_take(Some("neckline"), "bob"), "a group listed with nobody is open");
        assert!(policy.may_take(Some("pocket"), "bob"));
        assert!(policy.may_take(None, "bob"));
    }
}
