//! Reconciliation with the crowd platform: the admin uploads the
//! platform's own list of submissions (Prolific's submissions export, or
//! MTurk's batch results), and each worker is then on the platform (with
//! its status) or not. Under the campaign setting `ground_truth_from =
//! reconciled` only workers on the list and not rejected there count: the
//! others' responses carry the exclusion `platform:not_on_platform` or
//! `platform:rejected_on_platform`, which every consumer (ground truth,
//! curation, alpha, payouts, releases) already honours. Anyone holding a
//! study link can invent worker ids; the platform knows who its
//! participants are.

use crate::core::campaign::campaigns;
use crate::core::campaign::marks::mark;
use crate::core::campaign::settings::GroundTruthFrom;
use crate::error::{Code, Error, Result};
use sqlx::PgPool;
use uuid::Uuid;

/// The platform a list comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Prolific's submissions export (`Participant id`, `Status`).
    Prolific,
    /// MTurk's batch results (`WorkerId`, `AssignmentId`, `AssignmentStatus`).
    Mturk,
}

impl Platform {
    fn as_str(self) -> &'static str {
        match self {
            Self::Prolific => "prolific",
            Self::Mturk => "mturk",
        }
    }
}

/// One line of a platform's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The participant's (worker's) id, normalised as worker ids are.
    pub participant_id: String,
    /// MTurk's assignment id (empty for Prolific).
    pub assignment_id: String,
    /// The platform's status, as written there.
    pub status: String,
    /// Whether that status means the work does not count.
    pub rejected: bool,
}

/// A parsed list: its platform and lines.
#[derive(Debug, Clone)]
pub struct PlatformList {
    /// Where it comes from (told by its header).
    pub platform: Platform,
    /// Its lines, one per submission.
    pub submissions: Vec<Submission>,
}

/// The most lines a list may have (a study with a million submissions is
/// far beyond any crowd campaign).
const MAX_LINES: usize = 1_000_000;

/// Header names compared without case, spaces or underscores.
fn folded(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace() && *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// Whether a platform status means the work does not count: Prolific's
/// REJECTED, RETURNED, TIMED-OUT and SCREENED OUT; MTurk's Rejected.
fn rejected_status(status: &str) -> bool {
    matches!(folded(status).as_str(), "rejected" | "returned" | "timedout" | "screenedout")
}

/// Parses a platform's list (CSV with a header). Prolific's export is told
/// by its `Participant id` and `Status` columns, MTurk's batch results by
/// `WorkerId`, `AssignmentId` and `AssignmentStatus`. A refusal names the
/// line and the field; nothing is kept of a list that does not parse whole.
pub fn parse(text: &str) -> Result<PlatformList> {
    let invalid = |m: String| Error::invalid(Code::InvalidPlatformList, m);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let header: Vec<String> =
        reader.headers().map_err(|e| invalid(format!("line 1: {e}")))?.iter().map(folded).collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let (platform, id_col, status_col, assignment_col) =
        if let (Some(id), Some(status)) = (column("workerid"), column("assignmentstatus")) {
            let assignment = column("assignmentid")
                .ok_or_else(|| invalid("line 1: MTurk's batch results need an AssignmentId column".into()))?;
            (Platform::Mturk, id, status, Some(assignment))
        } else if let (Some(id), Some(status)) = (column("participantid"), column("status")) {
            (Platform::Prolific, id, status, None)
        } else {
            return Err(invalid(
                "line 1: not a platform's list of submissions: Prolific's export has the columns `Participant id` and \
             `Status`; MTurk's batch results `WorkerId`, `AssignmentId` and `AssignmentStatus`"
                    .into(),
            ));
        };
    let mut submissions = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (index, record) in reader.records().enumerate() {
        let line = index + 2;
        let record = record.map_err(|e| invalid(format!("line {line}: {e}")))?;
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        if submissions.len() >= MAX_LINES {
            return Err(invalid(format!("line {line}: a list has at most {MAX_LINES} lines")));
        }
        let field = |col: usize, name: &str| -> Result<String> {
            let value = record.get(col).map(str::trim).unwrap_or_default();
            if value.is_empty() {
                return Err(invalid(format!("line {line}: `{name}` is empty")));
            }
            if value.chars().count() > 200 {
                return Err(invalid(format!("line {line}: `{name}` is longer than 200 characters")));
            }
            Ok(value.to_owned())
        };
        let id_name = if platform == Platform::Mturk { "WorkerId" } else { "Participant id" };
        let participant_id = crate::auth::users::normalize_worker_id(&field(id_col, id_name)?)
            .map_err(|e| invalid(format!("line {line}: `{id_name}`: {e}")))?;
        let status_name = if platform == Platform::Mturk { "AssignmentStatus" } else { "Status" };
        let status = field(status_col, status_name)?;
        if status.chars().count() > 100 {
            return Err(invalid(format!("line {line}: `{status_name}` is longer than 100 characters")));
        }
        let assignment_id = match assignment_col {
            Some(col) => field(col, "AssignmentId")?,
            None => String::new(),
        };
        if !seen.insert((participant_id.clone(), assignment_id.clone())) {
            return Err(invalid(format!("line {line}: `{participant_id}` is listed twice")));
        }
        submissions.push(Submission { rejected: rejected_status(&status), participant_id, assignment_id, status });
    }
    Ok(PlatformList { platform, submissions })
}

/// What an upload did.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Reconciled {
    /// The list's platform.
    pub platform: Platform,
    /// Lines in the list.
    pub submissions: usize,
    /// Whose work counts now (an upload sets `reconciled`).
    pub ground_truth_from: GroundTruthFrom,
    /// Workers who submitted and are on the list, not rejected.
    pub on_platform: i64,
    /// Workers who submitted and are not on the list.
    pub not_on_platform: i64,
    /// Workers who submitted and whom the platform rejected.
    pub rejected_on_platform: i64,
}

