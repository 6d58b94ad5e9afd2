//! Forms that may carry a file: a plain form, or multipart with a `file`
//! field. Uploads are text (CSV, JSON) and must be UTF-8; one that is not
//! (an image chosen by mistake) is refused by the form that reads it, so
//! that the refusal shows beside that form.

use crate::error::Code;
use crate::http::error::AppError;
use axum::extract::FromRequest;

/// A posted form: its text fields and the uploaded file's text, if a file
/// was chosen.
#[derive(Debug, Default)]
pub struct Upload {
    /// Text fields in the order posted.
    pub fields: Vec<(String, String)>,
    /// The `file` field's content (`None` when no file was chosen).
    pub file: Option<String>,
    /// Set when the chosen file was not UTF-8 text (its name, as sent).
    not_text: Option<String>,
}

impl Upload {
    /// A text field's value (empty when absent).
    pub fn field(&self, name: &str) -> &str {
        self.fields.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }

    /// What an import form brings: the uploaded file when one was chosen,
    /// else the text pasted into its `content` field; refused when the
    /// chosen file is not text.
    pub fn text(&self) -> Result<&str, crate::error::Error> {
        if let Some(name) = &self.not_text {
            return Err(crate::error::Error::invalid(
                Code::InvalidUpload,
                format!(
                    "the file {name} is not text (UTF-8): imports are CSV or JSON files; an image is uploaded under \
                     Images, and a spreadsheet is first saved as CSV (UTF-8)"
                ),
            ));
        }
        Ok(crate::text::without_bom(self.file.as_deref().unwrap_or_else(|| self.field("content"))))
    }
}

/// The text an import form brings (see [`Upload::text`]).
pub async fn text(req: axum::extract::Request) -> Result<String, AppError> {
    Ok(read(req).await?.text()?.to_owned())
}

/// Reads a form or a multipart upload.
pub async fn read(req: axum::extract::Request) -> Result<Upload, AppError> {
    let multipart = req
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    if !multipart {
        let axum::Form(fields) = axum::Form::<Vec<(String, String)>>::from_request(req, &())
            .await
            .map_err(|e| crate::error::Error::invalid(Code::InvalidForm, e.body_text()))?;
        return Ok(Upload { fields, ..Upload::default() });
    }
    let too_large = |e: axum::extract::multipart::MultipartError| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            AppError::TooLarge
        } else {
            AppError::BadRequest { code: Code::UnreadableUpload, message: e.body_text() }
        }
    };
    let mut parts = axum::extract::Multipart::from_request(req, &())
        .await
        .map_err(|e| AppError::BadRequest { code: Code::UnreadableUpload, message: e.body_text() })?;
    let mut upload = Upload::default();
    while let Some(field) = parts.next_field().await.map_err(too_large)? {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            // The name as the browser sent it, shortened and without control characters.
            let file_name = field
                .file_name()
                .map(|n| format!("“{}”", n.chars().filter(|c| !c.is_control()).take(100).collect::<String>()));
            let bytes = field.bytes().await.map_err(too_large)?;
            if !bytes.is_empty() {
                match std::str::from_utf8(crate::text::bytes_without_bom(&bytes)) {
                    Ok(text) => upload.file = Some(text.to_owned()),
                    Err(_) => upload.not_text = Some(file_name.unwrap_or_else(|| "chosen".to_owned())),
                }
            }
        } else {
            let value = field.text().await.map_err(too_large)?;
            upload.fields.push((name, value));
        }
    }
    Ok(upload)
}
