//! The pool of pairs experts label: suspects built from the stored
//! rankings (merged into existing pairs when another model's rankings come
//! later), an optional random sample of other pairs to estimate p, and
//! batches that keep one query's pairs together.

use super::eds::{self, Pair, Suspect, Suspects};
use super::VsdConfig;
use crate::core::item::new_item::NewItem;
use crate::core::kind::contract::{BatchPlan, ItemRef};
use crate::core::kind::registry::unreadable_config;
use crate::core::{campaign::campaigns, Registry};
use crate::error::Code;
use crate::error::{Error, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use uuid::Uuid;

/// The item id of a pair: both image ids, in order.
pub fn external_id(query: &str, candidate: &str) -> String {
    format!("{query} | {candidate}")
}

/// The items of ordered suspects: one per unordered pair (experts label a
/// pair once), shown with the first query that proposed it as the query;
/// `proposals` keeps each orientation's proposers, so the pair counts under
/// every query it was proposed for. The item's id is the unordered pair's.
pub fn items(config: &VsdConfig, suspects: &[Suspect], sample: bool) -> Vec<NewItem> {
    let mut by_pair: BTreeMap<Pair, Vec<&Suspect>> = BTreeMap::new();
    for s in suspects {
        if let Some(pair) = Pair::new(&s.query, &s.candidate) {
            by_pair.entry(pair).or_default().push(s);
        }
    }
    by_pair
        .into_iter()
        .map(|(pair, mut oriented)| {
            oriented.sort_by(|a, b| a.query.cmp(&b.query));
            let shown = oriented[0];
            let mut proposed_by: BTreeMap<&str, u32> = BTreeMap::new();
            for s in &oriented {
                for (m, r) in &s.proposed_by {
                    let best = proposed_by.entry(m.as_str()).or_insert(*r);
                    *best = (*best).min(*r);
                }
            }
            let proposals: BTreeMap<&str, &BTreeMap<String, u32>> =
                oriented.iter().filter(|_| !sample).map(|s| (s.query.as_str(), &s.proposed_by)).collect();
            let from_queries: BTreeSet<&String> = oriented.iter().flat_map(|s| s.from_queries.iter()).collect();
            NewItem {
                external_id: external_id(&pair.query, &pair.candidate),
                payload: json!({
                    "query": shown.query,
                    "candidate": shown.candidate,
                    "query_image": config.image_url(&shown.query),
                    "candidate_image": config.image_url(&shown.candidate),
                    "proposed_by": proposed_by,
                    "proposals": proposals,
                    "from_queries": from_queries,
                    "sample": sample,
                }),
                gold: None,
            }
        })
        .collect()
}

/// What batch formation reads of a pair: its query.
#[derive(Debug, serde::Deserialize)]
pub struct QueryOf {
    /// The query image's id.
    #[serde(default)]
    pub query: String,
}

/// Batches of at most `per_batch` pairs, one query's pairs together (a
/// query with more pairs fills several batches); queries in random order.
pub fn batches_by_query(items: &[ItemRef<QueryOf>], per_batch: usize, rng: &mut StdRng) -> Vec<BatchPlan> {
    let mut by_query: BTreeMap<&str, Vec<Uuid>> = BTreeMap::new();
    for i in items {
        by_query.entry(i.payload.query.as_str()).or_default().push(i.id);
    }
    let mut groups: Vec<Vec<Uuid>> = by_query.into_values().collect();
    groups.shuffle(rng);
    let mut plans: Vec<BatchPlan> = Vec::new();
    let mut current: Vec<Uuid> = Vec::new();
    for group in groups {
        for chunk in group.chunks(per_batch.max(1)) {
            if !current.is_empty() && current.len() + chunk.len() > per_batch {
                plans.push(BatchPlan { items: std::mem::take(&mut current), overlap: None, group: None });
            }
            current.extend_from_slice(chunk);
        }
    }
    if !current.is_empty() {
        plans.push(BatchPlan { items: current, overlap: None, group: None });
    }
    plans
}

/// The campaign's suspects at its k, from the stored rankings.
pub async fn suspects(pool: &PgPool, campaign_id: Uuid) -> Result<(VsdConfig, Suspects)> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let config = VsdConfig::parse(&campaign.config).map_err(|e| unreadable_config(&campaign.name, e))?;
    let same_product = config.same_product.as_deref().map(crate::stats::retrieval::product_pattern).transpose();
    let same_product = same_product.map_err(|e| Error::invalid(Code::InvalidConfig, e))?;
    // Read past k, so that dropping the query itself (or its product) re-ranks the rest.
    let needed = eds::ranks_needed(config.k, same_product.is_some());
    let rankings = super::import::load(pool, campaign_id, Some(needed)).await?;
    Ok((config.clone(), eds::suspects(&rankings, config.k, same_product.as_ref())))
}

