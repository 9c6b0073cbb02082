// gen.mjs writes zod3.json and zod4.json, the schema corpus of the
// TypeScript MCP SDKs' generators (README.md): for each flat tool
// signature of the tables below, the input schema exactly as the SDK puts
// it in tools/list, with the verdict and the argument tables the schema
// rule of domain/tool must meet.
//
//   node tools/schemacorpus/gen.mjs [OUTDIR]
//
// OUTDIR defaults to domain/tool/testdata/schemas. Run `make schema-corpus`
// rather than this script; tools/schemacorpus/corpus_test.go fails when the
// committed files differ from what this script writes.
//
// Each case's source is evaluated with `z` bound to the generator's zod, so
// the source text shown in the corpus is the code that built the schema.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { z as z3 } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import * as z4 from 'zod4';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = resolve(process.argv[2] ?? join(here, '..', '..', 'domain', 'tool', 'testdata', 'schemas'));

// installed returns the version of node_modules/<dir> and fails unless it
// is the one package-lock.json pins (a stale node_modules would write a
// corpus of other versions).
const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8'));
function installed(dir) {
	const want = lock.packages[`node_modules/${dir}`]?.version;
	let got;
	try {
		got = JSON.parse(readFileSync(join(here, 'node_modules', dir, 'package.json'), 'utf8')).version;
	} catch {
		got = undefined;
	}
	if (!want || got !== want) {
		console.error(`gen.mjs: node_modules/${dir} is ${got ?? 'missing'}, package-lock.json pins ${want}: run npm ci --prefix tools/schemacorpus --no-audit --no-fund --ignore-scripts`);
		process.exit(1);
	}
	return got;
}

// The SDK versions whose calls the emitters below reproduce; the SDKs
// themselves are not installed (their sources were read to write these).
const SDK1 = '@modelcontextprotocol/sdk@1.32.2';
const SDK2 = '@modelcontextprotocol/server@2.4.0';

// emitZod3 is what SDK1's McpServer puts in tools/list for a zod 3 input
// schema (dist/esm/server/mcp.js, toJsonSchemaCompat in
// server/zod-json-schema-compat.js): zodToJsonSchema with the library's
// defaults (target jsonSchema7, $refStrategy root) but strictUnions.
function emitZod3(schema) {
	return zodToJsonSchema(schema, { strictUnions: true, pipeStrategy: 'input' });
}

// emitZod4 is what SDK2's McpServer puts in tools/list for a zod 4 input
// schema (standardSchemaToJsonSchema in its dist/src-*.mjs): the Standard
// JSON Schema method of zod >= 4.2 with target draft-2020-12, io input
// (the same as z.toJSONSchema(schema, { target: 'draft-2020-12', io:
// 'input' })), spread into an object that starts with type object.
function emitZod4(schema) {
	const result = schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
	if (result.type !== undefined && result.type !== 'object') {
		throw new Error(`not an object schema: ${JSON.stringify(result.type)}`);
	}
	return { type: 'object', ...result };
}

// Argument values used in several tables.
const uuid = '123e4567-e89b-12d3-a456-426614174000';

