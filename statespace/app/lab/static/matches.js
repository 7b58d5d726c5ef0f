// statespace rating lab, the matches mode: matches of many sides (teams, free-for-all rankings)
// typed one competitor per line, rated through POST api/v1/rate-matches. Shares lab.js's helpers
// (window.statespaceLab): the leaderboard is drawn by the same code as the games'.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  let lab = null;
  let examples = null;   // {ffa: request, teams: request}
  let rowLines = [];     // matches[i] comes from line rowLines[i] of the matches box

  function readRows() {
    const rows = [];
    rowLines = [];
    $("matches").value.split(/\r?\n/).forEach((line, i) => {
      const t = line.trim();
      if (t === "" || t.startsWith("#")) return;
      const cells = t.split(/[,;\t]/).map((c) => c.trim());
      if (i === 0 && /^match$/i.test(cells[0])) return; // a header line
      const rank = lab.numberOrText(cells[3] || "");
      const row = { match: cells[0] || "", competitor: cells[1] || "", rank: rank === undefined ? "" : rank };
      if (cells[2]) row.side = cells[2];
      if (cells[4] !== undefined && cells[4] !== "") row.weight = lab.numberOrText(cells[4]);
      rows.push(row);
      rowLines.push(i + 1);
    });
    return rows;
  }

  function readSettings() {
    // "k=24, beta=5": each value a number where it reads as one
    const settings = {};
    $("match-settings").value.split(/[,;\s]+/).forEach((pair) => {
      if (!pair) return;
      const [key, ...rest] = pair.split("=");
      settings[key.trim()] = rest.length ? lab.numberOrText(rest.join("=")) : "";
    });
    return settings;
  }

  function where(field) {
    const m = /^matches\[(\d+)\]/.exec(field || "");
    return m && rowLines[+m[1]] !== undefined ? ` (line ${rowLines[+m[1]]} of the matches)` : "";
  }

  function fillForm(example) {
    $("matches").value = example.matches.map((r) =>
      [r.match, r.competitor, r.side || "", r.rank].concat(r.weight !== undefined ? [r.weight] : []).join(",")).join("\n");
    $("match-method").value = example.method || "elo";
    $("match-settings").value = Object.entries(example.settings || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  }

  async function run() {
    lab.clearError("match-error");
    const req = { matches: readRows(), method: $("match-method").value, settings: readSettings() };
    $("match-status").textContent = "rating…";
    $("run-matches").disabled = true;
    try {
      const result = await lab.post("api/v1/rate-matches", req);
      render(result);
      $("match-status").textContent = `${result.n_matches} match${result.n_matches === 1 ? "" : "es"}, ` +
        `${result.players.length} players`;
      document.body.dataset.state = "rated";
    } catch (err) {
      lab.showError(err, "match-error", where);
      $("match-status").textContent = "";
      document.body.dataset.state = "error";
    } finally {
      $("run-matches").disabled = false;
    }
  }

  function render(result) {
    const boards = $("match-board");
    boards.innerHTML = "";
    boards.appendChild(lab.board(Object.assign({}, result, { count: "matches", notes: [] })));
    const table = $("match-forecasts");
    table.innerHTML = "";
    table.appendChild(lab.cell("caption", "Each side's forecast strength before its match, and the place it predicted"));
    const head = document.createElement("tr");
    [["match", ""], ["side", ""], ["place", "num"], ["forecast", "num"], ["predicted", "num"]].forEach(([t, c]) =>
      head.appendChild(lab.cell("th", t, { scope: "col" }, c)));
    table.appendChild(head);
    const d = result.method === "elo" || result.method === "ekf" ? 1 : 2;
    result.matches.forEach((m) => m.sides.forEach((s, i) => {
      const tr = document.createElement("tr");
      tr.appendChild(lab.cell("td", i === 0 ? m.match : ""));
      tr.appendChild(lab.cell("td", (s.side ? s.side + ": " : "") + s.members.join(" + ")));
      tr.appendChild(lab.cell("td", String(s.rank), {}, "num"));
      tr.appendChild(lab.cell("td", lab.fmt(s.strength, d) + (s.sd === null ? "" : ` ± ${lab.fmt(s.sd, d)}`), {
        "data-match": m.match, "data-side": String(i), "data-field": "strength", "data-value": String(s.strength) },
        "num"));
      tr.appendChild(lab.cell("td", String(s.predicted_rank), {}, "num"));
      table.appendChild(tr);
    }));
  }

  function setMode(mode) {
    document.body.dataset.mode = mode;
    ["games", "matches"].forEach((m) => $("mode-" + m).setAttribute("aria-selected", String(m === mode)));
  }

  document.addEventListener("DOMContentLoaded", async () => {
    lab = window.statespaceLab;
    $("mode-games").addEventListener("click", () => setMode("games"));
    $("mode-matches").addEventListener("click", () => setMode("matches"));
    $("run-matches").addEventListener("click", run);
    ["ffa", "teams"].forEach((key) => $("example-" + key).addEventListener("click", () => {
      if (examples) { fillForm(examples[key]); run(); }
    }));
    try {
      const data = await (await fetch("api/v1/match-methods")).json();
      examples = data.examples;
      data.methods.forEach((m) => $("match-method").appendChild(lab.cell("option", m.label, { value: m.method })));
      const hint = () => {
        const m = data.methods.find((x) => x.method === $("match-method").value);
        $("match-settings").placeholder = m ? m.settings.map((k) => k + "=").join(", ") : "";
      };
      $("match-method").addEventListener("change", hint);
      $("match-method").value = "elo";
      hint();
    } catch (e) {
      lab.showError(new Error("cannot load the methods that rate matches: " + e.message), "match-error");
    }
  });
})();
