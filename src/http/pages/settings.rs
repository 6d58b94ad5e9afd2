//! Campaign settings on pages: the new-campaign form and the campaign page
//! show every setting of the kind and the core with its default and meaning;
//! what is posted is typed as the setting is and checked by the same code as
//! the API.

use super::setting_lines;
use super::{render, OnPage, PageResult};
use crate::core::campaign::campaigns::{self, Setting};
use crate::core::campaign::setting_help::Editor;
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings};
use crate::error::Code;
use crate::error::Error;
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, flash, AppState};
use askama::Template;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use axum::Form;
use serde_json::Value;
use std::collections::HashMap;
use tower_sessions::Session;
use uuid::Uuid;

/// A setting as the form shows it.
pub struct SettingRow {
    /// Configuration key.
    pub key: String,
    /// What it is in words, when the key alone could mislead (the core's
    /// `participants`, who annotates, beside A100's participants per
    /// questionnaire).
    pub label: Option<&'static str>,
    /// The form field: `set.<key>` for the core's settings, `cfg.<key>` for the kind's.
    pub field: String,
    /// The input's HTML id: `set-<key>` or `cfg-<key>`.
    pub id: String,
    /// Whether it is one of the core's settings.
    pub core: bool,
    /// `bool`, `choice`, `number`, `text`, `lines` or `json`: the input used.
    pub input: &'static str,
    /// The options of a `choice`.
    pub options: Vec<&'static str>,
    /// The current value, as the input shows it.
    pub value: String,
    /// The default, as text.
    pub default: String,
    /// What it means.
    pub help: &'static str,
    /// What it counts, shown beside the input (`tasks`, `masks`, ...).
    pub unit: Option<&'static str>,
    /// Where its default comes from (a paper and section).
    pub source: Option<&'static str>,
    /// How `lines` are written, for the hint.
    pub format: Option<&'static str>,
}

fn input_for(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "text",
        _ => "json",
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => serde_json::to_string_pretty(v).unwrap_or_default(),
        other => other.to_string(),
    }
}

/// How the setting is edited: its editor when the lines can hold its value
/// (as [`rows`] decides for the form).
fn editor_of(st: &Setting) -> Editor {
    let editor = st.help.map_or(Editor::Typed, |h| h.editor);
    match setting_lines::to_lines(editor, &st.value) {
        Some(_) => editor,
        None => Editor::Typed,
    }
}

/// How the lines of `editor` are written.
fn format_of(editor: Editor) -> Option<&'static str> {
    match editor {
        Editor::Typed => None,
        Editor::Questions => Some("One question per line: id: question | option | option …"),
        Editor::NamesPerKey => Some("One per line: name: account, account …"),
        Editor::Numbers => Some("Whole numbers separated by commas; empty for the default."),
    }
}

/// The form rows of a kind's settings.
pub fn rows(settings: Vec<Setting>) -> Vec<SettingRow> {
    settings
        .into_iter()
        .map(|st| {
            // Lines when the editor's lines can hold the value (else the default's type).
            let editor = st.help.map_or(Editor::Typed, |h| h.editor);
            match setting_lines::to_lines(editor, &st.value) {
                Some(lines) => (editor, lines, st),
                None => (Editor::Typed, shown(&st.value), st),
            }
        })
        .map(|(editor, value, st)| SettingRow {
            format: format_of(editor),
            label: st.help.map(|h| h.label),
            unit: st.help.and_then(|h| h.unit),
            source: st.help.and_then(|h| h.source),
            field: format!("cfg.{}", st.key),
            id: format!("cfg-{}", st.key),
            core: false,
            input: if editor == Editor::Typed { input_for(&st.default) } else { "lines" },
            options: Vec::new(),
            value,
            default: setting_lines::to_lines(editor, &st.default)
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| shown(&st.default)),
            help: st.help.map_or("", |h| h.help),
            key: st.key,
        })
        .collect()
}

