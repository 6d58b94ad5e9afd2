//! Items: the units annotators answer, with an optional hidden gold answer.

use crate::core::item::new_item::NewItem;
use crate::error::Code;
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// An item as stored.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct Item {
    /// Item id.
    pub id: Uuid,
    /// Campaign.
    pub campaign_id: Uuid,
    /// The importer's id.
    pub external_id: String,
    /// Payload.
    pub payload: Value,
    /// Gold answer (admin views only).
    pub gold: Option<Value>,
}

/// Imports items all-or-nothing: every item is validated by the kind first,
/// and the first problem is reported with its index and id. Items may not
/// name images of a bucket (`s3://...`): see [`import_with_store`].
pub async fn import(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    campaign_id: Uuid,
    items: &[NewItem],
) -> Result<usize> {
    let mut importer = Importer::begin(pool, kinds, campaign_id).await?;
    importer.add(items).await?;
    importer.commit().await
}

/// [`import`], the images the items name in the store's bucket
/// (`s3://bucket/key`) checked as uploads are.
pub async fn import_with_store(
    pool: &PgPool,
    storage: &crate::storage::Storage,
    kinds: &crate::core::Registry,
    campaign_id: Uuid,
    items: &[NewItem],
) -> Result<usize> {
    let mut importer = Importer::begin(pool, kinds, campaign_id).await?.with_store(storage);
    importer.add(items).await?;
    importer.commit().await
}

/// Every `s3://...` string of a payload.
fn bucket_references<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) if s.starts_with(crate::core::item::images::BUCKET_PREFIX) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| bucket_references(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| bucket_references(v, out)),
        _ => {}
    }
}

/// How many images of a bucket are checked at once during an import.
const CHECKS_AT_ONCE: usize = 8;

/// An import that arrives in chunks (a file streamed from disk): every
/// chunk is validated and inserted in one transaction, committed at the
/// end, so a bad item anywhere leaves nothing imported.
pub struct Importer {
    tx: sqlx::Transaction<'static, sqlx::Postgres>,
    kind: &'static dyn crate::core::kind::contract::TaskKind,
    campaign_id: Uuid,
    added: usize,
    /// The store that `s3://` references are checked against (none: refused).
    storage: Option<crate::storage::Storage>,
    /// References already checked in this import.
    checked: std::collections::HashSet<String>,
}

impl Importer {
    /// Starts an import into a writable, not closed campaign.
    pub async fn begin(pool: &PgPool, kinds: &crate::core::Registry, campaign_id: Uuid) -> Result<Self> {
        let campaign = crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
        let kind = kinds.of(&campaign)?;
        if campaign.state == crate::core::campaign::states::CampaignState::Closed {
            return Err(Error::conflict(Code::CampaignClosed, "the campaign is closed"));
        }
        Ok(Self {
            tx: pool.begin().await?,
            kind,
            campaign_id,
            added: 0,
            storage: None,
            checked: std::collections::HashSet::new(),
        })
    }

    /// Lets items name images of the store's bucket (`s3://bucket/key`),
    /// each checked as an upload is (size, type, decoding within the pixel
    /// limits) before anything is inserted.
    pub fn with_store(mut self, storage: &crate::storage::Storage) -> Self {
        self.storage = Some(storage.clone());
        self
    }