/// Replaces the campaign's list with `list` (all or nothing), sets
/// `ground_truth_from` to `reconciled` and marks the responses to match.
pub async fn upload(pool: &PgPool, campaign_id: Uuid, list: &PlatformList) -> Result<Reconciled> {
    let campaign = campaigns::ensure_writable(pool, campaign_id).await?;
    if !campaign.settings.crowd() {
        return Err(Error::conflict(
            Code::NotACrowdCampaign,
            "a platform's list of submissions is for crowd campaigns (experts have accounts)",
        ));
    }
    let mut tx = pool.begin().await?;
    sqlx::query!("DELETE FROM platform_submissions WHERE campaign_id = $1", campaign_id).execute(&mut *tx).await?;
    let column = |f: fn(&Submission) -> String| list.submissions.iter().map(f).collect::<Vec<String>>();
    sqlx::query!(
        "INSERT INTO platform_submissions (campaign_id, platform, participant_id, assignment_id, status, rejected)
         SELECT $1, $2, x.p, x.a, x.s, x.r FROM unnest($3::text[], $4::text[], $5::text[], $6::bool[]) AS x(p, a, s, r)",
        campaign_id,
        list.platform.as_str(),
        &column(|s| s.participant_id.clone()),
        &column(|s| s.assignment_id.clone()),
        &column(|s| s.status.clone()),
        &list.submissions.iter().map(|s| s.rejected).collect::<Vec<bool>>(),
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "UPDATE campaigns SET ground_truth_from = 'reconciled' WHERE id = $1 AND ground_truth_from <> 'reconciled'",
        campaign_id,
    )
    .execute(&mut *tx)
    .await?;
    mark(&mut tx, campaign_id).await?;
    tx.commit().await?;
    let summary = summary(pool, campaign_id).await?;
    Ok(Reconciled {
        platform: list.platform,
        submissions: list.submissions.len(),
        ground_truth_from: GroundTruthFrom::Reconciled,
        on_platform: summary.on_platform,
        not_on_platform: summary.not_on_platform,
        rejected_on_platform: summary.rejected_on_platform,
    })
}

/// Where the campaign's reconciliation stands, for the payouts page.
#[derive(Debug, Clone, Default, serde::Serialize, utoipa::ToSchema)]
pub struct Summary {
    /// When the list was uploaded (none yet: `None`).
    pub uploaded_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Lines in it.
    pub submissions: i64,
    /// Workers who submitted work and are on it, not rejected.
    pub on_platform: i64,
    /// Workers who submitted work and are not on it.
    pub not_on_platform: i64,
    /// Workers who submitted work and whom the platform rejected.
    pub rejected_on_platform: i64,
}