/// What adding the suspects to the pool did.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct PoolChange {
    /// Suspects at the campaign's k.
    pub suspects: usize,
    /// Pairs new to the pool.
    pub added: usize,
    /// Pairs already in the pool whose provenance was updated.
    pub merged: usize,
}

/// Adds the suspects to the pool: new pairs become items, pairs already in
/// it gain the new proposers. Form batches afterwards to ask the new pairs.
pub async fn add_suspects(pool: &PgPool, kinds: &Registry, campaign_id: Uuid) -> Result<PoolChange> {
    let (config, s) = suspects(pool, campaign_id).await?;
    if s.pairs.is_empty() {
        return Err(Error::conflict(Code::NoSuspects, "no suspects: import model rankings first"));
    }
    let existing: BTreeMap<String, Value> = crate::core::item::items::list(pool, campaign_id)
        .await?
        .into_iter()
        .map(|i| (i.external_id, i.payload))
        .collect();
    let items: Vec<NewItem> = items(&config, &s.pairs, false);
    let added = items.iter().filter(|i| !existing.contains_key(&i.external_id)).count();
    // Pairs there already count as merged only when they gain provenance.
    let merged = items
        .iter()
        .filter_map(|i| Some((existing.get(&i.external_id)?, &i.payload)))
        .filter(|(old, new)| {
            // Read as pairs (what the kind's merge compares); a payload that
            // does not read is refused by the import below.
            let read = |v: &Value| serde_json::from_value::<super::pair::VsdPair>(v.clone()).ok();
            matches!((read(old), read(new)), (Some(old), Some(new)) if old.clone().merged(&new) != old)
        })
        .count();
    crate::core::item::items::import(pool, kinds, campaign_id, &items).await?;
    Ok(PoolChange { suspects: s.suspects, added, merged })
}

/// What a random sample is drawn from and how large it is.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct SampleRequest {
    /// Pairs to sample (else from `epsilon` and `q`, by Chebyshev).
    #[serde(default)]
    pub b: Option<usize>,
    /// With `q`: the sample size b = ⌈1 / (ε q)⌉ for an error of at most ε
    /// with probability at least 1 − q (the paper's bound).
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// See `epsilon`.
    #[serde(default)]
    pub q: Option<f64>,
    /// Seed (recorded with every sampled pair; the same seed gives the same sample).
    #[serde(default)]
    pub seed: u64,
    /// The catalog D: every image id a query may be paired with. Without it
    /// the candidates the rankings name stand in for D (said in the answer).
    #[serde(default)]
    pub catalog: Option<Vec<String>>,
}

/// What a sample added.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct SampleAdded {
    /// Pairs added.
    pub added: usize,
    /// The sample size asked for.
    pub b: usize,
    /// The seed used.
    pub seed: u64,
    /// `catalog` (the D given) or `rankings` (the candidates the rankings name).
    pub population: &'static str,
    /// |D| drawn from.
    pub candidates: usize,
    /// Drawn pairs that are suspects (labelled once, counted in both).
    pub in_suspects: usize,
}

