//! Who may take which batch: what keeps an annotator from a campaign's
//! batches (a block, the kind's limit, groups the kind keeps for others),
//! and the condition a batch with room for them meets. Handing out work
//! ([`crate::core::work::assignments`]) and counting what an annotator could start use
//! the same rules.

use crate::core::campaign::states::CampaignState;
use crate::core::{campaign::campaigns, Registry};
use crate::error::Result;
use sqlx::PgPool;
use uuid::Uuid;

/// A statement over batches `b` of campaign `$1` with a free slot that
/// annotator `$2` may take: not taken by them before, holding no non-gold
/// item they answered (`$3`: gold counts too; an answer the admin sent back
/// to the experts, see [`crate::core::work::batches::SENT_BACK`], does not
/// count), not in a barred group (`$4`), and not a review of their own
/// work. `$select` (its columns), the condition, then `$tail`, checked
/// when compiled; handing out work and counting what an annotator could
/// start both use it.
macro_rules! batches_with_room {
    ($select:literal, $tail:literal, $($arg:expr),+ $(,)?) => {
        sqlx::query!(
            $select + " FROM batches b
             WHERE b.campaign_id = $1 AND (b.overlap IS NULL OR b.taken < b.overlap)
               AND (b.grouping IS NULL OR NOT (b.grouping = ANY($4)))
               AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.batch_id = b.id AND a.annotator_id = $2)
               AND (b.review_of IS NOT NULL OR NOT EXISTS (SELECT 1 FROM batch_items bi
                               JOIN items i ON i.id = bi.item_id AND (i.gold IS NULL OR $3)
                               JOIN responses r ON r.item_id = bi.item_id AND r.annotator_id = $2
                                    AND r.excluded_reason NOT LIKE 'sent back to experts: %' IS NOT FALSE
                               WHERE bi.batch_id = b.id))
               AND NOT EXISTS (SELECT 1 FROM assignments reviewed
                                WHERE reviewed.id = b.review_of AND reviewed.annotator_id = $2) " + $tail,
            $($arg),+
        )
    };
}
pub(in crate::core) use batches_with_room;

/// Whether an annotator may take new batches of a campaign, and on what terms.
pub(in crate::core) enum Eligibility {
    /// Blocked by the campaign (e.g. failed sanity checks).
    Blocked,
    /// At the kind's limit of batches per annotator.
    AtLimit,
    /// May take batches with room: whether gold items count as answered
    /// before, and the groups the kind keeps from them.
    May { check_gold: bool, barred: Vec<String> },
}

/// What keeps this annotator from the campaign's batches.
pub(in crate::core) async fn who_may_take(
    conn: &mut sqlx::PgConnection,
    rules: &dyn crate::core::kind::contract::CampaignRules,
    campaign: &campaigns::Campaign,
    annotator_id: Uuid,
) -> Result<Eligibility> {
    let campaign_id = campaign.id;
    let blocked = sqlx::query_scalar!(
        "SELECT reason FROM annotator_blocks WHERE campaign_id = $1 AND annotator_id = $2",
        campaign_id,
        annotator_id,
    )
    .fetch_optional(&mut *conn)
    .await?;
    if blocked.is_some() {
        return Ok(Eligibility::Blocked);
    }
    if let Some(max) = rules.policy().batches.max_batches_per_annotator {
        let taken = sqlx::query_scalar!(
            r#"SELECT count(*) AS "taken!" FROM assignments a JOIN batches b ON b.id = a.batch_id
               WHERE a.campaign_id = $1 AND a.annotator_id = $2 AND a.state <> 'expired' AND b.review_of IS NULL"#,
            campaign_id,
            annotator_id,
        )
        .fetch_one(&mut *conn)
        .await?;
        if taken >= max {
            return Ok(Eligibility::AtLimit);
        }
    }
    // Groups of batches the kind keeps from this annotator (e.g. attribute
    // super-categories assigned to other experts), decided once per group.
    let row = sqlx::query!(
        r#"SELECT coalesce(u.name, u.external_id, u.id::text) AS "who!",
                  coalesce((SELECT array_agg(DISTINCT grouping) FROM batches WHERE campaign_id = $1 AND grouping IS NOT NULL),
                           '{}') AS "groups!: Vec<String>"
           FROM users u WHERE u.id = $2"#,
        campaign_id,
        annotator_id,
    )
    .fetch_one(&mut *conn)
    .await?;
    let (who, groups) = (row.who, row.groups);
    let barred = groups.into_iter().filter(|g| !rules.policy().batches.may_take(Some(g), &who)).collect();
    Ok(Eligibility::May { check_gold: !rules.policy().batches.gold_may_repeat, barred })
}

/// What an annotator could start in a campaign now, by the rules that hand
/// out work: batches with room for them, and the items those hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenWork {
    /// Batches they may start.
    pub batches: i64,
    /// Items in those batches.
    pub items: i64,
    /// Of those batches, the ones reviewing another annotator's work (the
    /// review queue).
    pub reviews: i64,
}

/// The batches (and their items) open to this annotator now; none when the
/// campaign is not open or they may take no more.
pub async fn open_to(
    pool: &PgPool,
    kinds: &Registry,
    campaign: &campaigns::Campaign,
    annotator_id: Uuid,
) -> Result<OpenWork> {
    if campaign.state != CampaignState::Open {
        return Ok(OpenWork::default());
    }
    let rules = kinds.rules(campaign)?;
    let mut conn = pool.acquire().await?;
    let Eligibility::May { check_gold, barred } = who_may_take(&mut conn, &*rules, campaign, annotator_id).await?
    else {
        return Ok(OpenWork::default());
    };
    let open = batches_with_room!(
        r#"SELECT count(*) AS "batches!",
                  COALESCE(sum((SELECT count(*) FROM batch_items bi WHERE bi.batch_id = b.id)), 0)::bigint AS "items!",
                  count(*) FILTER (WHERE b.review_of IS NOT NULL) AS "reviews!""#,
        "",
        campaign.id,
        annotator_id,
        check_gold,
        &barred,
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(OpenWork { batches: open.batches, items: open.items, reviews: open.reviews })
}
