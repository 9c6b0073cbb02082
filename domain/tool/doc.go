// Package tool holds the rules for MCP tool definitions: the canonical JSON
// form of an input schema, the pinning hash, the supported-schema check,
// strict argument validation, model-facing names and descriptions.
package tool
