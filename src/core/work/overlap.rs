//! Adaptive overlap (crowd campaigns): every item gets the rule's minimum
//! of raters in the questionnaires formed as usual; when a questionnaire is
//! full, each of its items is decided by its kind's rule
//! (`stats::adaptive`) over the answers that count (not excluded, from
//! raters who passed every check of that questionnaire), or settled at the
//! maximum. Undecided items wait, and are formed into questionnaires of
//! their own (the campaign's checks at their places, as in its first
//! questionnaire), [`ROUND`] more raters at a time (never past the
//! maximum), until each is settled. A
//! decided item is never rated again; a worker never rates an item twice
//! (the assignment rules). Fixed overlap (the default) is untouched.

use crate::core::campaign::settings::Overlap;
use crate::core::kind::contract::Judgement;
use crate::core::{campaign::campaigns, Registry};
use crate::error::Result;
use crate::stats::adaptive::Vote;
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;

/// Raters a questionnaire of undecided items takes: the fewest that a
/// questionnaire's agreement (Krippendorff's α) and curation can be
/// computed on, so that an item takes as few more raters as it needs.
pub const ROUND: u32 = 2;

/// The overlap an adaptive campaign's first questionnaires get (the rule's
/// minimum), or the planned one under fixed overlap.
pub fn first_overlap(overlap: Overlap, planned: Option<i32>) -> Option<i32> {
    match (overlap.rule(), planned) {
        (Some(rule), Some(_)) => Some(i32::try_from(rule.min).unwrap_or(i32::MAX)),
        _ => planned,
    }
}

/// After a questionnaire was submitted in an adaptive campaign: once it is
/// full, its items are decided or set waiting, and waiting items are formed
/// into new questionnaires when there are enough for one, or when no other
/// questionnaire is still open. Returns how many questionnaires it formed.
pub async fn after_submission(pool: &PgPool, kinds: &Registry, campaign_id: Uuid, batch_id: Uuid) -> Result<usize> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let Some(rule) = campaign.settings.overlap.rule() else { return Ok(0) };
    let kind = kinds.of(&campaign)?;
    let mut tx = pool.begin().await?;
    // One campaign's decisions and formations at a time.
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", campaign_id)
        .fetch_optional(&mut *tx)
        .await?;
    let batch = sqlx::query!(
        r#"SELECT b.overlap,
                  (SELECT count(*) FROM assignments a WHERE a.batch_id = b.id AND a.state = 'completed') AS "completed!"
           FROM batches b WHERE b.id = $1"#,
        batch_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let (overlap, completed) = (batch.overlap, batch.completed);
    if overlap.is_none_or(|o| completed < i64::from(o)) {
        tx.commit().await?;
        return Ok(0);
    }
    // This questionnaire's items to decide (not its checks).
    let items: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT bi.item_id FROM batch_items bi JOIN items i ON i.id = bi.item_id
         WHERE bi.batch_id = $1 AND i.gold IS NULL",
        batch_id,
    )
    .fetch_all(&mut *tx)
    .await?;
    // Every submitted answer to them, and the checks of the same assignments.
    type Answered = (Uuid, Uuid, Judgement, Option<String>);
    let answered: Vec<Answered> = sqlx::query!(
        "SELECT r.item_id, r.assignment_id, i.payload, r.answer, i.gold, r.excluded_reason
         FROM responses r JOIN assignments a ON a.id = r.assignment_id JOIN items i ON i.id = r.item_id
         WHERE a.state = 'completed' AND a.id IN (
             SELECT r2.assignment_id FROM responses r2 WHERE r2.item_id = ANY($1))",
        &items,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.item_id, r.assignment_id, kind.judge(&r.payload, r.gold.as_ref(), &r.answer), r.excluded_reason))
    .collect();
    let failed: HashSet<Uuid> =
        answered.iter().filter(|(_, _, judged, _)| judged.check == Some(false)).map(|(_, a, ..)| *a).collect();
    let wanted: HashSet<Uuid> = items.iter().copied().collect();
    let mut raters: HashMap<Uuid, u32> = HashMap::new();
    let mut votes: HashMap<Uuid, Vec<Vote>> = HashMap::new();
    for (item, assignment, judged, excluded) in answered {
        if !wanted.contains(&item) {
            continue;
        }
        *raters.entry(item).or_default() += 1;
        if excluded.as_deref().is_none_or(|r| r.starts_with("curation:")) && !failed.contains(&assignment) {
            votes.entry(item).or_default().extend(judged.vote);
        }
    }
    // Items still in a questionnaire that is not full wait for it.
    let open: HashSet<Uuid> = sqlx::query_scalar!(
        "SELECT DISTINCT bi.item_id FROM batch_items bi JOIN batches b ON b.id = bi.batch_id
         WHERE bi.item_id = ANY($1) AND b.id <> $2 AND b.overlap IS NOT NULL
           AND (SELECT count(*) FROM assignments a WHERE a.batch_id = b.id AND a.state = 'completed') < b.overlap",
        &items,
        batch_id,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    for item in items.iter().filter(|i| !open.contains(i)) {
        let (n, v) = (raters.get(item).copied().unwrap_or(0), votes.remove(item).unwrap_or_default());
        let settled = rule.settled(&v, n);
        // Decided by the rule itself (at the maximum too), not only stopped there.
        let decided = n >= rule.min && crate::stats::adaptive::Rule { max: u32::MAX, ..rule }.settled(&v, n);
        sqlx::query!(
            "INSERT INTO adaptive_items (item_id, campaign_id, raters, state, decided) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (item_id) DO UPDATE SET raters = EXCLUDED.raters, state = EXCLUDED.state,
                 decided = EXCLUDED.decided, updated_at = now()",
            item,
            campaign_id,
            i32::try_from(n).unwrap_or(i32::MAX),
            if settled { "settled" } else { "waiting" },
            decided,
        )
        .execute(&mut *tx)
        .await?;
    }
    let formed = form_waiting(&mut tx, campaign_id, rule).await?;
    tx.commit().await?;
    if formed > 0 {
        crate::core::work::batches::refresh_statistics(pool).await?;
    }
    Ok(formed)
}

