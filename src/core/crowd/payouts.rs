//! Payouts: every worker who submitted work in a campaign, with what they
//! did, how they did on the attention and sanity checks, what was excluded
//! and why, and a recommendation a crowd platform accepts.
//!
//! The rule: a worker who failed a check is recommended for rejection with
//! the reason "failed N of M attention checks" (the reason Prolific and MTurk
//! accept); everyone else is approved. Exclusions for disagreement or low
//! agreement are reported but are no reason to withhold pay.

use crate::core::campaign::campaigns;
use crate::error::Code;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// One worker's line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct Payout {
    /// The crowd platform's worker id.
    pub worker_id: String,
    /// Atelier's id for the worker.
    pub annotator_id: Uuid,
    /// Questionnaires submitted.
    pub submitted: i64,
    /// Time from taking to submitting each questionnaire, summed (seconds).
    pub seconds: i64,
    /// Attention / sanity checks passed.
    pub checks_passed: usize,
    /// Attention / sanity checks failed.
    pub checks_failed: usize,
    /// Excluded responses by reason.
    pub exclusions: BTreeMap<String, usize>,
    /// `approve` or `reject`, by the rule above.
    pub recommendation: String,
    /// Why, for a rejection (in words a platform accepts).
    pub reason: Option<String>,
    /// The admin's own decision for this worker, over the recommendation.
    pub decision: Option<String>,
    /// The admin's reason with their rejection.
    pub decision_reason: Option<String>,
    /// The bonus the admin gave this worker (an amount like `0.50`).
    pub bonus: Option<String>,
    /// When the admin marked this worker paid.
    pub paid_at: Option<DateTime<Utc>>,
    /// The platform's ids of the worker's last visit through a link
    /// (Prolific: `study_id`, `session_id`; MTurk: `assignment_id`, `hit_id`).
    pub platform_ids: BTreeMap<String, String>,
    /// The worker's MTurk assignments in this campaign, as `(HITId,
    /// AssignmentId)`, one per link they came through: MTurk's bulk upload
    /// matches its rows on the assignment.
    #[serde(skip)]
    pub mturk_assignments: Vec<(String, String)>,
    /// Other worker ids of the campaign that look like this one (the same
    /// Unicode confusable skeleton): one may pose as the other.
    pub confusable_with: Vec<String>,
    /// Against the platform's uploaded list of submissions: `on_platform`,
    /// `not_on_platform`, or `no_list` (none uploaded yet).
    pub reconciliation: String,
    /// The platform's status for the worker, when the list has them.
    pub platform_status: Option<String>,
    /// Whether the worker's work counts under the campaign's
    /// `ground_truth_from` (always, under `all`): the platform files list
    /// only those who count.
    pub counts: bool,
}

impl Payout {
    /// Whether the platform files approve this worker: the admin's decision,
    /// else the recommendation.
    pub fn approved(&self) -> bool {
        self.decision.as_deref().unwrap_or(&self.recommendation) == "approve"
    }

    /// Whether the worker id can be written into a platform's bulk file as
    /// it is: letters, digits, `_` and `-`, starting with a letter or digit
    /// (a Prolific id is 24 hexadecimal characters, an MTurk id 12–14
    /// capitals and digits). Anything else (a comma that shifts columns, a
    /// leading `=` a spreadsheet runs) is never written: the payouts page
    /// lists it as needing attention.
    pub fn writable_in_platform_files(&self) -> bool {
        id_shaped(&self.worker_id)
    }

    /// The reason the platform files give a rejected worker.
    pub fn rejection_reason(&self) -> Option<&str> {
        match self.decision.as_deref() {
            Some("approve") => None,
            Some(_) => self.decision_reason.as_deref(),
            None => self.reason.as_deref(),
        }
    }
}

/// An admin's decision on one worker: approve or reject (with a reason) or
/// leave it to the recommendation, and an optional bonus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// `Some(true)` approve, `Some(false)` reject, `None` the recommendation.
    pub approve: Option<bool>,
    /// Why, with a rejection (shown to the worker by the platform).
    pub reason: String,
    /// A bonus like `0.50`, or empty for none.
    pub bonus: String,
}

