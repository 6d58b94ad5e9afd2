//! Progress per annotator across a campaign and per campaign (within one
//! assignment: [`crate::core::work::assignment_progress`]).

use crate::error::Result;
use sqlx::PgPool;
use uuid::Uuid;

/// A campaign's overall progress.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct CampaignProgress {
    /// Items imported.
    pub items: i64,
    /// Items in no batch yet (imported after batches were formed; gold items
    /// a kind shares across batches, kept in reserve, are not counted).
    pub items_unbatched: i64,
    /// Batches formed.
    pub batches: i64,
    /// Assignments wanted in total: the sum of batch overlaps, and in expert
    /// campaigns each batch every expert labels once per expert.
    pub assignments_wanted: i64,
    /// Assignments submitted.
    pub assignments_completed: i64,
    /// Assignments in progress with a valid lease.
    pub assignments_active: i64,
    /// Responses stored (including excluded ones).
    pub responses: i64,
    /// Responses excluded by curation.
    pub responses_excluded: i64,
    /// Distinct annotators who answered at least once.
    pub annotators: i64,
}

/// Progress of a campaign. Concurrent views of the same campaign share one
/// count (see [`crate::core::support::coalesce`]): it scans every response.
pub async fn of_campaign(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign: &crate::core::campaign::campaigns::Campaign,
) -> Result<CampaignProgress> {
    // Gold items a kind shares across batches (VTON's sanity tasks) wait in
    // reserve: no new batch would take them, so they are not "unbatched".
    let reserve_gold = kinds.rules(campaign).is_ok_and(|r| r.policy().batches.shares_gold_across_batches);
    let (campaign_id, experts) = (campaign.id, !campaign.settings.crowd());
    caches
        .progress
        .get(campaign_id, || {
            let pool = pool.clone();
            async move { count_campaign(&pool, campaign_id, reserve_gold, experts).await }
        })
        .await
}

/// The campaign's figures in three statements side by side (each scans a
/// different table; one statement would run them one after the other).
/// Responses are counted through the assignments' kept counts (thousands of
/// rows, not hundreds of thousands; responses are never deleted nor moved),
/// excluded ones through their own small index.
#[tracing::instrument(level = "debug", skip(pool))]
async fn count_campaign(
    pool: &PgPool,
    campaign_id: Uuid,
    reserve_gold: bool,
    experts: bool,
) -> Result<CampaignProgress> {
    let responses = sqlx::query!(
        r#"SELECT (SELECT COALESCE(sum(answered), 0)::bigint FROM assignments WHERE campaign_id = $1) AS "answered!",
                  (SELECT count(*) FROM responses WHERE campaign_id = $1 AND excluded_reason IS NOT NULL) AS "excluded!""#,
        campaign_id,
    )
    .fetch_one(pool);
    // Two scans: as one FILTER the anti-join becomes a probe per item (slower).
    // The unbatched items' ids come from indexes alone; only those few are
    // then read for their gold (reading every item's was three times slower).
    let items = sqlx::query!(
        r#"SELECT (SELECT count(*) FROM items WHERE campaign_id = $1) AS "items!",
                  (SELECT count(*) FROM items g WHERE NOT ($2 AND g.gold IS NOT NULL) AND g.id = ANY (ARRAY(
                     SELECT i.id FROM items i WHERE i.campaign_id = $1
                       AND NOT EXISTS (SELECT 1 FROM batch_items bi WHERE bi.item_id = i.id)))) AS "unbatched!""#,
        campaign_id,
        reserve_gold,
    )
    .fetch_one(pool);
    let work = sqlx::query!(
        r#"SELECT
             (SELECT count(*) FROM batches WHERE campaign_id = $1) AS "batches!",
             (SELECT COALESCE(sum(overlap), 0)::bigint FROM batches WHERE campaign_id = $1)
               + CASE WHEN $2
                      THEN (SELECT count(*) FROM batches
                            WHERE campaign_id = $1 AND overlap IS NULL AND review_of IS NULL)
                           * (SELECT count(*) FROM users WHERE role = 'expert' AND disabled_at IS NULL)
                      ELSE 0 END AS "wanted!",
             (SELECT count(*) FROM assignments WHERE campaign_id = $1 AND state = 'completed') AS "completed!",
             (SELECT count(*) FROM assignments WHERE campaign_id = $1 AND state = 'active' AND leased_until > now())
               AS "active!",
             (SELECT count(DISTINCT annotator_id) FROM assignments WHERE campaign_id = $1 AND answered > 0)
               AS "annotators!""#,
        campaign_id,
        experts,
    )
    .fetch_one(pool);
    let (responses, items, work) = tokio::try_join!(responses, items, work)?;
    let (responses, responses_excluded) = (responses.answered, responses.excluded);
    let (items, items_unbatched) = (items.items, items.unbatched);
    let (batches, assignments_wanted, assignments_completed, assignments_active, annotators) =
        (work.batches, work.wanted, work.completed, work.active, work.annotators);
    Ok(CampaignProgress {
        items,
        items_unbatched,
        batches,
        assignments_wanted,
        assignments_completed,
        assignments_active,
        responses,
        responses_excluded,
        annotators,
    })
}