/// Forms waiting items into questionnaires laid out as the campaign's first
/// (its checks at the same relative places): as many full ones as there are
/// waiting items for, and the rest too when no other questionnaire is open.
/// Each takes [`ROUND`] raters (fewer when that would take an item past
/// the maximum), and is decided again when it is full.
async fn form_waiting(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    campaign_id: Uuid,
    rule: crate::stats::adaptive::Rule,
) -> Result<usize> {
    let waiting: Vec<(Uuid, i32)> = sqlx::query!(
        "SELECT item_id, raters FROM adaptive_items WHERE campaign_id = $1 AND state = 'waiting'
         ORDER BY raters, updated_at, item_id",
        campaign_id,
    )
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|r| (r.item_id, r.raters))
    .collect();
    let raters: HashMap<Uuid, i32> = waiting.iter().copied().collect();
    let waiting: Vec<Uuid> = waiting.into_iter().map(|(id, _)| id).collect();
    if waiting.is_empty() {
        return Ok(0);
    }
    // The first questionnaire's layout: which places hold checks.
    let template: Vec<(Uuid, bool)> = sqlx::query!(
        r#"SELECT bi.item_id, i.gold IS NOT NULL AS "gold!" FROM batch_items bi JOIN items i ON i.id = bi.item_id
           WHERE bi.batch_id = (SELECT id FROM batches WHERE campaign_id = $1 ORDER BY position LIMIT 1)
           ORDER BY bi.position"#,
        campaign_id,
    )
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|r| (r.item_id, r.gold))
    .collect();
    let per = template.iter().filter(|(_, gold)| !gold).count().max(1);
    let open = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM batches b WHERE b.campaign_id = $1 AND b.overlap IS NOT NULL
                            AND (SELECT count(*) FROM assignments a WHERE a.batch_id = b.id AND a.state = 'completed') < b.overlap)
             AS "open!""#,
        campaign_id,
    )
    .fetch_one(&mut **tx)
    .await?;
    let chunks: Vec<&[Uuid]> = waiting.chunks(per).filter(|c| c.len() == per || !open).collect();
    let mut position = sqlx::query_scalar!(
        r#"SELECT coalesce(max(position) + 1, 0) AS "position!" FROM batches WHERE campaign_id = $1"#,
        campaign_id,
    )
    .fetch_one(&mut **tx)
    .await?;
    for chunk in &chunks {
        let items = laid_out(&template, chunk);
        let most = chunk.iter().filter_map(|i| raters.get(i)).copied().max().unwrap_or(0);
        let left = i32::try_from(rule.max).unwrap_or(i32::MAX) - most;
        let overlap = i32::try_from(ROUND.min(rule.min)).unwrap_or(1).min(left).max(1);
        crate::core::work::batches::insert(
            tx,
            campaign_id,
            usize::try_from(position).unwrap_or(0),
            Some(overlap),
            None,
            &items,
        )
        .await?;
        sqlx::query!("UPDATE adaptive_items SET state = 'queued', updated_at = now() WHERE item_id = ANY($1)", *chunk)
            .execute(&mut **tx)
            .await?;
        position += 1;
    }
    Ok(chunks.len())
}