/// Records (or clears) the admin's decision on one worker who submitted work.
pub async fn decide(pool: &PgPool, campaign_id: Uuid, worker_id: &str, by: Uuid, d: &Decision) -> Result<()> {
    let bonus = Some(d.bonus.trim()).filter(|b| !b.is_empty());
    if let Some(b) = bonus {
        check_amount(b)?;
    }
    let reason = match d.approve {
        Some(false) => Some(Some(d.reason.trim()).filter(|r| !r.is_empty()).ok_or_else(|| {
            Error::invalid(Code::MissingReason, "a rejection needs the reason the platform shows the worker")
        })?),
        _ => None,
    };
    let annotator: Uuid = sqlx::query_scalar!(
        "SELECT DISTINCT a.annotator_id FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.campaign_id = $1 AND a.state = 'completed' AND u.external_id = $2",
        campaign_id,
        worker_id,
    )
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("worker who submitted in this campaign"))?;
    if d.approve.is_none() && bonus.is_none() {
        sqlx::query!(
            "DELETE FROM payout_decisions WHERE campaign_id = $1 AND annotator_id = $2",
            campaign_id,
            annotator
        )
        .execute(pool)
        .await?;
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO payout_decisions (campaign_id, annotator_id, decision, reason, bonus, decided_by)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (campaign_id, annotator_id) DO UPDATE
         SET decision = $3, reason = $4, bonus = $5, decided_by = $6, decided_at = now()",
        campaign_id,
        annotator,
        d.approve.map(|a| if a { "approve" } else { "reject" }),
        reason,
        bonus,
        by,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The columns of the platforms' ids in the full payouts file.
const PLATFORM_COLUMNS: [&str; 4] = ["study_id", "session_id", "assignment_id", "hit_id"];

/// The payout table of a campaign, by worker id.
pub async fn table(pool: &PgPool, kinds: &crate::core::Registry, campaign_id: Uuid) -> Result<Vec<Payout>> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds.of(&campaign)?;
    /// (annotator, worker id, submitted, seconds, paid at, decision, its reason, bonus)
    type WorkerRow = (Uuid, String, i64, i64, Option<DateTime<Utc>>, Option<String>, Option<String>, Option<String>);
    let workers: Vec<WorkerRow> = sqlx::query!(
        r#"SELECT u.id, u.external_id AS "external_id!", count(*) AS "submitted!",
                  coalesce(sum(extract(epoch FROM a.completed_at - a.created_at))::bigint, 0) AS "seconds!",
                  max(p.paid_at) AS "paid_at: crate::db::Time", max(d.decision) AS decision, max(d.reason) AS reason,
                  max(d.bonus) AS bonus
           FROM assignments a JOIN users u ON u.id = a.annotator_id
           LEFT JOIN payouts p ON p.campaign_id = a.campaign_id AND p.annotator_id = u.id
           LEFT JOIN payout_decisions d ON d.campaign_id = a.campaign_id AND d.annotator_id = u.id
           WHERE a.campaign_id = $1 AND a.state = 'completed' AND u.role = 'worker'
           GROUP BY u.id, u.external_id ORDER BY u.external_id"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.id, r.external_id, r.submitted, r.seconds, r.paid_at, r.decision, r.reason, r.bonus))
    .collect();
    /// (annotator, payload, gold, answer, exclusion)
    type ResponseRow = (Uuid, Value, Option<Value>, Value, Option<String>);
    let responses: Vec<ResponseRow> = sqlx::query!(
        "SELECT r.annotator_id, i.payload, i.gold, r.answer, r.excluded_reason
         FROM responses r JOIN items i ON i.id = r.item_id JOIN assignments a ON a.id = r.assignment_id
         WHERE r.campaign_id = $1 AND a.state = 'completed'",
        campaign_id,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.annotator_id, r.payload, r.gold, r.answer, r.excluded_reason))
    .collect();
    let platform: Vec<(Uuid, Value)> = sqlx::query!(
        r#"SELECT DISTINCT ON (j.worker_id) j.worker_id, j.platform_ids AS "platform_ids!"
           FROM invitation_joins j JOIN invitations i ON i.token = j.token
           WHERE i.campaign_id = $1 AND j.platform_ids IS NOT NULL ORDER BY j.worker_id, j.joined_at DESC"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.worker_id, r.platform_ids))
    .collect();
    // Every join's MTurk assignment (the preview's placeholder is none).
    let assignments: Vec<(Uuid, String, String)> = sqlx::query!(
        r#"SELECT j.worker_id, coalesce(j.platform_ids->>'hit_id', '') AS "hit!",
                  j.platform_ids->>'assignment_id' AS "assignment!"
           FROM invitation_joins j JOIN invitations i ON i.token = j.token
           WHERE i.campaign_id = $1
             AND coalesce(j.platform_ids->>'assignment_id', '') NOT IN ('', 'ASSIGNMENT_ID_NOT_AVAILABLE')
           ORDER BY j.joined_at, 3"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.worker_id, r.hit, r.assignment))
    .collect();
    let mut mturk_assignments: BTreeMap<Uuid, Vec<(String, String)>> = BTreeMap::new();
    for (worker, hit, assignment) in assignments {
        mturk_assignments.entry(worker).or_default().push((hit, assignment));
    }
    let mut platform: BTreeMap<Uuid, BTreeMap<String, String>> = platform
        .into_iter()
        .map(|(id, ids)| {
            let ids = ids.as_object().into_iter().flatten();
            (id, ids.filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
        })
        .collect();
    let mut checks: BTreeMap<Uuid, (usize, usize)> = BTreeMap::new();
    let mut exclusions: BTreeMap<Uuid, BTreeMap<String, usize>> = BTreeMap::new();
    for (annotator, payload, gold, answer, excluded) in &responses {
        if let Some(passed) = kind.judge(payload, gold.as_ref(), answer).check {
            let c = checks.entry(*annotator).or_default();
            if passed {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
        if let Some(reason) = excluded {
            *exclusions.entry(*annotator).or_default().entry(reason.clone()).or_default() += 1;
        }
    }
    let statuses = crate::core::crowd::reconciliation::statuses(pool, campaign_id).await?;
    let has_list = !statuses.is_empty();
    let reconciled =
        campaign.settings.ground_truth_from == crate::core::campaign::settings::GroundTruthFrom::Reconciled;
    // Ids that look alike (the same skeleton) are flagged on each other.
    let mut by_skeleton: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, worker_id, ..) in &workers {
        by_skeleton.entry(crate::auth::users::skeleton(worker_id)).or_default().push(worker_id.clone());
    }
    Ok(workers
        .into_iter()
        .map(|(id, worker_id, submitted, seconds, paid_at, decision, decision_reason, bonus)| {
            let confusable_with = by_skeleton[&crate::auth::users::skeleton(&worker_id)]
                .iter()
                .filter(|other| **other != worker_id)
                .cloned()
                .collect();
            let (passed, failed) = checks.get(&id).copied().unwrap_or_default();
            let reject = failed > 0;
            let listed = statuses.get(&worker_id);
            let reconciliation = match (has_list, listed) {
                (false, _) => "no_list",
                (true, Some(_)) => "on_platform",
                (true, None) => "not_on_platform",
            };
            let counts = !(reconciled && has_list) || listed.is_some_and(|(_, ok)| *ok);
            let platform_status = listed.map(|(status, _)| status.clone());
            Payout {
                worker_id,
                annotator_id: id,
                submitted,
                seconds,
                checks_passed: passed,
                checks_failed: failed,
                exclusions: exclusions.remove(&id).unwrap_or_default(),
                recommendation: if reject { "reject" } else { "approve" }.to_owned(),
                reason: reject.then(|| format!("Failed {failed} of {} attention checks", passed + failed)),
                decision,
                decision_reason,
                bonus,
                paid_at,
                platform_ids: platform.remove(&id).unwrap_or_default(),
                mturk_assignments: mturk_assignments.remove(&id).unwrap_or_default(),
                confusable_with,
                reconciliation: reconciliation.to_owned(),
                platform_status,
                counts,
            }
        })
        .collect())
}

/// Marks workers (by worker id) as paid; returns how many were newly marked.
pub async fn mark_paid(pool: &PgPool, campaign_id: Uuid, by: Uuid, worker_ids: &[String]) -> Result<u64> {
    if worker_ids.is_empty() {
        return Err(Error::invalid(Code::NoWorkers, "name the worker ids to mark as paid"));
    }
    Ok(sqlx::query!(
        "INSERT INTO payouts (campaign_id, annotator_id, paid_by)
         SELECT DISTINCT a.campaign_id, a.annotator_id, $3::uuid FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.campaign_id = $1 AND a.state = 'completed' AND u.external_id = ANY($2)
         ON CONFLICT DO NOTHING",
        campaign_id,
        worker_ids,
        by,
    )
    .execute(pool)
    .await?
    .rows_affected())
}

/// Background answers by worker id: (worker id, question -> answer).
pub async fn background(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<(String, BTreeMap<String, String>)>> {
    let rows = sqlx::query!(
        r#"SELECT coalesce(u.external_id, u.name, u.id::text) AS "worker!", p.answers FROM participant_profiles p
           JOIN users u ON u.id = p.annotator_id WHERE p.campaign_id = $1 ORDER BY 1"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| (row.worker, row.answers))
        .map(|(worker, answers)| {
            let map = answers
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect();
            (worker, map)
        })
        .collect())
}

/// The platforms' bulk-action shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every column, one row per worker.
    Full,
    /// Prolific: participant ids to approve, one per line.
    ProlificApprove,
    /// Prolific: `participant_id,amount` bonus lines (no header).
    ProlificBonus,
    /// MTurk: its batch-results columns `HITId,AssignmentId,WorkerId,Approve,Reject`,
    /// one row per MTurk assignment (MTurk workers only: the upload
    /// matches rows on `AssignmentId`).
    Mturk,
}

/// The payout rows in a platform's shape; for the platform formats
/// Whether a platform's id is safe to write as it is: letters, digits, `_`
/// and `-`, starting with a letter or digit, at most 64 characters.
fn id_shaped(id: &str) -> bool {
    let mut chars = id.chars();
    id.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The bonus amounts [`check_amount`] takes, as a regular expression (the
/// API documents it on the `amount` parameter).
pub const AMOUNT_PATTERN: &str = r"^([1-9][0-9]?(\.[0-9]{1,2})?|0?\.([1-9][0-9]?|0[1-9]))$";

/// Refuses a bonus that is not an amount like `0.50`: more than 0, below
/// 100, at most two decimals, exactly as [`AMOUNT_PATTERN`] (which the API
/// documents) says.
pub fn check_amount(amount: &str) -> Result<()> {
    static AMOUNT: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(AMOUNT_PATTERN).ok());
    match AMOUNT.as_ref() {
        Some(pattern) if pattern.is_match(amount) => Ok(()),
        Some(_) => {
            Err(Error::invalid(Code::InvalidAmount, "the bonus is an amount like 0.50 (more than 0, below 100)"))
        }
        None => Err(Error::unexpected("the amount pattern does not compile")),
    }
}

/// `unpaid_only` leaves out workers already marked paid (the full table has
/// everyone); `bonus` is the amount per approved worker.
pub fn export(rows: &[Payout], format: Format, unpaid_only: bool, bonus: Option<&str>) -> Result<String> {
    let unpaid_only = unpaid_only && format != Format::Full;
    let rows: Vec<&Payout> = rows.iter().filter(|p| !unpaid_only || p.paid_at.is_none()).collect();
    // The platforms' own files hold only ids written as they are (no quoting a platform would keep).
    let approved = || rows.iter().filter(|p| p.approved() && p.counts && p.writable_in_platform_files());
    let table = match format {
        Format::ProlificApprove => {
            return Ok(approved().map(|p| format!("{}\n", p.worker_id)).collect());
        }
        Format::ProlificBonus => {
            // A worker's own bonus wins; `amount` is for the others.
            if let Some(amount) = bonus {
                check_amount(amount)?;
            } else if !approved().any(|p| p.bonus.is_some()) {
                return Err(Error::invalid(Code::MissingAmount, "give the bonus per worker as `amount`, e.g. 0.50"));
            }
            return Ok(approved()
                .filter_map(|p| Some(format!("{},{}\n", p.worker_id, p.bonus.as_deref().or(bonus)?)))
                .collect());
        }
        Format::Mturk => crate::core::kind::contract::Table {
            header: ["HITId", "AssignmentId", "WorkerId", "Approve", "Reject"]
                .iter()
                .map(|h| (*h).to_owned())
                .collect(),
            rows: rows
                .iter()
                .filter(|p| p.counts && p.writable_in_platform_files())
                .flat_map(|p| {
                    let (approve, reject) = match (p.approved(), p.rejection_reason()) {
                        (true, _) => ("x", ""),
                        (false, reason) => ("", reason.unwrap_or("Rejected")),
                    };
                    let shaped = |(hit, assignment): &&(String, String)| id_shaped(hit) && id_shaped(assignment);
                    p.mturk_assignments.iter().filter(shaped).map(move |(hit, assignment)| {
                        [hit.as_str(), assignment, &p.worker_id, approve, reject].map(str::to_owned).to_vec()
                    })
                })
                .collect(),
        },
        Format::Full => crate::core::kind::contract::Table {
            header: [
                "worker_id",
                "annotator",
                "questionnaires_submitted",
                "seconds",
                "checks_passed",
                "checks_failed",
                "exclusions",
                "recommendation",
                "reason",
                "paid_at",
                "confusable_with",
                "decision",
                "decision_reason",
                "bonus",
                "reconciliation",
                "platform_status",
                "counts",
            ]
            .iter()
            .chain(PLATFORM_COLUMNS.iter())
            .map(|h| (*h).to_owned())
            .collect(),
            rows: rows
                .iter()
                .map(|p| {
                    vec![
                        p.worker_id.clone(),
                        p.annotator_id.to_string(),
                        p.submitted.to_string(),
                        p.seconds.to_string(),
                        p.checks_passed.to_string(),
                        p.checks_failed.to_string(),
                        p.exclusions.iter().map(|(r, n)| format!("{r}:{n}")).collect::<Vec<_>>().join(" "),
                        p.recommendation.clone(),
                        p.reason.clone().unwrap_or_default(),
                        p.paid_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
                        p.confusable_with.join(" "),
                        p.decision.clone().unwrap_or_default(),
                        p.decision_reason.clone().unwrap_or_default(),
                        p.bonus.clone().unwrap_or_default(),
                        p.reconciliation.clone(),
                        p.platform_status.clone().unwrap_or_default(),
                        p.counts.to_string(),
                    ]
                    .into_iter()
                    .chain(PLATFORM_COLUMNS.iter().map(|c| p.platform_ids.get(*c).cloned().unwrap_or_default()))
                    .collect()
                })
                .collect(),
        },
    };
    table.to_csv()
}

/// Background answers as CSV: `worker_id` and one column per question.
pub fn background_csv(rows: &[(String, BTreeMap<String, String>)]) -> Result<String> {
    let questions: std::collections::BTreeSet<&String> = rows.iter().flat_map(|(_, a)| a.keys()).collect();
    let mut header = vec!["worker_id".to_owned()];
    header.extend(questions.iter().map(|q| (*q).clone()));
    let table = crate::core::kind::contract::Table {
        header,
        rows: rows
            .iter()
            .map(|(w, answers)| {
                let mut row = vec![w.clone()];
                row.extend(questions.iter().map(|q| answers.get(*q).cloned().unwrap_or_default()));
                row
            })
            .collect(),
    };
    table.to_csv()
}

#[cfg(test)]
mod amount_tests {
    use super::*;

    #[test]
    fn the_amount_rule_is_the_documented_pattern() {
        let documented = include_str!("../../http/api/payouts.rs");
        assert!(documented.contains(&format!("pattern = r\"{AMOUNT_PATTERN}\"")), "the API documents this pattern");
        let schema = include_str!("../../../migrations/0032_payout_decisions.sql");
        assert!(schema.contains(&format!("bonus ~ '{AMOUNT_PATTERN}'")), "the database holds the same rule");
        for amount in ["1", "99", "99.99", "0.5", "0.50", ".5", "0.05", "0.10", "10.0", "9.9"] {
            assert!(check_amount(amount).is_ok(), "{amount:?}");
        }
        for amount in ["0", "0.00", "00.5", "05", "1.", "100", "1e1", "-1", "+1", " 1", "1.234", ".", "", "0.0"] {
            assert!(check_amount(amount).is_err(), "{amount:?}");
        }
    }
}

#[cfg(test)]
mod mturk_tests {
    use super::*;

    fn worker(id: &str, recommendation: &str, assignments: &[(&str, &str)]) -> Payout {
        Payout {
            worker_id: id.to_owned(),
            annotator_id: Uuid::nil(),
            submitted: 1,
            seconds: 60,
            checks_passed: 1,
            checks_failed: 0,
            exclusions: BTreeMap::new(),
            recommendation: recommendation.to_owned(),
            reason: (recommendation == "reject").then(|| "Failed 1 of 1 attention checks".to_owned()),
            decision: None,
            decision_reason: None,
            bonus: None,
            paid_at: None,
            platform_ids: BTreeMap::new(),
            mturk_assignments: assignments.iter().map(|(h, a)| ((*h).to_owned(), (*a).to_owned())).collect(),
            confusable_with: Vec::new(),
            reconciliation: "no_list".to_owned(),
            platform_status: None,
            counts: true,
        }
    }

    #[test]
    fn the_mturk_file_is_one_row_per_assignment_of_mturk_workers_with_safe_ids() {
        let rows = [
            worker("A1GOOD", "approve", &[("3HIT", "3A1"), ("3HIT2", "3A2")]),
            worker("A2BAD", "reject", &[("3HIT", "3A3")]),
            worker("5f3c0000000000000000aa01", "approve", &[]),
            worker("=cmd|' /C calc'!A0", "approve", &[("3HIT", "3A4")]),
            worker("A3FORGED", "approve", &[("3HIT", "=HYPERLINK(\"x\")")]),
        ];
        let file = export(&rows, Format::Mturk, false, None).expect("file");
        assert_eq!(
            file,
            "HITId,AssignmentId,WorkerId,Approve,Reject\n3HIT,3A1,A1GOOD,x,\n3HIT2,3A2,A1GOOD,x,\n\
             3HIT,3A3,A2BAD,,Failed 1 of 1 attention checks\n"
        );
    }
}
