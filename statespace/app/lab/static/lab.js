// statespace rating lab: reads the form, asks the JSON API (same origin), draws the results.
// No framework and nothing from another host: tables are built with the DOM, the chart is inline SVG.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const COLORS = ["#2457a6", "#c0392b", "#1e8449", "#8e44ad", "#d68910", "#138d90", "#7f8c8d", "#a04000"];
  const METHODS = ["elo", "elo_fide", "glicko", "glicko2", "trueskill", "ekf"];

  let examples = null;     // {glickman: request, club: request}
  let lastRequest = null;  // the request of the results shown
  let lastResult = null;
  let gameLines = [];      // games[i] comes from line gameLines[i] of the games box

  // ------------------------------------------------------------------ form <-> request
  function numberOrText(text) {
    // a number the API reads as one; anything else is sent as typed, for the API to name the field
    const t = text.trim();
    if (t === "") return undefined;
    const x = Number(t);
    return t !== "" && Number.isFinite(x) ? x : t;
  }

  function readGames() {
    const games = [];
    gameLines = [];
    $("games").value.split(/\r?\n/).forEach((line, i) => {
      const t = line.trim();
      if (t === "" || t.startsWith("#")) return;
      const cells = t.split(/[,;\t]/).map((c) => c.trim());
      if (i === 0 && /^period$/i.test(cells[0])) return; // a header line
      const period = numberOrText(cells[0] || "");
      games.push({ period: period === undefined ? "" : period, player: cells[1] || "", opponent: cells[2] || "",
                   score: cells[3] === undefined ? "" : cells[3] });
      gameLines.push(i + 1);
    });
    return games;
  }

  function addPlayerRow(p) {
    const tr = document.createElement("tr");
    const fields = ["name", "rating", "rd", "volatility"];
    fields.forEach((f) => {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "text";
      input.dataset.field = f;
      input.setAttribute("aria-label", f === "rd" ? "RD" : f);
      if (f !== "name") input.inputMode = "decimal";
      if (p && p[f] !== undefined && p[f] !== null) input.value = String(p[f]);
      td.appendChild(input);
      tr.appendChild(td);
    });
    const td = document.createElement("td");
    const rm = document.createElement("button");
    rm.type = "button"; rm.className = "small"; rm.textContent = "×";
    rm.setAttribute("aria-label", "remove this row");
    rm.addEventListener("click", () => tr.remove());
    td.appendChild(rm);
    tr.appendChild(td);
    $("players").appendChild(tr);
  }

  function readPlayers() {
    const players = [];
    $("players").querySelectorAll("tr").forEach((tr) => {
      const get = (f) => tr.querySelector(`input[data-field="${f}"]`).value;
      const name = get("name").trim();
      const p = { name: name };
      ["rating", "rd", "volatility"].forEach((f) => {
        const v = numberOrText(get(f));
        if (v !== undefined) p[f] = v;
      });
      if (name === "" && Object.keys(p).length === 1) return; // an empty row
      players.push(p);
    });
    return players;
  }

  function readMethods() {
    const methods = METHODS.filter((m) => $("m-" + m).checked);
    const settings = {};
    document.querySelectorAll("#methods input[data-setting]").forEach((input) => {
      const v = numberOrText(input.value);
      if (v === undefined || !methods.includes(input.dataset.method)) return;
      (settings[input.dataset.method] = settings[input.dataset.method] || {})[input.dataset.setting] = v;
    });
    return { methods, settings };
  }

  function buildRequest() {
    const { methods, settings } = readMethods();
    const req = { games: readGames(), players: readPlayers(), methods: methods, settings: settings };
    const a = $("odds-a").value, b = $("odds-b").value;
    const names = new Set();
    req.games.forEach((g) => { names.add(g.player); names.add(g.opponent); });
    if (a && b && a !== b && names.has(a) && names.has(b)) {
      req.pair = { a: a, b: b };
    } else {
      const first = [...names].filter((n) => typeof n === "string" && n.trim() !== "");
      if (first.length >= 2) req.pair = { a: first[0], b: first[1] };
    }
    return req;
  }

  function fillForm(example) {
    $("games").value = example.games.map((g) => [g.period, g.player, g.opponent, g.score].join(",")).join("\n");
    $("players").innerHTML = "";
    (example.players || []).forEach(addPlayerRow);
    if (!(example.players || []).length) addPlayerRow();
    METHODS.forEach((m) => { $("m-" + m).checked = (example.methods || METHODS).includes(m); });
    document.querySelectorAll("#methods input[data-setting]").forEach((input) => {
      const s = (example.settings || {})[input.dataset.method] || {};
      input.value = s[input.dataset.setting] !== undefined ? String(s[input.dataset.setting]) : "";
    });
    if (example.tau !== undefined) $("s-glicko2-tau").value = String(example.tau);
    setSelect($("odds-a"), [], null);
    setSelect($("odds-b"), [], null);
    if (example.pair) {
      setSelect($("odds-a"), [example.pair.a], example.pair.a);
      setSelect($("odds-b"), [example.pair.b], example.pair.b);
    }
  }

  // ------------------------------------------------------------------ talking to the API
  async function post(path, body) {
    let response;
    try {
      response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                     body: JSON.stringify(body) });
    } catch (e) {
      throw new Error("the lab's server does not answer (" + e.message + ")");
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const err = new Error(data && data.detail ? data.detail : `HTTP ${response.status}`);
      err.items = data && data.errors ? data.errors : [];
      err.status = response.status;
      throw err;
    }
    return data;
  }

  function where(field) {
    // where a field of the request is on the page
    if (!field) return "";
    let m = /^games\[(\d+)\]/.exec(field);
    if (m && gameLines[+m[1]] !== undefined) return ` (line ${gameLines[+m[1]]} of the games)`;
    m = /^players\[(\d+)\]/.exec(field);
    if (m) return ` (row ${+m[1] + 1} of the starting ratings)`;
    return "";
  }

  function showError(err, boxId, whereOf) {
    // boxId and whereOf: the matches mode shows its errors in its own box, with its own lines
    const box = $(boxId || "error");
    const at = whereOf || where;
    const items = err.items && err.items.length ? err.items : [{ field: null, message: err.message }];
    box.textContent = items.map((e) => (e.field ? `${e.field}: ${e.message}${at(e.field)}` : e.message)).join("\n");
    if (err.status) box.textContent = `The API refused the request (${err.status}):\n` + box.textContent;
    box.hidden = false;
  }

  function clearError(boxId) { $(boxId || "error").hidden = true; $(boxId || "error").textContent = ""; }

  async function run() {
    clearError();
    const req = buildRequest();
    $("status").textContent = "rating…";
    $("run").disabled = true;
    try {
      const result = await post("api/v1/rate", req);
      lastRequest = req; lastResult = result;
      render(result);
      $("status").textContent = `${result.n_games} game${result.n_games === 1 ? "" : "s"}, ` +
        `${result.players.length} players, ${result.periods.length} period${result.periods.length === 1 ? "" : "s"}`;
      document.body.dataset.state = "rated";
    } catch (err) {
      showError(err);
      $("status").textContent = "";
      document.body.dataset.state = "error";
    } finally {
      $("run").disabled = false;
    }
  }

  async function updateOdds() {
    if (!lastRequest) return;
    const a = $("odds-a").value, b = $("odds-b").value;
    if (!a || !b) return;
    if (a === b) { renderOdds(null, "Choose two different players."); return; }
    clearError();
    try {
      const result = await post("api/v1/rate", Object.assign({}, lastRequest, { pair: { a: a, b: b } }));
      renderOdds(result.odds, null);
    } catch (err) { showError(err); }
  }

  async function runCompare() {
    clearError();
    const { methods, settings } = readMethods();
    const req = { games: readGames(), methods: methods, settings: settings,
                  split: numberOrText($("compare-split").value), mode: $("compare-mode").value };
    $("compare-table").innerHTML = "";
    try {
      const result = await post("api/v1/compare", req);
      renderCompare(result);
    } catch (err) { showError(err); }
  }

  // ------------------------------------------------------------------ rendering
  function fmt(x, digits) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }
  function digitsOf(method) { return method === "trueskill" ? 2 : 1; }

  function cell(tag, text, attrs, cls) {
    const el = document.createElement(tag);
    el.textContent = text;
    if (cls) el.className = cls;
    Object.entries(attrs || {}).forEach(([k, v]) => el.setAttribute(k, v));
    return el;
  }

  function render(result) {
    const boards = $("leaderboards");
    boards.innerHTML = "";
    Object.values(result.methods).forEach((m) => boards.appendChild(board(m)));
    const names = result.players;
    const a = $("odds-a").value, b = $("odds-b").value;
    setSelect($("odds-a"), names, result.odds ? result.odds.a : a);
    setSelect($("odds-b"), names, result.odds ? result.odds.b : b);
    renderOdds(result.odds, null);
    const methods = Object.values(result.methods);
    const chosen = $("chart-method").value;
    $("chart-method").innerHTML = "";
    methods.forEach((m) => $("chart-method").appendChild(cell("option", m.label, { value: m.method })));
    const pick = methods.find((m) => m.method === chosen) || methods.find((m) => m.history.some((h) => h.rd !== null))
      || methods[0];
    if (pick) $("chart-method").value = pick.method;
    renderPlayerChoice(result);
    drawChart();
  }

  function board(m) {
    const div = cell("div", "", { "data-method": m.method }, "board");
    div.appendChild(cell("h3", m.label));
    div.appendChild(cell("p", m.spec, {}, "spec"));
    const table = cell("table", "", { "aria-label": `${m.label} leaderboard` }, "data");
    // != null: a column the answer leaves out (a match's leaderboard has no volatility) is not shown
    const hasRd = m.leaderboard.some((r) => r.rd != null);
    const hasVol = m.leaderboard.some((r) => r.volatility != null);
    const hasCons = m.leaderboard.some((r) => r.conservative != null);
    const head = document.createElement("tr");
    const cols = [["#", "num"], ["player", ""], [m.method === "trueskill" ? "mu" : "rating", "num"]];
    if (hasRd) cols.push([m.method === "trueskill" ? "sigma" : "RD", "num"]);
    if (hasVol) cols.push(["volatility", "num"]);
    if (hasCons) cols.push(["μ − 3σ", "num"]);
    const count = m.count || "games"; // the matches mode counts matches
    cols.push([count, "num"]);
    cols.forEach(([t, c]) => head.appendChild(cell("th", t, { scope: "col" }, c)));
    const thead = document.createElement("thead"); thead.appendChild(head); table.appendChild(thead);
    const tbody = document.createElement("tbody");
    const d = digitsOf(m.method);
    m.leaderboard.forEach((r) => {
      const tr = document.createElement("tr");
      const data = (field, value, digits) => cell("td", fmt(value, digits), {
        "data-method": m.method, "data-player": r.player, "data-field": field,
        "data-value": value === null ? "" : String(value) }, "num");
      tr.appendChild(cell("td", String(r.rank), {}, "num"));
      tr.appendChild(cell("td", r.player));
      tr.appendChild(data("rating", r.rating, d));
      if (hasRd) tr.appendChild(data("rd", r.rd, d));
      if (hasVol) tr.appendChild(data("volatility", r.volatility, 6));
      if (hasCons) tr.appendChild(data("conservative", r.conservative, d));
      tr.appendChild(cell("td", String(r[count]), {}, "num"));
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    div.appendChild(table);
    m.notes.forEach((n) => div.appendChild(cell("p", n, {}, "note")));
    return div;
  }

  function setSelect(select, names, value) {
    select.innerHTML = "";
    names.forEach((n) => select.appendChild(cell("option", n, { value: n })));
    if (value !== null && value !== undefined && names.includes(value)) select.value = value;
  }

  function renderOdds(odds, message) {
    const table = $("odds");
    table.innerHTML = "";
    if (message) { table.appendChild(cell("caption", message)); return; }
    if (!odds || !lastResult) return;
    const head = document.createElement("tr");
    [["method", ""], [`${odds.a} wins`, "num"], ["draw", "num"], [`${odds.b} wins`, "num"],
     [`${odds.a}'s expected score`, "num"]].forEach(([t, c]) => head.appendChild(cell("th", t, { scope: "col" }, c)));
    table.appendChild(head);
    Object.entries(odds.by_method).forEach(([name, o]) => {
      const tr = document.createElement("tr");
      tr.appendChild(cell("td", lastResult.methods[name] ? lastResult.methods[name].label : name));
      [["win", o.win], ["draw", o.draw], ["loss", o.loss], ["expected_score", o.expected_score]].forEach(([f, v]) =>
        tr.appendChild(cell("td", (100 * v).toFixed(1) + "%", { "data-method": name, "data-field": f,
                                                               "data-value": String(v) }, "num")));
      table.appendChild(tr);
    });
  }

  function renderCompare(result) {
    const table = $("compare-table");
    table.innerHTML = "";
    table.appendChild(cell("caption", `${result.mode}, trained on ${result.n_train}, scored on ${result.n_test} games`));
    const head = document.createElement("tr");
    [["method", ""], ["log loss", "num"], ["Brier", "num"], ["Δ log loss ± se", "num"]].forEach(([t, c]) =>
      head.appendChild(cell("th", t, { scope: "col" }, c)));
    table.appendChild(head);
    result.table.forEach((r) => {
      const tr = document.createElement("tr");
      tr.appendChild(cell("td", lastResult && lastResult.methods[r.method] ? lastResult.methods[r.method].label : r.method));
      tr.appendChild(cell("td", fmt(r.log_loss, 4), { "data-method": r.method, "data-field": "log_loss",
                                                      "data-value": String(r.log_loss) }, "num"));
      tr.appendChild(cell("td", fmt(r.brier, 4), {}, "num"));
      tr.appendChild(cell("td", `${fmt(r.delta_log_loss, 4)} ± ${fmt(r.delta_se, 4)}`, {}, "num"));
      table.appendChild(tr);
    });
  }

  function renderPlayerChoice(result) {
    const box = $("chart-players");
    const before = new Set([...box.querySelectorAll("input:checked")].map((i) => i.value));
    box.querySelectorAll("label").forEach((l) => l.remove());
    const method = result.methods[$("chart-method").value];
    const order = method ? method.leaderboard.map((r) => r.player) : result.players;
    const keep = order.filter((n) => before.has(n));
    const chosen = new Set(keep.length ? keep : order.slice(0, 5));
    order.forEach((name, i) => {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox"; input.value = name; input.checked = chosen.has(name);
      input.addEventListener("change", drawChart);
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + name));
      box.appendChild(label);
    });
  }

  function svg(tag, attrs, text) {
    const el = document.createElementNS(SVG, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => el.setAttribute(k, v));
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function niceTicks(lo, hi, n) {
    const span = hi - lo || 1;
    const step0 = span / n;
    const mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => span / s <= n) || 10 * mag;
    const ticks = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) ticks.push(t);
    return { ticks, step };
  }

  function drawChart() {
    const chart = $("chart");
    while (chart.firstChild) chart.removeChild(chart.firstChild);
    if (!lastResult) return;
    const m = lastResult.methods[$("chart-method").value];
    if (!m) return;
    const chosen = [...$("chart-players").querySelectorAll("input:checked")].map((i) => i.value);
    const order = m.leaderboard.map((r) => r.player);
    const periods = lastResult.periods;
    // x positions: "start", then every period of the games
    const xs = ["start"].concat(periods.map(String));
    const W = 720, H = 360, L = 56, R = 110, T = 14, B = 34;
    const series = chosen.map((name) => ({ name, color: COLORS[order.indexOf(name) % COLORS.length],
      points: m.history.filter((h) => h.player === name) }));
    let lo = Infinity, hi = -Infinity;
    series.forEach((s) => s.points.forEach((p) => {
      const band = p.rd === null ? 0 : 1.96 * p.rd;
      lo = Math.min(lo, p.rating - band); hi = Math.max(hi, p.rating + band);
    }));
    if (!Number.isFinite(lo)) { chart.appendChild(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "Choose players to draw.")); return; }
    const pad = (hi - lo) * 0.05 || 1; lo -= pad; hi += pad;
    const x = (p) => L + (xs.length === 1 ? 0 : (xs.indexOf(p === null ? "start" : String(p)) / (xs.length - 1)) * (W - L - R));
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    const { ticks } = niceTicks(lo, hi, 6);
    const d = Math.abs(ticks[1] - ticks[0]) < 1 ? 2 : 0;
    ticks.forEach((t) => {
      chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(t), y2: y(t), class: "grid" }));
      chart.appendChild(svg("text", { x: L - 6, y: y(t) + 4, "text-anchor": "end" }, t.toFixed(d)));
    });
    xs.forEach((label, i) => {
      const px = x(i === 0 ? null : periods[i - 1]);
      chart.appendChild(svg("line", { x1: px, x2: px, y1: H - B, y2: H - B + 4, class: "axis" }));
      chart.appendChild(svg("text", { x: px, y: H - B + 16, "text-anchor": "middle" }, label));
    });
    chart.appendChild(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
    chart.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
    chart.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "after period"));
    const unit = m.method === "trueskill" ? "mu" : "rating";
    chart.appendChild(svg("text", { x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`,
                                    "text-anchor": "middle" }, `${unit} (${m.label})`));
    series.forEach((s) => {
      const pts = s.points;
      if (pts.length && pts.every((p) => p.rd !== null)) {
        const upper = pts.map((p) => `${x(p.period)},${y(p.rating + 1.96 * p.rd)}`);
        const lower = pts.slice().reverse().map((p) => `${x(p.period)},${y(p.rating - 1.96 * p.rd)}`);
        chart.appendChild(svg("polygon", { points: upper.concat(lower).join(" "), fill: s.color, "fill-opacity": 0.12,
                                           stroke: "none", "data-player": s.name, class: "band" }));
      }
    });
    series.forEach((s) => {
      const pts = s.points;
      chart.appendChild(svg("polyline", { points: pts.map((p) => `${x(p.period)},${y(p.rating)}`).join(" "),
                                          fill: "none", stroke: s.color, "stroke-width": 2, "data-player": s.name,
                                          class: "line" }));
      pts.forEach((p) => {
        const c = svg("circle", { cx: x(p.period), cy: y(p.rating), r: 3.5, fill: s.color });
        c.appendChild(svg("title", {}, `${s.name}, ${p.period === null ? "start" : "after period " + p.period}: ` +
          `${fmt(p.rating, digitsOf(m.method))}` + (p.rd === null ? "" : ` ± ${fmt(1.96 * p.rd, digitsOf(m.method))}`)));
        chart.appendChild(c);
      });
      const last = pts[pts.length - 1];
      if (last) chart.appendChild(svg("text", { x: W - R + 8, y: y(last.rating) + 4, fill: s.color,
                                                 style: `fill:${s.color};font-weight:600` }, s.name));
    });
  }

  // what the matches mode (matches.js) shares with the games
  window.statespaceLab = { cell, fmt, board, post, showError, clearError, numberOrText };

  // ------------------------------------------------------------------ wiring
  function loadExample(key) {
    if (!examples) { showError(new Error("the examples are still loading; try again")); return; }
    fillForm(examples[key]);
    run();
  }

  document.addEventListener("DOMContentLoaded", async () => {
    addPlayerRow();
    $("add-player").addEventListener("click", () => addPlayerRow());
    $("run").addEventListener("click", run);
    $("compare").addEventListener("click", runCompare);
    $("example-glickman").addEventListener("click", () => loadExample("glickman"));
    $("example-club").addEventListener("click", () => loadExample("club"));
    $("chart-method").addEventListener("change", () => { renderPlayerChoice(lastResult); drawChart(); });
    $("odds-a").addEventListener("change", updateOdds);
    $("odds-b").addEventListener("change", updateOdds);
    try {
      const response = await fetch("api/v1/examples");
      examples = await response.json();
      document.body.dataset.ready = "true";
    } catch (e) {
      showError(new Error("cannot load the examples: " + e.message));
    }
  });
})();
