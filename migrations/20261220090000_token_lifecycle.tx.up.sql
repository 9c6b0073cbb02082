-- API tokens as an operator needs them (docs/tokens.md): a label to tell
-- them apart and an optional expiry. A token past expires_at fails at
-- once on every replica (the lookup compares with now(), nothing is
-- cached), and the web sessions opened with it end with it (the session
-- lookup joins the token and compares the same way). Revoking a token
-- deletes its row; its sessions go with it (ON DELETE CASCADE).
ALTER TABLE api_tokens
    ADD COLUMN label text NOT NULL DEFAULT ''
        CHECK (char_length(label) <= 100),
    ADD COLUMN expires_at timestamptz,
    ADD CONSTRAINT api_tokens_expiry_check CHECK (expires_at IS NULL OR expires_at > created_at);
