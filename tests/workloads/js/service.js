// A service-like node program for kprof's live naming of JavaScript
// (e2e/node_live): requests handled in a loop, the hot function
// (scoreRequestKprof) big enough that TurboFan keeps it a function of its
// own, its caller (handleRequestKprof), a function that stays interpreted
// (it calls eval, which V8 does not optimize), and an async path.
// Run with no flags. Usage: node service.js SECONDS
'use strict';

function scoreRequestKprof(s, salt) {
	let h = salt | 0, vowels = 0, digits = 0, slashes = 0, other = 0;
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		switch (c) {
		case 97: case 101: case 105: case 111: case 117: vowels++; h = (h * 33 + c) | 0; break;
		case 47: slashes++; h = (h ^ (c << 7)) | 0; break;
		case 48: case 49: case 50: case 51: case 52:
		case 53: case 54: case 55: case 56: case 57: digits++; h = (h * 7 + c) | 0; break;
		default: other++; h = (h * 31 + c) | 0;
		}
		h = (h ^ (h >>> 13)) | 0;
		h = Math.imul(h, 0x5bd1e995);
		h = (h ^ (h >>> 15)) | 0;
	}
	// a second pass, which makes the function too big for TurboFan to
	// inline (over its 460 bytes of bytecode)
	for (let i = s.length - 1; i >= 0; i -= 2) {
		const c = s.charCodeAt(i);
		if (c >= 65 && c <= 90) h = (h + (c - 65) * 17) | 0;
		else if (c >= 97 && c <= 122) h = (h + (c - 97) * 19) | 0;
		else if (c >= 48 && c <= 57) h = (h + (c - 48) * 23) | 0;
		else if (c === 45 || c === 95) h = (h ^ 0x2545f491) | 0;
		else if (c === 46) h = (h ^ 0x68e31da4) | 0;
		else if (c === 63 || c === 38 || c === 61) h = (h ^ 0x1b873593) | 0;
		else h = (h ^ 0xcc9e2d51) | 0;
		h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
		h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
		h = (h ^ (h >>> 16)) | 0;
		if ((h & 0xff) === 0x7f) other += 2;
		else if ((h & 0xff) === 0x3e) vowels += 1;
		else if ((h & 0xff) === 0x11) digits += 1;
	}
	if (vowels > digits) h = (h + vowels * 3) | 0;
	else if (digits > slashes) h = (h - digits * 5) | 0;
	else h = (h + other) | 0;
	return h;
}

function handleRequestKprof(path, n) {
	let acc = 0;
	for (let k = 0; k < n; k++)
		acc ^= scoreRequestKprof(path, k);
	return acc;
}

function coldInterpretedKprof(n) {
	eval('');
	let x = 0;
	for (let i = 0; i < n; i++)
		x += i;
	return x;
}

async function asyncStepKprof(i) {
	await null;
	return handleRequestKprof('/api/async/' + i, 20);
}

const seconds = Number(process.argv[2] || 4);
const start = Date.now();

async function serveKprof() {
	let total = 0;
	for (let round = 0; Date.now() - start < seconds * 1000; round++) {
		for (let i = 0; i < 20; i++)
			// 1000 scores a request: building the path and collecting it
			// stay a few percent of the time, as in a service whose
			// handler does the work
			total ^= handleRequestKprof('/api/items/' + (round * 20 + i) + '/detail', 1000);
		total ^= coldInterpretedKprof(50);
		total ^= await asyncStepKprof(round);
	}
	return total;
}

console.log(`pid ${process.pid}`);
serveKprof().then(t => { if (t === 42) console.log('42'); });
