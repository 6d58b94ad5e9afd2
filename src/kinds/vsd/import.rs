//! Model rankings into PostgreSQL: parsed from CSV (`model,query,candidate,
//! rank[,score]`) or JSON lines, stored in chunks of multi-row inserts (a
//! model's ranking imported again replaces its rows), and read back.

use super::eds::Ranked;
use crate::core::campaign::campaigns;
use crate::error::Code;
use crate::error::{Error, Result};
use sqlx::PgPool;
use std::io::Write;
use uuid::Uuid;

/// One ranking row with its optional score.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct RankingRow {
    /// The model.
    pub model: String,
    /// The query image.
    pub query: String,
    /// The candidate image.
    pub candidate: String,
    /// Zero-based rank.
    pub rank: u32,
    /// The model's similarity, if given.
    #[serde(default)]
    pub score: Option<f64>,
}

/// Rows per INSERT statement.
const CHUNK: usize = 5_000;

fn invalid(line: usize, message: impl std::fmt::Display) -> Error {
    Error::invalid(Code::InvalidRankings, format!("line {line}: {message}"))
}

fn check(line: usize, row: &RankingRow) -> Result<()> {
    for (field, value) in [("model", &row.model), ("query", &row.query), ("candidate", &row.candidate)] {
        if value.trim().is_empty() {
            return Err(invalid(line, format!("{field}: empty")));
        }
        if value.len() > 2000 {
            return Err(invalid(line, format!("{field}: longer than 2000 characters")));
        }
    }
    if row.score.is_some_and(|s| !s.is_finite()) {
        return Err(invalid(line, "score: not a number"));
    }
    Ok(())
}

/// Rankings given as text, read a chunk of rows at a time: JSON lines when
/// the first non-blank character is `{`, else CSV with a header. Errors name
/// the line and field. Only one chunk of parsed rows is ever held: a whole
/// upload's rows parsed at once would sit beside the upload itself.
pub struct RankingText<'t> {
    source: Source<'t>,
}

enum Source<'t> {
    JsonLines(std::iter::Enumerate<std::str::Lines<'t>>),
    Csv {
        records: csv::StringRecordsIntoIter<&'t [u8]>,
        /// Positions of model, query, candidate and rank.
        columns: [usize; 4],
        score: Option<usize>,
        /// Line of the last record read.
        line: usize,
    },
}

impl<'t> RankingText<'t> {
    /// Starts reading `text` (a CSV header is read and checked here).
    pub fn new(text: &'t str) -> Result<Self> {
        if text.trim_start().starts_with('{') {
            return Ok(Self { source: Source::JsonLines(text.lines().enumerate()) });
        }
        let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
        let header: Vec<String> =
            reader.headers().map_err(|e| invalid(1, e))?.iter().map(str::to_ascii_lowercase).collect();
        let column = |name: &str| header.iter().position(|h| h == name);
        let mut columns = [0; 4];
        for (slot, name) in columns.iter_mut().zip(["model", "query", "candidate", "rank"]) {
            *slot = column(name).ok_or_else(|| {
                invalid(1, format!("header has no column `{name}` (expected model,query,candidate,rank[,score])"))
            })?;
        }
        let score = column("score");
        Ok(Self { source: Source::Csv { records: reader.into_records(), columns, score, line: 1 } })
    }

    /// The next rows, at most `max`; empty at the end.
    pub fn next_chunk(&mut self, max: usize) -> Result<Vec<RankingRow>> {
        let mut rows = Vec::with_capacity(max.min(CHUNK));
        while rows.len() < max {
            match self.next_row()? {
                Some(row) => rows.push(row),
                None => break,
            }
        }
        Ok(rows)
    }