/// How many batches an annotator has submitted in a campaign.
pub async fn submitted_by(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "submitted!" FROM assignments
           WHERE campaign_id = $1 AND annotator_id = $2 AND state = 'completed'"#,
        campaign_id,
        annotator_id,
    )
    .fetch_one(pool)
    .await?)
}

/// A statement reading [`AnnotatorProgress`] rows of annotators `p` in
/// campaign `$1`, checked when compiled: `$head` (a `WITH` naming them, or
/// nothing), `$who` (their name), `$more_remaining` (added to what their
/// active work leaves unanswered: `+ (…)`, or nothing) and `$tail` (`FROM …`).
/// Done is the kept answer counts of their assignments (a crowd campaign's
/// admin view lists thousands of annotators; counting their responses read
/// each one); remaining, their active work's unanswered items.
macro_rules! annotator_progress {
    ($head:literal, $who:literal, $more_remaining:literal, $tail:literal, $($arg:expr),+ $(,)?) => {
        sqlx::query_as!(
            AnnotatorProgress,
            $head + " SELECT p.id AS annotator_id, " + $who + r#" AS "annotator!",
                (SELECT COALESCE(sum(a.answered), 0)::bigint FROM assignments a
                  WHERE a.campaign_id = $1 AND a.annotator_id = p.id AND a.state <> 'expired') AS "done!",
                ((SELECT count(*) FROM assignments a JOIN batch_items bi ON bi.batch_id = a.batch_id
                   WHERE a.campaign_id = $1 AND a.annotator_id = p.id AND a.state = 'active'
                     AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.assignment_id = a.id AND r.item_id = bi.item_id))
                 "# + $more_remaining + r#") AS "remaining!" "# + $tail,
            $($arg),+
        )
    };
}

/// One annotator's progress through a campaign: items labelled and items
/// still waiting for them: in their open batch, plus in the admin's table
/// ([`per_annotator`]) the "every annotator" batches they have not started
/// (batches others may take are not counted there), and on their own pages
/// ([`of_annotator_now`]) every batch open to them now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct AnnotatorProgress {
    /// The annotator.
    pub annotator_id: Uuid,
    /// Account name, or the crowd platform's worker id.
    pub annotator: String,
    /// Items labelled (in work that did not expire).
    pub done: i64,
    /// Items still waiting for this annotator.
    pub remaining: i64,
}

/// Per-annotator progress of a campaign: everyone who has worked on it, and
/// in an expert campaign every expert (those who have not started too).
/// At most `limit` of them by name (`None`: all); a crowd campaign has
/// thousands, and only the rows shown are counted. Concurrent views of the
/// same rows share one count (see [`crate::core::support::coalesce`]).
pub async fn per_annotator(
    pool: &PgPool,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
    limit: Option<i64>,
) -> Result<Vec<AnnotatorProgress>> {
    let rows = caches
        .per_annotator
        .get((campaign_id, limit), || {
            let pool = pool.clone();
            async move { Ok(std::sync::Arc::new(count_per_annotator(&pool, campaign_id, limit).await?)) }
        })
        .await?;
    Ok(std::sync::Arc::unwrap_or_clone(rows))
}

#[tracing::instrument(level = "debug", skip(pool))]
async fn count_per_annotator(pool: &PgPool, campaign_id: Uuid, limit: Option<i64>) -> Result<Vec<AnnotatorProgress>> {
    Ok(annotator_progress!(
        "WITH people AS (
           SELECT u.id, coalesce(u.name, u.external_id, u.id::text) AS who FROM users u
           WHERE u.id IN (SELECT annotator_id FROM assignments WHERE campaign_id = $1)
              OR (u.role = 'expert' AND (SELECT participants FROM campaigns WHERE id = $1) = 'experts'))",
        "p.who",
        // The "every annotator" batches they have not started (an expired
        // one counts: it is given back to them).
        "+ (SELECT count(*) FROM batches b JOIN batch_items bi ON bi.batch_id = b.id
             WHERE b.campaign_id = $1 AND b.overlap IS NULL AND b.review_of IS NULL
               AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.batch_id = b.id AND a.annotator_id = p.id
                               AND a.state <> 'expired'))",
        "FROM people p ORDER BY p.who LIMIT $2",
        campaign_id,
        limit,
    )
    .fetch_all(pool)
    .await?)
}

/// One annotator's progress in the counts the work is handed out by:
/// done, and remaining = unanswered items of their active work plus the
/// items of every batch open to them now (see [`crate::core::work::eligibility::open_to`]),
/// with the number of those batches. The expert's home and task pages show it.
pub async fn of_annotator_now(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    campaign: &crate::core::campaign::campaigns::Campaign,
    annotator_id: Uuid,
) -> Result<(AnnotatorProgress, crate::core::work::eligibility::OpenWork)> {
    // `remaining` is read as their active work's unanswered items; what
    // they could start is added from the rules that hand it out.
    let (mut progress, open) = tokio::try_join!(
        async {
            Ok(annotator_progress!(
                "",
                "coalesce(p.name, p.external_id, p.id::text)",
                "",
                "FROM users p WHERE p.id = $2",
                campaign.id,
                annotator_id,
            )
            .fetch_one(pool)
            .await?)
        },
        crate::core::work::eligibility::open_to(pool, kinds, campaign, annotator_id),
    )?;
    progress.remaining += open.items;
    Ok((progress, open))
}
