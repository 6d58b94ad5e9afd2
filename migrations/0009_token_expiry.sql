-- API tokens may expire.
ALTER TABLE api_tokens ADD COLUMN expires_at TIMESTAMPTZ;
