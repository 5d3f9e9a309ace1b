// The engine's Web Worker: the GIPF core compiled to WebAssembly
// (engine.wasm, the crate web/engine) and the exported network run by
// onnxruntime-web (model/model.onnx). Everything it loads comes from the
// page's own origin.
//
// Messages in: {id, request} with request one of the engine's JSON requests
// (web/engine/src/lib.rs), or {cmd: "model_move", simulations, search}: the
// network's search, its batches evaluated here (a later request cancels
// it); or {cmd: "evaluate", planes}: the network's raw outputs for some
// input planes (for checks).
// Messages out: {id, answer}.

import * as ort from "./ort/ort.wasm.min.mjs";

ort.env.wasm.wasmPaths = new URL("./ort/", import.meta.url).href;
// One thread: a worker without cross-origin isolation has no shared memory.
ort.env.wasm.numThreads = 1;

const INPUT_SIZE = 19 * 7 * 7;

let engine = null;
let session = null;
let card = null;

async function loadEngine() {
    const bytes = await (await fetch("engine.wasm")).arrayBuffer();
    const { instance } = await WebAssembly.instantiate(bytes, {});
    engine = instance.exports;
}

/** One JSON request to the engine, one parsed answer. */
function ask(request) {
    const text = new TextEncoder().encode(JSON.stringify(request));
    const ptr = engine.gipf_alloc(text.length);
    new Uint8Array(engine.memory.buffer, ptr, text.length).set(text);
    const len = engine.gipf_handle(ptr, text.length);
    engine.gipf_free(ptr, text.length);
    const bytes = new Uint8Array(engine.memory.buffer, engine.gipf_answer_ptr(), len);
    return JSON.parse(new TextDecoder().decode(bytes));
}

async function loadModel() {
    if (session) return;
    card = await (await fetch("model/model.json")).json();
    // The model card's encoding and action table must be the engine's.
    const engineEncoding = ask({ cmd: "encoding" });
    if (card.encoding_version !== engineEncoding.encoding_version) {
        throw new Error(`model.json: encoding version ${card.encoding_version}, the engine's is ${engineEncoding.encoding_version}`);
    }
    const differ = card.actions.findIndex((a, i) => a !== engineEncoding.actions[i]);
    if (differ >= 0 || card.actions.length !== engineEncoding.actions.length) {
        throw new Error(`model.json: its action table differs from the engine's at index ${differ}`);
    }
    const model = await (await fetch("model/model.onnx")).arrayBuffer();
    session = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
}

/** The network on `count` positions' planes: count * (actions + 1) floats. */
async function runModel(planes, count) {
    const input = new ort.Tensor("float32", planes, [count, 19, 7, 7]);
    const outputs = await session.run({ [session.inputNames[0]]: input });
    return outputs[session.outputNames[0]].data;
}

/**
 * Counts the requests that end a search in flight: while the network runs a
 * batch, other messages are handled (a move played, another search); the
 * search whose number is no longer the newest stops and answers
 * {cancelled: true} without touching the engine again.
 */
let searches = 0;

// Between batches a search lets the worker's other messages in (a posted
// message is a task; the network's promise alone would not let them run).
const channel = new MessageChannel();
const resumes = [];
channel.port1.onmessage = () => resumes.shift()();
const letMessagesIn = () => new Promise((resolve) => {
    resumes.push(resolve);
    channel.port2.postMessage(null);
});

/** The network's search for the position in play. */
async function modelMove(simulations, search) {
    await loadModel();
    const mine = ++searches;
    const started = performance.now();
    let answer = ask({ cmd: "think", simulations, search });
    while (answer.batch) {
        const count = answer.batch;
        const planes = new Float32Array(engine.memory.buffer, engine.gipf_input_ptr(), count * INPUT_SIZE).slice();
        const out = await runModel(planes, count);
        await letMessagesIn();
        if (mine !== searches) return { cancelled: true };
        // The engine's buffers may have moved while the network ran.
        new Float32Array(engine.memory.buffer, engine.gipf_output_ptr(), out.length).set(out);
        answer = ask({ cmd: "feed" });
    }
    if (answer.done) answer.seconds = (performance.now() - started) / 1000;
    return answer;
}

const ready = loadEngine();

self.onmessage = async (event) => {
    const { id, request } = event.data;
    let answer;
    try {
        await ready;
        if (request.cmd === "model_move") {
            answer = await modelMove(request.simulations, request.search);
        } else if (request.cmd === "evaluate") {
            await loadModel();
            const planes = Float32Array.from(request.planes);
            answer = { outputs: Array.from(await runModel(planes, planes.length / INPUT_SIZE)) };
        } else if (request.cmd === "model_card") {
            await loadModel();
            answer = { card: { step: card.step, variant: card.variant, network: card.network } };
        } else {
            searches++;
            answer = ask(request);
        }
    } catch (e) {
        answer = { error: String(e && e.message ? e.message : e) };
    }
    self.postMessage({ id, answer });
};
