-- The cache hint (ttlMs, protocol 2026-07-28) of a server's last
-- listing, which may shorten the recheck between reviews; NULL: none. A
-- nullable column without a default changes no row.
ALTER TABLE mcp_servers ADD COLUMN list_ttl_ms integer;