/// `chosen` items with the template's checks at the same relative places.
fn laid_out(template: &[(Uuid, bool)], chosen: &[Uuid]) -> Vec<Uuid> {
    let total = template.len().max(1);
    let checks: Vec<(usize, Uuid)> =
        template.iter().enumerate().filter(|(_, (_, gold))| *gold).map(|(p, (id, _))| (p, *id)).collect();
    let length = chosen.len() + checks.len();
    let mut places: BTreeMap<usize, Uuid> = BTreeMap::new();
    for (p, id) in &checks {
        // The same share of the way through (a shorter questionnaire keeps the order).
        let mut at = (p * length) / total;
        while places.contains_key(&at) {
            at += 1;
        }
        places.insert(at.min(length - 1), *id);
    }
    let mut rest = chosen.iter();
    (0..length).filter_map(|p| places.get(&p).copied().or_else(|| rest.next().copied())).collect()
}

/// Where an adaptive campaign stands.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct AdaptiveProgress {
    /// Items decided by their kind's rule.
    pub decided: i64,
    /// Items settled at the maximum without a decision.
    pub at_max: i64,
    /// Items waiting for, or in, a questionnaire of undecided items.
    pub undecided: i64,
    /// Items not yet through their first questionnaire.
    pub pending: i64,
    /// Ratings given so far (every submitted rater of every item).
    pub ratings: i64,
    /// What fixed overlap would give (items × the planned raters), if known.
    pub fixed_ratings: Option<i64>,
}

/// An adaptive campaign's progress (`None` under fixed overlap).
pub async fn progress(pool: &PgPool, campaign: &campaigns::Campaign) -> Result<Option<AdaptiveProgress>> {
    if campaign.settings.overlap.rule().is_none() {
        return Ok(None);
    }
    let row = sqlx::query!(
        r#"SELECT count(*) FILTER (WHERE a.state = 'settled' AND a.decided) AS "decided!",
                  count(*) FILTER (WHERE a.state = 'settled' AND NOT a.decided) AS "at_max!",
                  count(*) FILTER (WHERE a.state IN ('waiting', 'queued')) AS "undecided!",
                  (SELECT count(*) FROM items WHERE campaign_id = $1 AND gold IS NULL) AS "items!",
                  (SELECT count(*) FROM responses r JOIN assignments s ON s.id = r.assignment_id JOIN items i ON i.id = r.item_id
                    WHERE r.campaign_id = $1 AND s.state = 'completed' AND i.gold IS NULL) AS "ratings!",
                  (SELECT planned_overlap FROM campaigns WHERE id = $1) AS planned
           FROM adaptive_items a WHERE a.campaign_id = $1"#,
        campaign.id,
    )
    .fetch_one(pool)
    .await?;
    let (decided, at_max, undecided, items, ratings, planned) =
        (row.decided, row.at_max, row.undecided, row.items, row.ratings, row.planned);
    Ok(Some(AdaptiveProgress {
        decided,
        at_max,
        undecided,
        pending: items - decided - at_max - undecided,
        ratings,
        fixed_ratings: planned.map(|p| i64::from(p) * items),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecided_items_take_the_first_questionnaires_layout_with_its_checks_at_their_places() {
        let id = |n: u128| Uuid::from_u128(n);
        // Ten places, checks at places 4 and 9 (as a VTON questionnaire's fixed positions).
        let template: Vec<(Uuid, bool)> = (0..10).map(|p| (id(100 + p), p == 4 || p == 9)).collect();
        let full: Vec<Uuid> = (0..8).map(id).collect();
        let laid = laid_out(&template, &full);
        assert_eq!(laid.len(), 10);
        assert_eq!((laid[4], laid[9]), (id(104), id(109)), "the checks where the first questionnaire has them");
        // A shorter one keeps them at the same share of the way and every item once.
        let laid = laid_out(&template, &full[..3]);
        assert_eq!(laid.len(), 5);
        assert!(laid.contains(&id(104)) && laid.contains(&id(109)));
        assert_eq!(laid.iter().filter(|i| i.as_u128() < 8).count(), 3);
    }
}
