DROP TABLE IF EXISTS oauth_connect_states;
DELETE FROM mcp_servers WHERE auth_type IN ('oauth_client_credentials', 'oauth_authorization_code');
ALTER TABLE mcp_servers DROP COLUMN IF EXISTS auth_public;
ALTER TABLE mcp_servers DROP CONSTRAINT mcp_servers_auth_type_check;
ALTER TABLE mcp_servers ADD CONSTRAINT mcp_servers_auth_type_check CHECK (auth_type IN ('none', 'bearer', 'header'));