    /// Checks the bucket images a chunk's items name (each once per import).
    async fn check_bucket_images(&mut self, items: &[NewItem]) -> Result<()> {
        use futures_util::stream::{StreamExt, TryStreamExt};
        // Owned: the checks run as futures of their own.
        let mut named: Vec<(usize, String, String)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut refs = Vec::new();
            bucket_references(&item.payload, &mut refs);
            named.extend(
                refs.into_iter()
                    .filter(|r| !self.checked.contains(*r))
                    .map(|r| (self.added + i + 1, item.external_id.trim().to_owned(), r.to_owned())),
            );
        }
        let Some((n, id, first)) = named.first().cloned() else { return Ok(()) };
        let Some(storage) = self.storage.clone() else {
            return Err(Error::invalid(
                Code::InvalidItem,
                format!(
                    "item {n} (`{id}`): `{first}` names an image in a bucket; import through the service (the API or \
                     the campaign page) or a command given --storage, so that it can be checked"
                ),
            ));
        };
        let references: Vec<String> = named.iter().map(|(_, _, r)| r.clone()).collect();
        futures_util::stream::iter(named)
            .map(move |(n, id, reference)| {
                let storage = storage.clone();
                async move {
                    crate::core::item::images::check_in_bucket(&storage, &reference).await.map_err(|e| match e {
                        Error::Rejected { code, message } => {
                            Error::invalid(code, format!("item {n} (`{id}`): {message}"))
                        }
                        other => other,
                    })
                }
            })
            .buffer_unordered(CHECKS_AT_ONCE)
            .try_collect::<Vec<()>>()
            .await?;
        self.checked.extend(references);
        Ok(())
    }

    /// Validates and inserts a chunk (items whose external id exists are
    /// merged when the kind merges, refused otherwise).
    pub async fn add(&mut self, items: &[NewItem]) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let n = self.added + i + 1;
            let id = item.external_id.trim();
            if id.is_empty() {
                return Err(Error::invalid(Code::InvalidItem, format!("item {n}: external_id is empty")));
            }
            if !seen.insert(id) {
                return Err(Error::invalid(
                    Code::DuplicateInImport,
                    format!("item {n} (`{id}`): external_id given twice"),
                ));
            }
            self.kind
                .validate_item(&item.payload, item.gold.as_ref())
                .map_err(|e| Error::invalid(Code::InvalidItem, format!("item {n} (`{id}`): {}", e.0)))?;
        }
        self.check_bucket_images(items).await?;
        // Set-based: thousands of rows per statement, not one round trip per item.
        const CHUNK: usize = 5000;
        for chunk in items.chunks(CHUNK) {
            let ids: Vec<Uuid> = chunk.iter().map(|_| Uuid::new_v4()).collect();
            let external: Vec<&str> = chunk.iter().map(|i| i.external_id.trim()).collect();
            let payloads: Vec<&Value> = chunk.iter().map(|i| &i.payload).collect();
            let golds: Vec<Option<&Value>> = chunk.iter().map(|i| i.gold.as_ref()).collect();
            let inserted: Vec<String> = sqlx::query_scalar!(
                "INSERT INTO items (id, campaign_id, external_id, payload, gold)
                 SELECT t.id, $1, t.external_id, t.payload, t.gold
                 FROM unnest($2::uuid[], $3::text[], $4::jsonb[], $5::jsonb[]) AS t(id, external_id, payload, gold)
                 ON CONFLICT (campaign_id, external_id) DO NOTHING
                 RETURNING external_id",
                self.campaign_id,
                &ids,
                &external as &[&str],
                &payloads as &[&Value],
                &golds as &[Option<&Value>],
            )
            .fetch_all(&mut *self.tx)
            .await?;
            if inserted.len() < chunk.len() {
                let new: std::collections::HashSet<&str> = inserted.iter().map(String::as_str).collect();
                let existing: Vec<&NewItem> = chunk.iter().filter(|i| !new.contains(i.external_id.trim())).collect();
                merge_existing(&mut self.tx, self.kind, self.campaign_id, &existing).await?;
            }
        }
        self.added += items.len();
        Ok(())
    }

    /// The import's transaction, for what must land with the items or not
    /// at all (e.g. past work answered on them).
    pub fn transaction(&mut self) -> &mut sqlx::Transaction<'static, sqlx::Postgres> {
        &mut self.tx
    }

    /// Commits the import; returns how many items it held.
    pub async fn commit(self) -> Result<usize> {
        self.tx.commit().await?;
        Ok(self.added)
    }
}

