// The GIPF web board: draws the board as SVG, turns clicks into actions in
// the notation, and asks the engine's Web Worker (worker.js) to check and
// play them, and to choose the opponent's.

const worker = new Worker("worker.js", { type: "module" });
const waiting = new Map();
/** The requests in flight that the board does not wait on (analysis). */
const background = new Set();
let nextId = 0;
worker.onmessage = (event) => {
    waiting.get(event.data.id)(event.data.answer);
    waiting.delete(event.data.id);
    background.delete(event.data.id);
};

/** One request to the engine (see web/engine/src/lib.rs and worker.js). */
function ask(request, inBackground = false) {
    return new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        if (inBackground) background.add(id);
        worker.postMessage({ id, request });
    });
}

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const SIZE = 62;
const X0 = 105;
const Y0 = 82;

let cells = [];
let state = null;
let selectedDot = null;
let selected = new Set();
let lastMove = null;
let busy = false;
/** Whether the page waits on the engine: the opponent thinking, or a request in flight (not an analysis). */
const engaged = () => busy || waiting.size > background.size;
let seed = 1;

function coordinates(cell) {
    const up = cell.number - 1 + Math.abs(cell.column - 4) / 2;
    return [X0 + (cell.column * SIZE * Math.sqrt(3)) / 2, Y0 + (8 - up) * SIZE];
}

function element(name, attributes, parent) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    parent.appendChild(e);
    return e;
}

function message(text) {
    $("message").textContent = text;
}

/** The lines, the dots with their names on the rim, and a click target on every cell. */
function drawBoard() {
    const board = $("board");
    board.replaceChildren();
    const head = element("marker", { id: "head", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 4,
        markerHeight: 4, orient: "auto" }, element("defs", {}, board));
    element("path", { d: "M0,0 L10,5 L0,10 z", class: "head" }, head);
    const center = [X0 + 4 * SIZE * (Math.sqrt(3) / 2), Y0 + 4 * SIZE];
    for (const a of cells) {
        for (const b of cells) {
            if (a.cell >= b.cell || (a.dot && b.dot)) continue;
            const [ax, ay] = coordinates(a);
            const [bx, by] = coordinates(b);
            if (Math.hypot(ax - bx, ay - by) < SIZE * 1.05) {
                element("line", { x1: ax, y1: ay, x2: bx, y2: by, class: "line" }, board);
            }
        }
    }
    for (const c of cells) {
        const [x, y] = coordinates(c);
        if (c.dot) {
            const [dx, dy] = [x - center[0], y - center[1]];
            const d = Math.hypot(dx, dy);
            element("text", { x: x + (dx / d) * 22, y: y + (dy / d) * 22, class: "label" }, board).textContent = c.cell;
        }
        const target = element("circle", { cx: x, cy: y, r: c.dot ? 9 : 24, class: c.dot ? "dot" : "point" }, board);
        target.dataset.cell = c.cell;
        element("title", {}, target).textContent = c.cell;
        target.addEventListener("click", () => clickCell(c));
    }
    element("g", { id: "pieces" }, board);
    // The model's candidate pushes, above the pieces; they take no clicks.
    element("g", { id: "arrows" }, board);
}

/** The pieces, the selection, the counts, the moves and the buttons. */
function render() {
    const layer = $("pieces");
    layer.replaceChildren();
    const removable = new Set();
    for (const action of state.legal) {
        if (action.startsWith("x") && action !== "x-") action.slice(1).split(",").forEach((c) => removable.add(c));
    }
    for (const c of cells) {
        const piece = state.board[c.cell];
        const [x, y] = coordinates(c);
        if (!piece) continue;
        const classes = ["piece", piece.toLowerCase() === "w" ? "white" : "black"];
        if (piece === "W" || piece === "B") classes.push("gipf");
        if (selected.has(c.cell)) classes.push("selected");
        else if (removable.has(c.cell) && humanToAct()) classes.push("removable");
        const disc = element("circle", { cx: x, cy: y, r: 21, class: classes.join(" ") }, layer);
        disc.dataset.cell = c.cell;
        disc.dataset.piece = piece;
        element("title", {}, disc).textContent = c.cell;
        disc.addEventListener("click", () => clickCell(c));
    }
    if (lastMove) {
        const entry = cells.find((c) => c.cell === lastMove);
        if (entry) {
            const [x, y] = coordinates(entry);
            element("circle", { cx: x, cy: y, r: 26, class: "last" }, layer);
        }
    }
    document.querySelectorAll(".dot").forEach((d) => d.classList.toggle("selected", d.dataset.cell === selectedDot));
    for (const color of ["white", "black"]) {
        $(`reserve-${color}`).textContent = state.reserve[color];
        $(`captured-${color}`).textContent = state.captured[color];
    }
    const moves = $("moves");
    moves.replaceChildren();
    state.moves.forEach((m) => {
        const li = document.createElement("li");
        li.textContent = m;
        moves.appendChild(li);
    });
    moves.scrollTop = moves.scrollHeight;
    const removing = state.phase === "remove" && humanToAct();
    $("remove").disabled = !removing || selected.size === 0;
    $("leave").hidden = !(removing && state.legal.includes("x-"));
    $("gipf-label").hidden = !(state.phase === "push" && state.legal.some((a) => a.startsWith("G")));
    $("status").textContent = statusLine();
}