/// The form rows of the core's settings, with the kind's defaults.
pub fn core_rows(current: &CoreSettings, defaults: &CoreSettings) -> Vec<SettingRow> {
    let value = |s: &CoreSettings, key: &str| -> String {
        match key {
            "participants" => serde_json::to_value(s.participants).map(|v| shown(&v)).unwrap_or_default(),
            "lease_minutes" => s.lease_minutes.to_string(),
            "annotators_per_batch" => match s.annotators_per_batch {
                AnnotatorsPerBatch::AsPlanned => String::new(),
                AnnotatorsPerBatch::Every => "every".into(),
                AnnotatorsPerBatch::Exactly(n) => n.to_string(),
            },
            "joins_per_address" => s.joins_per_address.to_string(),
            "first_answer_within" => s.first_answer_within.to_string(),
            "ground_truth_from" => s.ground_truth_from.as_str().to_owned(),
            "overlap" => match s.overlap {
                crate::core::campaign::settings::Overlap::Fixed => "fixed".to_owned(),
                adaptive => adaptive.to_json().to_string(),
            },
            _ => s.review.to_string(),
        }
    };
    // Review is a second expert's: a crowd campaign is not offered it.
    let crowd = current.participants == crate::core::campaign::settings::Participants::Crowd;
    CoreSettings::help()
        .into_iter()
        .filter(|(key, _)| !(crowd && *key == "review") && (crowd || !CoreSettings::crowd_only(key)))
        .map(|(key, help)| SettingRow {
            label: match key {
                "participants" => Some("Who annotates: crowd workers or experts"),
                "lease_minutes" => Some("Minutes to finish a questionnaire or batch once taken"),
                "annotators_per_batch" => Some("Annotators per batch"),
                "review" => Some("A second expert reviews each batch"),
                "joins_per_address" => Some("New worker ids per address per 10 minutes on a study link"),
                "first_answer_within" => Some("Minutes for a worker's first answer"),
                "ground_truth_from" => Some("Whose work counts"),
                "overlap" => Some("Raters per item: fixed, or adaptive"),
                _ => None,
            },
            key: key.to_owned(),
            field: format!("set.{key}"),
            id: format!("set-{key}"),
            core: true,
            input: match key {
                "participants" | "ground_truth_from" => "choice",
                "review" => "bool",
                _ => "text",
            },
            options: match key {
                "participants" => vec!["crowd", "experts"],
                "ground_truth_from" => vec!["all", "reconciled"],
                _ => Vec::new(),
            },
            value: value(current, key),
            default: value(defaults, key),
            help,
            unit: matches!(key, "lease_minutes" | "first_answer_within").then_some("minutes"),
            source: None,
            format: None,
        })
        .collect()
}

/// The core's settings posted as `set.<key>` fields.
fn core_settings_from(fields: &[(String, String)]) -> serde_json::Map<String, Value> {
    fields
        .iter()
        .filter_map(|(name, raw)| {
            let key = name.strip_prefix("set.")?;
            let value = if raw.trim().is_empty() { Value::Null } else { Value::String(raw.trim().to_owned()) };
            Some((key.to_owned(), value))
        })
        .collect()
}

