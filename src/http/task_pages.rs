//! How a task kind looks in the browser: its task page, its answers as a
//! reviewer or admin reads them, the answer its task form posts, and its
//! admin page. The core's `TaskKind` says what a kind *is*; this trait,
//! implemented in each kind's `http` folder, says how it is *shown*, so the
//! core knows nothing of HTML, templates or CSRF tokens.

use crate::core::campaign::campaigns::Campaign;
pub use crate::core::item::thumbnails::Thumbnail;
use crate::core::kind::contract::{CampaignRules, PublicItem};
use crate::error::Error;
use serde_json::Value;
use std::sync::Arc;
use uuid::Uuid;

/// Everything a kind's task template may show.
#[derive(Debug)]
pub struct TaskView<'a> {
    /// The item as shown to this annotator.
    pub item: &'a PublicItem,
    /// The next item of the batch as shown (for prefetching its images), if any.
    pub next: Option<&'a PublicItem>,
    /// The annotator's current answer, if any (when they went back).
    pub answer: Option<&'a Value>,
    /// The answer this task reviews, when the assignment reviews another
    /// annotator's work: the form starts from it, and accepting it is one key.
    pub under_review: Option<&'a Value>,
    /// 1-based position in the batch.
    pub position: usize,
    /// Items in the batch.
    pub total: usize,
    /// The assignment.
    pub assignment_id: Uuid,
    /// CSRF token for the answer form.
    pub csrf_token: &'a str,
    /// Server time (ms since epoch) when the page was rendered; sent back
    /// with the answer to measure time on task.
    pub shown_at: i64,
}

/// A task kind's pages.
pub trait TaskPages: Send + Sync + 'static {
    /// Renders the task page body (HTML) for one item.
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error>;

    /// Turns the fields posted by the task page's form (bookkeeping fields
    /// already removed, in the order posted, a field repeated for each
    /// ticked box) into an answer, which the core then validates as any
    /// other. The default keeps one value per field, whole numbers as numbers.
    fn answer_from_form(&self, fields: &[(String, String)]) -> Value {
        single_valued_answer(fields)
    }

    /// An answer as a reviewer or admin sees it (HTML, escaped by the
    /// kind): the default shows the stored JSON.
    fn render_answer(&self, _payload: &Value, answer: &Value) -> String {
        format!("<code>{}</code>", escape_html(&answer.to_string()))
    }

    /// HTML shown on the landing page before the first task (instructions,
    /// examples); `None` for the generic text only.
    fn instructions(&self) -> Option<&'static str> {
        None
    }

    /// A picture the kind's demo items link to
    /// (`/demo/images/{role}/{n}.svg`), as SVG; `None` leaves the role to the
    /// shared pictures ([`crate::demo::svg`]).
    fn demo_picture(&self, _role: &str, _n: usize) -> Option<String> {
        None
    }

    /// Images that show an item at a glance in the data browser, given the
    /// campaign's rules (whose configuration may say where images live):
    /// by default every image address in the payload, named by its key.
    fn thumbnails(&self, _rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail> {
        crate::core::item::thumbnails::in_payload(payload)
    }

    /// The path segment of the kind's admin page
    /// (`/admin/campaigns/{id}/<segment>`), if it has one.
    fn admin_page(&self) -> Option<&'static str> {
        None
    }
}

/// An answer with one value per form field (the last one posted), whole
/// numbers as numbers: what single-choice task forms post.
pub fn single_valued_answer(fields: &[(String, String)]) -> Value {
    let mut answer = serde_json::Map::new();
    for (k, v) in fields {
        let value = v.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(v.clone()));
        answer.insert(k.clone(), value);
    }
    Value::Object(answer)
}

/// Escapes text for HTML (for kinds rendering answers by hand).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Every kind's pages, by the kind's stored name: the HTTP layer's
/// counterpart of the core's [`Registry`](crate::core::Registry).
#[derive(Clone)]
pub struct KindPages {
    by_name: Arc<[(&'static str, &'static dyn TaskPages)]>,
}

impl std::fmt::Debug for KindPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.iter().map(|(name, _)| name)).finish()
    }
}

impl KindPages {
    /// The pages of these kinds (kind name, pages).
    pub fn new(by_name: Vec<(&'static str, &'static dyn TaskPages)>) -> Self {
        Self { by_name: by_name.into() }
    }

    /// The pages of the kind with this stored name.
    pub fn get(&self, kind: &str) -> Result<&'static dyn TaskPages, Error> {
        self.by_name
            .iter()
            .find(|(name, _)| *name == kind)
            .map(|(_, pages)| *pages)
            .ok_or_else(|| Error::unexpected(format!("no pages for the kind `{kind}`")))
    }

    /// Every kind's pages, in registration order.
    pub fn all(&self) -> impl Iterator<Item = &'static dyn TaskPages> + '_ {
        self.by_name.iter().map(|(_, pages)| *pages)
    }

    /// The pages of a campaign's kind.
    pub fn of(&self, campaign: &Campaign) -> Result<&'static dyn TaskPages, Error> {
        self.get(&campaign.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_choice_form_keeps_numbers_as_numbers_and_the_last_value_of_a_field() {
        let fields = [("rating".to_owned(), "2".to_owned()), ("note".to_owned(), "a".to_owned())];
        assert_eq!(single_valued_answer(&fields), serde_json::json!({"rating": 2, "note": "a"}));
        let twice = [("c".to_owned(), "x".to_owned()), ("c".to_owned(), "y".to_owned())];
        assert_eq!(single_valued_answer(&twice), serde_json::json!({"c": "y"}));
        assert_eq!(escape_html(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }
}