/// Adds a random sample of pairs, seeded, for estimating p, uniformly from A as the paper samples (§3.3.1, Eq. 2): a
/// query uniformly from the rankings' queries, a candidate uniformly from D
/// (the catalog given, else the rankings' candidates) other than the query
/// itself (closed setting: A = Q × (D − 1)) or other than any query (wild:
/// A = Q × D, queries are not catalog images), without replacement (a pair
/// an earlier sample drew is drawn again). A drawn pair that is a suspect
/// is not labelled twice: it joins the sample with the suspect's label
/// (`in_sample` on its item; the estimate says how many sample pairs were in
/// S_k).
pub async fn add_sample(
    pool: &PgPool,
    kinds: &Registry,
    campaign_id: Uuid,
    req: &SampleRequest,
) -> Result<SampleAdded> {
    let b = match (req.b, req.epsilon, req.q) {
        (Some(b), _, _) => b,
        (None, Some(eps), Some(q)) => eds::sample_size(eps, q).and_then(|b| usize::try_from(b).ok()).unwrap_or(0),
        _ => return Err(Error::invalid(Code::InvalidSample, "give the sample size `b`, or `epsilon` and `q`")),
    };
    if b == 0 || b > 100_000 {
        return Err(Error::invalid(Code::InvalidSample, format!("the sample size must be from 1 to 100000 (is {b})")));
    }
    let (config, s) = suspects(pool, campaign_id).await?;
    let rankings = super::import::load(pool, campaign_id, None).await?;
    let queries: BTreeSet<&str> = rankings.iter().map(|r| r.query.as_str()).collect();
    let (population, catalog): (&'static str, BTreeSet<&str>) = match &req.catalog {
        Some(list) => ("catalog", list.iter().map(|i| i.trim()).filter(|i| !i.is_empty()).collect()),
        None => ("rankings", rankings.iter().map(|r| r.candidate.as_str()).collect()),
    };
    // In the wild, queries are not catalog images: a query-query pair is not in A.
    let candidates: Vec<&str> = catalog.into_iter().filter(|c| !(config.wild && queries.contains(c))).collect();
    let queries: Vec<&str> = queries.into_iter().collect();
    // Pairs an earlier sample drew (without replacement); suspects may be drawn.
    let taken: HashSet<Pair> = crate::core::item::items::list(pool, campaign_id)
        .await?
        .iter()
        .filter(|i| i.payload["sample"] == true || i.payload["in_sample"] == true)
        .filter_map(|i| Pair::new(i.payload["query"].as_str()?, i.payload["candidate"].as_str()?))
        .collect();
    let suspects: HashSet<Pair> = s.pairs.iter().filter_map(|p| Pair::new(&p.query, &p.candidate)).collect();
    let possible = queries.len() * candidates.len();
    if queries.is_empty() || candidates.is_empty() || possible <= taken.len() + b {
        return Err(Error::conflict(Code::SampleTooLarge, "not enough pairs in A not yet sampled for that sample"));
    }
    let mut rng = StdRng::seed_from_u64(req.seed);
    // Each drawn pair as drawn: the query, then the candidate.
    let mut chosen: BTreeMap<Pair, (&str, &str)> = BTreeMap::new();
    // Rejection sampling: the pairs not yet sampled are almost all of A.
    let mut attempts = 0usize;
    while chosen.len() < b && attempts < b * 1000 {
        attempts += 1;
        let q = queries[rng.random_range(0..queries.len())];
        let c = candidates[rng.random_range(0..candidates.len())];
        let Some(pair) = Pair::new(q, c) else { continue };
        if !taken.contains(&pair) {
            chosen.entry(pair).or_insert((q, c));
        }
    }
    let sampled: Vec<Suspect> = chosen
        .values()
        .map(|&(q, c)| Suspect {
            query: q.to_owned(),
            candidate: c.to_owned(),
            proposed_by: BTreeMap::new(),
            from_queries: BTreeSet::from([q.to_owned()]),
        })
        .collect();
    let mut items = items(&config, &sampled, true);
    for item in &mut items {
        item.payload["sample_seed"] = json!(req.seed);
    }
    let in_suspects =
        sampled.iter().filter(|p| Pair::new(&p.query, &p.candidate).is_some_and(|p| suspects.contains(&p))).count();
    crate::core::item::items::import(pool, kinds, campaign_id, &items).await?;
    Ok(SampleAdded { added: items.len(), b, seed: req.seed, population, candidates: candidates.len(), in_suspects })
}

/// A pool item's ordered suspects: the pair under each query it was
/// proposed for, with that orientation's proposers (pairs stored before
/// `proposals` was kept: under each of `from_queries`, else as stored).
/// Empty for a payload without the two ids.
pub fn suspects_of(p: &Value) -> Vec<Suspect> {
    let ranks = |v: &Value| -> BTreeMap<String, u32> {
        v.as_object()
            .into_iter()
            .flatten()
            .filter_map(|(m, r)| Some((m.clone(), u32::try_from(r.as_u64()?).ok()?)))
            .collect()
    };
    let (Some(a), Some(b)) = (p["query"].as_str(), p["candidate"].as_str()) else { return Vec::new() };
    let other = |q: &str| if q == a { b } else { a };
    let oriented = |q: &str, proposed_by| Suspect {
        query: q.to_owned(),
        candidate: other(q).to_owned(),
        proposed_by,
        from_queries: BTreeSet::from([q.to_owned()]),
    };
    if let Some(proposals) = p["proposals"].as_object().filter(|o| !o.is_empty()) {
        return proposals.iter().filter(|(q, _)| *q == a || *q == b).map(|(q, by)| oriented(q, ranks(by))).collect();
    }
    let queries: Vec<&str> = p["from_queries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|q| *q == a || *q == b)
        .collect();
    let queries = if queries.is_empty() { vec![a] } else { queries };
    queries.into_iter().map(|q| oriented(q, ranks(&p["proposed_by"]))).collect()
}

/// Suspects of the pool's items (their stored provenance), for the estimates.
pub fn suspects_of_items<'a>(k: u32, payloads: impl Iterator<Item = &'a Value>) -> Suspects {
    eds::from_pairs(k, payloads.filter(|p| p["sample"] != true).flat_map(suspects_of).collect())
}
