//! Batches (questionnaires): ordered lists of items, formed by the kind.

use crate::core::kind::contract::ItemRef;
use crate::error::Code;
use crate::error::{Error, Result};
use rand::SeedableRng;
use sqlx::PgPool;
use uuid::Uuid;

/// Before the first batches are formed: whether forming them now would
/// work, and how many it would make, or the kind's refusal in words (e.g.
/// VTON's "... need 5 sanity tasks, but the campaign has 1"), so the page
/// says what is missing before the admin tries. `None` once batches exist.
pub async fn readiness(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    campaign: &crate::core::campaign::campaigns::Campaign,
) -> Result<Option<std::result::Result<usize, String>>> {
    let formed = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM batches WHERE campaign_id = $1) AS "formed!""#,
        campaign.id
    )
    .fetch_one(pool)
    .await?;
    if formed {
        return Ok(None);
    }
    let keys = kinds.of(campaign)?.about().payload_keys_batched;
    let refs = crate::core::item::items::for_batching(pool, campaign.id, keys).await?;
    if refs.is_empty() {
        return Ok(Some(Err("import items first".to_owned())));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    // A configuration that no longer reads is said where the batches would
    // be formed, so the campaign page (and its settings form) still opens.
    let rules = match kinds.rules(campaign) {
        Ok(rules) => rules,
        Err(e) => return Ok(Some(Err(e.to_string()))),
    };
    Ok(Some(rules.form_batches(&refs, &mut rng).map(|p| p.len()).map_err(|e| e.0)))
}

