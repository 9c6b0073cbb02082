-- The older code ignores neither column's meaning safely: an expired
-- token would work again, so expired tokens are deleted before the
-- columns go.
DELETE FROM api_tokens WHERE expires_at IS NOT NULL AND expires_at <= now();
ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_expiry_check;
ALTER TABLE api_tokens DROP COLUMN IF EXISTS expires_at;
ALTER TABLE api_tokens DROP COLUMN IF EXISTS label;