/// Items whose external id exists already: merged into the existing item
/// when the kind merges (e.g. a new model's proposals added to a pair's
/// provenance), refused otherwise.
async fn merge_existing(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    kind: &dyn crate::core::kind::contract::TaskKind,
    campaign_id: Uuid,
    incoming: &[&NewItem],
) -> Result<()> {
    let ids: Vec<&str> = incoming.iter().map(|i| i.external_id.trim()).collect();
    let stored: std::collections::HashMap<String, (Uuid, Value)> = sqlx::query!(
        "SELECT external_id, id, payload FROM items WHERE campaign_id = $1 AND external_id = ANY($2) FOR UPDATE",
        campaign_id,
        &ids as &[&str],
    )
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|r| (r.external_id, (r.id, r.payload)))
    .collect();
    for item in incoming {
        let external = item.external_id.trim();
        let duplicate =
            || Error::conflict(Code::DuplicateItem, format!("item `{external}` already exists in this campaign"));
        let (id, payload) = stored.get(external).ok_or_else(duplicate)?;
        let merged = kind
            .merge_item(payload, &item.payload)
            .ok_or_else(duplicate)?
            .map_err(|e| Error::invalid(Code::InvalidItem, format!("item `{external}`: {}", e.0)))?;
        sqlx::query!("UPDATE items SET payload = $2, updated_at = now() WHERE id = $1", id, merged)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// The payloads of some items, by id (what an annotator's view is built from).
pub async fn payloads(pool: &PgPool, ids: &[Uuid]) -> Result<std::collections::BTreeMap<Uuid, Value>> {
    let rows = sqlx::query!("SELECT id, payload FROM items WHERE id = ANY($1)", ids).fetch_all(pool).await?;
    Ok(rows.into_iter().map(|r| (r.id, r.payload)).collect())
}

/// The payloads of some items of a campaign, by the importer's id (for an
/// admin page showing one page of items).
pub async fn payloads_by_external_id(
    pool: &PgPool,
    campaign_id: Uuid,
    ids: &[String],
) -> Result<std::collections::BTreeMap<String, Value>> {
    let rows = sqlx::query!(
        "SELECT external_id, payload FROM items WHERE campaign_id = $1 AND external_id = ANY($2)",
        campaign_id,
        ids,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.external_id, r.payload)).collect())
}

/// One item of the campaign, its known answer included (admin views);
/// `NotFound` for an item of another campaign.
pub async fn get_in(pool: &PgPool, campaign_id: Uuid, item_id: Uuid) -> Result<Item> {
    sqlx::query_as!(
        Item,
        "SELECT id, campaign_id, external_id, payload, gold FROM items WHERE id = $1 AND campaign_id = $2",
        item_id,
        campaign_id,
    )
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("item"))
}

/// Fails with `NotFound` unless the item is the campaign's (before an
/// admin's action on it).
pub async fn ensure_in_campaign(db: impl sqlx::PgExecutor<'_>, campaign_id: Uuid, item_id: Uuid) -> Result<()> {
    let exists = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM items WHERE id = $1 AND campaign_id = $2) AS "exists!""#,
        item_id,
        campaign_id,
    )
    .fetch_one(db)
    .await?;
    if exists {
        Ok(())
    } else {
        Err(Error::NotFound("item"))
    }
}

/// All items of a campaign in import order (with gold; for admins and
/// releases).
pub async fn list<'e>(db: impl sqlx::PgExecutor<'e> + 'e, campaign_id: Uuid) -> Result<Vec<Item>> {
    use futures_util::TryStreamExt;
    Ok(each(db, campaign_id).try_collect().await?)
}

/// The campaign's items as batch formation sees them, in [`list`]'s order:
/// each payload cut to `keys` (the keys its kind's formation reads; `None`
/// keeps it whole), so a large campaign's payloads are not read to be
/// ignored.
pub async fn for_batching<'e>(
    db: impl sqlx::PgExecutor<'e>,
    campaign_id: Uuid,
    keys: Option<&[&str]>,
) -> Result<Vec<crate::core::kind::contract::ItemRef>> {
    let keys: Option<Vec<String>> = keys.map(|k| k.iter().map(|k| (*k).to_owned()).collect());
    let rows = sqlx::query!(
        r#"SELECT id, gold IS NOT NULL AS "has_gold!",
                  CASE WHEN $2::text[] IS NULL THEN payload
                       ELSE coalesce((SELECT jsonb_object_agg(k, payload -> k) FROM unnest($2::text[]) k
                                      WHERE payload ? k), '{}'::jsonb) END AS "payload!"
           FROM items WHERE campaign_id = $1 ORDER BY created_at, external_id"#,
        campaign_id,
        keys.as_deref(),
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| crate::core::kind::contract::ItemRef { id: r.id, payload: r.payload, has_gold: r.has_gold })
        .collect())
}

/// The same items as [`list`], one at a time as they are read, for a reader
/// that keeps less of each than the row.
pub fn each<'e>(
    db: impl sqlx::PgExecutor<'e> + 'e,
    campaign_id: Uuid,
) -> impl futures_util::Stream<Item = std::result::Result<Item, sqlx::Error>> + 'e {
    sqlx::query_as!(
        Item,
        "SELECT id, campaign_id, external_id, payload, gold FROM items WHERE campaign_id = $1
         ORDER BY created_at, external_id",
        campaign_id,
    )
    .fetch(db)
}
