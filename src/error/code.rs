//! Every error code a client can receive: one variant each, with its stable
//! string (the `code` of `{"error": {"code", "message"}}`) and its HTTP
//! status. Codes are matched as values, never as strings; adding one means
//! adding a variant here, grouped by status.

use axum::http::StatusCode;

/// A stable, machine-readable error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    // 400 Bad Request
    /// `bad_request`.
    BadRequest,
    /// `invalid_authorization`.
    InvalidAuthorization,
    /// `invalid_path`.
    InvalidPath,
    /// `malformed_json`.
    MalformedJson,
    /// `unreadable_body`.
    UnreadableBody,
    /// `unreadable_upload`.
    UnreadableUpload,
    // 401 Unauthorized
    /// `unauthenticated`.
    Unauthenticated,
    // 403 Forbidden
    /// `csrf`.
    Csrf,
    /// `forbidden`.
    Forbidden,
    // 404 Not Found
    /// `not_found`.
    NotFound,
    // 405 Method Not Allowed
    /// `method_not_allowed`.
    MethodNotAllowed,
    // 408 Request Timeout
    /// `timeout`.
    Timeout,
    // 409 Conflict
    /// `already_answered`.
    AlreadyAnswered,
    /// `already_exists`.
    AlreadyExists,
    /// `already_submitted`.
    AlreadySubmitted,
    /// `assignment_in_progress`.
    AssignmentInProgress,
    /// `batch_taken`.
    BatchTaken,
    /// `batches_exist`.
    BatchesExist,
    /// `campaign_archived`.
    CampaignArchived,
    /// `campaign_closed`.
    CampaignClosed,
    /// `campaign_has_data`.
    CampaignHasData,
    /// `campaign_not_empty`.
    CampaignNotEmpty,
    /// `campaign_not_open`.
    CampaignNotOpen,
    /// `confirm_change`.
    ConfirmChange,
    /// `duplicate_item`.
    DuplicateItem,
    /// `incomplete`.
    Incomplete,
    /// `invitation_ended`.
    InvitationEnded,
    /// `invitation_full`.
    InvitationFull,
    /// `platform_session_required`.
    PlatformSessionRequired,
    /// `invitation_revoked`.
    InvitationRevoked,
    /// `last_admin`.
    LastAdmin,
    /// `lease_expired`.
    LeaseExpired,
    /// `name_taken`.
    NameTaken,
    /// `no_batches`.
    NoBatches,
    /// `no_items`.
    NoItems,
    /// `no_ontology`.
    NoOntology,
    /// `no_suspects`.
    NoSuspects,
    /// `not_a_crowd_campaign`.
    NotACrowdCampaign,
    /// `not_an_expert_campaign`.
    NotAnExpertCampaign,
    /// `nothing_to_batch`.
    NothingToBatch,
    /// `sample_too_large`.
    SampleTooLarge,
    /// `signed_in_as_staff`.
    SignedInAsStaff,
    // 413 Payload Too Large
    /// `body_too_large`.
    BodyTooLarge,
    /// `image_too_large`.
    ImageTooLarge,
    // 415 Unsupported Media Type
    /// `unsupported_media_type`.
    UnsupportedMediaType,
    // 422 Unprocessable Entity
    /// `background_required`.
    BackgroundRequired,
    /// `consent_required`.
    ConsentRequired,
    /// `constraint_violated`.
    ConstraintViolated,
    /// `duplicate_in_import`.
    DuplicateInImport,
    /// `image_id_clash`.
    ImageIdClash,
    /// `invalid`.
    Invalid,
    /// `invalid_amount`.
    InvalidAmount,
    /// `invalid_assignment`.
    InvalidAssignment,
    /// `invalid_attention`.
    InvalidAttention,
    /// `invalid_background`.
    InvalidBackground,
    /// `invalid_body`.
    InvalidBody,
    /// `invalid_coco`.
    InvalidCoco,
    /// `invalid_completion_code`.
    InvalidCompletionCode,
    /// `invalid_completion_url`.
    InvalidCompletionUrl,
    /// `invalid_config`.
    InvalidConfig,
    /// `invalid_csv`.
    InvalidCsv,
    /// `invalid_deepfashion2`.
    InvalidDeepfashion2,
    /// `invalid_expiry`.
    InvalidExpiry,
    /// `invalid_form`.
    InvalidForm,
    /// `invalid_id_param`.
    InvalidIdParam,
    /// `invalid_image`.
    InvalidImage,
    /// `invalid_intro`.
    InvalidIntro,
    /// `invalid_item`.
    InvalidItem,
    /// `invalid_license`.
    InvalidLicense,
    /// `invalid_model`.
    InvalidModel,
    /// `invalid_name`.
    InvalidName,
    /// `invalid_note`.
    InvalidNote,
    /// `invalid_places`.
    InvalidPlaces,
    /// `invalid_query`.
    InvalidQuery,
    /// `invalid_rankings`.
    InvalidRankings,
    /// `invalid_release`.
    InvalidRelease,
    /// `invalid_response`.
    InvalidResponse,
    /// `invalid_role`.
    InvalidRole,
    /// `invalid_round`.
    InvalidRound,
    /// `invalid_sample`.
    InvalidSample,
    /// `invalid_scores`.
    InvalidScores,
    /// `invalid_selection`.
    InvalidSelection,
    /// `invalid_setting`.
    InvalidSetting,
    /// `invalid_settings`.
    InvalidSettings,
    /// `invalid_temperature`.
    InvalidTemperature,
    /// `invalid_text`.
    InvalidText,
    /// `invalid_time`.
    InvalidTime,
    /// `invalid_upload`.
    InvalidUpload,
    /// `invalid_value`.
    InvalidValue,
    /// `invalid_worker_id`.
    InvalidWorkerId,
    /// `item_not_in_batch`.
    ItemNotInBatch,
    /// `item_not_in_campaign`.
    ItemNotInCampaign,
    /// `missing_amount`.
    MissingAmount,
    /// `missing_image`.
    MissingImage,
    /// `missing_reason`.
    MissingReason,
    /// `missing_worker_id`.
    MissingWorkerId,
    /// `no_rounds`.
    NoRounds,
    /// `no_scores`.
    NoScores,
    /// `no_workers`.
    NoWorkers,
    /// `passwords_differ`.
    PasswordsDiffer,
    /// `review_needs_experts`.
    ReviewNeedsExperts,
    /// `same_release`.
    SameRelease,
    /// `too_long`.
    TooLong,
    /// `unknown_choice`.
    UnknownChoice,
    /// `unknown_image`.
    UnknownImage,
    /// `unknown_kind`.
    UnknownKind,
    /// `unknown_question`.
    UnknownQuestion,
    /// `unsupported_image`.
    UnsupportedImage,
    /// `weak_password`.
    WeakPassword,
    /// `wrong_password`.
    WrongPassword,
    /// `wrong_kind`.
    WrongKind,
    /// `invalid_platform_id`.
    InvalidPlatformId,
    /// `invalid_platform_list`.
    InvalidPlatformList,
    // 429 Too Many Requests
    /// `rate_limited`.
    RateLimited,
    /// `too_many_joins`.
    TooManyJoins,
    // 500 Internal Server Error
    /// `internal`.
    Internal,
    // 503 Service Unavailable
    /// `busy`.
    Busy,
    /// `unavailable`.
    Unavailable,
}

