'use strict';
// Drives kprof's interactive flame-graph SVG in Debian's headless chromium
// (playwright-core, no downloaded browser) the way a user does: Ctrl-F and
// the Search button answer a prompt dialog, clicks on frames zoom, Reset Zoom
// and Escape unzoom, URL parameters restore a view. Expected values come
// from the folded input written here, never from the SVG under test.
//
//   node svg.test.js OUTDIR      (KPROF = the kprof binary)
// Prints "N passed, N failed"; exit status 1 on any failure.

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const T0 = Date.now();
const KPROF = process.env.KPROF;
const OUT = process.argv[2] || path.join(process.env.KP_TMP || '/tmp', 'browser_svg');
const CHROMIUM = process.env.KP_CHROMIUM || '/usr/bin/chromium';
const WIDTH = 1200; // --width; the frame area is WIDTH - 2 * 10 (flamegraph.pl's xpad)
const XPAD = 10;
const FULL = WIDTH - 2 * XPAD;
const GLYPH = 12 * 0.59; // default fontsize * fontwidth: the label fitting rule
const SEARCH_FILL = 'rgb(230,0,230)';

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
	console.log(`browser test took ${((Date.now() - T0) / 1000).toFixed(1)} s`);
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed === 0 && passed > 0 ? 0 : 1);
}
const near = (a, b, eps) => Math.abs(a - b) <= eps;
const show = (v) => JSON.stringify(v);

// ---- the model: what the folded input says, computed here ----

// Counts of every frame as flamegraph.pl merges them: a frame is a path
// from the root, 'all' is depth 0.
function model(stacks) {
	const total = stacks.reduce((s, [, n]) => s + n, 0);
	const frames = new Map(); // path -> {name, depth, count}
	frames.set('', { name: 'all', depth: 0, count: total });
	for (const [stack, n] of stacks) {
		const names = stack.split(';');
		for (let d = 1; d <= names.length; d++) {
			const key = names.slice(0, d).join(';');
			const f = frames.get(key) || { name: names[d - 1], depth: d, count: 0 };
			f.count += n;
			frames.set(key, f);
		}
	}
	return { stacks, total, frames: [...frames.values()] };
}
// The share of samples whose stack holds a matching frame: each sample once.
function expectedMatched(m, re) {
	let sum = 0;
	for (const [stack, n] of m.stacks) if (['all', ...stack.split(';')].some((f) => re.test(f))) sum += n;
	const pct = (100 * sum) / m.total;
	return `Matched: ${pct === 100 ? '100' : pct.toFixed(1)}%`;
}
const commas = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
function expectedTitle(m, f) {
	const pct = f.depth === 0 ? '100' : ((100 * f.count) / m.total).toFixed(2);
	return `${f.name} (${commas(f.count)} samples, ${pct}%)`;
}
// flamegraph.pl's label rule: as many characters as fit, '..' when cut
function expectedLabel(name, w) {
	const chars = Math.floor(w / GLYPH);
	if (chars < 3) return '';
	const cps = Array.from(name);
	return cps.length > chars ? cps.slice(0, chars - 2).join('') + '..' : name;
}

// ---- the page ----

// Everything the test looks at, read from the DOM (not from window.kprof).
function snapshot(page) {
	return page.evaluate(() => {
		const re = /^([\s\S]*) \(([\d,.]+) samples, [\d.]+%\)$/;
		return [...document.querySelectorAll('#frames > g')].map((g, index) => {
			const title = g.querySelector('title').textContent;
			const rect = g.querySelector('rect');
			const text = g.querySelector('text');
			const m = re.exec(title);
			const cs = getComputedStyle(g);
			return {
				index,
				title,
				name: m ? m[1] : null,
				count: m ? Number(m[2].replace(/,/g, '')) : NaN,
				x: rect.getAttribute('x'),
				y: rect.getAttribute('y'),
				w: rect.getAttribute('width'),
				fill: rect.getAttribute('fill'),
				shownFill: getComputedStyle(rect).fill,
				label: text ? text.textContent : '',
				labelPx: text && text.textContent ? text.getComputedTextLength() : 0,
				cls: [...g.classList].sort().join(' '),
				display: cs.display,
				opacity: cs.opacity,
			};
		});
	});
}
const text = (page, sel) => page.evaluate((s) => document.querySelector(s).textContent, sel);
const hasClass = (page, sel, c) => page.evaluate(([s, k]) => document.querySelector(s).classList.contains(k), [sel, c]);
// depth from the rect's y: the root is the lowest row
function withDepth(snap) {
	const rootY = Math.max(...snap.map((f) => Number(f.y)));
	for (const f of snap) f.depth = Math.round((rootY - Number(f.y)) / 16);
	return snap;
}
function pick(snap, name, nth = 0) {
	const all = snap.filter((f) => f.name === name).sort((a, b) => Number(a.x) - Number(b.x));
	return all[nth];
}

