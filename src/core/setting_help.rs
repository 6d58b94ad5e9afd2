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
}

impl SettingHelp {
    /// A setting with its label and meaning.
    pub const fn new(key: &'static str, label: &'static str, help: &'static str) -> Self {
        Self { key, label, help, unit: None, source: None }
    }

    /// The same, counted in `unit`.
    pub const fn unit(self, unit: &'static str) -> Self {
        Self { unit: Some(unit), ..self }
    }

    /// The same, its default taken from `source`.
    pub const fn source(self, source: &'static str) -> Self {
        Self { source: Some(source), ..self }
    }
}