function statusLine() {
    if (state.winner) return `${capitalize(state.winner)} wins.`;
    const who = capitalize(state.to_act);
    const what = state.phase === "push" ? "to push" : "to decide a removal";
    const you = humanToAct() ? " (you)" : busy ? " (thinking…)" : "";
    return `${who} ${what}${you}.`;
}

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);

function humanToAct() {
    const side = $("human").value;
    return Boolean(state && state.to_act && (side === "both" || side === state.to_act));
}

function clickCell(cell) {
    if (!state || engaged()) return;
    message("");
    if (state.winner) {
        message("The game is over: start a new one.");
        return;
    }
    if (!humanToAct()) {
        message("It is the opponent's turn.");
        return;
    }
    if (state.phase === "push") {
        if (cell.dot) {
            selectedDot = selectedDot === cell.cell ? null : cell.cell;
            render();
        } else if (!selectedDot) {
            message(`${cell.cell}: a push starts at a dot on the rim; click a dot, then the point next to it.`);
        } else {
            const gipf = $("gipf-piece").checked && !$("gipf-label").hidden ? "G" : "";
            const action = `${gipf}${selectedDot}-${cell.cell}`;
            selectedDot = null;
            play(action);
        }
    } else if (state.phase === "remove") {
        if (!state.board[cell.cell]) {
            message(`${cell.cell} is empty: click the pieces of the row to remove.`);
            return;
        }
        if (selected.has(cell.cell)) selected.delete(cell.cell);
        else selected.add(cell.cell);
        render();
    }
}

/** Plays an action (the engine checks it), then lets the opponent act. */
async function play(action) {
    const answer = await ask({ cmd: "play", action });
    if (answer.error) {
        message(answer.error);
        render();
        return;
    }
    $("arrows").replaceChildren();
    state = answer;
    selected = new Set();
    lastMove = action.includes("-") && !action.startsWith("x") ? action.split("-")[1] : null;
    render();
    await opponentTurn();
}

/** The most each opponent's strength may be (the engine refuses more). */
const MAX_STRENGTH = { model: 100000, uct: 100000, alphabeta: 5, classic: 5 };

/** The strength typed, brought within 1 and the opponent's most. */
function strength() {
    const max = MAX_STRENGTH[$("opponent").value] || 1;
    const n = Math.min(max, Math.max(1, parseInt($("strength").value, 10) || 1));
    $("strength").value = n;
    return n;
}

function opponentSpec() {
    const kind = $("opponent").value;
    return ["uct", "alphabeta", "classic"].includes(kind) ? `${kind}:${strength()}` : kind;
}

/** The model's value for white after each of its searches: [move number, value]. */
let values = [];

/** The model's candidate pushes as arrows from their dot, thicker and darker with their share of visits. */
function drawArrows(visits) {
    const layer = $("arrows");
    layer.replaceChildren();
    const total = visits.reduce((sum, [, n]) => sum + n, 0) || 1;
    const best = visits.length > 0 ? visits[0][1] / total : 1;
    for (const [action, n] of visits.slice(0, 5)) {
        const push = /^G?([a-i]\d)-([a-i]\d)$/.exec(action);
        const from = push && cells.find((c) => c.cell === push[1]);
        const to = push && cells.find((c) => c.cell === push[2]);
        if (!from || !to) continue;
        const share = n / total;
        const [x1, y1] = coordinates(from);
        const [x2, y2] = coordinates(to);
        const arrow = element("line", { x1, y1, x2, y2, class: "arrow", "marker-end": "url(#head)" }, layer);
        arrow.style.strokeWidth = 2 + 8 * share;
        arrow.style.opacity = 0.3 + (0.7 * share) / best;
        element("title", {}, arrow).textContent = `${action}: ${Math.round(100 * share)}% of the visits`;
    }
}

/** The value bar (white's share) and the plot of the value over the game. */
function drawValues() {
    const last = values.length > 0 ? values[values.length - 1][1] : 0;
    $("value-fill").style.width = `${(50 * (1 + last)).toFixed(1)}%`;
    $("value-bar").title = `the model's value for white: ${last >= 0 ? "+" : ""}${last.toFixed(2)}`;
    const plot = $("value-plot");
    plot.replaceChildren();
    element("line", { x1: 0, y1: 30, x2: 200, y2: 30, class: "axis" }, plot);
    const moves = Math.max(20, ...values.map(([move]) => move));
    const points = values.map(([move, v]) => `${((200 * move) / moves).toFixed(1)},${(30 - 28 * v).toFixed(1)}`);
    element("polyline", { points: points.join(" "), class: "values" }, plot);
}

