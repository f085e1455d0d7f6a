// A request pipeline in JavaScript, a benchmark of fixed work for kprof
// diff's gate (scripts/bench-gate, SHAPE=node), run by node with no flags:
// each request is parsed (split, a header object), routed (a Map lookup),
// its body parsed as JSON, checksummed (a table CRC-32 in JS), and answered
// (string building, JSON.stringify). GC and the JIT's threads run beside it.
//   node jsbench.js [rounds=N] [dir=PATH] [crc=PERCENT]
// crc=PERCENT: the CRC does PERCENT% more work (bytes) a request, as a
// slower change to it would. crcJsKprof is written on one line so that its
// frame's name (`JS:*crcJsKprof FILE:LINE`, the sampled line in TurboFan's
// code) is one name wherever in it a sample lands, and it is unrolled past
// the 460 bytes of bytecode TurboFan inlines (696), so that it is never
// inlined into its caller: a frame of its own.
'use strict';

const usage = () => {
	process.stderr.write('usage: node jsbench.js [rounds=N] [dir=PATH] [crc=PERCENT]\n');
	process.exit(2);
};
let rounds = 1, crcPct = 0;
for (const a of process.argv.slice(2)) {
	const m = /^(rounds|dir|crc)=(.*)$/.exec(a);
	if (!m) usage();
	if (m[1] === 'dir') continue; // accepted as every benchmark's; nothing written
	const v = Number(m[2]);
	if (!Number.isInteger(v) || v < 0 || v > 100000) usage();
	if (m[1] === 'rounds') rounds = v; else crcPct = v;
}

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	TABLE[n] = c;
}

// a deterministic generator, so that every run does the same work
let seed = 0x2545f491;
const rnd = (n) => {
	seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
	return (seed >>> 0) % n;
};

const RESOURCES = ['users', 'orders', 'items', 'carts', 'reviews', 'sessions', 'tokens', 'images'];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india'];
const routes = new Map();
for (const r of RESOURCES)
	for (const v of ['v1', 'v2'])
		routes.set(`/api/${v}/${r}`, { name: `${v}.${r}`, weight: r.length + v.length });

function makeRequest() {
	const res = RESOURCES[rnd(RESOURCES.length)];
	const body = { id: rnd(1000000), tags: [], note: '' };
	const ntags = 4 + rnd(8);
	for (let i = 0; i < ntags; i++) body.tags.push(WORDS[rnd(WORDS.length)]);
	for (let i = 0; i < 20 + rnd(40); i++) body.note += WORDS[rnd(WORDS.length)] + ' ';
	const text = JSON.stringify(body);
	return `POST /api/v${1 + rnd(2)}/${res}/${rnd(100000)}?page=${rnd(50)}&sort=${WORDS[rnd(9)]} HTTP/1.1\r\n` +
		`Host: bench.example\r\nUser-Agent: jsbench/1\r\nContent-Type: application/json\r\n` +
		`X-Request-Id: ${rnd(1 << 30).toString(16)}\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
}

function parseRequestKprof(raw) {
	const split = raw.indexOf('\r\n\r\n');
	const lines = raw.slice(0, split).split('\r\n');
	const [method, target, version] = lines[0].split(' ');
	const q = target.indexOf('?');
	const path = q < 0 ? target : target.slice(0, q);
	const query = {};
	if (q >= 0)
		for (const kv of target.slice(q + 1).split('&')) {
			const eq = kv.indexOf('=');
			query[kv.slice(0, eq)] = decodeURIComponent(kv.slice(eq + 1));
		}
	const headers = {};
	for (let i = 1; i < lines.length; i++) {
		const c = lines[i].indexOf(':');
		headers[lines[i].slice(0, c).toLowerCase()] = lines[i].slice(c + 1).trim();
	}
	return { method, path, version, query, headers, body: raw.slice(split + 4) };
}

function routeKprof(path) {
	const parts = path.split('/');
	return routes.get(parts.slice(0, 4).join('/')) || null;
}

// CRC-32 of n bytes of buf (wrapping around): one line, see the top
function crcJsKprof(buf, n) { const T = TABLE, len = buf.length; let c = -1, j = 0; while (n > 0) { let m = Math.min(n, len); n -= m; j = 0; for (; m >= 16; m -= 16) { c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); } for (; m > 0; m--) { c = T[(c ^ buf[j++]) & 255] ^ (c >>> 8); } } return ~c >>> 0; }

function respondKprof(req, route, doc, crc) {
	let out = `${req.version} 200 OK\r\nContent-Type: application/json\r\n`;
	for (const k of Object.keys(req.headers)) if (k.startsWith('x-')) out += `${k}: ${req.headers[k]}\r\n`;
	const reply = { route: route ? route.name : 'none', id: doc.id, tags: doc.tags.length,
		crc: crc.toString(16), page: Number(req.query.page) || 0 };
	const text = JSON.stringify(reply);
	return out + `Content-Length: ${text.length}\r\n\r\n${text}`;
}

const encoder = new TextEncoder();
const CRC_PASSES = 8; // the CRC's work a request: this many times its body
function handleKprof(raw) {
	const req = parseRequestKprof(raw);
	const route = routeKprof(req.path);
	const doc = JSON.parse(req.body);
	const bytes = encoder.encode(req.body);
	const n = Math.round(bytes.length * CRC_PASSES * (1 + crcPct / 100));
	return respondKprof(req, route, doc, crcJsKprof(bytes, n));
}

const requests = [];
for (let i = 0; i < 256; i++) requests.push(makeRequest());
let sum = 0;
for (let r = 0; r < rounds; r++)
	for (let k = 0; k < 48; k++)
		for (const raw of requests) sum = (sum + handleKprof(raw).length) | 0;
process.stdout.write(`jsbench: ${sum}\n`);
