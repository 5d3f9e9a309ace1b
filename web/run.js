// The run's page: `gipf serve --run RUN` answers run/progress.json (see
// src/progress.rs) and run/ratings.png; this shows them and asks again
// every 30 seconds.

const $ = (id) => document.getElementById(id);
const number = (x) => Math.round(x).toLocaleString("en");

function rate(r, what, samples) {
    if (!r) return "—";
    return `${number(r.per_hour)} ${what} and ${number(r.samples_per_hour)} ${samples} an hour ` +
        `(over ${r.minutes.toFixed(0)} minutes)`;
}

async function refresh() {
    const answer = await fetch("run/progress.json");
    if (!answer.ok) {
        $("updated").textContent = `The run cannot be read: ${await answer.text()}`;
        return;
    }
    const p = await answer.json();
    const n = p.newest;
    $("newest").textContent = n
        ? `step ${number(n.step)} (${n.file}), ${number(n.age_seconds / 60)} minutes ago` +
          (n.samples_read === null ? "" : `; ${number(n.samples_read)} samples read`)
        : "none yet";
    $("training").textContent = rate(p.training, "steps", "samples read");
    $("selfplay").textContent = rate(p.selfplay, "games", "positions");
    $("elo").hidden = !p.elo_plot;
    $("no-elo").hidden = p.elo_plot;
    if (p.elo_plot) $("elo").src = `run/ratings.png?${Date.now()}`;
    $("updated").textContent = `Updated ${new Date().toLocaleTimeString()}.`;
}

refresh();
setInterval(refresh, 30000);
