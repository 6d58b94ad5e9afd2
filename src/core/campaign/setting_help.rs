//! A kind's settings in words, for the settings form: a label, the unit,
//! what the setting means, and where its default comes from.

/// One setting of a kind, in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingHelp {
    /// The configuration key.
    pub key: &'static str,
    /// What it is, in a few words: the form's label.
    pub label: &'static str,
    /// What it means and how it is used.
    pub help: &'static str,
    /// Its unit, when it counts something (`tasks`, `masks`, ...).
    pub unit: Option<&'static str>,
    /// Where its default comes from (a paper and section), when it is not
    /// Atelier's own choice.
    pub source: Option<&'static str>,
    /// How the form edits it.
    pub editor: Editor,
}

/// How the settings form edits a setting. Lists and maps are edited as
/// lines of text (no JSON to write); a value the lines cannot hold (a
/// separator inside a name) is shown as JSON instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editor {
    /// A control of the default value's type: yes/no, number, text or JSON.
    Typed,
    /// Background questions, one per line: `id: question | option | option`.
    Questions,
    /// Names per key, one key per line: `key: name, name`.
    NamesPerKey,
    /// Whole numbers separated by commas (empty: the default).
    Numbers,
}

impl SettingHelp {
    /// A setting with its label and meaning.
    pub const fn new(key: &'static str, label: &'static str, help: &'static str) -> Self {
        Self { key, label, help, unit: None, source: None, editor: Editor::Typed }
    }

    /// The same, counted in `unit`.
    pub const fn unit(self, unit: &'static str) -> Self {
        Self { unit: Some(unit), ..self }
    }

    /// The same, edited with `editor`.
    pub const fn editor(self, editor: Editor) -> Self {
        Self { editor, ..self }
    }

    /// The same, its default taken from `source`.
    pub const fn source(self, source: &'static str) -> Self {
        Self { source: Some(source), ..self }
    }
}