async function main() {
	fs.mkdirSync(OUT, { recursive: true });
	if (!KPROF || !fs.existsSync(KPROF)) {
		check('KPROF names the kprof binary', false, show(KPROF));
		return;
	}
	let chromium;
	try {
		({ chromium } = require(path.join(__dirname, 'node_modules', 'playwright-core')));
	} catch (e) {
		check('playwright-core is installed (run tests/browser/setup)', false, e.message);
		return;
	}
	if (!fs.existsSync(CHROMIUM)) {
		check(`${CHROMIUM} is installed (run tests/browser/setup)`, false);
		return;
	}

	// the graph: known stacks; 'small' is too narrow for a label until zoomed
	const stacks = [
		['main;alpha;leaf_x', 300],
		['main;beta;leaf_x', 100],
		['main;beta;gamma', 585],
		['main;beta;gamma;small', 15],
	];
	const M = model(stacks);
	const folded = path.join(OUT, 'known.folded');
	const svg = path.join(OUT, 'known.svg');
	fs.writeFileSync(folded, stacks.map(([s, n]) => `${s} ${n}\n`).join(''));
	const r = spawnSync(KPROF, ['flamegraph', '--width', String(WIDTH), '-o', svg, folded], { encoding: 'utf8' });
	check('kprof flamegraph writes the SVG', r.status === 0 && fs.existsSync(svg), r.stderr);
	if (r.status !== 0) return;
	const url = 'file://' + svg;

	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		timeout: 20000,
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
	console.log(`chromium ${browser.version()} up after ${((Date.now() - T0) / 1000).toFixed(1)} s`);
	try {
		const page = await browser.newPage({ viewport: { width: WIDTH + 20, height: 400 } });
		page.setDefaultTimeout(5000);
		// every dialog is recorded; prompts get the answer queued for them
		const dialogs = [];
		let answer = null;
		page.on('dialog', async (d) => {
			dialogs.push({ type: d.type(), message: d.message() });
			if (d.type() === 'prompt' && answer !== null) await d.accept(answer);
			else await d.dismiss();
			answer = null;
		});
		let errors = [];
		page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
		page.on('console', (m) => {
			if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
		});
		const open = async (u) => {
			errors = [];
			await page.goto(u);
			await page.waitForFunction(() => window.kprof !== undefined);
		};
		const frameG = (f) => page.locator('#frames > g').nth(f.index);
		const prompts = () => dialogs.filter((d) => d.type === 'prompt').length;
		// a search as a user does it: by = 'ctrl-f', 'f3' or 'button'
		const searchAs = async (by, term) => {
			if ((await text(page, '#search')) === 'Reset Search') await page.click('#search');
			const before = prompts();
			answer = term;
			if (by === 'ctrl-f') await page.keyboard.press('Control+f');
			else if (by === 'f3') await page.keyboard.press('F3');
			else await page.click('#search');
			await page.evaluate(() => 0); // runs once the prompt is closed
			return prompts() === before + 1;
		};

		// ---- 1. the graph as written ----
		await open(url);
		let orig = withDepth(await snapshot(page));
		const want = M.frames.map((f) => `${f.depth}:${f.name}:${f.count}`).sort();
		const got = orig.map((f) => `${f.depth}:${f.name}:${f.count}`).sort();
		check('one frame per distinct stack prefix, with its count', show(got) === show(want), `${show(got)} vs ${show(want)}`);
		const badTitles = M.frames.filter((f) => !orig.some((g) => g.depth === f.depth && g.title === expectedTitle(M, f)));
		check('tooltips read "name (N samples, P%)"', badTitles.length === 0, show(badTitles.map((f) => expectedTitle(M, f))));
		const badW = orig.filter((f) => !near(Number(f.w), (f.count * FULL) / M.total, 0.1));
		check(`widths are count * ${FULL} / total`, badW.length === 0, show(badW));
		const small0 = pick(orig, 'small');
		check('"small" has no label before zooming', small0 && small0.label === '', show(small0));
		check('no script errors on load', errors.length === 0, show(errors));
		check('Reset Zoom is hidden at first', !(await page.isVisible('#unzoom')));

		// hover: the details line names the frame
		const beta0 = pick(orig, 'beta');
		await frameG(beta0).hover();
		check('hovering beta shows its details', (await text(page, '#details')) === `Function: ${beta0.title}`, await text(page, '#details'));
		await page.mouse.move(WIDTH / 2, 5);
		check('leaving the frame clears the details', (await text(page, '#details')).trim() === '');

		// ---- 2. search ----
		check('Ctrl-F opens a prompt', await searchAs('ctrl-f', 'leaf_x'));
		let s = withDepth(await snapshot(page));
		const hits = s.filter((f) => f.cls.split(' ').includes('match'));
		check('exactly the two leaf_x frames have class match', hits.length === 2 && hits.every((f) => f.name === 'leaf_x'), show(hits.map((f) => f.name)));
		check(
			`matches are filled ${SEARCH_FILL}`,
			hits.every((f) => f.fill.replace(/\s/g, '') === SEARCH_FILL && f.shownFill === 'rgb(230, 0, 230)'),
			show(hits.map((f) => [f.fill, f.shownFill]))
		);
		const others = s.filter((f) => f.name !== 'leaf_x');
		check('other frames keep their colour', others.every((f) => f.fill === orig[f.index].fill && f.shownFill !== 'rgb(230, 0, 230)'));
		const leafWant = expectedMatched(M, /leaf_x/);
		check(`#matched shows ${leafWant}`, (await text(page, '#matched')) === leafWant, await text(page, '#matched'));
		check('the button reads Reset Search', (await text(page, '#search')) === 'Reset Search');
		check('the URL keeps the search (?s=leaf_x)', new URL(page.url()).searchParams.get('s') === 'leaf_x', page.url());

		const n0 = prompts();
		await page.click('#search');
		s = await snapshot(page);
		check('clicking Reset Search asks nothing', prompts() === n0);
		check('Reset Search clears the highlight', s.every((f) => !f.cls.includes('match') && f.fill === orig[f.index].fill));
		check('Reset Search clears #matched', (await text(page, '#matched')).trim() === '' && (await hasClass(page, '#matched', 'hide')));
		check('the URL drops s', !new URL(page.url()).searchParams.has('s'), page.url());

		// each sample once: main holds every sample, beta is inside it
		for (const [by, term] of [
			['button', '^(main|beta)$'],
			['f3', '^(beta|gamma)$'],
			['ctrl-f', '^(alpha|gamma)$'],
			['button', 'a'],
		]) {
			const re = new RegExp(term);
			check(`${by} opens a prompt for ${term}`, await searchAs(by, term));
			const w = expectedMatched(M, re);
			check(`search ${term}: ${w}`, (await text(page, '#matched')) === w, await text(page, '#matched'));
			s = await snapshot(page);
			const exp = s.filter((f) => re.test(f.name)).map((f) => f.index);
			const hit = s.filter((f) => f.cls.includes('match')).map((f) => f.index);
			check(`search ${term}: the matching frames, no others`, show(exp) === show(hit), `${show(hit)} vs ${show(exp)}`);
		}
		await searchAs('ctrl-f', '(');
		check('a bad expression says so', (await text(page, '#matched')) === 'Invalid regular expression', await text(page, '#matched'));
		check('a bad expression highlights nothing', (await snapshot(page)).every((f) => !f.cls.includes('match')));
		// Ctrl-I: case-insensitive, also for the current search
		await page.keyboard.press('Control+i');
		check('Ctrl-I turns on the ic button', await hasClass(page, '#ignorecase', 'show'));
		await searchAs('ctrl-f', 'LEAF_X');
		check('LEAF_X ignoring case matches leaf_x', (await text(page, '#matched')) === leafWant, await text(page, '#matched'));
		await page.keyboard.press('Control+i');
		check('Ctrl-I again: LEAF_X matches nothing', (await text(page, '#matched')) === 'Matched: 0.0%', await text(page, '#matched'));
		await page.click('#search');
		// a cancelled prompt changes nothing
		const n1 = prompts();
		answer = null;
		await page.keyboard.press('Control+f');
		check('a cancelled prompt searches nothing', prompts() === n1 + 1 && (await text(page, '#search')) === 'Search');

		// ---- 3. zoom by clicking beta ----
		await frameG(beta0).click();
		let z = withDepth(await snapshot(page));
		const beta = pick(z, 'beta');
		check(`beta becomes the full width (${FULL} px)`, near(Number(beta.x), XPAD, 0.5) && near(Number(beta.w), FULL, 0.5), `x=${beta.x} w=${beta.w}`);
		const ratio = FULL / Number(beta0.w);
		const alphaSide = z.filter((f) => f.depth >= 2 && Number(orig[f.index].x) < Number(beta0.x));
		check(
			'alpha and its leaf_x are hidden',
			alphaSide.length === 2 && alphaSide.every((f) => f.cls.includes('hide') && f.display === 'none'),
			show(alphaSide.map((f) => [f.name, f.cls, f.display]))
		);
		check('alpha is not visible', await frameG(pick(orig, 'alpha')).isHidden());
		for (const name of ['main', 'all']) {
			const p = pick(z, name);
			check(`${name} is greyed as a parent, full width`, p.cls === 'parent' && Number(p.opacity) === 0.5 && near(Number(p.w), FULL, 0.5), show(p));
		}
		const inside = z.filter((f) => f.depth > beta.depth && Number(orig[f.index].x) >= Number(beta0.x));
		check('beta has three descendants shown', inside.length === 3 && inside.every((f) => f.cls === '' && f.display !== 'none'), show(inside));
		const badScale = inside.filter(
			(f) =>
				!near(Number(f.w), (f.count / beta.count) * FULL, 0.5) ||
				!near(Number(f.x), XPAD + (Number(orig[f.index].x) - Number(beta0.x)) * ratio, 0.5)
		);
		check('descendants scale with beta', badScale.length === 0, show(badScale));
		const shown = z.filter((f) => f.display !== 'none');
		const badLabels = shown.filter((f) => f.label !== expectedLabel(f.name, Number(f.w)));
		check('labels follow the new widths', badLabels.length === 0, show(badLabels.map((f) => [f.name, f.w, f.label])));
		check('"small" now has a label', pick(z, 'small').label !== '', show(pick(z, 'small')));
		const overflow = shown.filter((f) => f.labelPx > Number(f.w) - 3 + 0.5);
		check('drawn labels fit inside their frames', overflow.length === 0, show(overflow.map((f) => [f.label, f.labelPx.toFixed(1), f.w])));
		check('Reset Zoom appears', !(await hasClass(page, '#unzoom', 'hide')) && (await page.isVisible('#unzoom')));
		const q = new URL(page.url()).searchParams;
		check('the URL keeps the zoom (x, y of beta)', q.get('x') === beta0.x && q.get('y') === beta0.y, page.url());
		await page.mouse.move(WIDTH / 2, 5);
		const shot = path.join(OUT, 'zoomed-beta.png');
		await page.screenshot({ path: shot });
		console.log(`screenshot: ${shot}`);

		// a reload keeps the view: the address is shareable
		await page.reload();
		await page.waitForFunction(() => window.kprof !== undefined);
		z = await snapshot(page);
		check('reloading the zoomed address keeps the zoom', near(Number(pick(z, 'beta').w), FULL, 0.5) && pick(z, 'alpha').display === 'none');

		// ---- 4. reset zoom ----
		await page.click('#unzoom');
		z = await snapshot(page);
		const moved = z.filter((f) => f.x !== orig[f.index].x || f.w !== orig[f.index].w);
		check('Reset Zoom restores every x and width', moved.length === 0, show(moved));
		check('Reset Zoom restores labels and classes', z.every((f) => f.label === orig[f.index].label && f.cls === '' && f.display !== 'none'));
		check('Reset Zoom hides itself', (await hasClass(page, '#unzoom', 'hide')) && !(await page.isVisible('#unzoom')));
		check('the URL drops x and y', !new URL(page.url()).searchParams.has('x'), page.url());

		// zooming from a zoomed view is exact: beta, then its parent main
		await frameG(beta0).click();
		await frameG(pick(orig, 'main')).click();
		z = await snapshot(page);
		const off = z.filter((f) => f.depth !== 0 && (!near(Number(f.x), Number(orig[f.index].x), 0.1) || !near(Number(f.w), Number(orig[f.index].w), 0.1)));
		check('clicking main after beta brings back the original geometry', off.length === 0, show(off));
		check('... and alpha is shown again', pick(z, 'alpha').display !== 'none');
		// the narrow frame: a click on its 18 px makes it the full width
		await frameG(small0).click();
		z = await snapshot(page);
		const sm = pick(z, 'small');
		check('clicking "small" makes it the full width with its name', near(Number(sm.w), FULL, 0.5) && sm.label === 'small', show(sm));
		check('"small" has four greyed ancestors', z.filter((f) => f.cls === 'parent').length === 4);
		await page.keyboard.press('Escape');
		z = await snapshot(page);
		check('Escape unzooms', z.every((f) => f.x === orig[f.index].x && f.w === orig[f.index].w && f.cls === ''));
		check('no script errors while searching and zooming', errors.length === 0, show(errors));

		// an icicle graph zooms the same way, ancestors above the frame
		const icicle = path.join(OUT, 'icicle.svg');
		const ri = spawnSync(KPROF, ['flamegraph', '--inverted', '-o', icicle, folded], { encoding: 'utf8' });
		check('kprof flamegraph --inverted writes the SVG', ri.status === 0, ri.stderr);
		await open('file://' + icicle);
		const io = await snapshot(page);
		const ibeta = pick(io, 'beta');
		check('icicle: main is drawn above beta', Number(pick(io, 'main').y) < Number(ibeta.y));
		await frameG(ibeta).click();
		z = await snapshot(page);
		check(
			'icicle: clicking beta zooms it, hides alpha, greys main',
			near(Number(pick(z, 'beta').w), FULL, 0.5) && pick(z, 'alpha').cls === 'hide' && pick(z, 'main').cls === 'parent' && pick(z, 'gamma').cls === '',
			show(z.map((f) => [f.name, f.w, f.cls]))
		);
		await page.click('#unzoom');
		z = await snapshot(page);
		check('icicle: Reset Zoom restores it', z.every((f) => f.w === io[f.index].w && f.x === io[f.index].x && f.cls === ''));
		check('icicle: no script errors', errors.length === 0, show(errors));

		// ---- 5. URL parameters ----
		await open(`${url}?s=gamma`);
		s = await snapshot(page);
		check('?s=gamma highlights gamma', show(s.filter((f) => f.cls.includes('match')).map((f) => f.name)) === '["gamma"]');
		check(`?s=gamma: ${expectedMatched(M, /gamma/)}`, (await text(page, '#matched')) === expectedMatched(M, /gamma/), await text(page, '#matched'));
		await open(`${url}?x=${beta0.x}&y=${beta0.y}`);
		z = await snapshot(page);
		check('?x=&y= of beta zooms to beta', near(Number(pick(z, 'beta').w), FULL, 0.5) && pick(z, 'alpha').cls === 'hide', show(pick(z, 'beta')));
		await open(`${url}?x=${beta0.x}&y=${beta0.y}&s=${encodeURIComponent('^leaf_x$')}`);
		z = await snapshot(page);
		check(
			'zoom and search together',
			near(Number(pick(z, 'beta').w), FULL, 0.5) && z.filter((f) => f.cls.includes('match')).length === 2 && (await text(page, '#matched')) === leafWant
		);
		await open(`${url}?i=1&s=LEAF_X`);
		check('?i=1&s=LEAF_X searches ignoring case', (await text(page, '#matched')) === leafWant, await text(page, '#matched'));
		await open(`${url}?x=999.9&y=1`);
		z = await snapshot(page);
		check('?x=&y= naming no frame leaves the graph unzoomed', z.every((f) => f.w === orig[f.index].w));
		check('no script errors with URL parameters', errors.length === 0, show(errors));

		// ---- 6. hostile names ----
		const evil = ['<script>alert(1)</script>', `a&b"c'`, ']]></script><script>alert(2)</script>', '<img src=x onerror=alert(3)>'];
		const E = model([
			[`main;${evil[0]}`, 50],
			[`main;${evil[1]}`, 40],
			[`main;${evil[2]}`, 20],
			[`main;${evil[3]};deeper`, 10],
		]);
		const evilFolded = path.join(OUT, 'hostile.folded');
		const evilSvg = path.join(OUT, 'hostile.svg');
		fs.writeFileSync(evilFolded, E.stacks.map(([st, n]) => `${st} ${n}\n`).join(''));
		const r2 = spawnSync(KPROF, ['flamegraph', '-o', evilSvg, evilFolded], { encoding: 'utf8' });
		check('kprof flamegraph writes the hostile SVG', r2.status === 0, r2.stderr);
		await open('file://' + evilSvg);
		const ev = withDepth(await snapshot(page));
		for (const name of evil) {
			const f = ev.find((g) => g.name === name);
			const mf = E.frames.find((g) => g.name === name);
			check(`${show(name)}: the title is the literal text`, f && f.title === expectedTitle(E, mf), f && f.title);
			check(`${show(name)}: the label is the literal text`, f && f.label === expectedLabel(name, Number(f.w)) && f.label !== '', f && f.label);
		}
		const doc = await page.evaluate(() => ({
			scripts: document.getElementsByTagNameNS('*', 'script').length,
			imgs: document.getElementsByTagNameNS('*', 'img').length,
			frames: document.querySelectorAll('#frames > g').length,
		}));
		check("one script element (kprof's), no img element", doc.scripts === 1 && doc.imgs === 0, show(doc));
		check('every hostile name is a frame', doc.frames === E.frames.length, show(doc));
		const a0 = ev.find((g) => g.name === evil[0]);
		await frameG(a0).hover();
		check('hovering shows the literal name', (await text(page, '#details')) === `Function: ${a0.title}`, await text(page, '#details'));
		await frameG(a0).click();
		const az = await snapshot(page);
		check('zooming shows the literal label', az[a0.index].label === evil[0] && near(Number(az[a0.index].w), FULL, 0.5), az[a0.index].label);
		await searchAs('ctrl-f', '<script>');
		check(`searching <script>: ${expectedMatched(E, /<script>/)}`, (await text(page, '#matched')) === expectedMatched(E, /<script>/), await text(page, '#matched'));
		await open(`file://${evilSvg}?s=${encodeURIComponent(`a&b"c'`)}`);
		check('?s= with quotes and & finds the frame', (await text(page, '#matched')) === expectedMatched(E, /a&b"c'/), await text(page, '#matched'));
		await page.waitForTimeout(200); // an injected handler would have fired by now
		const alerts = dialogs.filter((d) => d.type !== 'prompt');
		check('no alert dialog fired', alerts.length === 0, show(alerts));
		check('no script errors with hostile names', errors.length === 0, show(errors));

		// ---- 7. a recorded profile ----
		const rec = path.join(OUT, 'recorded.svg');
		const r3 = spawnSync(KPROF, ['-F', '199', '-o', rec, '--', 'sh', '-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'], {
			encoding: 'utf8',
			timeout: 20000,
		});
		check('kprof records sh into an SVG', r3.status === 0 && fs.existsSync(rec), `status ${r3.status}: ${r3.stderr}`);
		if (fs.existsSync(rec)) {
			await open('file://' + rec);
			const rs = withDepth(await snapshot(page));
			check('the recorded graph has frames', rs.length >= 3, `${rs.length} frames`);
			check('its root frame holds every sample', rs.some((f) => f.depth === 0 && near(Number(f.w), FULL, 0.05)));
			const sub = await page.evaluate(() => [...document.querySelectorAll('#subtitle, .info')].map((e) => e.textContent));
			console.log(`recorded: ${rs.length} frames, ${sub.join(' | ')}`);
			// the recording's metadata under the title names what was profiled
			check('recorded: the info lines name the command (sh -c ...)', sub.some((l) => / -- sh -c ['"]?i=0;/.test(l)), show(sub));
			// zoom the widest frame above depth 1 and search its name
			const tgt = rs.filter((f) => f.depth >= 2).sort((a, b) => Number(b.w) - Number(a.w))[0];
			if (tgt) {
				await frameG(tgt).click();
				const rz = await snapshot(page);
				check(`recorded: clicking ${tgt.name} zooms to it`, near(Number(rz[tgt.index].w), FULL, 0.5), show(rz[tgt.index]));
				await page.mouse.move(WIDTH / 2, 5);
				const shot2 = path.join(OUT, 'recorded-zoomed.png');
				await page.screenshot({ path: shot2 });
				console.log(`screenshot: ${shot2}`);
			}
			check('recorded: no page errors or console errors', errors.length === 0, show(errors));
		}

		// a workload with known stacks: the names a user searches for are there
		const spin = path.join(process.env.KP_WORKLOADS || '', 'spin_fp');
		const rec2 = path.join(OUT, 'spin.svg');
		const r4 = spawnSync(KPROF, ['-F', '499', '-o', rec2, '--', spin, '0.5'], { encoding: 'utf8', timeout: 20000 });
		check('kprof records the spin workload into an SVG', r4.status === 0 && fs.existsSync(rec2), `${spin}: status ${r4.status}: ${r4.stderr}`);
		if (r4.status === 0) {
			await open('file://' + rec2);
			await searchAs('ctrl-f', '^spin_leaf$');
			const m = /^Matched: ([\d.]+)%$/.exec(await text(page, '#matched'));
			// record_command.sh: the exact stack carries >= 90% of spin_fp's samples
			check('spin: ^spin_leaf$ matches most samples', m && Number(m[1]) >= 80, await text(page, '#matched'));
			const leaf = (await snapshot(page)).filter((f) => f.name === 'spin_leaf').sort((a, b) => b.count - a.count)[0];
			if (leaf) {
				await frameG(leaf).click();
				const lz = await snapshot(page);
				check('spin: clicking spin_leaf zooms to it', near(Number(lz[leaf.index].w), FULL, 0.5) && lz[leaf.index].label === 'spin_leaf');
				check('spin: spin_middle and spin_outer are its greyed parents', ['spin_middle', 'spin_outer', 'main'].every((n) => lz.some((f) => f.name === n && f.cls === 'parent')));
			}
			await page.mouse.move(WIDTH / 2, 5);
			const shot3 = path.join(OUT, 'spin-zoomed.png');
			await page.screenshot({ path: shot3 });
			console.log(`screenshot: ${shot3}`);
			check('spin: no page errors or console errors', errors.length === 0, show(errors));
		}
	} finally {
		await browser.close();
	}
}

// the whole test stays under a minute, even when chromium hangs
const watchdog = setTimeout(() => {
	check('the browser test finishes within 60 s', false);
	finish();
}, 60000);
main()
	.catch((e) => check('the test ran to the end', false, e.stack))
	.finally(() => {
		clearTimeout(watchdog);
		finish();
	});