/// The configuration posted as `cfg.<key>` fields, each typed as its setting.
fn config_from(settings: &[Setting], fields: &[(String, String)]) -> Result<Value, Error> {
    let types: HashMap<&str, (&'static str, Editor)> =
        settings.iter().map(|st| (st.key.as_str(), (input_for(&st.default), editor_of(st)))).collect();
    let mut config = serde_json::Map::new();
    for (name, raw) in fields {
        let Some(key) = name.strip_prefix("cfg.") else { continue };
        let invalid = |what: &str| Error::invalid(Code::InvalidSetting, format!("{key}: {what}"));
        let (input, editor) = types.get(key).copied().unwrap_or(("json", Editor::Typed));
        if editor != Editor::Typed {
            config.insert(key.to_owned(), setting_lines::from_lines(editor, raw).map_err(|e| invalid(&e))?);
            continue;
        }
        let value = match input {
            "bool" => Value::Bool(raw == "true"),
            "number" => {
                let n: f64 = raw.trim().parse().map_err(|_| invalid("expected a number"))?;
                if n.fract() == 0.0 && n.abs() < 1e15 {
                    serde_json::json!(n as i64)
                } else {
                    serde_json::json!(n)
                }
            }
            "text" => Value::String(raw.clone()),
            _ if raw.trim().is_empty() => continue,
            _ => serde_json::from_str(raw).map_err(|e| invalid(&format!("not valid JSON ({e})")))?,
        };
        config.insert(key.to_owned(), value);
    }
    Ok(Value::Object(config))
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// Saves the campaign page's settings form.
pub async fn save_settings(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(fields): Form<Vec<(String, String)>>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let outcome = async {
        let config = config_from(&campaigns::settings(&s.kinds, &campaign)?, &fields)?;
        let updated = campaigns::update(&s.pool, &s.kinds, id, Some(&config), &core_settings_from(&fields)).await?;
        // The page's form is the admin's explicit act: recorded, not refused.
        let responses = crate::core::campaign::config_changes::answers(&s.pool, id).await?;
        crate::core::campaign::config_changes::record(&s.pool, &campaign, &updated, Some(admin.id), responses).await?;
        Ok("Settings saved.".to_owned())
    }
    .await;
    super::admin::act(&s, &session, id, "settings", fields, outcome).await
}

/// The new-campaign form's address: the kind chosen and the name typed on
/// the campaign list.
#[derive(serde::Deserialize)]
pub struct NewQuery {
    /// Absent when the address was typed or kept without the form's choice.
    kind: Option<String>,
    #[serde(default)]
    name: String,
}

#[derive(Template)]
#[template(path = "admin_new_campaign.html")]
struct NewPage {
    kind: String,
    kind_title: &'static str,
    name: String,
    settings: Vec<SettingRow>,
    csrf_token: String,
    /// Why the service refused the form, shown above it (what was typed kept).
    error: Option<String>,
}

/// The new-campaign form's rows for a kind, each with its default (or,
/// after a refusal, with what the admin typed).
fn new_rows(s: &AppState, kind_name: &str, typed: &[(String, String)]) -> Result<Vec<SettingRow>, Error> {
    let defaults = s.kinds.get(kind_name)?.about().default_settings;
    let mut settings = core_rows(&defaults, &defaults);
    settings.extend(rows(campaigns::settings_of(&s.kinds, kind_name, &Value::Null)?));
    show_as_typed(&mut settings, typed);
    Ok(settings)
}

/// Sets each row's value to what the admin typed in its field, if anything
/// (a refused form shows again as it was sent).
pub fn show_as_typed(settings: &mut [SettingRow], typed: &[(String, String)]) {
    for row in settings {
        if let Some((_, v)) = typed.iter().rev().find(|(k, _)| *k == row.field) {
            row.value.clone_from(v);
        }
    }
}

/// The new-campaign form: name, kind and every setting with its default.
pub async fn new_campaign(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Query(q): Query<NewQuery>,
) -> PageResult {
    // Without a kind, the form that picks one (on the campaign list).
    let Some(kind_name) = q.kind else { return Ok(Redirect::to("/admin#new-campaign").into_response()) };
    let kind_title = s.kinds.get(&kind_name)?.title();
    let settings = new_rows(&s, &kind_name, &[])?;
    let csrf_token = csrf::token(&session).await?;
    render(&NewPage { kind: kind_name, kind_title, name: q.name, settings, csrf_token, error: None })
}

/// Creates a campaign from the new-campaign form (settings optional: what
/// is not given takes its default).
pub async fn create(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Form(fields): Form<Vec<(String, String)>>,
) -> PageResult {
    let kind = field(&fields, "kind").to_owned();
    let kind_title = s.kinds.get(&kind)?.title();
    let outcome = async {
        let config = config_from(&campaigns::settings_of(&s.kinds, &kind, &Value::Null)?, &fields)?;
        campaigns::create(&s.pool, &s.kinds, &kind, field(&fields, "name"), &config, &core_settings_from(&fields)).await
    }
    .await;
    match outcome {
        Ok(c) => Ok(flash::redirect(
            &session,
            format!("Campaign “{}” created; import items below.", c.name),
            &format!("/admin/campaigns/{}", c.id),
        )
        .await),
        // Refused: the form again, as typed, with the reason above it.
        Err(Error::Rejected { code, message }) => {
            let page = NewPage {
                settings: new_rows(&s, &kind, &fields)?,
                name: field(&fields, "name").to_owned(),
                kind,
                kind_title,
                csrf_token: csrf::token(&session).await?,
                error: Some(message),
            };
            super::render_with(code.status(), &page)
        }
        Err(e) => Err(e.into()),
    }
}
