//! Where the service's blobs live once `atelier storage migrate` switched
//! them: one row, read at start-up (a `--storage` flag still wins).

use sqlx::PgPool;

/// The store address `storage migrate` last switched to, if any.
pub async fn recorded(pool: &PgPool) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT address FROM storage_location").fetch_optional(pool).await
}

/// Records the store every instance uses from now on.
pub async fn record(pool: &PgPool, address: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO storage_location (address) VALUES ($1)
         ON CONFLICT (only_row) DO UPDATE SET address = EXCLUDED.address, switched_at = now()",
        address,
    )
    .execute(pool)
    .await?;
    Ok(())
}