// Each case: idiom, source (a zod expression with z free), supported and
// reason (a substring of the expected refusal), valid and invalid argument
// objects (each invalid one breaks exactly one rule).
const zod3Cases = [
	{
		idiom: 'plain-scalars',
		source: 'z.object({ query: z.string(), ratio: z.number(), exact: z.boolean() })',
		supported: true,
		valid: [
			{ query: 'golang', ratio: 0.5, exact: true },
			{ query: '', ratio: -3, exact: false },
		],
		invalid: [
			{ query: 5, ratio: 0.5, exact: true },
			{ query: 'golang', ratio: '0.5', exact: true },
			{ query: 'golang', ratio: 0.5, exact: 'true' },
			{ query: null, ratio: 0.5, exact: true },
			{ ratio: 0.5, exact: true },
			{ query: 'golang', ratio: 0.5, exact: true, extra: 1 },
		],
	},
	{
		idiom: 'integer',
		source: 'z.object({ count: z.number().int() })',
		supported: true,
		valid: [{ count: 0 }, { count: -7 }, { count: 9007199254740992 }],
		invalid: [{ count: 1.5 }, { count: '3' }, { count: null }, {}],
	},
	{
		idiom: 'optional',
		source: 'z.object({ query: z.string(), limit: z.number().int().optional() })',
		supported: true,
		valid: [{ query: 'a' }, { query: 'a', limit: 10 }],
		invalid: [{ query: 'a', limit: null }, { query: 'a', limit: 2.5 }, { limit: 10 }],
	},
	{
		idiom: 'nullable-string',
		source: 'z.object({ label: z.string().nullable() })',
		supported: true,
		valid: [{ label: 'bug' }, { label: null }],
		invalid: [{ label: 5 }, {}],
	},
	{
		idiom: 'nullable-integer',
		source: 'z.object({ page: z.number().int().min(1).nullable() })',
		supported: true,
		valid: [{ page: 1 }, { page: null }],
		invalid: [{ page: 0 }, { page: 1.5 }, { page: '1' }, {}],
	},
	{
		idiom: 'nullish',
		source: 'z.object({ cursor: z.string().nullish() })',
		supported: true,
		valid: [{}, { cursor: null }, { cursor: 'abc' }],
		invalid: [{ cursor: 1 }],
	},
	{
		idiom: 'default',
		source: 'z.object({ limit: z.number().int().default(10), verbose: z.boolean().default(false) })',
		supported: true,
		valid: [{}, { limit: 3 }, { verbose: true }],
		invalid: [{ limit: null }, { limit: 2.5 }, { verbose: 'yes' }],
	},
	{
		idiom: 'default-null',
		source: 'z.object({ label: z.string().nullable().default(null) })',
		supported: true,
		valid: [{}, { label: null }, { label: 'x' }],
		invalid: [{ label: false }],
	},
	{
		idiom: 'description',
		source: 'z.object({ query: z.string().describe("Search terms") })',
		supported: true,
		valid: [{ query: 'golang' }],
		invalid: [{ query: 1 }],
	},
	{
		idiom: 'int-bounds',
		source: 'z.object({ n: z.number().int().min(1).max(100) })',
		supported: true,
		valid: [{ n: 1 }, { n: 100 }, { n: 42 }],
		invalid: [{ n: 0 }, { n: 101 }, { n: 50.5 }],
	},
	{
		idiom: 'exclusive-bounds',
		source: 'z.object({ ratio: z.number().gt(0).lt(1) })',
		supported: true,
		valid: [{ ratio: 0.5 }, { ratio: 1e-9 }],
		invalid: [{ ratio: 0 }, { ratio: 1 }, { ratio: -0.5 }],
	},
	{
		idiom: 'multipleOf',
		source: 'z.object({ price: z.number().multipleOf(0.01), step: z.number().int().multipleOf(5) })',
		supported: true,
		valid: [
			{ price: 19.99, step: 5 },
			{ price: 0.07, step: 0 },
			{ price: 3, step: -15 },
		],
		invalid: [
			{ price: 0.001, step: 5 },
			{ price: 19.99, step: 7 },
		],
	},
	{
		idiom: 'string-length',
		source: 'z.object({ name: z.string().min(2).max(8), code: z.string().length(3) })',
		supported: true,
		valid: [
			{ name: 'ab', code: 'abc' },
			{ name: 'abcdefgh', code: 'xyz' },
			{ name: 'éé', code: 'äöü' },
		],
		invalid: [
			{ name: 'a', code: 'abc' },
			{ name: 'abcdefghi', code: 'abc' },
			{ name: 'ab', code: 'ab' },
			{ name: 'ab', code: 'abcd' },
		],
	},
	{
		idiom: 'pattern',
		source: 'z.object({ code: z.string().regex(/^[A-Z]{3}-\\d{4}$/) })',
		supported: true,
		valid: [{ code: 'ABC-1234' }],
		invalid: [{ code: 'abc-1234' }, { code: 'ABC-123' }, { code: 'xABC-1234' }],
	},
	{
		idiom: 'pattern-flag-dropped',
		source: 'z.object({ word: z.string().regex(/^[a-z]+$/i) })',
		supported: true,
		valid: [{ word: 'abc' }],
		invalid: [{ word: 'ABC' }, { word: 'a1' }],
	},
	{
		idiom: 'pattern-unicode-property',
		source: 'z.object({ word: z.string().regex(/^\\p{L}+$/u) })',
		supported: false,
		reason: 'Unicode property',
	},
	{
		idiom: 'pattern-leading-lookahead',
		source: 'z.object({ password: z.string().regex(/^(?=.*\\d)[a-z\\d]{8,}$/) })',
		supported: true,
		valid: [{ password: 'abcdefg1' }, { password: '12345678' }],
		invalid: [{ password: 'abcdefgh' }, { password: 'abc1' }, { password: 'ABCDEFG1' }],
	},
	{
		idiom: 'pattern-inner-lookahead',
		source: 'z.object({ word: z.string().regex(/^a(?=b)/) })',
		supported: false,
		reason: 'lookaround',
	},
	{
		idiom: 'format-email',
		source: 'z.object({ to: z.string().email() })',
		supported: true,
		valid: [{ to: 'dev@example.com' }],
		invalid: [{ to: 'not-an-email' }, { to: 'dev@@example.com' }],
	},
	{
		idiom: 'format-url',
		source: 'z.object({ url: z.string().url() })',
		supported: true,
		valid: [{ url: 'https://example.com/a?b=c' }, { url: 'mailto:dev@example.com' }],
		invalid: [{ url: 'example.com' }, { url: 'not a url' }],
	},
	{
		idiom: 'format-uuid',
		source: 'z.object({ id: z.string().uuid() })',
		supported: true,
		valid: [{ id: uuid }],
		invalid: [{ id: 'not-a-uuid' }, { id: '123e4567-e89b-12d3-a456-42661417400' }],
	},
	{
		idiom: 'format-date-time',
		source: 'z.object({ since: z.string().datetime() })',
		supported: true,
		valid: [{ since: '2024-05-06T07:08:09Z' }, { since: '2024-05-06T07:08:09.123Z' }],
		invalid: [{ since: '2024-05-06' }, { since: '2024-02-30T00:00:00Z' }, { since: 'yesterday' }],
	},
	{
		idiom: 'format-date',
		source: 'z.object({ day: z.string().date() })',
		supported: true,
		valid: [{ day: '2024-02-29' }],
		invalid: [{ day: '2023-02-29' }, { day: '2024-13-01' }, { day: '2024-05-06T07:08:09Z' }],
	},
	{
		idiom: 'format-time',
		source: 'z.object({ at: z.string().time() })',
		supported: true,
		valid: [{ at: '07:08:09Z' }, { at: '23:59:59.5+02:00' }],
		invalid: [{ at: '25:00:00Z' }, { at: 'noon' }],
	},
	{
		idiom: 'format-ipv4',
		source: 'z.object({ addr: z.string().ip({ version: "v4" }) })',
		supported: true,
		valid: [{ addr: '192.0.2.1' }],
		invalid: [{ addr: '256.0.0.1' }, { addr: '192.0.2' }, { addr: '2001:db8::1' }],
	},
	{
		idiom: 'format-ipv6',
		source: 'z.object({ addr: z.string().ip({ version: "v6" }) })',
		supported: true,
		valid: [{ addr: '2001:db8::1' }, { addr: '::1' }],
		invalid: [{ addr: '2001:db8::g' }, { addr: '192.0.2.1' }],
	},
	{
		idiom: 'format-ip-any',
		source: 'z.object({ addr: z.string().ip() })',
		supported: false,
		reason: 'anyOf',
	},
	{
		idiom: 'enum',
		source: 'z.object({ order: z.enum(["asc", "desc"]) })',
		supported: true,
		valid: [{ order: 'asc' }, { order: 'desc' }],
		invalid: [{ order: 'ASC' }, { order: 'up' }, { order: 1 }],
	},
	{
		idiom: 'number-enum',
		source: 'z.object({ level: z.union([z.literal(1), z.literal(2), z.literal(3)]) })',
		supported: true,
		valid: [{ level: 1 }, { level: 3 }],
		invalid: [{ level: 4 }, { level: '1' }, { level: 1.5 }],
	},
	{
		idiom: 'native-enum',
		source: 'z.object({ priority: z.nativeEnum({ Low: 1, High: 2 }) })',
		supported: true,
		valid: [{ priority: 1 }, { priority: 2 }],
		invalid: [{ priority: 3 }, { priority: 'Low' }],
	},
	{
		idiom: 'literal',
		source: 'z.object({ mode: z.literal("fast") })',
		supported: true,
		valid: [{ mode: 'fast' }],
		invalid: [{ mode: 'slow' }, { mode: 'FAST' }, {}],
	},
	{
		idiom: 'number-literal',
		source: 'z.object({ version: z.literal(2) })',
		supported: true,
		valid: [{ version: 2 }],
		invalid: [{ version: 3 }, { version: '2' }],
	},
	{
		idiom: 'boolean-literal',
		source: 'z.object({ confirm: z.literal(true) })',
		supported: true,
		valid: [{ confirm: true }],
		invalid: [{ confirm: false }, { confirm: 'true' }],
	},
	{
		idiom: 'reused-schema',
		source: '(() => { const Color = z.enum(["red", "green"]); return z.object({ color: Color, fallback: Color.optional() }); })()',
		supported: true,
		valid: [{ color: 'red' }, { color: 'green', fallback: 'red' }],
		invalid: [{ color: 'red', fallback: 'blue' }, { fallback: 'red' }, { color: 'red', fallback: null }],
	},
	{
		idiom: 'passthrough-object',
		source: 'z.object({ query: z.string() }).passthrough()',
		supported: true,
		valid: [{ query: 'a' }],
		invalid: [{ query: 'a', extra: 1 }, {}],
	},
	{
		idiom: 'nested-object',
		source: 'z.object({ filter: z.object({ author: z.string() }) })',
		supported: false,
		reason: 'nested object',
	},
	{
		idiom: 'array',
		source: 'z.object({ tags: z.array(z.string()) })',
		supported: false,
		reason: 'array',
	},
	{
		idiom: 'union',
		source: 'z.object({ key: z.union([z.string(), z.number()]) })',
		supported: false,
		reason: 'type union',
	},
	{
		idiom: 'intersection',
		source: 'z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() }))',
		supported: false,
		reason: 'allOf',
	},
	{
		idiom: 'record',
		source: 'z.object({ labels: z.record(z.string()) })',
		supported: false,
		reason: 'nested object',
	},
];

