'use strict';
// Drives kprof's heatmap page (formats/heatmap.c) in Debian's headless
// chromium (playwright-core) the way a user does: the heatmap is drawn,
// a drag over it selects cells, and the selection's stacks (the page's
// folded text) are what `kprof report --from --to` gives for the command
// the page shows; a fragment #from=S&to=S restores a selection; the
// search colours frames and a click zooms; no script error, no request
// but the page itself. Expected stacks come from kprof report, never from
// the page.
//
//   node heatmap.test.js OUTDIR RECORDING...    (KPROF = the kprof binary)
// Prints "N passed, N failed"; exit status 1 on any failure.

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const KPROF = process.env.KPROF;
const OUT = process.argv[2];
const INPUTS = process.argv.slice(3);
const CHROMIUM = process.env.KP_CHROMIUM || '/usr/bin/chromium';

let passed = 0;
let failed = 0;
function check(what, cond, detail) {
	if (cond) {
		passed++;
		console.log(`ok: ${what}`);
	} else {
		failed++;
		console.log(`FAIL: ${what}${detail === undefined ? '' : `: ${detail}`}`);
	}
}
function finish() {
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

// folded text as a map of stack -> summed count
function parseFolded(text) {
	const m = new Map();
	for (const line of text.split('\n')) {
		if (!line) continue;
		const i = line.lastIndexOf(' ');
		const k = line.slice(0, i);
		m.set(k, (m.get(k) || 0) + Number(line.slice(i + 1)));
	}
	return m;
}
function sameStacks(a, b) {
	if (a.size !== b.size) return `${a.size} stacks against ${b.size}`;
	for (const [k, v] of a) if (b.get(k) !== v) return `${k}: ${v} against ${b.get(k)}`;
	return null;
}
// kprof report's folded text of the command the page shows
function reportOf(command) {
	const m = /--from ([0-9.]+) --to ([0-9.]+)$/.exec(command);
	if (!m) return null;
	const r = spawnSync(KPROF, ['report', ...INPUTS, '--from', m[1], '--to', m[2], '-f', 'folded'],
		{ encoding: 'utf8' });
	return r.status === 0 ? parseFolded(r.stdout) : new Map([['exit ' + r.status + ': ' + r.stderr, 0]]);
}

async function main() {
	let chromium;
	try {
		({ chromium } = require(path.join(__dirname, 'node_modules', 'playwright-core')));
	} catch (e) {
		check('playwright-core is installed (run tests/browser/setup)', false, e.message);
		return;
	}
	const page_path = path.join(OUT, 'run.html');
	const r = spawnSync(KPROF, ['report', ...INPUTS, '-o', page_path], { encoding: 'utf8' });
	check('kprof report -o run.html', r.status === 0, r.stderr);
	const url = 'file://' + page_path;
	const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
	const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
	const errors = [];
	const requests = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('request', (q) => { if (!q.url().startsWith(url)) requests.push(q.url()); });
	await page.goto(url);
	await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });

	// the heatmap: cells with samples drawn in colour
	const geo = await page.$eval('#heatmap', (c) => {
		const g = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		let coloured = 0;
		for (let i = 0; i < g.length; i += 4) if (g[i + 1] < 250) coloured++;
		const r = c.getBoundingClientRect();
		return { cols: +c.dataset.cols, rows: +c.dataset.rows, cw: +c.dataset.cw, ch: +c.dataset.ch,
			cells: +c.dataset.cells, coloured, x: r.left, y: r.top };
	});
	check(`the heatmap is drawn: ${geo.cols} columns of ${geo.rows} rows, ${geo.cells} cells with samples`,
		geo.cols >= 2 && geo.rows === 50 && geo.cells > 10 && geo.coloured >= geo.cells * geo.cw * geo.ch * 0.5,
		JSON.stringify(geo));

	// the whole: the page's folded text is kprof report's
	const whole = parseFolded(await page.$eval('#folded', (t) => t.value));
	const all = spawnSync(KPROF, ['report', ...INPUTS, '-f', 'folded'], { encoding: 'utf8' });
	let diff = sameStacks(whole, parseFolded(all.stdout));
	check('with no selection, the page\'s stacks are the whole recording\'s', diff === null, diff);

	// drags: within a column, and across columns
	const drags = [[[0, 10], [0, 40]], [[1, 5], [geo.cols - 1, 20]], [[0, 45], [1, 3]]];
	for (const [[c0, r0], [c1, r1]] of drags) {
		const at = (c, r) => [geo.x + c * geo.cw + geo.cw / 2, geo.y + r * geo.ch + geo.ch / 2];
		const [x0, y0] = at(c0, r0);
		const [x1, y1] = at(c1, r1);
		await page.mouse.move(x0, y0);
		await page.mouse.down();
		await page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2);
		await page.mouse.move(x1, y1);
		await page.mouse.up();
		const command = await page.$eval('#command', (e) => e.textContent);
		const shown = parseFolded(await page.$eval('#folded', (t) => t.value));
		const want = reportOf(command);
		diff = want ? sameStacks(shown, want) : 'no --from/--to in the command';
		check(`drag from cell (${c0},${r0}) to (${c1},${r1}): "${command}" gives the page's ${shown.size} stacks`,
			diff === null && shown.size > 0, diff);
		const hash = await page.evaluate(() => location.hash);
		const m = /--from ([0-9.]+) --to ([0-9.]+)$/.exec(command);
		check(`the selection is in the fragment (${hash})`, m && hash === `#from=${m[1]}&to=${m[2]}`);
	}

	// search colours the frames of a name, a click zooms (the leaf both
	// phases call: in every selection, however the run's time fell)
	await page.fill('#search', 'phase_leaf_kprof');
	const hits = await page.$$eval('#fg rect', (rs) => rs.filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
	const matchedText = await page.$eval('#matched', (e) => e.textContent);
	check(`search: frames coloured (${hits}), "${matchedText}"`, hits >= 1 && /Matched: [0-9.]+%/.test(matchedText));

	const zoomed = await page.evaluate(() => {
		const g = [...document.querySelectorAll('#fg g.frame')].find((e) =>
			!e.classList.contains('ancestor') && e.querySelector('title').textContent.startsWith('phase_leaf_kprof '));
		if (!g) return -1;
		g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
		const z = [...document.querySelectorAll('#fg g.frame')].find((e) =>
			!e.classList.contains('ancestor') && e.querySelector('title').textContent.startsWith('phase_leaf_kprof '));
		return z ? +z.querySelector('rect').getAttribute('width') : -2;
	});
	check(`a click on phase_leaf_kprof zooms it to the full width (${zoomed})`, zoomed > 1190);
	await page.keyboard.press('Escape');

	// a fragment restores a selection, after a reload too
	const frag = await browser.newPage();
	frag.on('pageerror', (e) => errors.push(e.message));
	await frag.goto(url + '#from=0.500&to=1.000');
	await frag.waitForSelector('body[data-ready="1"]');
	const fc = await frag.$eval('#command', (e) => e.textContent);
	const fshown = parseFolded(await frag.$eval('#folded', (t) => t.value));
	const fwant = reportOf(fc);
	diff = fwant ? sameStacks(fshown, fwant) : 'no range';
	check(`#from=0.500&to=1.000 restored: "${fc}", the same stacks as kprof report`,
		/--from 0\.500 --to 1\.000$/.test(fc) && diff === null, diff || fc);
	await frag.reload();
	await frag.waitForSelector('body[data-ready="1"]');
	check('the fragment survives a reload',
		/--from 0\.500 --to 1\.000$/.test(await frag.$eval('#command', (e) => e.textContent)));

	check(`no script error (${errors.join('; ')})`, errors.length === 0);
	check(`no request but the page (${requests.join(' ')})`, requests.length === 0);
	await browser.close();
}

main().then(finish, (e) => {
	check('the test ran', false, e.stack);
	finish();
});
