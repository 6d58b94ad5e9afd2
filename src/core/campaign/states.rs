//! The states a campaign and an assignment move through, stored as
//! PostgreSQL enum types (migration 0011).

/// Where a campaign is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[sqlx(type_name = "campaign_state", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum CampaignState {
    /// Being set up: items imported, batches formed; nobody works yet.
    Draft,
    /// Annotators get tasks.
    Open,
    /// No new tasks; exports and curation go on.
    Closed,
}

impl CampaignState {
    /// The stored (and shown) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }

    /// Every state, in life order.
    pub const ALL: [CampaignState; 3] = [Self::Draft, Self::Open, Self::Closed];

    /// Parses a state name, as admins type it.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl std::fmt::Display for CampaignState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where one annotator's batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[sqlx(type_name = "assignment_state", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum AssignmentState {
    /// Being worked on.
    Active,
    /// Submitted.
    Completed,
    /// Its lease ran out before submission; its slot went back to the pool.
    Expired,
}

impl AssignmentState {
    /// The stored (and shown) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Completed => "completed",
            Self::Expired => "expired",
        }
    }
}

impl std::fmt::Display for AssignmentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