const zod4Cases = [
	{
		idiom: 'plain-scalars',
		source: 'z.object({ query: z.string(), ratio: z.number(), exact: z.boolean() })',
		supported: true,
		valid: [
			{ query: 'golang', ratio: 0.5, exact: true },
			{ query: '', ratio: -3, exact: false },
		],
		invalid: [
			{ query: 5, ratio: 0.5, exact: true },
			{ query: 'golang', ratio: '0.5', exact: true },
			{ query: 'golang', ratio: 0.5, exact: 'true' },
			{ query: null, ratio: 0.5, exact: true },
			{ ratio: 0.5, exact: true },
			{ query: 'golang', ratio: 0.5, exact: true, extra: 1 },
		],
	},
	{
		idiom: 'integer',
		source: 'z.object({ count: z.number().int() })',
		supported: true,
		valid: [{ count: 0 }, { count: -7 }, { count: 9007199254740991 }, { count: -9007199254740991 }],
		invalid: [{ count: 1.5 }, { count: '3' }, { count: 9007199254740992 }, { count: -9007199254740992 }, {}],
	},
	{
		idiom: 'int32',
		source: 'z.object({ offset: z.int32() })',
		supported: true,
		valid: [{ offset: 2147483647 }, { offset: -2147483648 }],
		invalid: [{ offset: 2147483648 }, { offset: 0.5 }],
	},
	{
		idiom: 'optional',
		source: 'z.object({ query: z.string(), limit: z.number().int().optional() })',
		supported: true,
		valid: [{ query: 'a' }, { query: 'a', limit: 10 }],
		invalid: [{ query: 'a', limit: null }, { query: 'a', limit: 2.5 }, { limit: 10 }],
	},
	{
		idiom: 'nullable-string',
		source: 'z.object({ label: z.string().nullable() })',
		supported: true,
		valid: [{ label: 'bug' }, { label: null }],
		invalid: [{ label: 5 }, {}],
	},
	{
		idiom: 'nullable-integer',
		source: 'z.object({ page: z.number().int().min(1).nullable() })',
		supported: true,
		valid: [{ page: 1 }, { page: null }, { page: 9007199254740991 }],
		invalid: [{ page: 0 }, { page: 1.5 }, { page: '1' }, { page: 9007199254740992 }, {}],
	},
	{
		idiom: 'nullish',
		source: 'z.object({ cursor: z.string().nullish() })',
		supported: true,
		valid: [{}, { cursor: null }, { cursor: 'abc' }],
		invalid: [{ cursor: 1 }],
	},
	{
		idiom: 'default',
		source: 'z.object({ limit: z.number().int().default(10), verbose: z.boolean().default(false) })',
		supported: true,
		valid: [{}, { limit: 3 }, { verbose: true }],
		invalid: [{ limit: null }, { limit: 2.5 }, { verbose: 'yes' }],
	},
	{
		idiom: 'default-null',
		source: 'z.object({ label: z.string().nullable().default(null) })',
		supported: true,
		valid: [{}, { label: null }, { label: 'x' }],
		invalid: [{ label: false }],
	},
	{
		idiom: 'annotations',
		source: 'z.object({ query: z.string().describe("Search terms").meta({ title: "Query", examples: ["golang"], deprecated: true }) })',
		supported: true,
		valid: [{ query: 'golang' }],
		invalid: [{ query: 1 }],
	},
	{
		idiom: 'int-bounds',
		source: 'z.object({ n: z.number().int().min(1).max(100) })',
		supported: true,
		valid: [{ n: 1 }, { n: 100 }, { n: 42 }],
		invalid: [{ n: 0 }, { n: 101 }, { n: 50.5 }],
	},
	{
		idiom: 'positive-int',
		source: 'z.object({ n: z.number().int().positive() })',
		supported: true,
		valid: [{ n: 1 }, { n: 9007199254740991 }],
		invalid: [{ n: 0 }, { n: 9007199254740992 }, { n: 1.5 }],
	},
	{
		idiom: 'exclusive-bounds',
		source: 'z.object({ ratio: z.number().gt(0).lt(1) })',
		supported: true,
		valid: [{ ratio: 0.5 }, { ratio: 1e-9 }],
		invalid: [{ ratio: 0 }, { ratio: 1 }, { ratio: -0.5 }],
	},
	{
		idiom: 'multipleOf',
		source: 'z.object({ price: z.number().multipleOf(0.01), step: z.number().int().multipleOf(5) })',
		supported: true,
		valid: [
			{ price: 19.99, step: 5 },
			{ price: 0.07, step: 0 },
			{ price: 3, step: -15 },
		],
		invalid: [
			{ price: 0.001, step: 5 },
			{ price: 19.99, step: 7 },
		],
	},
	{
		idiom: 'string-length',
		source: 'z.object({ name: z.string().min(2).max(8), code: z.string().length(3) })',
		supported: true,
		valid: [
			{ name: 'ab', code: 'abc' },
			{ name: 'abcdefgh', code: 'xyz' },
			{ name: 'éé', code: 'äöü' },
		],
		invalid: [
			{ name: 'a', code: 'abc' },
			{ name: 'abcdefghi', code: 'abc' },
			{ name: 'ab', code: 'ab' },
			{ name: 'ab', code: 'abcd' },
		],
	},
	{
		idiom: 'pattern',
		source: 'z.object({ code: z.string().regex(/^[A-Z]{3}-\\d{4}$/) })',
		supported: true,
		valid: [{ code: 'ABC-1234' }],
		invalid: [{ code: 'abc-1234' }, { code: 'ABC-123' }, { code: 'xABC-1234' }],
	},
	{
		idiom: 'pattern-unicode-property',
		source: 'z.object({ word: z.string().regex(/^\\p{L}+$/u) })',
		supported: false,
		reason: 'Unicode property',
	},
	{
		idiom: 'pattern-leading-lookahead',
		source: 'z.object({ password: z.string().regex(/^(?=.*\\d)[a-z\\d]{8,}$/) })',
		supported: true,
		valid: [{ password: 'abcdefg1' }, { password: '12345678' }],
		invalid: [{ password: 'abcdefgh' }, { password: 'abc1' }, { password: 'ABCDEFG1' }],
	},
	{
		idiom: 'pattern-inner-lookahead',
		source: 'z.object({ word: z.string().regex(/^a(?=b)/) })',
		supported: false,
		reason: 'lookaround',
	},
	{
		idiom: 'starts-with',
		source: 'z.object({ ref: z.string().startsWith("refs/") })',
		supported: true,
		valid: [{ ref: 'refs/heads/main' }, { ref: 'refs/' }],
		invalid: [{ ref: 'heads/main' }, { ref: 'xrefs/' }],
	},
	{
		idiom: 'format-email',
		source: 'z.object({ to: z.email() })',
		supported: true,
		valid: [{ to: 'dev@example.com' }, { to: 'first.last+tag@mail.example.org' }],
		invalid: [{ to: 'not-an-email' }, { to: 'dev@example' }, { to: 'dev@@example.com' }],
	},
	{
		idiom: 'format-url',
		source: 'z.object({ url: z.url() })',
		supported: true,
		valid: [{ url: 'https://example.com/a?b=c' }, { url: 'mailto:dev@example.com' }],
		invalid: [{ url: 'example.com' }, { url: 'not a url' }],
	},
	{
		idiom: 'format-uuid',
		source: 'z.object({ id: z.uuid() })',
		supported: true,
		valid: [{ id: uuid }, { id: '00000000-0000-0000-0000-000000000000' }],
		invalid: [{ id: 'not-a-uuid' }, { id: '123e4567-e89b-02d3-a456-426614174000' }, { id: '123e4567-e89b-12d3-a456-42661417400' }],
	},
	{
		idiom: 'format-date-time',
		source: 'z.object({ since: z.iso.datetime() })',
		supported: true,
		valid: [{ since: '2024-05-06T07:08:09Z' }, { since: '2024-05-06T07:08:09.123Z' }],
		invalid: [{ since: '2024-05-06T07:08:09+02:00' }, { since: '2024-05-06' }, { since: '2024-02-30T00:00:00Z' }],
	},
	{
		idiom: 'format-date-time-offset',
		source: 'z.object({ since: z.iso.datetime({ offset: true }) })',
		supported: true,
		valid: [{ since: '2024-05-06T07:08:09Z' }, { since: '2024-05-06T07:08:09+02:00' }],
		invalid: [{ since: '2024-05-06T07:08:09' }, { since: '2024-02-30T00:00:00Z' }],
	},
	{
		idiom: 'format-date',
		source: 'z.object({ day: z.iso.date() })',
		supported: true,
		valid: [{ day: '2024-02-29' }],
		invalid: [{ day: '2023-02-29' }, { day: '2024-13-01' }, { day: '2024-05-06T07:08:09Z' }],
	},
	{
		idiom: 'iso-time',
		source: 'z.object({ at: z.iso.time() })',
		supported: true,
		valid: [{ at: '07:08' }, { at: '07:08:09' }, { at: '23:59:59.5' }],
		invalid: [{ at: '07:08:09Z' }, { at: '24:00' }, { at: 'noon' }],
	},
	{
		idiom: 'format-ipv4',
		source: 'z.object({ addr: z.ipv4() })',
		supported: true,
		valid: [{ addr: '192.0.2.1' }],
		invalid: [{ addr: '256.0.0.1' }, { addr: '192.0.2' }, { addr: '2001:db8::1' }],
	},
	{
		idiom: 'format-ipv6',
		source: 'z.object({ addr: z.ipv6() })',
		supported: true,
		valid: [{ addr: '2001:db8::1' }, { addr: '::1' }],
		invalid: [{ addr: '2001:db8::g' }, { addr: '192.0.2.1' }],
	},
	{
		idiom: 'format-hostname',
		source: 'z.object({ host: z.hostname() })',
		supported: true,
		valid: [{ host: 'wiki.example.com' }, { host: 'localhost' }],
		invalid: [{ host: '-bad.example' }, { host: 'a..b' }, { host: 'exa mple.com' }],
	},
	{
		idiom: 'enum',
		source: 'z.object({ order: z.enum(["asc", "desc"]) })',
		supported: true,
		valid: [{ order: 'asc' }, { order: 'desc' }],
		invalid: [{ order: 'ASC' }, { order: 'up' }, { order: 1 }],
	},
	{
		idiom: 'enum-ref',
		source: 'z.object({ color: z.enum(["red", "green", "blue"]).meta({ id: "Color" }), fallback: z.enum(["red", "green", "blue"]).meta({ id: "Fallback" }).nullable() })',
		supported: true,
		valid: [
			{ color: 'red', fallback: null },
			{ color: 'blue', fallback: 'green' },
		],
		invalid: [
			{ color: 'pink', fallback: null },
			{ color: 'red', fallback: 'pink' },
			{ color: null, fallback: null },
			{ color: 'red' },
		],
	},
	{
		idiom: 'number-enum',
		source: 'z.object({ level: z.literal([1, 2, 3]) })',
		supported: true,
		valid: [{ level: 1 }, { level: 3 }],
		invalid: [{ level: 4 }, { level: '1' }, { level: 1.5 }],
	},
	{
		idiom: 'literal',
		source: 'z.object({ mode: z.literal("fast") })',
		supported: true,
		valid: [{ mode: 'fast' }],
		invalid: [{ mode: 'slow' }, { mode: 'FAST' }, {}],
	},
	{
		idiom: 'number-literal',
		source: 'z.object({ version: z.literal(2) })',
		supported: true,
		valid: [{ version: 2 }],
		invalid: [{ version: 3 }, { version: '2' }],
	},
	{
		idiom: 'boolean-literal',
		source: 'z.object({ confirm: z.literal(true) })',
		supported: true,
		valid: [{ confirm: true }],
		invalid: [{ confirm: false }, { confirm: 'true' }],
	},
	{
		idiom: 'strict-object',
		source: 'z.strictObject({ query: z.string() })',
		supported: true,
		valid: [{ query: 'golang' }],
		invalid: [{ query: 'golang', extra: true }, {}],
	},
	{
		idiom: 'object-intersection',
		source: 'z.intersection(z.object({ query: z.string() }), z.object({ limit: z.number().int() }))',
		supported: true,
		valid: [{ query: 'a', limit: 1 }],
		invalid: [{ query: 'a' }, { query: 'a', limit: 1.5 }],
	},
	{
		idiom: 'literal-union',
		source: 'z.object({ level: z.union([z.literal(1), z.literal(2)]) })',
		supported: false,
		reason: 'anyOf',
	},
	{
		idiom: 'loose-object',
		source: 'z.looseObject({ query: z.string() })',
		supported: true,
		valid: [{ query: 'a' }],
		invalid: [{ query: 'a', extra: 1 }, {}],
	},
	{
		idiom: 'nested-object',
		source: 'z.object({ filter: z.object({ author: z.string() }) })',
		supported: false,
		reason: 'nested object',
	},
	{
		idiom: 'array',
		source: 'z.object({ tags: z.array(z.string()) })',
		supported: false,
		reason: 'array',
	},
	{
		idiom: 'union',
		source: 'z.object({ key: z.union([z.string(), z.number()]) })',
		supported: false,
		reason: 'type union',
	},
	{
		idiom: 'intersection',
		source: 'z.object({ name: z.intersection(z.string().min(1), z.string().max(5)) })',
		supported: false,
		reason: 'allOf',
	},
	{
		idiom: 'record',
		source: 'z.object({ labels: z.record(z.string(), z.string()) })',
		supported: false,
		reason: 'nested object',
	},
];