    fn next_row(&mut self) -> Result<Option<RankingRow>> {
        match &mut self.source {
            Source::JsonLines(lines) => {
                for (i, l) in lines.by_ref() {
                    if l.trim().is_empty() {
                        continue;
                    }
                    let row: RankingRow = serde_json::from_str(l).map_err(|e| invalid(i + 1, e))?;
                    check(i + 1, &row)?;
                    return Ok(Some(row));
                }
                Ok(None)
            }
            Source::Csv { records, columns, score, line } => {
                let Some(record) = records.next() else { return Ok(None) };
                *line += 1;
                let line = *line;
                let record = record.map_err(|e| invalid(line, e))?;
                let field =
                    |c: usize, name: &str| record.get(c).ok_or_else(|| invalid(line, format!("{name}: missing")));
                let rank_text = field(columns[3], "rank")?;
                let rank = rank_text
                    .parse::<u32>()
                    .map_err(|_| invalid(line, format!("rank: `{rank_text}` is not a whole number from 0")))?;
                let score = match score.and_then(|c| record.get(c)).filter(|s| !s.is_empty()) {
                    None => None,
                    Some(s) => {
                        Some(s.parse::<f64>().map_err(|_| invalid(line, format!("score: `{s}` is not a number")))?)
                    }
                };
                let row = RankingRow {
                    model: field(columns[0], "model")?.to_owned(),
                    query: field(columns[1], "query")?.to_owned(),
                    candidate: field(columns[2], "candidate")?.to_owned(),
                    rank,
                    score,
                };
                check(line, &row)?;
                Ok(Some(row))
            }
        }
    }
}

/// Stores the rankings of a text (see [`RankingText`]) a chunk at a time,
/// all or nothing: one transaction, so a bad line anywhere leaves nothing
/// stored. A row for a (model, query, candidate) already stored replaces it.
/// Returns the rows stored.
pub async fn store_text(pool: &PgPool, campaign_id: Uuid, text: &str) -> Result<usize> {
    let mut reader = RankingText::new(text)?;
    let campaign = campaigns::ensure_writable(pool, campaign_id).await?;
    if campaign.kind != super::NAME {
        return Err(Error::invalid(Code::WrongKind, "this is not a VSD campaign"));
    }
    let mut tx = pool.begin().await?;
    let mut stored = 0;
    loop {
        let chunk = reader.next_chunk(CHUNK)?;
        if chunk.is_empty() {
            break;
        }
        insert_chunk(&mut tx, campaign_id, &chunk).await?;
        stored += chunk.len();
    }
    tx.commit().await?;
    Ok(stored)
}

async fn insert_chunk(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    campaign_id: Uuid,
    chunk: &[RankingRow],
) -> Result<()> {
    // The last row for a key wins within a chunk (PostgreSQL refuses to
    // update one row twice in one statement).
    let mut seen = std::collections::HashMap::with_capacity(chunk.len());
    for (i, r) in chunk.iter().enumerate() {
        seen.insert((r.model.as_str(), r.query.as_str(), r.candidate.as_str()), i);
    }
    let mut keep: Vec<usize> = seen.into_values().collect();
    keep.sort_unstable();
    let rows: Vec<&RankingRow> = keep.into_iter().map(|i| &chunk[i]).collect();
    sqlx::query!(
        "INSERT INTO vsd_rankings (campaign_id, model, query, candidate, rank, score)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::float8[])
         ON CONFLICT (campaign_id, model, query, candidate) DO UPDATE SET rank = excluded.rank, score = excluded.score",
        campaign_id,
        &rows.iter().map(|r| r.model.as_str()).collect::<Vec<_>>() as &[&str],
        &rows.iter().map(|r| r.query.as_str()).collect::<Vec<_>>() as &[&str],
        &rows.iter().map(|r| r.candidate.as_str()).collect::<Vec<_>>() as &[&str],
        &rows.iter().map(|r| i32::try_from(r.rank).unwrap_or(i32::MAX)).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.score).collect::<Vec<_>>() as &[Option<f64>],
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The stored rankings, those below `below_rank` only when given.
pub async fn load(pool: &PgPool, campaign_id: Uuid, below_rank: Option<u32>) -> Result<Vec<Ranked>> {
    let rows = sqlx::query!(
        "SELECT model, query, candidate, rank FROM vsd_rankings
         WHERE campaign_id = $1 AND ($2::int IS NULL OR rank < $2) ORDER BY model, query, rank",
        campaign_id,
        below_rank.map(|k| i32::try_from(k).unwrap_or(i32::MAX)),
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Ranked { model: r.model, query: r.query, candidate: r.candidate, rank: r.rank.unsigned_abs() })
        .collect())
}

/// Candidates at ranks `from..to` of the given models, per query (the
/// second negative setting draws from them).
pub async fn ranks_between(
    pool: &PgPool,
    campaign_id: Uuid,
    models: &[String],
    from: u32,
    to: u32,
) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query!(
        "SELECT DISTINCT query, candidate FROM vsd_rankings
         WHERE campaign_id = $1 AND model = ANY($2) AND rank >= $3 AND rank < $4 ORDER BY query, candidate",
        campaign_id,
        models,
        i32::try_from(from).unwrap_or(i32::MAX),
        i32::try_from(to).unwrap_or(i32::MAX),
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.query, r.candidate))
    .collect())
}

