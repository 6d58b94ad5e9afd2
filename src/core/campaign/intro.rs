//! What a crowd worker reads before the first task: the campaign's own
//! instructions, the estimated time and pay, and a consent text they agree
//! to (recorded, with the text they saw, before their first questionnaire).

use crate::error::{Code, Error, Result};
use sqlx::PgPool;
use uuid::Uuid;

/// A campaign's introduction, as the admin wrote it.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub struct Intro {
    /// Instructions: paragraphs separated by a blank line; a line that is
    /// an image's address (`/images/...` or `https://...` ending in .png,
    /// .jpg, .jpeg, .gif or .webp) shows the image.
    #[serde(default)]
    #[schema(max_length = 20_000)]
    pub text: String,
    /// About how long the study takes, in minutes.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1440)]
    pub estimated_minutes: Option<i32>,
    /// What it pays, as the platform says it (e.g. "£1.50").
    #[serde(default)]
    #[schema(max_length = 100)]
    pub pay: Option<String>,
    /// A consent text the worker must agree to before the first task.
    #[serde(default)]
    #[schema(max_length = 20_000)]
    pub consent: Option<String>,
}

/// One block of the instructions as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// A paragraph of text (its lines kept).
    Paragraph(String),
    /// An image, by address.
    Image(String),
}

impl Intro {
    /// The instructions as paragraphs and images.
    pub fn blocks(&self) -> Vec<Block> {
        let image = |line: &str| {
            let lower = line.to_ascii_lowercase();
            (line.starts_with('/') || lower.starts_with("https://"))
                && !line.contains(char::is_whitespace)
                && [".png", ".jpg", ".jpeg", ".gif", ".webp"].iter().any(|e| lower.ends_with(e))
        };
        let mut blocks = Vec::new();
        for part in self.text.replace("\r\n", "\n").split("\n\n") {
            let mut text = Vec::new();
            for line in part.lines().map(str::trim) {
                if image(line) {
                    if !text.is_empty() {
                        blocks.push(Block::Paragraph(text.join("\n")));
                        text.clear();
                    }
                    blocks.push(Block::Image(line.to_owned()));
                } else if !line.is_empty() {
                    text.push(line);
                }
            }
            if !text.is_empty() {
                blocks.push(Block::Paragraph(text.join("\n")));
            }
        }
        blocks
    }

    /// Whether there is anything to show.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.estimated_minutes.is_none() && self.pay.is_none() && self.consent.is_none()
    }

    /// The introduction with blank fields as absent, checked.
    fn checked(self) -> Result<Self> {
        let blank = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let intro = Self {
            text: self.text,
            estimated_minutes: self.estimated_minutes,
            pay: blank(self.pay),
            consent: blank(self.consent),
        };
        let refuse = |m: &str| Err(Error::invalid(Code::InvalidIntro, m.to_owned()));
        if intro.text.chars().count() > 20_000 || intro.consent.as_ref().is_some_and(|c| c.chars().count() > 20_000) {
            return refuse("the instructions and the consent text are limited to 20,000 characters each");
        }
        if intro.estimated_minutes.is_some_and(|m| !(1..=1440).contains(&m)) {
            return refuse("the estimated time is 1 to 1,440 minutes");
        }
        if intro.pay.as_ref().is_some_and(|p| p.chars().count() > 100) {
            return refuse("the pay is limited to 100 characters");
        }
        Ok(intro)
    }
}

/// The campaign's introduction (empty when none was written).
pub async fn get(pool: &PgPool, campaign_id: Uuid) -> Result<Intro> {
    Ok(sqlx::query_as!(
        Intro,
        "SELECT text, estimated_minutes, pay, consent FROM campaign_intros WHERE campaign_id = $1",
        campaign_id,
    )
    .fetch_optional(pool)
    .await?
    .unwrap_or_default())
}

/// Replaces the campaign's introduction.
pub async fn set(pool: &PgPool, campaign_id: Uuid, intro: Intro) -> Result<Intro> {
    let intro = intro.checked()?;
    crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    sqlx::query!(
        "INSERT INTO campaign_intros (campaign_id, text, estimated_minutes, pay, consent) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (campaign_id) DO UPDATE
         SET text = EXCLUDED.text, estimated_minutes = EXCLUDED.estimated_minutes, pay = EXCLUDED.pay,
             consent = EXCLUDED.consent",
        campaign_id,
        intro.text,
        intro.estimated_minutes,
        intro.pay,
        intro.consent,
    )
    .execute(pool)
    .await?;
    Ok(intro)
}

/// Before an annotator's first questionnaire in a campaign with a consent
/// text: records their consent (`agreed`), or refuses to start. Annotators
/// who already agreed, or who started before the text was set, go on.
pub async fn ensure_consent(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid, agreed: bool) -> Result<()> {
    let Some(consent) = get(pool, campaign_id).await?.consent else { return Ok(()) };
    let row = sqlx::query!(
        r#"SELECT EXISTS (SELECT 1 FROM consents WHERE campaign_id = $1 AND annotator_id = $2) AS "given!",
                  EXISTS (SELECT 1 FROM assignments WHERE campaign_id = $1 AND annotator_id = $2) AS "started!""#,
        campaign_id,
        annotator_id,
    )
    .fetch_one(pool)
    .await?;
    let (given, started) = (row.given, row.started);
    if given || started {
        return Ok(());
    }
    if !agreed {
        return Err(Error::invalid(Code::ConsentRequired, "please read the consent text and tick the box to start"));
    }
    sqlx::query!(
        "INSERT INTO consents (campaign_id, annotator_id, consent) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        campaign_id,
        annotator_id,
        consent,
    )
    .execute(pool)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_lines_become_images_and_blank_lines_separate_paragraphs() {
        let intro = Intro {
            text: "Rate each try-on.\nLook closely.\n\n/images/abc.png\nLike this one.\n\nhttps://cdn.example/x.JPG"
                .into(),
            ..Intro::default()
        };
        assert_eq!(
            intro.blocks(),
            vec![
                Block::Paragraph("Rate each try-on.\nLook closely.".into()),
                Block::Image("/images/abc.png".into()),
                Block::Paragraph("Like this one.".into()),
                Block::Image("https://cdn.example/x.JPG".into()),
            ]
        );
        let not_image =
            Intro { text: "javascript:alert(1).png\nhttp://plain.example/a.png".into(), ..Intro::default() };
        assert!(not_image.blocks().iter().all(|b| matches!(b, Block::Paragraph(_))), "{:?}", not_image.blocks());
    }
}
