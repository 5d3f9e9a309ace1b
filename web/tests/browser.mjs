// Browser checks of the web board in a real headless Chromium (the system's,
// driven by playwright-core; no browser is downloaded). Run by tests/web.rs,
// which serves a folder of scripts/web-export.sh and reads the JSON this
// prints:
//
//   node web/tests/browser.mjs JOB.json
//
// JOB: {"url": ..., "chromium": "/usr/bin/chromium", "positions": [[actions...], ...],
//       "planes": [[floats...], ...], "simulations": N, "search": {...}}
// Output: {"off_origin": [urls], "game": {...}, "illegal": [...], "removal": {...},
//          "undo": {...}, "analysis": {...}, "parity": [{action, seconds, outputs}], "errors": [...]}

import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const origin = new URL(job.url).origin;
const browser = await chromium.launch({ executablePath: job.chromium, args: ["--no-sandbox"] });
const page = await browser.newPage();
const offOrigin = [];
const errors = [];
page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) offOrigin.push(url);
});
page.on("pageerror", (e) => errors.push(e.message));

const state = () => page.evaluate(() => window.gipf.state());
const idle = () => page.waitForFunction(() => window.gipf.state() !== null && !window.gipf.busy(), null, { timeout: 60000 });
/** Clicks a cell where a person would: on its piece if it has one. */
const clickCell = (cell) => page.locator(`#board [data-cell="${cell}"]`).last().click({ force: true });

/** Plays `action` by clicks, as a person would. */
async function playByClicks(action) {
    if (action === "x-") {
        await page.click("#leave");
    } else if (action.startsWith("x")) {
        for (const cell of action.slice(1).split(",")) await clickCell(cell);
        await page.click("#remove");
    } else {
        const gipf = action.startsWith("G");
        const [dot, point] = action.replace(/^G/, "").split("-");
        if ((await page.isChecked("#gipf-piece")) !== gipf) await page.click("#gipf-piece");
        await clickCell(dot);
        await clickCell(point);
    }
}

await page.goto(job.url);
await idle();

// A whole game against the exported model, played by clicks to its end.
await page.selectOption("#opponent", "model");
await page.fill("#strength", "8");
await page.selectOption("#variant", "standard");
await page.click("#new-game");
await idle();
let turns = 0;
let seed = 7;
let shown = null;
for (let s = await state(); !s.winner && turns < 400; s = await state()) {
    const before = s.moves.length;
    // A seeded choice among the legal actions, pushes of the GIPF piece left out.
    const legal = s.legal.filter((a) => !a.startsWith("G"));
    seed = (seed * 1103515245 + 12345) % 2147483648;
    await playByClicks(legal[seed % legal.length]);
    await page.waitForFunction((n) => window.gipf.state().moves.length > n, before, { timeout: 60000 });
    await idle();
    turns++;
    // After the model's first move: its candidate pushes and its value on the board.
    if (turns === 1) {
        shown = { arrows: await page.locator("#arrows .arrow").count(),
            bar: await page.evaluate(() => document.getElementById("value-fill").style.width),
            plotted: await page.evaluate(() => window.gipf.values().length) };
    }
}
const end = await state();
const game = { moves: end.moves.length, winner: end.winner, status: await page.textContent("#status"),
    thinking: await page.textContent("#thinking"), shown_moves: await page.locator("#moves li").count(),
    shown, values: await page.evaluate(() => window.gipf.values().length) };

// Illegal clicks: refused with a visible message, nothing played.
await page.selectOption("#human", "white");
await page.click("#new-game");
await idle();
const illegal = [];
await clickCell("e5");
illegal.push({ click: "e5", message: await page.textContent("#message"), moves: (await state()).moves.length });
await clickCell("a1");
await clickCell("e5");
await page.waitForFunction(() => document.getElementById("message").textContent !== "", null, { timeout: 10000 });
illegal.push({ click: "a1 then e5", message: await page.textContent("#message"), moves: (await state()).moves.length });

// Undo: the player's action and the opponent's reply are taken back.
await playByClicks("b1-b2");
await page.waitForFunction(() => window.gipf.state().moves.length >= 2, null, { timeout: 60000 });
await idle();
const beforeUndo = (await state()).moves.length;
await page.click("#undo");
await page.waitForFunction((n) => window.gipf.state().moves.length < n, beforeUndo, { timeout: 10000 });
await idle();
const afterUndo = await state();
const undo = { before: beforeUndo, after: afterUndo.moves.length, to_act: afterUndo.to_act };

// "Analyse my moves": the model searches the player's position in the
// background (the board stays free), then shows its candidates and value;
// a click during a long analysis plays at once.
const valuesBefore = await page.evaluate(() => window.gipf.values().length);
await page.fill("#strength", "100000");
await page.click("#analyse");
const busyWhileAnalysing = await page.evaluate(() => window.gipf.busy());
await page.selectOption("#opponent", "random");
await playByClicks("b1-b2");
await page.waitForFunction(() => window.gipf.state().moves.length >= 2, null, { timeout: 10000 });
await page.waitForFunction((n) => window.gipf.values().length > n, valuesBefore, { timeout: 60000 });
const analysis = { busy_while_analysing: busyWhileAnalysing, moves: (await state()).moves.length,
    values_before: valuesBefore, values: await page.evaluate(() => window.gipf.values()),
    arrows: await page.locator("#arrows .arrow").count() };
await page.click("#analyse");
await page.selectOption("#opponent", "model");

// A removal that keeps a GIPF piece, from a position given as JSON.
await page.selectOption("#human", "both");
await page.click("summary");
await page.fill("#position", JSON.stringify({ variant: "standard",
    board: { c3: "W", c4: "w", c5: "w", e5: "B", f5: "B" }, reserve: { white: 12, black: 14 }, to_move: "white" }));
await page.click("#load-position");
await idle();
await playByClicks("c1-c2");
await page.waitForFunction(() => window.gipf.state().phase === "remove", null, { timeout: 60000 });
const legalRemovals = (await state()).legal;
await playByClicks("xc2,c4,c5");
await page.waitForFunction(() => window.gipf.state().phase === "push", null, { timeout: 60000 });
const afterRemoval = await state();
const removal = { legal: legalRemovals, board: afterRemoval.board, reserve: afterRemoval.reserve,
    gipf_pieces_shown: await page.locator("#pieces circle.gipf").count() };

// Parity with the native engine: the network's outputs and the search's choice.
const parity = [];
for (let i = 0; i < job.positions.length; i++) {
    const answer = await page.evaluate(async ({ actions, planes, simulations, search }) => {
        const ask = window.gipf.ask;
        await ask({ cmd: "new", variant: "standard" });
        for (const action of actions) {
            const played = await ask({ cmd: "play", action });
            if (played.error) return { error: played.error };
        }
        const move = await ask({ cmd: "model_move", simulations, search });
        const evaluated = await ask({ cmd: "evaluate", planes });
        return { action: move.action, seconds: move.seconds, error: move.error || evaluated.error,
            outputs: evaluated.outputs };
    }, { actions: job.positions[i], planes: job.planes[i], simulations: job.simulations, search: job.search });
    parity.push(answer);
}

await browser.close();
console.log(JSON.stringify({ off_origin: offOrigin, game, illegal, undo, analysis, removal, parity, errors }));