/// Per model, how many rows are stored.
pub async fn models(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query!(
        r#"SELECT model, count(*) AS "rows!" FROM vsd_rankings WHERE campaign_id = $1 GROUP BY model ORDER BY model"#,
        campaign_id
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.model, r.rows))
    .collect())
}

/// `atelier vsd import-rankings`: reads the file in chunks on a blocking
/// thread and stores each chunk as it comes, so memory stays flat for
/// files of millions of rows. Errors name the file and line.
pub async fn import_file(args: &super::cli::ImportArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = args.file.clone();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<RankingRow>>(4);
    let reader = tokio::task::spawn_blocking(move || read_in_chunks(&path, |chunk| tx.blocking_send(chunk).is_ok()));
    let db = crate::db::Database::open(&args.db, 2).await?;
    let result = async {
        db.migrate().await?;
        let campaign = campaigns::ensure_writable(&db.pool, args.campaign).await?;
        anyhow::ensure!(
            campaign.kind == super::NAME,
            "campaign {} is a {} campaign, not VSD",
            campaign.id,
            campaign.kind
        );
        // One transaction: a bad line anywhere leaves nothing stored.
        let mut tx = db.pool.begin().await?;
        let mut stored = 0;
        while let Some(chunk) = rx.recv().await {
            insert_chunk(&mut tx, args.campaign, &chunk).await?;
            stored += chunk.len();
        }
        reader.await??;
        tx.commit().await?;
        anyhow::Ok(stored)
    }
    .await;
    db.close().await;
    writeln!(out, "imported {} ranking rows", result?)?;
    Ok(())
}

/// Reads a rankings file (CSV or JSON lines) and hands chunks of rows to
/// `send` (which returns false to stop).
fn read_in_chunks(path: &std::path::Path, mut send: impl FnMut(Vec<RankingRow>) -> bool) -> anyhow::Result<()> {
    use crate::input::{CsvFile, InputError};
    use std::io::BufRead;
    let mut lines = crate::text::open_file(path).map_err(|source| InputError::Io { path: path.to_owned(), source })?;
    let first = lines.fill_buf().map_err(|source| InputError::Io { path: path.to_owned(), source })?;
    let jsonl = first.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let mut chunk = Vec::with_capacity(CHUNK);
    let line_error =
        |line: usize, e: Error| InputError::Line { path: path.to_owned(), line: line as u64, message: e.to_string() };
    if jsonl {
        for (i, line) in lines.lines().enumerate() {
            let line = line.map_err(|source| InputError::Io { path: path.to_owned(), source })?;
            if line.trim().is_empty() {
                continue;
            }
            let row: RankingRow = serde_json::from_str(&line).map_err(|e| line_error(i + 1, invalid(i + 1, e)))?;
            check(i + 1, &row).map_err(|e| line_error(i + 1, e))?;
            chunk.push(row);
            if chunk.len() == CHUNK && !send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK))) {
                return Ok(());
            }
        }
    } else {
        let mut csv = CsvFile::open(path)?;
        let mut stopped = false;
        csv.for_each_with_optional(&["model", "query", "candidate", "rank"], &["score"], |line, f| {
            if stopped {
                return Ok(());
            }
            let err = |message: String| InputError::Line { path: path.to_owned(), line, message };
            let rank =
                f[3].parse::<u32>().map_err(|_| err(format!("rank: `{}` is not a whole number from 0", f[3])))?;
            let score = match f[4] {
                "" => None,
                s => Some(s.parse::<f64>().map_err(|_| err(format!("score: `{s}` is not a number")))?),
            };
            let row =
                RankingRow { model: f[0].to_owned(), query: f[1].to_owned(), candidate: f[2].to_owned(), rank, score };
            check(line as usize, &row).map_err(|e| err(e.to_string()))?;
            chunk.push(row);
            if chunk.len() == CHUNK && !send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK))) {
                stopped = true;
            }
            Ok(())
        })?;
        if stopped {
            return Ok(());
        }
    }
    if !chunk.is_empty() {
        send(chunk);
    }
    Ok(())
}
