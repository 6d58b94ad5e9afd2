//! Invitation links: how crowd workers reach a campaign without an account.

use crate::core::{Error, Result};
use sqlx::PgPool;
use uuid::Uuid;

/// Creates an invitation token for a crowd campaign (experts log in and find
/// their campaigns on their own page; a worker link to an expert campaign
/// would only lead workers to a refusal).
pub async fn create(pool: &PgPool, campaign_id: Uuid, created_by: Uuid) -> Result<String> {
    let campaign = crate::core::campaigns::ensure_writable(pool, campaign_id).await?;
    if !campaign.settings.crowd() {
        return Err(Error::conflict(
            "not_a_crowd_campaign",
            "this campaign is for experts, who log in and find it on their page; invitation links are for crowd \
             campaigns (set participants to crowd to invite workers)",
        ));
    }
    let token = crate::random::random_code(24);
    sqlx::query("INSERT INTO invitations (token, campaign_id, created_by) VALUES ($1, $2, $3)")
        .bind(&token)
        .bind(campaign_id)
        .bind(created_by)
        .execute(pool)
        .await?;
    Ok(token)
}

/// The campaign a valid invitation leads to.
pub async fn resolve(pool: &PgPool, token: &str) -> Result<Uuid> {
    sqlx::query_scalar("SELECT campaign_id FROM invitations WHERE token = $1 AND revoked_at IS NULL")
        .bind(token)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("invitation"))
}

/// Whether the worker was invited to the campaign (joined through one of its links).
pub async fn tokens_of(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT token FROM invitations WHERE campaign_id = $1 AND revoked_at IS NULL ORDER BY created_at",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?)
}

/// An invitation link as listed.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct InvitationInfo {
    /// The token in the link.
    pub token: String,
    /// Created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was revoked (the link no longer admits anyone).
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every invitation link of a campaign, revoked ones included.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<InvitationInfo>> {
    Ok(sqlx::query_as::<_, InvitationInfo>(
        "SELECT token, created_at, revoked_at FROM invitations WHERE campaign_id = $1 ORDER BY created_at",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?)
}

/// Revokes a link: nobody new can join through it, at once.
pub async fn revoke(pool: &PgPool, campaign_id: Uuid, token: &str) -> Result<()> {
    let done = sqlx::query(
        "UPDATE invitations SET revoked_at = coalesce(revoked_at, now()) WHERE campaign_id = $1 AND token = $2",
    )
    .bind(campaign_id)
    .bind(token)
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("invitation"));
    }
    Ok(())
}