/// The campaign's list and how its workers (those who submitted) stand.
pub async fn summary(pool: &PgPool, campaign_id: Uuid) -> Result<Summary> {
    let row = sqlx::query!(
        r#"WITH w AS (SELECT DISTINCT u.external_id FROM assignments a JOIN users u ON u.id = a.annotator_id
                      WHERE a.campaign_id = $1 AND a.state = 'completed' AND u.role = 'worker'),
                s AS (SELECT w.external_id, bool_or(NOT p.rejected) AS ok, count(p.*) AS n
                      FROM w LEFT JOIN platform_submissions p
                        ON p.campaign_id = $1 AND p.participant_id = w.external_id
                      GROUP BY w.external_id)
           SELECT (SELECT max(uploaded_at) FROM platform_submissions WHERE campaign_id = $1)
                      AS "uploaded_at: crate::db::Time",
                  (SELECT count(*) FROM platform_submissions WHERE campaign_id = $1) AS "submissions!",
                  (SELECT count(*) FROM s WHERE ok) AS "on!",
                  (SELECT count(*) FROM s WHERE n = 0) AS "not_on!",
                  (SELECT count(*) FROM s WHERE n > 0 AND NOT ok) AS "rejected!""#,
        campaign_id
    )
    .fetch_one(pool)
    .await?;
    if row.uploaded_at.is_none() {
        return Ok(Summary::default());
    }
    Ok(Summary {
        uploaded_at: row.uploaded_at,
        submissions: row.submissions,
        on_platform: row.on,
        not_on_platform: row.not_on,
        rejected_on_platform: row.rejected,
    })
}

/// Each listed worker's platform status (the first line's, and whether any
/// line of theirs counts), by worker id: what the payouts table shows.
pub async fn statuses(pool: &PgPool, campaign_id: Uuid) -> Result<std::collections::HashMap<String, (String, bool)>> {
    let rows = sqlx::query!(
        r#"SELECT participant_id, string_agg(status, ', ' ORDER BY assignment_id) AS "status!",
                  bool_or(NOT rejected) AS "counts!"
           FROM platform_submissions WHERE campaign_id = $1 GROUP BY participant_id"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.participant_id, (r.status, r.counts))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prolific_and_mturk_lists_are_told_by_their_headers() {
        let prolific = "Submission id,Participant id,Status,Started at\n\
                        s1,5f3c0000000000000000aa01,APPROVED,2026-01-01\n\
                        s2,5f3c0000000000000000aa02,RETURNED,2026-01-01\n\
                        s3,5f3c0000000000000000aa03,AWAITING REVIEW,2026-01-01\n";
        let list = parse(prolific).expect("prolific");
        assert_eq!(list.platform, Platform::Prolific);
        let rejected: Vec<bool> = list.submissions.iter().map(|s| s.rejected).collect();
        assert_eq!(rejected, [false, true, false]);
        let mturk = "\"HITId\",\"AssignmentId\",\"WorkerId\",\"AssignmentStatus\"\n\
                     \"H1\",\"A1\",\"AWORKER1\",\"Approved\"\n\"H1\",\"A2\",\"AWORKER2\",\"Rejected\"\n";
        let list = parse(mturk).expect("mturk");
        assert_eq!(list.platform, Platform::Mturk);
        assert_eq!(list.submissions[1].assignment_id, "A2");
        assert!(list.submissions[1].rejected);
    }

    #[test]
    fn a_list_that_does_not_parse_says_where() {
        let refused = |text: &str| parse(text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused("name,age\nx,1\n").contains("line 1: not a platform's list"));
        assert!(
            refused("Participant id,Status\nabc,APPROVED\n,APPROVED\n").contains("line 3: `Participant id` is empty")
        );
        assert!(
            refused("Participant id,Status\nabc,APPROVED\nabc,APPROVED\n").contains("line 3: `abc` is listed twice")
        );
        assert!(refused("WorkerId,AssignmentStatus\nA,Approved\n").contains("AssignmentId column"));
    }
}