// build evaluates every case's source with z bound and emits its schema;
// the keys of each case are written in the order the corpus format fixes.
function build(cases, z, emit) {
	const seen = new Set();
	return cases.map((c) => {
		if (seen.has(c.idiom)) throw new Error(`duplicate idiom ${c.idiom}`);
		seen.add(c.idiom);
		if (c.supported !== (c.valid !== undefined) || c.supported !== (c.invalid !== undefined) || c.supported === (c.reason !== undefined)) {
			throw new Error(`${c.idiom}: a supported case has valid and invalid arguments and no reason, a refused one the reverse`);
		}
		const schema = new Function('z', `return (${c.source});`)(z);
		return {
			idiom: c.idiom,
			source: c.source,
			schema: emit(schema),
			supported: c.supported,
			reason: c.reason ?? '',
			valid: c.valid ?? [],
			invalid: c.invalid ?? [],
		};
	});
}

function write(name, generator, cases) {
	const file = join(outDir, name);
	const body = { generator, generated: true, cases };
	writeFileSync(file, JSON.stringify(body, null, 2) + '\n');
}

mkdirSync(outDir, { recursive: true });
const zod3 = installed('zod');
const z2js = installed('zod-to-json-schema');
const zod4 = installed('zod4');
write(
	'zod3.json',
	`zod@${zod3} + zod-to-json-schema@${z2js} (zodToJsonSchema(schema, { strictUnions: true, pipeStrategy: "input" }), defaults otherwise: target jsonSchema7, $refStrategy root; as ${SDK1} tools/list)`,
	build(zod3Cases, z3, emitZod3),
);
write(
	'zod4.json',
	`zod@${zod4} (schema["~standard"].jsonSchema.input({ target: "draft-2020-12" }) = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }), spread into { type: "object", ... }; as ${SDK2} tools/list)`,
	build(zod4Cases, z4, emitZod4),
);
