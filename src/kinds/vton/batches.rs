//! Questionnaire formation for VTON: N tasks of which S are the campaign's
//! shared sanity tasks at random positions; every image appears in the
//! configured number of questionnaires and never twice in one.

use super::VtonConfig;
use crate::core::kind::{BatchPlan, Invalid, ItemRef};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use uuid::Uuid;

/// Forms the questionnaires.
pub fn form(c: &VtonConfig, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid> {
    let sanity: Vec<Uuid> = items.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
    let regular: Vec<Uuid> = items.iter().filter(|i| !i.has_gold).map(|i| i.id).collect();
    if sanity.len() < c.sanity_per_questionnaire {
        return Err(Invalid(format!(
            "{} sanity tasks are needed per questionnaire but the campaign has {}",
            c.sanity_per_questionnaire,
            sanity.len()
        )));
    }
    if regular.is_empty() {
        return Err(Invalid("the campaign has no tasks to rate (only sanity tasks)".into()));
    }
    let per = c.tasks_per_questionnaire - c.sanity_per_questionnaire;
    let mut plans = Vec::new();
    // Each round places every image once; rounds are shuffled independently,
    // so an image lands in `appearances` different questionnaires.
    for _ in 0..c.appearances {
        let mut round = regular.clone();
        round.shuffle(rng);
        for chunk in round.chunks(per) {
            let mut tasks = chunk.to_vec();
            let mut chosen = sanity.clone();
            chosen.shuffle(rng);
            for s in chosen.into_iter().take(c.sanity_per_questionnaire) {
                let at = rng.random_range(0..=tasks.len());
                tasks.insert(at, s);
            }
            plans.push(BatchPlan { items: tasks, overlap: Some(c.annotators_per_questionnaire) });
        }
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashSet;

    fn items(regular: usize, sanity: usize) -> Vec<ItemRef> {
        (0..regular + sanity)
            .map(|i| ItemRef {
                id: Uuid::from_u128(i as u128 + 1),
                payload: serde_json::Value::Null,
                has_gold: i >= regular,
            })
            .collect()
    }

    #[test]
    fn questionnaires_hide_sanity_tasks_and_never_repeat_an_image() {
        let config = VtonConfig {
            tasks_per_questionnaire: 10,
            sanity_per_questionnaire: 2,
            appearances: 2,
            annotators_per_questionnaire: 3,
            lease_minutes: 60,
            curation: Default::default(),
            stop_sanity_failures: false,
        };
        let all = items(24, 3);
        let sanity: HashSet<Uuid> = all.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
        let plans = form(&config, &all, &mut StdRng::seed_from_u64(1)).expect("forms");
        assert_eq!(plans.len(), 6);
        let mut appearances = std::collections::HashMap::new();
        for p in &plans {
            assert_eq!(p.items.len(), 10);
            assert_eq!(p.items.iter().filter(|i| sanity.contains(i)).count(), 2);
            assert_eq!(p.items.iter().collect::<HashSet<_>>().len(), 10, "no repeats within a questionnaire");
            assert_eq!(p.overlap, Some(3));
            for i in p.items.iter().filter(|i| !sanity.contains(i)) {
                *appearances.entry(*i).or_insert(0) += 1;
            }
        }
        assert!(appearances.values().all(|&n| n == 2));
        assert_eq!(appearances.len(), 24);
    }

    #[test]
    fn too_few_sanity_tasks_is_an_error() {
        let config = VtonConfig {
            tasks_per_questionnaire: 10,
            sanity_per_questionnaire: 5,
            appearances: 1,
            annotators_per_questionnaire: 3,
            lease_minutes: 60,
            curation: Default::default(),
            stop_sanity_failures: false,
        };
        assert!(form(&config, &items(10, 2), &mut StdRng::seed_from_u64(1)).is_err());
    }
}
