//! Questionnaire formation for VTON, as in the protocol: every
//! questionnaire has exactly `tasks_per_questionnaire` tasks, with the same
//! sanity tasks at the same fixed positions; every image appears in the
//! configured number of questionnaires (the last questionnaire of a round is
//! filled up with images of other questionnaires, which then get more
//! ratings) and never twice in one.
//!
//! Sanity tasks repeat across questionnaires, so a worker who saw one
//! questionnaire would recognise them in the next. With one questionnaire per
//! worker (the default) one sanity set serves all; with more, the sanity pool
//! is split into disjoint sets, questionnaires rotate through them, and
//! assignment never hands a worker a questionnaire with an item they have
//! seen (see `TaskKind::gold_may_repeat`).

use super::{SanityPlacement, VtonConfig};
use crate::core::kind::contract::{BatchPlan, Invalid, ItemRef};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::de::IgnoredAny;
use uuid::Uuid;

/// Forms the questionnaires.
pub fn form(c: &VtonConfig, items: &[ItemRef<IgnoredAny>], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid> {
    let sanity: Vec<Uuid> = items.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
    let regular: Vec<Uuid> = items.iter().filter(|i| !i.has_gold).map(|i| i.id).collect();
    let positions = c.sanity_positions();
    let per_set = positions.len();
    let sets_needed = c.max_questionnaires_per_worker;
    if sanity.len() < per_set * sets_needed {
        return Err(Invalid(format!(
            "{per_set} sanity task(s) per questionnaire and up to {sets_needed} questionnaire(s) per worker need {} \
             sanity tasks (disjoint sets, so nobody sees one twice), but the campaign has {}",
            per_set * sets_needed,
            sanity.len()
        )));
    }
    if regular.is_empty() {
        return Err(Invalid("the campaign has no tasks to rate (only sanity tasks)".into()));
    }
    let per = c.tasks_per_questionnaire - per_set;
    if c.fill_last_questionnaire && regular.len() < per {
        return Err(Invalid(format!(
            "a questionnaire holds {per} images to rate but the campaign has {}; import more or turn off \
             fill_last_questionnaire",
            regular.len()
        )));
    }
    // Sanity sets in import order: one set, or as many disjoint ones as the pool allows.
    let set_count = if sets_needed == 1 { 1 } else { sanity.len() / per_set.max(1) };
    let sets: Vec<&[Uuid]> = (0..set_count).map(|k| &sanity[k * per_set..(k + 1) * per_set]).collect();
    let mut plans = Vec::new();
    // Each round places every image once; rounds are shuffled independently,
    // so an image lands in `appearances` different questionnaires.
    for _ in 0..c.appearances {
        let mut round = regular.clone();
        round.shuffle(rng);
        for chunk in round.chunks(per) {
            let mut rated = chunk.to_vec();
            if c.fill_last_questionnaire && rated.len() < per {
                let fill: Vec<Uuid> =
                    round.iter().filter(|i| !chunk.contains(i)).take(per - rated.len()).copied().collect();
                rated.extend(fill);
            }
            let set = sets[plans.len() % sets.len()];
            let positions = match c.sanity_placement {
                SanityPlacement::Fixed => positions.clone(),
                SanityPlacement::PerQuestionnaire => drawn_positions(rated.len() + set.len(), set.len(), rng),
            };
            plans.push(BatchPlan {
                items: interleave(&rated, set, &positions),
                overlap: Some(c.annotators_per_questionnaire),
                group: None,
            });
        }
    }
    Ok(plans)
}

/// `count` distinct 1-based positions of `total`, drawn with `rng`, in order.
fn drawn_positions(total: usize, count: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut positions =
        rand::seq::index::sample(rng, total, count.min(total)).into_iter().map(|i| i + 1).collect::<Vec<_>>();
    positions.sort_unstable();
    positions
}

/// Places the sanity tasks at their 1-based positions among the rated images;
/// positions past the end of a short questionnaire (filling turned off) go last.
fn interleave(rated: &[Uuid], sanity: &[Uuid], positions: &[usize]) -> Vec<Uuid> {
    let total = rated.len() + sanity.len();
    let mut out = Vec::with_capacity(total);
    let (mut r, mut s) = (rated.iter(), sanity.iter());
    for position in 1..=total {
        let next =
            if positions.contains(&position) { s.next().or_else(|| r.next()) } else { r.next().or_else(|| s.next()) };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::{HashMap, HashSet};

    fn items(regular: usize, sanity: usize) -> Vec<ItemRef<IgnoredAny>> {
        (0..regular + sanity)
            .map(|i| ItemRef { id: Uuid::from_u128(i as u128 + 1), payload: IgnoredAny, has_gold: i >= regular })
            .collect()
    }

    fn config(extra: serde_json::Value) -> VtonConfig {
        let mut c = serde_json::json!({"tasks_per_questionnaire": 10, "sanity_per_questionnaire": 2, "annotators_per_questionnaire": 3});
        for (k, v) in extra.as_object().into_iter().flatten() {
            c[k] = v.clone();
        }
        VtonConfig::parse(&c).expect("config")
    }

    #[test]
    fn questionnaires_hide_sanity_tasks_and_never_repeat_an_image() {
        let config = config(serde_json::json!({"appearances": 2}));
        let all = items(24, 3);
        let sanity: HashSet<Uuid> = all.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
        let plans = form(&config, &all, &mut StdRng::seed_from_u64(1)).expect("forms");
        assert_eq!(plans.len(), 6);
        let mut appearances = HashMap::new();
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
    fn every_questionnaire_is_full_and_has_the_same_sanity_tasks_at_the_papers_positions() {
        let config = VtonConfig::parse(&serde_json::json!({})).expect("defaults");
        assert_eq!(config.sanity_positions(), vec![5, 15, 25, 35, 45]);
        // 100 images at 45 per questionnaire: 3 questionnaires, the last filled up.
        let all = items(100, 8);
        let plans = form(&config, &all, &mut StdRng::seed_from_u64(7)).expect("forms");
        assert_eq!(plans.len(), 3);
        let first_sanity: Vec<Uuid> = [5, 15, 25, 35, 45].iter().map(|p| plans[0].items[p - 1]).collect();
        let sanity: HashSet<Uuid> = all.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
        for p in &plans {
            assert_eq!(p.items.len(), 50, "every questionnaire has exactly 50 tasks");
            let at: Vec<Uuid> = [5, 15, 25, 35, 45].iter().map(|pos| p.items[pos - 1]).collect();
            assert_eq!(at, first_sanity, "the same sanity tasks at the same positions");
            assert!(at.iter().all(|i| sanity.contains(i)));
            assert_eq!(p.items.iter().filter(|i| sanity.contains(i)).count(), 5);
            assert_eq!(p.items.iter().collect::<HashSet<_>>().len(), 50);
        }
        let rated: usize = plans.iter().map(|p| p.items.iter().filter(|i| !sanity.contains(i)).count()).sum();
        assert_eq!(rated, 135, "35 images of other questionnaires fill the last one");
        let distinct: HashSet<&Uuid> = plans.iter().flat_map(|p| &p.items).filter(|i| !sanity.contains(i)).collect();
        assert_eq!(distinct.len(), 100, "every image is asked");
    }

    #[test]
    fn positions_are_configurable_and_filling_can_be_turned_off() {
        let config = config(serde_json::json!({"sanity_positions": [1, 10], "fill_last_questionnaire": false}));
        let all = items(12, 2);
        let sanity: HashSet<Uuid> = all.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
        let plans = form(&config, &all, &mut StdRng::seed_from_u64(3)).expect("forms");
        assert_eq!(plans.iter().map(|p| p.items.len()).collect::<Vec<_>>(), vec![10, 6]);
        assert!(sanity.contains(&plans[0].items[0]) && sanity.contains(&plans[0].items[9]));
        assert!(
            sanity.contains(&plans[1].items[0]) && sanity.contains(&plans[1].items[5]),
            "the late position goes last"
        );
        assert!(VtonConfig::parse(&serde_json::json!({"sanity_positions": [1, 51]})).is_err());
        assert_eq!(
            VtonConfig::parse(&serde_json::json!({"sanity_positions": [2, 9]})).expect("c").sanity_per_questionnaire,
            2
        );
    }

    #[test]
    fn per_questionnaire_placement_draws_the_positions_anew_for_each() {
        let config = VtonConfig::parse(&serde_json::json!({"sanity_placement": "per_questionnaire"})).expect("c");
        let all = items(450, 5);
        let sanity: HashSet<Uuid> = all.iter().filter(|i| i.has_gold).map(|i| i.id).collect();
        let plans = form(&config, &all, &mut StdRng::seed_from_u64(11)).expect("forms");
        assert_eq!(plans.len(), 10);
        let positions: Vec<Vec<usize>> =
            plans.iter().map(|p| (1..=50).filter(|pos| sanity.contains(&p.items[pos - 1])).collect()).collect();
        for (p, at) in plans.iter().zip(&positions) {
            assert_eq!(p.items.len(), 50);
            assert_eq!(at.len(), 5, "five sanity tasks in each: {at:?}");
        }
        let distinct: HashSet<&Vec<usize>> = positions.iter().collect();
        assert!(distinct.len() > 1, "positions differ between questionnaires: {positions:?}");
        assert!(positions.iter().all(|at| at != &vec![5, 15, 25, 35, 45]), "not the paper's positions");
        let both = serde_json::json!({"sanity_placement": "per_questionnaire", "sanity_positions": [1, 2, 3, 4, 5]});
        assert!(VtonConfig::parse(&both).is_err(), "fixed positions and drawn ones contradict");
    }

    #[test]
    fn several_questionnaires_per_worker_rotate_disjoint_sanity_sets() {
        let config = config(serde_json::json!({"max_questionnaires_per_worker": 2}));
        assert!(form(&config, &items(40, 3), &mut StdRng::seed_from_u64(1)).is_err(), "2 sets of 2 need 4");
        let plans = form(&config, &items(40, 4), &mut StdRng::seed_from_u64(1)).expect("forms");
        let sanity_of = |p: &BatchPlan| -> Vec<Uuid> { p.items.iter().filter(|i| i.as_u128() > 40).copied().collect() };
        assert_eq!(plans.len(), 5);
        assert_ne!(sanity_of(&plans[0]), sanity_of(&plans[1]));
        assert!(sanity_of(&plans[0]).iter().all(|i| !sanity_of(&plans[1]).contains(i)), "disjoint sets");
        assert_eq!(sanity_of(&plans[0]), sanity_of(&plans[2]));
    }

    #[test]
    fn too_few_sanity_tasks_is_an_error() {
        let config = config(serde_json::json!({"sanity_per_questionnaire": 5}));
        assert!(form(&config, &items(10, 2), &mut StdRng::seed_from_u64(1)).is_err());
    }
}
