//! How a task kind looks in the browser: its task page, its answers as a
//! reviewer or admin reads them, the answer its task form posts, and its
//! admin page. The core's `TypedKind` says what a kind *is*; this trait,
//! implemented in each kind's `http` folder, says how it is *shown*, so the
//! core knows nothing of HTML, templates or CSRF tokens.
//!
//! A kind implements [`TypedTaskPages`] with its own types: the item as its
//! annotator is shown it (`Shown`, read from what the kind's
//! `public_payload` makes), its stored `Payload` and its `Answer`. The HTTP
//! layer holds the object-safe [`TaskPages`], which every typed one is
//! through the blanket implementation below: it reads the JSON it is handed
//! into the kind's types before calling a hook.

use crate::core::campaign::campaigns::Campaign;
pub use crate::core::item::thumbnails::Thumbnail;
use crate::core::kind::contract::{CampaignRules, PublicItem};
use crate::core::TypedKind;
use crate::error::Error;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use uuid::Uuid;

/// A task page as the HTTP layer asks for it: the item as shown and the
/// answers as stored (JSON), and what the page's form posts back.
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

/// What a task page's form posts back with the answer, for a kind's
/// template.
#[derive(Debug, Clone, Copy)]
pub struct TaskForm<'a> {
    /// The item's handle in this assignment.
    pub item_id: Uuid,
    /// 1-based position in the batch.
    pub position: usize,
    /// Items in the batch.
    pub total: usize,
    /// The assignment.
    pub assignment_id: Uuid,
    /// CSRF token for the answer form.
    pub csrf_token: &'a str,
    /// Server time (ms since epoch) when the page was rendered.
    pub shown_at: i64,
}

/// One task as kind `K`'s task page receives it: in the kind's own types.
pub struct Task<'a, K: TypedTaskPages> {
    /// What the form posts back.
    pub form: TaskForm<'a>,
    /// The item as shown to this annotator.
    pub item: K::Shown,
    /// The next item as shown (for prefetching its images), if any.
    pub next: Option<K::Shown>,
    /// The annotator's current answer, if any (when they went back).
    pub answer: Option<K::Answer>,
    /// The answer this task reviews, when the assignment reviews another
    /// annotator's work.
    pub under_review: Option<K::Answer>,
}

/// A task kind's pages, in its own types.
pub trait TypedTaskPages: TypedKind {
    /// The item as its annotator is shown it: what the kind's
    /// `public_payload` makes, read back.
    type Shown: DeserializeOwned;

    /// Renders the task page body (HTML) for one item.
    fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error>;

    /// Turns the fields posted by the task page's form (bookkeeping fields
    /// already removed, in the order posted, a field repeated for each
    /// ticked box) into an answer, which the core then validates as any
    /// other. `None`, the default, reads the form as one value per field
    /// (whole numbers as numbers), as the API's answer would be sent, and
    /// the core reads that into the kind's answer or refuses it, saying the
    /// answer's format.
    fn answer_from_form(&self, _fields: &[(String, String)]) -> Option<Self::Answer> {
        None
    }

    /// An answer as a reviewer or admin sees it (HTML, escaped by the
    /// kind), beside the item as its annotator was shown it: the default
    /// shows the answer's JSON.
    fn render_answer(&self, _item: &Self::Shown, answer: &Self::Answer) -> String {
        as_stored(&serde_json::to_value(answer).unwrap_or_default())
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
    fn thumbnails(&self, _rules: &dyn CampaignRules, payload: &Self::Payload) -> Vec<Thumbnail> {
        serde_json::to_value(payload).map(|p| crate::core::item::thumbnails::in_payload(&p)).unwrap_or_default()
    }

    /// The path segment of the kind's admin page
    /// (`/admin/campaigns/{id}/<segment>`), if it has one.
    fn admin_page(&self) -> Option<&'static str> {
        None
    }
}

/// A task kind's pages as the HTTP layer holds them: JSON in, HTML out.
/// Every [`TypedTaskPages`] is one.
pub trait TaskPages: Send + Sync + 'static {
    /// Renders the task page body (HTML) for one item.
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error>;

    /// The answer a task form's fields make (see [`TypedTaskPages::answer_from_form`]).
    fn answer_from_form(&self, fields: &[(String, String)]) -> Value;

    /// An answer as a reviewer or admin sees it, beside the item as shown
    /// (an answer or item that no longer reads shows the answer's JSON).
    fn render_answer(&self, shown: &Value, answer: &Value) -> String;

    /// See [`TypedTaskPages::instructions`].
    fn instructions(&self) -> Option<&'static str>;

    /// See [`TypedTaskPages::demo_picture`].
    fn demo_picture(&self, role: &str, n: usize) -> Option<String>;

    /// An item's images at a glance, from its stored payload (none when it
    /// no longer reads).
    fn thumbnails(&self, rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail>;

    /// See [`TypedTaskPages::admin_page`].
    fn admin_page(&self) -> Option<&'static str>;
}

/// An answer shown as its JSON, escaped: the default, and what an answer
/// that no longer reads looks like.
fn as_stored(answer: &Value) -> String {
    format!("<code>{}</code>", escape_html(&answer.to_string()))
}

/// The item as shown, read into the kind's type; a refusal says which.
fn shown<K: TypedTaskPages>(item: &PublicItem) -> Result<K::Shown, askama::Error> {
    K::Shown::deserialize(&item.payload).map_err(|e| {
        askama::Error::Custom(format!("the item {} as shown does not read as this kind's: {e}", item.id).into())
    })
}

impl<K: TypedTaskPages> TaskPages for K {
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        // Stored answers were read into the kind's type when they were
        // saved: one that no longer reads starts the form empty.
        let answer = |a: Option<&Value>| a.and_then(|a| K::Answer::deserialize(a).ok());
        let task = Task::<K> {
            form: TaskForm {
                item_id: view.item.id,
                position: view.position,
                total: view.total,
                assignment_id: view.assignment_id,
                csrf_token: view.csrf_token,
                shown_at: view.shown_at,
            },
            item: shown::<K>(view.item)?,
            next: view.next.and_then(|n| shown::<K>(n).ok()),
            answer: answer(view.answer),
            under_review: answer(view.under_review),
        };
        TypedTaskPages::render_task(self, &task)
    }
    fn answer_from_form(&self, fields: &[(String, String)]) -> Value {
        TypedTaskPages::answer_from_form(self, fields)
            .and_then(|answer| serde_json::to_value(answer).ok())
            .unwrap_or_else(|| single_valued_answer(fields))
    }
    fn render_answer(&self, shown: &Value, answer: &Value) -> String {
        match (K::Shown::deserialize(shown), K::Answer::deserialize(answer)) {
            (Ok(shown), Ok(answer)) => TypedTaskPages::render_answer(self, &shown, &answer),
            _ => as_stored(answer),
        }
    }
    fn instructions(&self) -> Option<&'static str> {
        TypedTaskPages::instructions(self)
    }
    fn demo_picture(&self, role: &str, n: usize) -> Option<String> {
        TypedTaskPages::demo_picture(self, role, n)
    }
    fn thumbnails(&self, rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail> {
        match K::Payload::deserialize(payload) {
            Ok(payload) => TypedTaskPages::thumbnails(self, rules, &payload),
            Err(_) => Vec::new(),
        }
    }
    fn admin_page(&self) -> Option<&'static str> {
        TypedTaskPages::admin_page(self)
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
