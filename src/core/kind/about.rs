//! What a kind is, as one constant value: its name and title, the settings
//! a new campaign starts with, how items come in, what its answers carry.
//! A kind states it once ([`TypedKind::about`](crate::core::kind::typed::TypedKind::about));
//! nothing in it depends on a campaign.

use crate::core::campaign::setting_help::SettingHelp;
use crate::core::campaign::settings::CoreSettings;
use crate::core::item::new_item::NewItem;
use crate::core::kind::contract::{DemoCampaign, Invalid};

/// What a kind is.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// Stable identifier stored on campaigns (`vton`, `a100-lat`, ...).
    pub name: &'static str,
    /// Human title for pages.
    pub title: &'static str,
    /// The core settings a new campaign of this kind starts with: who works
    /// on it (crowd or experts), lease length, annotators per batch, review.
    pub default_settings: CoreSettings,
    /// Each configuration key in words (label, meaning, unit, source of the
    /// default), for the settings form.
    pub settings_help: &'static [SettingHelp],
    /// How items come in.
    pub import: Import,
    /// The JSON shape of an answer in words, for the refusal of one that
    /// does not read (`{"rating": 1, 2 or 3}`).
    pub answer_format: &'static str,
    /// Whether the kind's answer check reads the item's payload. A kind
    /// whose answers are valid or not whatever the item (a rating, a label)
    /// says `false`: its answers are then checked without an item and
    /// stored without reading the item first, which saves a query on every
    /// vote (the statement storing the answer still checks that the item is
    /// in the annotator's batch).
    pub answer_reads_item: bool,
    /// JSON an answer contains when it raises a flag for the admin (a broken
    /// image, "not sure"), each a pattern for PostgreSQL's `@>`: the data
    /// browser's "flagged" filter.
    pub answer_flags: &'static [&'static str],
    /// Whether the kind decides items from their votes
    /// ([`Judgement::vote`](crate::core::kind::contract::Judgement)), so an
    /// adaptive overlap may be set.
    pub adaptive_overlap: bool,
    /// Payload keys the kind's aggregation never reads (large ones, such as
    /// masks' polygons), left out of the live aggregation's input.
    pub payload_keys_not_aggregated: &'static [&'static str],
    /// Payload keys the kind's batch formation reads (`None`: the whole
    /// payload), which its `TypedKind::Batched` reads. Formation, and the
    /// campaign page's count of the batches it would form, read only these:
    /// at 30,000 questions the whole payloads are most of the time of both.
    pub payload_keys_batched: Option<&'static [&'static str]>,
    /// The Hugging Face Hub's task categories for the kind's releases.
    pub hub_task_categories: &'static [&'static str],
    /// A small campaign of this kind that `atelier demo` seeds (created,
    /// batched and opened by the core).
    pub demo: Option<fn() -> DemoCampaign>,
}

impl About {
    /// A kind with these names and settings and every other fact at its
    /// plain value (generic import, no merging, answers read their item, no
    /// flags, fixed overlap, no demo); kinds change what differs with
    /// struct update syntax.
    pub const fn new(name: &'static str, title: &'static str, default_settings: CoreSettings) -> Self {
        Self {
            name,
            title,
            default_settings,
            settings_help: &[],
            import: Import::Generic,
            answer_format: "a JSON object",
            answer_reads_item: true,
            answer_flags: &[],
            adaptive_overlap: false,
            payload_keys_not_aggregated: &[],
            payload_keys_batched: None,
            hub_task_categories: &["other"],
            demo: None,
        }
    }
}

/// How a kind's items come in.
#[derive(Debug, Clone, Copy)]
pub enum Import {
    /// The generic `{"items": [{"external_id", "payload", "gold"}]}` on the
    /// campaign page and the API.
    Generic,
    /// The kind's own format, on the campaign page and the API.
    Format {
        /// What the import form expects, shown on the campaign page.
        hint: &'static str,
        /// Reads a file pasted or uploaded by an admin into items.
        parse: fn(&str) -> Result<Vec<NewItem>, Invalid>,
    },
    /// Only through the kind's own page (its own formats): the campaign page
    /// points there instead of offering an import.
    OwnPage {
        /// What that page takes, shown on the campaign page.
        hint: &'static str,
    },
}

/// What the generic import form expects, shown on the campaign page.
pub const GENERIC_IMPORT_HINT: &str = "JSON: {\"items\": [{\"external_id\", \"payload\", \"gold\"}]}";

impl Import {
    /// What the import form expects, shown on the campaign page.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Generic => GENERIC_IMPORT_HINT,
            Self::Format { hint, .. } | Self::OwnPage { hint } => hint,
        }
    }

    /// Whether items come only through the kind's own page.
    pub fn on_own_page(&self) -> bool {
        matches!(self, Self::OwnPage { .. })
    }

    /// Reads an import file into items; a kind that imports on its own page
    /// refuses, saying where its items go.
    pub fn parse(&self, title: &str, text: &str) -> Result<Vec<NewItem>, Invalid> {
        match self {
            Self::Generic => generic(text),
            Self::Format { parse, .. } => parse(text),
            Self::OwnPage { hint } => Err(Invalid(format!(
                "{title} campaigns take their items on their own page: {hint} ({} characters received)",
                text.len()
            ))),
        }
    }
}

/// Reads the generic import format, `{"items": [{"external_id", "payload", "gold"}]}`.
fn generic(text: &str) -> Result<Vec<NewItem>, Invalid> {
    #[derive(serde::Deserialize)]
    struct Items {
        items: Vec<NewItem>,
    }
    serde_json::from_str::<Items>(text).map(|i| i.items).map_err(|e| Invalid(format!("line {}: {e}", e.line())))
}
