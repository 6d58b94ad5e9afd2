//! Every error code a client can receive, in one table: each row is a
//! variant, its stable string (the `code` of `{"error": {"code",
//! "message"}}`) and, by its group, its HTTP status. Codes are matched as
//! values, never as strings; adding one means adding a row.

use axum::http::StatusCode;

/// Declares [`Code`] from its table: one group per status, one row per code.
macro_rules! codes {
    ($( $status:ident { $( $variant:ident = $text:literal, )* } )*) => {
        /// A stable, machine-readable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $( $( #[doc = concat!("`", $text, "`.")] $variant, )* )*
        }

        impl Code {
            /// Every code, in the table's order.
            pub const ALL: &'static [Code] = &[$( $( Code::$variant, )* )*];

            /// The code as clients see it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $( Self::$variant => $text, )* )*
                }
            }

            /// The HTTP status this code is sent with.
            pub fn status(self) -> StatusCode {
                match self {
                    $( $( Self::$variant => StatusCode::$status, )* )*
                }
            }
        }
    };
}

codes! {
    BAD_REQUEST {
        BadRequest = "bad_request",
        InvalidPath = "invalid_path",
        MalformedJson = "malformed_json",
        UnreadableBody = "unreadable_body",
        UnreadableUpload = "unreadable_upload",
    }
    UNAUTHORIZED {
        InvalidAuthorization = "invalid_authorization",
        Unauthenticated = "unauthenticated",
    }
    FORBIDDEN {
        Csrf = "csrf",
        Forbidden = "forbidden",
    }
    NOT_FOUND {
        NotFound = "not_found",
        WrongKind = "wrong_kind",
    }
    METHOD_NOT_ALLOWED {
        MethodNotAllowed = "method_not_allowed",
    }
    REQUEST_TIMEOUT {
        Timeout = "timeout",
    }
    CONFLICT {
        AlreadyAnswered = "already_answered",
        AlreadyExists = "already_exists",
        AlreadySubmitted = "already_submitted",
        AssignmentInProgress = "assignment_in_progress",
        BatchTaken = "batch_taken",
        BatchesExist = "batches_exist",
        CampaignArchived = "campaign_archived",
        CampaignClosed = "campaign_closed",
        CampaignHasData = "campaign_has_data",
        CampaignNotEmpty = "campaign_not_empty",
        CampaignNotOpen = "campaign_not_open",
        ConfirmChange = "confirm_change",
        DuplicateItem = "duplicate_item",
        Incomplete = "incomplete",
        InvitationEnded = "invitation_ended",
        InvitationFull = "invitation_full",
        InvitationRevoked = "invitation_revoked",
        LastAdmin = "last_admin",
        LeaseExpired = "lease_expired",
        NameTaken = "name_taken",
        NoBatches = "no_batches",
        NoItems = "no_items",
        NoOntology = "no_ontology",
        NoSuspects = "no_suspects",
        NotACrowdCampaign = "not_a_crowd_campaign",
        NotAnExpertCampaign = "not_an_expert_campaign",
        NothingToBatch = "nothing_to_batch",
        PlatformSessionRequired = "platform_session_required",
        SampleTooLarge = "sample_too_large",
        SignedInAsStaff = "signed_in_as_staff",
        StoredConfigInvalid = "stored_config_invalid",
    }
    PAYLOAD_TOO_LARGE {
        BodyTooLarge = "body_too_large",
        ImageTooLarge = "image_too_large",
    }
    UNSUPPORTED_MEDIA_TYPE {
        UnsupportedMediaType = "unsupported_media_type",
    }
    UNPROCESSABLE_ENTITY {
        BackgroundRequired = "background_required",
        ConsentRequired = "consent_required",
        ConstraintViolated = "constraint_violated",
        DuplicateInImport = "duplicate_in_import",
        ImageIdClash = "image_id_clash",
        Invalid = "invalid",
        InvalidAmount = "invalid_amount",
        InvalidAssignment = "invalid_assignment",
        InvalidAttention = "invalid_attention",
        InvalidBackground = "invalid_background",
        InvalidBody = "invalid_body",
        InvalidCoco = "invalid_coco",
        InvalidCompletionCode = "invalid_completion_code",
        InvalidCompletionUrl = "invalid_completion_url",
        InvalidConfig = "invalid_config",
        InvalidCsv = "invalid_csv",
        InvalidDeepfashion2 = "invalid_deepfashion2",
        InvalidExpiry = "invalid_expiry",
        InvalidForm = "invalid_form",
        InvalidIdParam = "invalid_id_param",
        InvalidImage = "invalid_image",
        InvalidIntro = "invalid_intro",
        InvalidItem = "invalid_item",
        InvalidLicense = "invalid_license",
        InvalidModel = "invalid_model",
        InvalidName = "invalid_name",
        InvalidNote = "invalid_note",
        InvalidPlaces = "invalid_places",
        InvalidPlatformId = "invalid_platform_id",
        InvalidPlatformList = "invalid_platform_list",
        InvalidQuery = "invalid_query",
        InvalidRankings = "invalid_rankings",
        InvalidRelease = "invalid_release",
        InvalidResponse = "invalid_response",
        InvalidRole = "invalid_role",
        InvalidRound = "invalid_round",
        InvalidSample = "invalid_sample",
        InvalidScores = "invalid_scores",
        InvalidSelection = "invalid_selection",
        InvalidSetting = "invalid_setting",
        InvalidSettings = "invalid_settings",
        InvalidTemperature = "invalid_temperature",
        InvalidText = "invalid_text",
        InvalidTime = "invalid_time",
        InvalidUpload = "invalid_upload",
        InvalidValue = "invalid_value",
        InvalidWorkerId = "invalid_worker_id",
        ItemNotInBatch = "item_not_in_batch",
        ItemNotInCampaign = "item_not_in_campaign",
        MissingAmount = "missing_amount",
        MissingImage = "missing_image",
        MissingReason = "missing_reason",
        MissingWorkerId = "missing_worker_id",
        NoRounds = "no_rounds",
        NoScores = "no_scores",
        NoWorkers = "no_workers",
        PasswordsDiffer = "passwords_differ",
        ReviewNeedsExperts = "review_needs_experts",
        SameRelease = "same_release",
        TooLong = "too_long",
        UnknownChoice = "unknown_choice",
        UnknownImage = "unknown_image",
        UnknownKind = "unknown_kind",
        UnknownQuestion = "unknown_question",
        UnsupportedImage = "unsupported_image",
        WeakPassword = "weak_password",
        WrongPassword = "wrong_password",
    }
    TOO_MANY_REQUESTS {
        RateLimited = "rate_limited",
        TooManyJoins = "too_many_joins",
    }
    INTERNAL_SERVER_ERROR {
        Internal = "internal",
    }
    SERVICE_UNAVAILABLE {
        Busy = "busy",
        Unavailable = "unavailable",
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn every_code_has_its_own_string() {
        let mut seen = std::collections::HashSet::new();
        assert!(Code::ALL.iter().all(|c| seen.insert(c.as_str())), "a string names two codes");
        assert!(Code::ALL.len() > 100);
    }

    #[test]
    fn codes_are_snake_case_and_client_or_server_errors() {
        for &code in Code::ALL {
            assert!(code.as_str().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{code}");
            assert!(code.as_str().starts_with(|c: char| c.is_ascii_lowercase()), "{code}");
            assert!(code.status().is_client_error() || code.status().is_server_error(), "{code}");
        }
        assert_eq!(Code::ImageTooLarge.status(), axum::http::StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(Code::NameTaken.status(), axum::http::StatusCode::CONFLICT);
    }
}