/// Forms the campaign's batches with its kind's rule; `seed` makes the
/// formation reproducible. Pools grow: once batches exist, forming again
/// batches only the items in no batch yet (with the gold items too when the
/// kind shares them across batches, like VTON's sanity tasks).
pub async fn form(pool: &PgPool, kinds: &crate::core::Registry, campaign_id: Uuid, seed: u64) -> Result<usize> {
    let campaign = crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    let rules = kinds.rules(&campaign)?;
    let keys = kinds.of(&campaign)?.about().payload_keys_batched;
    let items = crate::core::item::items::for_batching(pool, campaign_id, keys).await?;
    let mut tx = pool.begin().await?;
    // Serialise formation per campaign, so two admins cannot both form the same items.
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", campaign_id)
        .fetch_optional(&mut *tx)
        .await?;
    let row = sqlx::query!(
        r#"SELECT coalesce((SELECT max(position) + 1 FROM batches WHERE campaign_id = $1), 0) AS "next_position!",
                  coalesce((SELECT array_agg(DISTINCT bi.item_id) FROM batch_items bi JOIN batches b ON b.id = bi.batch_id
                            WHERE b.campaign_id = $1), '{}') AS "batched!""#,
        campaign_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let (next_position, batched) = (row.next_position, row.batched);
    let batched: std::collections::HashSet<Uuid> = batched.into_iter().collect();
    if items.is_empty() {
        return Err(Error::conflict(Code::NoItems, "import items before forming batches"));
    }
    let new = |i: &&ItemRef| !batched.contains(&i.id);
    let shared_gold = rules.policy().batches.shares_gold_across_batches;
    // Gold shared across batches is not work of its own: a sanity task not
    // yet used does not make a new batch.
    let new_work = |i: &&ItemRef| new(i) && !(shared_gold && i.has_gold);
    if !batched.is_empty() && !items.iter().any(|i| new_work(&i)) {
        return Err(Error::conflict(Code::NothingToBatch, "every item is already in a batch; import more items first"));
    }
    let refs: Vec<ItemRef> = items.into_iter().filter(|i| new(&i) || (shared_gold && i.has_gold)).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let plans = rules.form_batches(&refs, &mut rng)?;
    let start = usize::try_from(next_position).unwrap_or(0);
    let planned = plans.first().and_then(|p| campaign.settings.annotators_per_batch.overlap(p.overlap));
    if campaign.settings.overlap.rule().is_some() {
        // What fixed overlap would have given each item, for the saved-ratings figure.
        sqlx::query!("UPDATE campaigns SET planned_overlap = $2 WHERE id = $1", campaign_id, planned)
            .execute(&mut *tx)
            .await?;
    }
    for (n, plan) in plans.iter().enumerate() {
        let overlap = crate::core::work::overlap::first_overlap(
            campaign.settings.overlap,
            campaign.settings.annotators_per_batch.overlap(plan.overlap),
        );
        let batch = insert(&mut tx, campaign_id, start + n, overlap, None, &plan.items).await?;
        if let Some(group) = &plan.group {
            sqlx::query!("UPDATE batches SET grouping = $2 WHERE id = $1", batch, group).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    refresh_statistics(pool).await?;
    Ok(plans.len())
}

/// How the reason of an answer sent back to the experts starts; such an
/// answer does not keep its expert from the batch offering the item again
/// (`eligibility::batches_with_room!` spells the same text in SQL).
pub const SENT_BACK: &str = "sent back to experts: ";

/// What [`send_back`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentBack {
    /// The item's answers that no longer count.
    pub excluded: u64,
    /// The new batch offering it again, numbered from 1 as pages show it.
    pub batch: i32,
}

/// Sends an item of an expert campaign back to the experts: its answers
/// stop counting (kept, marked "sent back to experts: `reason`") and a new
/// batch of this item alone, with the overlap and group of the batch it was
/// last in, offers it to them again; their new answers make its ground
/// truth. Crowd questionnaires are re-queued by curation instead.
#[tracing::instrument(level = "debug", skip(pool))]
pub async fn send_back(pool: &PgPool, campaign_id: Uuid, item_id: Uuid, reason: &str) -> Result<SentBack> {
    crate::core::item::items::ensure_in_campaign(pool, campaign_id, item_id).await?;
    let sent = send_back_items(pool, campaign_id, &[item_id], reason).await?;
    Ok(SentBack { excluded: sent.excluded, batch: sent.first_batch })
}

/// What [`send_back_items`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentBackItems {
    /// The items' answers that no longer count.
    pub excluded: u64,
    /// How many new batches offer the items again.
    pub batches: usize,
    /// The first of them, numbered from 1 as pages show it (the others
    /// follow it).
    pub first_batch: i32,
}

/// Sends items of an expert campaign back to the experts at once, all or
/// nothing: their answers stop counting (marked "sent back to experts:
/// `reason`") and the items sent back from one batch are offered again
/// together in a new batch with that batch's overlap and group (so a VSD
/// query's pairs, or a Fashionpedia super-category's masks, stay together).
/// Refused, changing nothing, for a crowd campaign or when an item is in no
/// batch yet.
#[tracing::instrument(level = "debug", skip(pool, items), fields(items = items.len()))]
pub async fn send_back_items(pool: &PgPool, campaign_id: Uuid, items: &[Uuid], reason: &str) -> Result<SentBackItems> {
    let reason = format!("{SENT_BACK}{}", crate::core::work::responses::admin_reason(reason)?);
    let campaign = crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    if campaign.settings.crowd() {
        return Err(Error::conflict(
            Code::NotAnExpertCampaign,
            "only an expert campaign sends an item back; a crowd campaign's questionnaires are re-queued by curation",
        ));
    }
    if items.is_empty() {
        return Err(Error::invalid(Code::NoItems, "no item matches: nothing was sent back"));
    }
    let mut tx = pool.begin().await?;
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", campaign_id)
        .fetch_optional(&mut *tx)
        .await?;
    // Each item's last batch (reviews aside), in the order batches were formed.
    let last = sqlx::query!(
        r#"SELECT last.item_id AS "item_id!", last.batch AS "batch!", last.overlap, last.grouping
             FROM (SELECT DISTINCT ON (bi.item_id) bi.item_id, b.id AS batch, b.position, b.overlap, b.grouping
                     FROM batch_items bi JOIN batches b ON b.id = bi.batch_id
                    WHERE bi.item_id = ANY($1) AND b.campaign_id = $2 AND b.review_of IS NULL
                    ORDER BY bi.item_id, b.position DESC) last
            ORDER BY last.position, last.item_id"#,
        items,
        campaign_id,
    )
    .fetch_all(&mut *tx)
    .await?;
    if last.len() < items.len() {
        return Err(Error::conflict(
            Code::NoBatches,
            match items.len() {
                1 => "this item is in no batch yet: form batches to offer it to the experts".to_owned(),
                n => format!(
                    "{} of the {n} items are in no batch yet: form batches first, or filter them out \
                     (nothing was sent back)",
                    n - last.len()
                ),
            },
        ));
    }
    let excluded = sqlx::query!(
        "UPDATE responses SET excluded_reason = $3, excluded_at = now()
          WHERE campaign_id = $1 AND item_id = ANY($2) AND excluded_reason IS NULL",
        campaign_id,
        items,
        &reason,
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let mut next = sqlx::query_scalar!(
        r#"SELECT coalesce(max(position) + 1, 0) AS "position!" FROM batches WHERE campaign_id = $1"#,
        campaign_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let first_batch = next + 1;
    let mut batches = 0;
    for group in last.chunk_by(|a, b| a.batch == b.batch) {
        let ids: Vec<Uuid> = group.iter().map(|r| r.item_id).collect();
        let batch =
            insert(&mut tx, campaign_id, usize::try_from(next).unwrap_or(0), group[0].overlap, None, &ids).await?;
        sqlx::query!("UPDATE batches SET grouping = $2 WHERE id = $1", batch, group[0].grouping)
            .execute(&mut *tx)
            .await?;
        next += 1;
        batches += 1;
    }
    tx.commit().await?;
    Ok(SentBackItems { excluded, batches, first_batch })
}

/// Brings the planner's statistics up to date after batches were formed or
/// imported in bulk. Workers arrive right after a launch, before the
/// background analyser has looked at the new rows: with statistics from an
/// empty campaign, reading a batch's items scanned every batch entry
/// while the batch was locked, and the workers
/// taking questionnaires queued behind it.
pub async fn refresh_statistics(pool: &PgPool) -> Result<()> {
    sqlx::query("ANALYZE items, batches, batch_items").execute(pool).await?;
    Ok(())
}

/// Locks the campaign row (so two admins cannot both form batches) and
/// refuses with `message` when it has batches already.
pub(in crate::core) async fn lock_without_batches(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    campaign_id: Uuid,
    message: &str,
) -> Result<()> {
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", campaign_id)
        .fetch_optional(&mut **tx)
        .await?;
    let existing =
        sqlx::query_scalar!(r#"SELECT count(*) AS "existing!" FROM batches WHERE campaign_id = $1"#, campaign_id)
            .fetch_one(&mut **tx)
            .await?;
    if existing > 0 {
        return Err(Error::conflict(Code::BatchesExist, message));
    }
    Ok(())
}

/// Inserts one batch with its items in order; returns its id.
pub(in crate::core) async fn insert(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    campaign_id: Uuid,
    position: usize,
    overlap: Option<i32>,
    external_id: Option<&str>,
    items: &[Uuid],
) -> Result<Uuid> {
    let batch_id = Uuid::new_v4();
    let position = i32::try_from(position).map_err(|e| Error::internal("a batch position", e))?;
    sqlx::query!(
        "INSERT INTO batches (id, campaign_id, position, overlap, external_id) VALUES ($1, $2, $3, $4, $5)",
        batch_id,
        campaign_id,
        position,
        overlap,
        external_id,
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!(
        "INSERT INTO batch_items (batch_id, position, item_id)
         SELECT $1, ord - 1, item FROM unnest($2::uuid[]) WITH ORDINALITY AS t(item, ord)",
        batch_id,
        items,
    )
    .execute(&mut **tx)
    .await?;
    Ok(batch_id)
}

/// Opens a batch to more annotators: its overlap becomes the number of
/// completed assignments plus `more`. Used to re-queue questionnaires whose
/// answers curation dropped.
pub async fn requeue(pool: &PgPool, batch_id: Uuid, more: i32) -> Result<()> {
    sqlx::query!(
        "UPDATE batches SET overlap = (SELECT count(*) FROM assignments WHERE batch_id = $1 AND state = 'completed')::int + $2
         WHERE id = $1 AND overlap IS NOT NULL",
        batch_id,
        more.max(0),
    )
    .execute(pool)
    .await?;
    Ok(())
}