impl Code {
    /// The code as clients see it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlreadyAnswered => "already_answered",
            Self::AlreadyExists => "already_exists",
            Self::AlreadySubmitted => "already_submitted",
            Self::AssignmentInProgress => "assignment_in_progress",
            Self::BackgroundRequired => "background_required",
            Self::BadRequest => "bad_request",
            Self::BatchTaken => "batch_taken",
            Self::BatchesExist => "batches_exist",
            Self::BodyTooLarge => "body_too_large",
            Self::Busy => "busy",
            Self::CampaignArchived => "campaign_archived",
            Self::CampaignClosed => "campaign_closed",
            Self::CampaignHasData => "campaign_has_data",
            Self::CampaignNotEmpty => "campaign_not_empty",
            Self::CampaignNotOpen => "campaign_not_open",
            Self::ConfirmChange => "confirm_change",
            Self::ConsentRequired => "consent_required",
            Self::ConstraintViolated => "constraint_violated",
            Self::Csrf => "csrf",
            Self::DuplicateInImport => "duplicate_in_import",
            Self::DuplicateItem => "duplicate_item",
            Self::Forbidden => "forbidden",
            Self::ImageIdClash => "image_id_clash",
            Self::ImageTooLarge => "image_too_large",
            Self::Incomplete => "incomplete",
            Self::Internal => "internal",
            Self::Invalid => "invalid",
            Self::InvalidAmount => "invalid_amount",
            Self::InvalidAssignment => "invalid_assignment",
            Self::InvalidAttention => "invalid_attention",
            Self::InvalidAuthorization => "invalid_authorization",
            Self::InvalidBackground => "invalid_background",
            Self::InvalidBody => "invalid_body",
            Self::InvalidCoco => "invalid_coco",
            Self::InvalidCompletionCode => "invalid_completion_code",
            Self::InvalidCompletionUrl => "invalid_completion_url",
            Self::InvalidConfig => "invalid_config",
            Self::InvalidCsv => "invalid_csv",
            Self::InvalidDeepfashion2 => "invalid_deepfashion2",
            Self::InvalidExpiry => "invalid_expiry",
            Self::InvalidForm => "invalid_form",
            Self::InvalidIdParam => "invalid_id_param",
            Self::InvalidImage => "invalid_image",
            Self::InvalidIntro => "invalid_intro",
            Self::InvalidItem => "invalid_item",
            Self::InvalidLicense => "invalid_license",
            Self::InvalidModel => "invalid_model",
            Self::InvalidName => "invalid_name",
            Self::InvalidNote => "invalid_note",
            Self::InvalidPath => "invalid_path",
            Self::InvalidPlaces => "invalid_places",
            Self::InvalidQuery => "invalid_query",
            Self::InvalidRankings => "invalid_rankings",
            Self::InvalidRelease => "invalid_release",
            Self::InvalidResponse => "invalid_response",
            Self::InvalidRole => "invalid_role",
            Self::InvalidRound => "invalid_round",
            Self::InvalidSample => "invalid_sample",
            Self::InvalidScores => "invalid_scores",
            Self::InvalidSelection => "invalid_selection",
            Self::InvalidSetting => "invalid_setting",
            Self::InvalidSettings => "invalid_settings",
            Self::InvalidTemperature => "invalid_temperature",
            Self::InvalidText => "invalid_text",
            Self::InvalidTime => "invalid_time",
            Self::InvalidUpload => "invalid_upload",
            Self::InvalidValue => "invalid_value",
            Self::InvalidWorkerId => "invalid_worker_id",
            Self::InvitationEnded => "invitation_ended",
            Self::InvitationFull => "invitation_full",
            Self::PlatformSessionRequired => "platform_session_required",
            Self::InvalidPlatformId => "invalid_platform_id",
            Self::InvalidPlatformList => "invalid_platform_list",
            Self::TooManyJoins => "too_many_joins",
            Self::InvitationRevoked => "invitation_revoked",
            Self::ItemNotInBatch => "item_not_in_batch",
            Self::ItemNotInCampaign => "item_not_in_campaign",
            Self::LeaseExpired => "lease_expired",
            Self::MalformedJson => "malformed_json",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::MissingAmount => "missing_amount",
            Self::MissingImage => "missing_image",
            Self::MissingReason => "missing_reason",
            Self::MissingWorkerId => "missing_worker_id",
            Self::LastAdmin => "last_admin",
            Self::NameTaken => "name_taken",
            Self::NoBatches => "no_batches",
            Self::NoItems => "no_items",
            Self::NoOntology => "no_ontology",
            Self::NoRounds => "no_rounds",
            Self::NoScores => "no_scores",
            Self::NoSuspects => "no_suspects",
            Self::NoWorkers => "no_workers",
            Self::NotACrowdCampaign => "not_a_crowd_campaign",
            Self::NotAnExpertCampaign => "not_an_expert_campaign",
            Self::NotFound => "not_found",
            Self::NothingToBatch => "nothing_to_batch",
            Self::PasswordsDiffer => "passwords_differ",
            Self::RateLimited => "rate_limited",
            Self::ReviewNeedsExperts => "review_needs_experts",
            Self::SameRelease => "same_release",
            Self::SampleTooLarge => "sample_too_large",
            Self::SignedInAsStaff => "signed_in_as_staff",
            Self::Timeout => "timeout",
            Self::TooLong => "too_long",
            Self::Unauthenticated => "unauthenticated",
            Self::Unavailable => "unavailable",
            Self::UnknownChoice => "unknown_choice",
            Self::UnknownImage => "unknown_image",
            Self::UnknownKind => "unknown_kind",
            Self::UnknownQuestion => "unknown_question",
            Self::UnreadableBody => "unreadable_body",
            Self::UnreadableUpload => "unreadable_upload",
            Self::UnsupportedImage => "unsupported_image",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::WeakPassword => "weak_password",
            Self::WrongPassword => "wrong_password",
            Self::WrongKind => "wrong_kind",
        }
    }

    /// The HTTP status this code is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            Self::BadRequest
            | Self::InvalidPath
            | Self::MalformedJson
            | Self::UnreadableBody
            | Self::UnreadableUpload => StatusCode::BAD_REQUEST,
            // A credential that is not a bearer token is no credential (RFC 7235).
            Self::Unauthenticated | Self::InvalidAuthorization => StatusCode::UNAUTHORIZED,
            Self::Csrf | Self::Forbidden => StatusCode::FORBIDDEN,
            // A kind's route on another kind's campaign: there is no campaign
            // of that kind with the id.
            Self::NotFound | Self::WrongKind => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::AlreadyAnswered
            | Self::AlreadyExists
            | Self::AlreadySubmitted
            | Self::AssignmentInProgress
            | Self::BatchTaken
            | Self::BatchesExist
            | Self::CampaignArchived
            | Self::CampaignClosed
            | Self::CampaignHasData
            | Self::CampaignNotEmpty
            | Self::CampaignNotOpen
            | Self::ConfirmChange
            | Self::DuplicateItem
            | Self::Incomplete
            | Self::InvitationEnded
            | Self::InvitationFull
            | Self::PlatformSessionRequired
            | Self::InvitationRevoked
            | Self::LastAdmin
            | Self::LeaseExpired
            | Self::NameTaken
            | Self::NoBatches
            | Self::NoItems
            | Self::NoOntology
            | Self::NoSuspects
            | Self::NotACrowdCampaign
            | Self::NotAnExpertCampaign
            | Self::NothingToBatch
            | Self::SampleTooLarge
            | Self::SignedInAsStaff => StatusCode::CONFLICT,
            Self::BodyTooLarge | Self::ImageTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::BackgroundRequired
            | Self::ConsentRequired
            | Self::ConstraintViolated
            | Self::DuplicateInImport
            | Self::ImageIdClash
            | Self::Invalid
            | Self::InvalidAmount
            | Self::InvalidAssignment
            | Self::InvalidAttention
            | Self::InvalidBackground
            | Self::InvalidBody
            | Self::InvalidCoco
            | Self::InvalidCompletionCode
            | Self::InvalidCompletionUrl
            | Self::InvalidConfig
            | Self::InvalidCsv
            | Self::InvalidDeepfashion2
            | Self::InvalidExpiry
            | Self::InvalidForm
            | Self::InvalidIdParam
            | Self::InvalidImage
            | Self::InvalidIntro
            | Self::InvalidItem
            | Self::InvalidLicense
            | Self::InvalidModel
            | Self::InvalidName
            | Self::InvalidNote
            | Self::InvalidPlaces
            | Self::InvalidQuery
            | Self::InvalidRankings
            | Self::InvalidRelease
            | Self::InvalidResponse
            | Self::InvalidRole
            | Self::InvalidRound
            | Self::InvalidSample
            | Self::InvalidScores
            | Self::InvalidSelection
            | Self::InvalidSetting
            | Self::InvalidSettings
            | Self::InvalidTemperature
            | Self::InvalidText
            | Self::InvalidTime
            | Self::InvalidUpload
            | Self::InvalidValue
            | Self::InvalidWorkerId
            | Self::ItemNotInBatch
            | Self::ItemNotInCampaign
            | Self::MissingAmount
            | Self::MissingImage
            | Self::MissingReason
            | Self::MissingWorkerId
            | Self::NoRounds
            | Self::NoScores
            | Self::NoWorkers
            | Self::ReviewNeedsExperts
            | Self::SameRelease
            | Self::TooLong
            | Self::UnknownChoice
            | Self::UnknownImage
            | Self::UnknownKind
            | Self::UnknownQuestion
            | Self::UnsupportedImage
            | Self::WeakPassword
            | Self::WrongPassword
            | Self::InvalidPlatformId
            | Self::InvalidPlatformList
            | Self::PasswordsDiffer => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited | Self::TooManyJoins => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Busy | Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn codes_are_snake_case_and_client_or_server_errors() {
        for code in [Code::InvalidBody, Code::NameTaken, Code::Internal, Code::WrongKind, Code::ImageTooLarge] {
            assert!(code.as_str().chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{code}");
            assert!(code.status().is_client_error() || code.status().is_server_error(), "{code}");
        }
        assert_eq!(Code::ImageTooLarge.status(), axum::http::StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(Code::NameTaken.status(), axum::http::StatusCode::CONFLICT);
    }
}