function showThinking(answer) {
    drawArrows(answer.visits);
    if (answer.value !== null) {
        values.push([state.moves.length, state.to_act === "white" ? answer.value : -answer.value]);
        drawValues();
    }
    const total = answer.visits.reduce((sum, [, n]) => sum + n, 0) || 1;
    const top = answer.visits.slice(0, 5).map(([a, n]) => `${a} ${Math.round((100 * n) / total)}%`);
    const value = answer.value === null ? "—" : (answer.value >= 0 ? "+" : "") + answer.value.toFixed(2);
    $("thinking").textContent =
        `value ${value} for ${state.to_act}; ${answer.simulations} simulations in ` +
        `${Math.round(answer.seconds * 1000)} ms; visits: ${top.join(", ")}`;
}

/**
 * With "analyse my moves" on, the model's search of the player's position:
 * its candidate pushes and its value, as for its own moves. It runs in the
 * background: a click plays at once, and the analysis of a position left
 * behind is dropped.
 */
async function analyse() {
    if (!$("analyse").checked || !state || state.winner || !humanToAct()) return;
    const moves = state.moves.length;
    const simulations = $("opponent").value === "model" ? strength() : 64;
    const answer = await ask({ cmd: "model_move", simulations }, true);
    if (!answer.done || state.moves.length !== moves || !humanToAct() || !$("analyse").checked) return;
    showThinking(answer);
}

/** The opponent's actions, as long as it is to act (it may act twice in a row); then the analysis. */
async function opponentTurn() {
    while (state.to_act && !state.winner && !humanToAct()) {
        busy = true;
        render();
        let answer;
        if ($("opponent").value === "model") {
            const simulations = strength();
            answer = await ask({ cmd: "model_move", simulations });
            if (answer.done) showThinking(answer);
        } else {
            answer = await ask({ cmd: "baseline", player: opponentSpec(), seed: seed++ });
            $("thinking").textContent = `${opponentSpec()} chose ${answer.action || "—"}`;
        }
        if (answer.error) {
            busy = false;
            message(`The opponent could not move: ${answer.error}`);
            render();
            return;
        }
        const played = await ask({ cmd: "play", action: answer.action });
        // Busy until the action is on the board: a page that looks idle shows whose turn it is.
        busy = false;
        if (played.error) {
            message(played.error);
            return;
        }
        state = played;
        lastMove = answer.action.includes("-") && !answer.action.startsWith("x") ? answer.action.split("-")[1] : null;
        render();
    }
    await analyse();
}

async function newGame() {
    await begin(await ask({ cmd: "new", variant: $("variant").value }));
}

async function loadPosition() {
    let position;
    try {
        position = JSON.parse($("position").value);
    } catch (e) {
        message(`The position is not JSON: ${e.message}`);
        return;
    }
    const answer = await ask({ cmd: "setup", position });
    if (answer.error) message(answer.error);
    else await begin(answer);
}

async function begin(answer) {
    state = answer;
    $("variant").value = state.variant;
    selectedDot = null;
    selected = new Set();
    lastMove = null;
    message("");
    $("thinking").textContent = "—";
    $("arrows").replaceChildren();
    values = [];
    drawValues();
    render();
    await opponentTurn();
}

/** Takes back the last action, and the opponent's before it, to the player's turn. */
async function undo() {
    if (engaged()) return;
    const answer = await ask({ cmd: "undo" });
    if (answer.error) {
        message(answer.error);
        return;
    }
    state = answer;
    while (!humanToAct() && state.moves.length > 0) {
        const earlier = await ask({ cmd: "undo" });
        if (earlier.error) break;
        state = earlier;
    }
    selected = new Set();
    selectedDot = null;
    lastMove = null;
    message("");
    $("arrows").replaceChildren();
    values = values.filter(([move]) => move < state.moves.length);
    drawValues();
    render();
    await opponentTurn();
}

function strengthHelp() {
    const help = {
        model: "simulations per action (1 to 100000)",
        uct: "random playouts per action (1 to 100000)",
        classic: "depth in pushes (1 to 5)",
        alphabeta: "depth in pushes (1 to 5)",
        greedy: "(no setting)",
        random: "(no setting)",
    };
    $("strength-help").textContent = help[$("opponent").value];
    $("strength").max = MAX_STRENGTH[$("opponent").value] || 1;
    if (["alphabeta", "classic"].includes($("opponent").value)) $("strength").value = 2;
    if ($("opponent").value === "uct") $("strength").value = 1000;
    if ($("opponent").value === "model") $("strength").value = 64;
}

async function start() {
    cells = (await ask({ cmd: "layout" })).cells;
    drawBoard();
    $("new-game").addEventListener("click", newGame);
    $("load-position").addEventListener("click", loadPosition);
    $("undo").addEventListener("click", undo);
    $("remove").addEventListener("click", () => play("x" + [...selected].join(",")));
    $("leave").addEventListener("click", () => play("x-"));
    $("opponent").addEventListener("change", strengthHelp);
    $("human").addEventListener("change", () => render());
    $("analyse").addEventListener("change", () => {
        if (!engaged()) analyse();
    });
    // Served with a run (`gipf serve --run`): a link to its progress.
    fetch("run/progress.json").then((answer) => ($("run-link").hidden = !answer.ok), () => {});
    await newGame();
}

// For tests and the curious: the engine's requests, and the state shown.
window.gipf = { ask, state: () => state, busy: engaged, values: () => values };
start();
