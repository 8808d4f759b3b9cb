/* harness view: the page of a run, a bench output or a probe report.
 *
 * Served (harness view RUN), it asks the local server's JSON API (api/<route>); written to a
 * file (harness view RUN --html FILE), the same answers sit inline in #harness-data. Every
 * number of the comparison and the effects is computed in Python (harness.report); this file
 * only lays them out. Nothing is fetched from any other origin.
 */
(function () {
  "use strict";

  const dataElement = document.getElementById("harness-data");
  const EMBED = dataElement ? JSON.parse(dataElement.textContent) : null;
  const app = document.getElementById("app");
  let INFO = null;

  // -- elements ---------------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function show(...nodes) {
    app.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
  }

  function fail(err) {
    return h("p", { class: "error" }, String(err && err.message ? err.message : err));
  }

  function compact(value) {
    return JSON.stringify(value);
  }

  function jsonBlock(value, limit) {
    const text = typeof value === "string" ? value : compact(value);
    const max = limit || 140;
    if (text === undefined) return "";
    if (text.length <= max) return h("span", { class: "json" }, text);
    return h("details", { class: "json" }, h("summary", {}, text.slice(0, max) + " …"),
      h("div", { class: "json" }, typeof value === "string" ? value : JSON.stringify(value, null, 1)));
  }

  function fmt(v) {
    if (v === null || v === undefined) return "–";
    if (typeof v === "number" && !Number.isInteger(v)) return String(Math.round(v * 1e4) / 1e4);
    if (Array.isArray(v)) return "[" + v.join(", ") + "]";
    return String(v);
  }

  function table(columns, rows, opts) {
    const o = opts || {};
    const head = h("tr", {}, columns.map((c) => h("th", { title: (o.titles || {})[c] || null }, c)));
    const body = rows.map((r, i) => {
      const tr = h("tr", { class: o.rowClass ? o.rowClass(r, i) : null },
        r.map((v, j) => h("td", { class: o.cellClass ? o.cellClass(v, j, i) : null, "data-col": columns[j] },
          v instanceof Node ? v : fmt(v))));
      if (o.onRow) tr.addEventListener("click", (ev) => o.onRow(r, i, ev));
      return tr;
    });
    return h("div", { class: "scroll" },
      h("table", { class: (o.class || "") + (o.onRow ? " click" : ""), id: o.id || null },
        h("thead", {}, head), h("tbody", {}, body)));
  }

  // -- data: the server's API, or the answers inline ----------------------------------------

  async function api(route, params) {
    const p = params || {};
    if (EMBED) return embedded(route, p);
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(p)) {
      if (v === undefined || v === null || v === "" || k === "row") continue;
      qs.set(k, typeof v === "string" ? v : JSON.stringify(v));
    }
    const res = await fetch("api/" + route + (qs.toString() ? "?" + qs : ""));
    const doc = await res.json();
    if (!res.ok) throw new Error(doc.error || res.statusText);
    return doc;
  }

  function notInFile(what) {
    const sample = EMBED.info.sample ? " " + EMBED.info.sample.text : "";
    return new Error(what + " is not in this file." + sample + " Serve the run (harness view RUN) to see every session.");
  }

  function embedded(route, p) {
    const [head, rest] = route.split(/\/(.*)/s);
    if (head === "info") return EMBED.info;
    if (head === "compare") {
      if (p.by && p.by !== EMBED.info.by) throw new Error("this file holds the comparison by " + EMBED.info.by + " only (harness view RUN --html FILE --by ...)");
      if (EMBED.compare.error) throw new Error(EMBED.compare.error);
      return EMBED.compare;
    }
    if (head === "effects") return EMBED.effects;
    if (head === "sessions") return filterRows(EMBED.rows, p);
    if (head === "session") {
      const s = EMBED.sessions[rest];
      if (!s) throw notInFile("Session " + rest);
      return s;
    }
    if (head === "pair") {
      const a = Number(p.a), b = Number(p.b);
      const doc = EMBED.pairs[Math.min(a, b) + "," + Math.max(a, b)];
      if (!doc) throw notInFile("The pair " + a + " and " + b);
      return Object.assign({}, doc, { a: a, b: b });
    }
    if (head === "differ") {
      const d = EMBED.differ[p.row];
      if (!d) throw notInFile("A differing pair for this row");
      return d;
    }
    throw new Error("no " + route + " in this file");
  }

  const OPS = {
    "=": (x, y) => x === y, "!=": (x, y) => x !== y, ">=": (x, y) => x >= y,
    "<=": (x, y) => x <= y, ">": (x, y) => x > y, "<": (x, y) => x < y,
  };

  function typed(sample, value) {
    if (typeof sample === "number") return Number(value);
    if (typeof sample === "boolean") return value === true || value === "true" || value === "1";
    return String(value);
  }

  function filterRows(rows, p) {
    const filters = p.filters ? (typeof p.filters === "string" ? JSON.parse(p.filters) : p.filters) : [];
    const kept = rows.filter((r) => filters.every(([col, op, value]) =>
      r[col] !== null && r[col] !== undefined && OPS[op](r[col], typed(r[col], value))));
    const offset = Number(p.offset || 0), limit = Number(p.limit || 50);
    const columns = INFO.list_columns.filter((c) => rows.length === 0 || c in rows[0]);
    return { total: kept.length, offset: offset, limit: limit, columns: columns, rows: kept.slice(offset, offset + limit) };
  }

  function figureSrc(name) {
    if (EMBED) return EMBED.figures[name] || null;
    return "api/figure/" + encodeURIComponent(name);
  }

  // -- routing ------------------------------------------------------------------------------

  function parseHash() {
    const raw = location.hash.replace(/^#/, "") || "/";
    const [path, query] = raw.split("?");
    const params = Object.fromEntries(new URLSearchParams(query || ""));
    return { parts: path.split("/").filter(Boolean), params: params };
  }

  function go(parts, params) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== "") qs.set(k, typeof v === "string" ? v : JSON.stringify(v));
    }
    location.hash = "#/" + parts.join("/") + (qs.toString() ? "?" + qs : "");
  }

  function sessionsOf(filters) {
    go(["sessions"], { filters: filters });
  }

  const RUN_TABS = [["", "Overview"], ["compare", "Comparison"], ["effects", "Effects"], ["sessions", "Sessions"], ["figures", "Figures"]];

  function renderNav(active) {
    const nav = document.getElementById("nav");
    if (!INFO || INFO.kind !== "run") { nav.replaceChildren(); return; }
    nav.replaceChildren(...RUN_TABS.map(([r, label]) =>
      h("a", { href: "#/" + r, class: active === r ? "active" : null, "data-tab": r || "overview" }, label)));
  }

  function renderHeader() {
    document.getElementById("title").textContent = INFO.title + " (" + INFO.kind + ")";
    document.title = "harness view: " + INFO.title;
    const mode = document.getElementById("mode");
    mode.textContent = EMBED ? "a file written by harness view --html: " + INFO.path : "served locally from " + INFO.path;
    const banner = document.getElementById("banner");
    const parts = [];
    if (INFO.kind === "run" && INFO.complete === false) {
      parts.push(h("div", { id: "incomplete-banner" }, INFO.warning));
    }
    if (EMBED && INFO.sample) parts.push(h("div", { class: "sample", id: "sample-statement" }, INFO.sample.text));
    banner.replaceChildren(...parts);
  }

  async function render() {
    const { parts, params } = parseHash();
    try {
      if (!INFO) {
        INFO = await api("info");
        renderHeader();
      }
      if (INFO.kind === "bench") return renderBench();
      if (INFO.kind === "probe") return renderProbe();
      const page = parts[0] || "";
      renderNav(page === "session" || page === "pair" ? "sessions" : page);
      show(h("p", { class: "loading" }, "Loading…"));
      if (page === "") return renderOverview();
      if (page === "compare") return await renderCompare(params);
      if (page === "effects") return await renderEffects(params);
      if (page === "sessions") return await renderSessions(params);
      if (page === "session") return await renderSession(Number(parts[1]), params);
      if (page === "pair") return await renderPair(Number(parts[1]), Number(parts[2]), params);
      if (page === "figures") return await renderFigures();
      show(fail("no page " + page));
    } catch (err) {
      show(fail(err));
    }
  }

  // -- the run ------------------------------------------------------------------------------

  function seedsText(seeds) {
    if (!seeds) return "–";
    if (Array.isArray(seeds)) return seeds.length + " seeds: " + seeds.slice(0, 12).join(", ") + (seeds.length > 12 ? " …" : "");
    if (typeof seeds === "object" && "start" in seeds) return (seeds.stop - seeds.start) + " seeds: " + seeds.start + "–" + (seeds.stop - 1);
    return String(seeds);
  }

  function listText(xs) {
    if (!Array.isArray(xs)) return fmt(xs);
    return xs.length + ": " + xs.slice(0, 20).join(", ") + (xs.length > 20 ? " …" : "");
  }

  function renderOverview() {
    const m = INFO.manifest || {};
    const grid = m.grid || {};
    const sweeps = grid.sweeps && Object.keys(grid.sweeps).length
      ? Object.entries(grid.sweeps).map(([k, v]) => k + " = " + [].concat(v).join(", ")).join("; ") : "none";
    const facts = [
      ["status", h("span", { class: "chip " + (INFO.complete === false ? "bad" : "ok"), id: "run-status" }, (INFO.status || "unknown") + (INFO.complete === false ? " (incomplete)" : ""))],
      ["sessions", INFO.sessions.toLocaleString() + (INFO.sessions_in_grid !== null && INFO.sessions_in_grid !== undefined ? " of " + INFO.sessions_in_grid.toLocaleString() + " in the grid" : "")],
      ["harness errors", fmt(m.harness_errors)],
      ["started / finished", fmt(m.started) + " / " + fmt(m.finished)],
      ["scenarios", listText(grid.scenarios)],
      ["agents", listText(grid.agents)],
      ["strategies", listText(grid.strategies)],
      ["hosts", listText(grid.hosts)],
      ["eras", listText(grid.eras)],
      ["seeds", seedsText(grid.seeds)],
      ["swept", sweeps],
      ["traces", INFO.traces ? "written (--traces)" : "not written: a session is replayed to see its steps"],
      ["harness", fmt(m.harness_version) + " at " + String(m.git_sha || "–").slice(0, 12) + "; rows v" + fmt(m.row_version) + "; codec " + fmt(m.codec)],
      ["executor", fmt(m.executor) + (m.workers ? ", " + m.workers + " workers" : "") + (m.scheduler ? ", " + m.scheduler : "")],
      ["python", fmt(m.python) + " on " + fmt(m.platform)],
    ];
    if (INFO.reasons && INFO.reasons.length) facts.splice(1, 0, ["why incomplete", INFO.reasons.join("; ")]);
    const found = h("section", { id: "findings" }, h("h2", {}, "Findings"), h("p", { class: "loading" }, "Computing what the run finds…"));
    show(
      found,
      curvesBlock(),
      h("h2", {}, "Run " + INFO.title),
      h("dl", { class: "facts", id: "manifest-facts" }, facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      h("p", {}, h("a", { href: "#/compare" }, "The comparison"), " · ", h("a", { href: "#/effects" }, "per-scenario effects"),
        " · ", h("a", { href: "#/sessions" }, "every session"), " · ", h("a", { href: "#/figures" }, "figures")),
      h("details", {}, h("summary", {}, "manifest.json"), h("pre", {}, JSON.stringify(m, null, 2))),
    );
    if (!INFO.sessions) return found.replaceChildren(h("h2", {}, "Findings"), h("p", { class: "muted" }, "The run has no sessions yet."));
    Promise.resolve().then(() => api("compare", { by: INFO.by || "agent", baseline: INFO.baseline }))
      .then((doc) => found.replaceChildren(...findingsBlock(doc.findings)))
      .catch((err) => found.replaceChildren(h("h2", {}, "Findings"), fail(err)));
  }

  // S(k) over every budget, as harness plot draws it (success_within_calls.png): the landing
  // page's curves; hidden when the figure does not apply (no sessions, or rows without budgets).
  function curvesBlock() {
    const name = "success_within_calls.png";
    const src = INFO.sessions ? figureSrc(name) : null;
    if (!src) return null;
    const section = h("section", { id: "curves" }, h("h2", {}, "Success within k calls, every budget"),
      h("p", { class: "muted small" }, "The share of sessions that succeeded within k tool calls, per agent and strategy, for every k up to the budget (one panel per world)."));
    const img = h("img", { src: src, alt: "S(k): " + name, id: "curves-figure" });
    img.addEventListener("error", () => section.remove());
    section.append(h("figure", {}, img));
    return section;
  }

  // What the run finds, in words: the block harness run and harness compare end with.
  function findingsBlock(f) {
    if (!f) return [h("h2", {}, "Findings"), h("p", { class: "muted" }, "No findings for this comparison.")];
    return [
      h("h2", {}, f.title || "Findings"),
      f.head ? h("p", { class: "muted small", id: "findings-head" }, f.head) : null,
      h("ul", { id: "findings-agents" }, (f.agents || []).map((line) => h("li", {}, line))),
      f.cannot && f.cannot.length ? h("p", { id: "findings-cannot" }, h("b", {}, "What this run cannot tell: "), f.cannot.join(" ")) : null,
      h("p", { class: "small" }, h("a", { href: "#/compare" }, "the table these numbers come from"), " · ",
        h("a", { href: "#/effects" }, "scenario by scenario")),
    ];
  }

  function groupingChoices() {
    const keys = INFO.keys.filter((k) => k !== "strategy" && k !== "seed");
    const choices = ["agent", "agent,host", "agent,era", "agent,scenario", "scenario", "host", "era"];
    for (const p of INFO.params) choices.push("agent," + p);
    const shown = choices.filter((c) => c.split(",").every((k) => keys.includes(k)));
    if (INFO.by && !shown.includes(INFO.by)) shown.unshift(INFO.by);
    return shown;
  }

  async function renderCompare(params) {
    const by = params.by || INFO.by || "agent";
    const doc = await api("compare", { by: by, baseline: INFO.baseline });
    const shown = doc.shown;
    const groups = shown.groups;
    const deltaCol = shown.columns.indexOf("Δ success vs base");
    const status = h("div", { id: "differ-status" });
    const picker = EMBED ? h("span", { class: "muted small" }, "grouped by " + by + " (the file's grouping)")
      : h("label", {}, "group by ", h("select", {
        id: "group-by", onchange: (ev) => go(["compare"], { by: ev.target.value }),
      }, groupingChoices().map((c) => h("option", { value: c, selected: c === by }, c))));
    const title = doc.title;
    const rows = shown.rows.map((r, i) => r.map((v, j) => {
      if (j !== deltaCol || doc.rows[i].strategy === doc.baseline || v === "–") return v;
      return h("span", {}, v, " ", h("button", {
        class: "link differ", "data-row": i, title: "a seed where " + doc.rows[i].strategy + " and " + doc.baseline + " differ",
        onclick: (ev) => { ev.stopPropagation(); differ("compare:" + i, groupOf(doc.rows[i], groups), doc.rows[i].strategy, doc.baseline, null, status); },
      }, "≠ seed"));
    }));
    show(
      h("h2", {}, "Comparison"),
      h("p", { class: "muted", id: "compare-title" }, title),
      h("p", {}, picker, " ", h("span", { class: "muted small" }, "A click on a row lists its sessions; ≠ seed opens a pair whose outcomes differ.")),
      status,
      table(shown.columns, rows, {
        id: "compare-table",
        class: "compare",
        rowClass: (r, i) => doc.rows[i].strategy === doc.baseline ? "baseline" : null,
        cellClass: (v, j) => (j >= groups.length ? "num" : null),
        titles: doc.meanings || {},
        onRow: (r, i) => sessionsOf(groups.map((g) => [g, "=", doc.rows[i][g]])),
      }),
      h("details", { id: "compare-legend" }, h("summary", {}, "What each column means (as harness compare --explain)"),
        h("dl", { class: "legend" }, Object.entries(doc.meanings || {}).flatMap(([c, m]) => [h("dt", {}, c), h("dd", {}, m)])),
        h("p", { class: "muted small" }, "Intervals and tests: " + doc.inference)),
      h("section", { id: "compare-findings" }, findingsBlock(doc.findings).slice(0, 4)),
      h("details", {}, h("summary", {}, "as harness compare --format json"), h("pre", { id: "compare-json" }, JSON.stringify(doc.rows, null, 1))),
    );
  }

  function groupOf(record, groups) {
    const out = {};
    for (const g of groups) if (g !== "strategy") out[g] = record[g];
    return out;
  }

  async function differ(row, group, strategy, baseline, scenario, status) {
    status.replaceChildren(h("p", { class: "loading" }, "Looking for a seed where " + strategy + " and " + baseline + " differ…"));
    try {
      const d = await api("differ", { group: group, strategy: strategy, baseline: baseline, scenario: scenario, row: row });
      if (!d.found) {
        status.replaceChildren(h("p", { class: "note" }, "No such seed: " + d.why + "."));
        return;
      }
      go(["pair", String(d.a), String(d.b)], { by: d.by });
    } catch (err) {
      status.replaceChildren(fail(err));
    }
  }

  async function renderEffects(params) {
    const doc = await api("effects");
    if (doc.unavailable) return show(h("h2", {}, "Effects"), h("p", { class: "note", id: "effects-unavailable" }, doc.unavailable));
    const status = h("div", { id: "differ-status" });
    const detail = h("div", { id: "effects-detail" });
    const perScenario = doc.effects || [];
    const showScenarios = (i) => {
      const s = doc.shares[i];
      const rows = perScenario.map((e, k) => [e, k]).filter(([e]) => e.agent === s.agent && e.against === s.against);
      const cols = ["scenario", "pairs", "Δ (" + s.against + " − " + doc.baseline + ")", "sign", ""];
      detail.replaceChildren(
        h("h3", {}, s.agent + ": " + s.against + " against " + doc.baseline + ", scenario by scenario"),
        table(cols, rows.map(([e, k]) => [e.unit || e.scenario, e.pairs, (e.effect >= 0 ? "+" : "") + e.effect.toFixed(2), e.sign,
          e.effect === 0 ? "" : h("button", {
            class: "link differ", onclick: (ev) => { ev.stopPropagation(); differ("effect:" + k, Object.assign({ agent: e.agent }, paramsOf(e)), e.against, doc.baseline, e.scenario, status); },
          }, "≠ seed")]), {
          id: "effects-scenarios",
          onRow: (r, j) => sessionsOf([["agent", "=", s.agent], ["scenario", "=", rows[j][0].scenario]]),
        }));
    };
    const tables = (doc.shown && doc.shown.tables) || [];
    const parts = [h("h2", {}, "Per-scenario effects of readable errors"),
      h("p", { class: "muted" }, "As harness effects " + doc.source + " --format markdown prints them. A click on a row of the first table lists its scenarios; ≠ seed opens a pair whose outcomes differ."),
      status];
    for (const w of doc.warnings || []) parts.push(h("p", { class: "warn" }, "Warning: " + w));
    tables.forEach((t, n) => {
      parts.push(h("h3", {}, t.title || ""));
      if (n === 0) {
        const rows = t.rows.map((r, i) => r.concat([doc.shares[i] ? h("button", {
          class: "link differ", onclick: (ev) => { ev.stopPropagation(); differ("shares:" + i, { agent: doc.shares[i].agent }, doc.shares[i].against, doc.baseline, null, status); },
        }, "≠ seed") : ""]));
        parts.push(table(t.columns.concat([""]), rows, { id: "effects-shares", onRow: (r, i) => showScenarios(i) }), detail);
      } else {
        parts.push(t.rows.length ? table(t.columns, t.rows, { class: "effects-more" }) : h("p", { class: "muted" }, "(no rows)"));
      }
    });
    show(...parts);
  }

  function paramsOf(record) {
    const out = {};
    for (const p of INFO.params) if (p in record) out[p] = record[p];
    return out;
  }

  async function renderFigures() {
    const names = EMBED ? Object.keys(EMBED.figures) : (await api("figures")).figures;
    const figs = names.map((name) => {
      const src = figureSrc(name);
      const note = h("figcaption", {}, name);
      if (!src) return h("figure", {}, h("p", { class: "muted" }, "does not apply to this run"), note);
      const img = h("img", { src: src, alt: name, loading: "lazy" });
      img.addEventListener("error", () => img.replaceWith(h("p", { class: "muted" }, "does not apply to this run")));
      return h("figure", {}, img, note);
    });
    show(h("h2", {}, "Figures"), h("p", { class: "muted" }, "harness plot's figures, drawn from every session of the run."), h("div", { class: "figures" }, figs));
  }

  // -- sessions -----------------------------------------------------------------------------

  const FACETS_SHOWN = ["scenario", "agent", "strategy", "host", "era"];

  async function renderSessions(params) {
    const filters = params.filters ? JSON.parse(params.filters) : [];
    const offset = Number(params.offset || 0);
    const limit = 50;
    const doc = await api("sessions", { filters: filters, offset: offset, limit: limit });
    const facets = INFO.facets;
    const current = (col) => { const f = filters.find((x) => x[0] === col && x[1] === "="); return f ? String(f[2]) : ""; };
    const selects = [...FACETS_SHOWN, ...INFO.params, "status", "end", "success"].filter((c) => facets[c]).map((col) =>
      h("label", {}, col, h("select", { name: col, "data-filter": col },
        h("option", { value: "" }, "any"),
        facets[col].map((v) => h("option", { value: String(v), selected: current(col) === String(v) }, String(v))))));
    const seed = h("input", { type: "number", name: "seed", "data-filter": "seed", value: current("seed"), min: facets.seed ? facets.seed.min : 0, style: "width:6em" });
    const col = h("select", { name: "ocol" }, INFO.outcomes.map((c) => h("option", { value: c, title: INFO.meanings[c] || "" }, c)));
    const op = h("select", { name: "oop" }, ["=", "!=", ">=", "<=", ">", "<"].map((o) => h("option", { value: o }, o)));
    const val = h("input", { name: "oval", style: "width:6em", placeholder: "value" });
    const simple = new Set([...FACETS_SHOWN, ...INFO.params, "status", "end", "success", "seed"]);
    const extra = filters.filter((f) => !(simple.has(f[0]) && f[1] === "="));
    const apply = (add) => {
      const next = [];
      for (const el of form.querySelectorAll("[data-filter]")) if (el.value !== "") next.push([el.dataset.filter, "=", el.value]);
      next.push(...extra);
      if (add && val.value !== "") next.push([col.value, op.value, val.value]);
      go(["sessions"], { filters: next });
    };
    const form = h("form", { class: "filters", id: "filters", onsubmit: (ev) => { ev.preventDefault(); apply(true); } },
      selects, h("label", {}, "seed", seed),
      h("label", {}, "outcome", h("span", {}, col, " ", op, " ", val)),
      h("button", { type: "submit", class: "primary", id: "apply-filters" }, "Filter"),
      h("button", { type: "button", onclick: () => go(["sessions"]) }, "Clear"));
    for (const el of form.querySelectorAll("select[data-filter]")) el.addEventListener("change", () => apply(false));
    const chips = filters.length ? h("p", { id: "active-filters" }, "Filters: ", filters.map((f, i) =>
      h("span", { class: "chip" }, f.join(" "), h("button", { type: "button", title: "remove", onclick: () => go(["sessions"], { filters: filters.filter((_, j) => j !== i) }) }, "×")))) : null;
    const from = doc.total ? doc.offset + 1 : 0, to = Math.min(doc.offset + doc.rows.length, doc.total);
    const pager = h("div", { class: "pager" },
      h("button", { disabled: offset <= 0, onclick: () => go(["sessions"], { filters: filters, offset: String(Math.max(0, offset - limit)) }) }, "‹ previous"),
      h("span", { id: "session-count" }, from.toLocaleString() + "–" + to.toLocaleString() + " of " + doc.total.toLocaleString() + " sessions" +
        (EMBED ? " in this file (of " + INFO.sessions.toLocaleString() + " in the run)" : "")),
      h("button", { disabled: to >= doc.total, onclick: () => go(["sessions"], { filters: filters, offset: String(offset + limit) }) }, "next ›"));
    show(
      h("h2", {}, "Sessions"),
      form, chips, pager,
      table(doc.columns, doc.rows.map((r) => doc.columns.map((c) => r[c])), {
        id: "sessions-table",
        titles: INFO.meanings,
        cellClass: (v, j) => (doc.columns[j] === "success" ? "outcome-" + String(v) : typeof v === "number" ? "num" : null),
        onRow: (r, i) => go(["session", String(doc.rows[i].id)]),
      }),
    );
  }

  function actionText(a) {
    if (!a) return h("span", { class: "muted" }, "(nothing on the wire)");
    if (a.kind === "call") return h("span", {}, h("b", {}, a.tool), " ", jsonBlock(a.arguments, 80));
    if (a.kind === "list") return "list tools";
    if (a.kind === "wait") return "wait " + a.seconds + " s";
    if (a.kind === "finish") return h("b", {}, "finish");
    if (a.kind === "give_up") return h("span", {}, h("b", {}, "give up"), a.reason ? ": " + a.reason : "");
    if (a.kind === "start") return h("span", { class: "muted" }, "setup (handshake, tools/list)");
    return a.kind + (a.method ? " " + a.method : "");
  }

  function seenText(s, bare) {
    if (s === null || s === undefined) return h("span", { class: "muted" }, "(the session ended)");
    const notes = !bare && s.notifications && s.notifications.length ? h("div", { class: "small" }, "+ " + s.notifications.join(", ")) : null;
    let main;
    if (s.kind === "result") {
      const text = s.content.map((b) => (b.type === "text" ? b.text : "[" + b.type + "]")).join("\n");
      main = h("span", { class: s.isError ? "seen-error" : null }, s.isError ? "isError: " : "", jsonBlock(text, 160));
    } else if (s.kind === "rpc_error") {
      main = h("span", { class: "seen-error" }, "JSON-RPC error " + s.code + "; ",
        s.message === null ? h("span", { class: "seen-dropped" }, "message dropped by the host") : jsonBlock(s.message, 140));
    } else if (s.kind === "waited") {
      main = "waited " + s.seconds + " s (clock " + s.now + ")";
    } else if (s.kind === "tools") {
      main = "tools: " + s.tools.join(", ");
    } else if (s.kind === "transport_error") {
      main = h("span", { class: "seen-error" }, "transport error: " + s.message);
    } else {
      main = h("span", { class: "muted" }, s.kind);
    }
    return h("div", {}, main, notes);
  }

  function faultChips(step) {
    const out = step.faults.map((f) => h("span", { class: "chip fault", "data-fault": f.kind },
      "fault: " + f.kind + (f.tool ? " on " + f.tool : "") + (f.explicit === false ? " (implicit)" : "")));
    for (const n of step.notes) {
      if ("fault" in n || "host" in n || "action" in n || "end" in n) continue;
      out.push(h("span", { class: "chip" }, Object.entries(n).map(([k, v]) => k + " " + (typeof v === "object" ? compact(v) : v)).join("; ")));
    }
    return out;
  }

  function lineMsg(trace, i) {
    if (i === null || i === undefined) return "";
    const line = trace.raw[i];
    return jsonBlock(line && line.msg ? line.msg : line, 120);
  }

  function stepsTable(trace) {
    const cols = ["step", "action", "request on the wire", "reply", "what the host let the agent see", "notifications", "faults, notes"];
    const rows = trace.steps.map((s) => [s.step, actionText(s.action),
      s.step === 0 ? h("span", { class: "muted small" }, s.lines.length + " lines") : lineMsg(trace, s.request_line),
      lineMsg(trace, s.reply_line), seenText(s.seen, true),
      h("span", { class: "small" }, s.notifications.join(", ") + (s.relisted ? " (the client listed the tools again)" : "")),
      h("div", {}, faultChips(s))]);
    return table(cols, rows, {
      id: "steps", class: "steps",
      rowClass: (r, i) => (trace.steps[i].faults.length ? "fault" : null),
      cellClass: (v, j) => (j === 0 ? "step" : null),
    });
  }

  function noTrace(doc) {
    return h("div", { class: "no-trace", id: "no-trace" },
      h("p", {}, "No steps to show for this session (" + doc.no_trace + "). To get its trace, re-run the batch with ", h("code", {}, "--traces"),
        ", or run this one session again; it is deterministic:"),
      h("pre", { id: "session-command" }, doc.command));
  }

  async function renderSession(id, params) {
    // Without a trace file the session is replayed as it opens (hash-checked against the row),
    // so its steps show without a click; ?replay=0 asks for the trace file alone.
    const doc = await api("session/" + id, { replay: params.replay === "0" ? "" : "1" });
    const k = doc.key;
    const row = doc.row;
    const siblings = doc.siblings.filter((s) => s.differs_in.length === 1);
    const byDim = {};
    for (const s of siblings) (byDim[s.differs_in[0]] = byDim[s.differs_in[0]] || []).push(s);
    const pairLinks = Object.entries(byDim).map(([dim, sibs]) => h("div", {}, dim + ": ",
      sibs.map((s) => h("a", { href: "#/pair/" + id + "/" + s.id, class: "chip", "data-pair": s.id }, s[dim]))));
    const ends = [["end", row.end], ["status", row.status], ["success", row.success],
      ["subgoals", fmt(row.subgoals_done) + " of " + fmt(row.subgoals_total)], ["steps", row.steps]];
    const faultCols = Object.keys(row).filter((c) => c.startsWith("faults_") && c !== "faults_explicit" && c !== "faults_implicit" && row[c]);
    const outcomeRows = Object.keys(row).map((c) => [c, row[c]]);
    const parts = [
      h("p", {}, h("a", { href: "#/sessions" }, "‹ sessions")),
      h("h2", { id: "session-title" }, [k.scenario, k.agent, k.strategy, k.host, k.era].join(" · ") + " · seed " + k.seed,
        ...INFO.params.map((p) => " · " + p + "=" + k[p])),
      h("p", { class: "muted small" }, doc.label),
      h("p", { id: "end-state" }, ends.map(([name, v]) => h("span", { class: "chip " + (v === true ? "true" : v === false ? "false" : "") }, name + ": " + fmt(v)))),
      h("p", { id: "faults-fired" }, faultCols.length ? ["faults fired: ", faultCols.map((c) => h("span", { class: "chip fault" }, c.slice(7) + " ×" + row[c]))] : h("span", { class: "muted" }, "no fault fired")),
      siblings.length ? h("div", { id: "pairs" }, h("h3", {}, "Side by side with the same scenario and seed under another …"), pairLinks) : null,
      h("h3", {}, "Steps"),
    ];
    if (doc.trace) {
      const t = doc.trace;
      parts.push(h("p", { class: "muted small" }, "Trace " + (doc.trace_source === "replay" ? "replayed here (its sha256 is the row's trace_hash)" : "from " + doc.trace_file) +
        "; " + t.raw.length + " lines, " + (t.steps.length - 1) + " steps."));
      if (!t.exact) parts.push(h("p", { class: "warn" }, "The steps are approximate: " + t.problems.join("; ")));
      parts.push(stepsTable(t));
      const raw = h("pre", { id: "raw-trace", hidden: true }, t.raw.map((l) => compact(l)).join("\n"));
      parts.push(h("p", {}, h("button", { id: "show-raw", onclick: (ev) => { raw.hidden = !raw.hidden; ev.target.textContent = raw.hidden ? "Raw trace (JSON lines)" : "Hide the raw trace"; } }, "Raw trace (JSON lines)")), raw);
    } else {
      parts.push(noTrace(doc));
    }
    parts.push(h("h3", {}, "Every column"),
      h("div", { class: "cols2" }, table(["column", "value"], outcomeRows, { id: "outcomes" })));
    show(...parts);
    for (const tr of document.querySelectorAll("#outcomes tbody tr")) {
      const c = tr.firstChild.textContent;
      if (INFO.meanings[c]) tr.title = INFO.meanings[c];
    }
  }

  // -- two sessions side by side --------------------------------------------------------------

  async function renderPair(a, b, params) {
    const [pair, sa, sb] = await Promise.all([api("pair", { a: a, b: b }), api("session/" + a, { replay: "1" }), api("session/" + b, { replay: "1" })]);
    const dims = pair.differs_in;
    const label = (s) => dims.map((d) => d + " " + s.key[d]).join(", ") || "the same cell";
    const d = pair.divergence;
    let banner;
    if (!d) {
      banner = h("div", { id: "divergence", class: "warn" }, "No first divergence to show: " + pair.no_divergence + ". ",
        "Run them with: ", h("pre", {}, sa.command + "\n" + sb.command));
    } else if (d.seen === null) {
      banner = h("div", { id: "divergence", class: "same" }, "What the agent saw is the same at every step (" + d.steps + " steps)" +
        (d.action !== null ? "; the actions first differ at step " + d.action : "") + ".");
    } else {
      banner = h("div", { id: "divergence", class: "found", "data-step": d.seen }, "First divergence at step " + d.seen + ": what the agent saw differs." +
        (d.action !== null && d.action !== d.seen ? " (The actions first differ at step " + d.action + ".)" : ""));
    }
    const outcome = (s) => "success " + fmt(s.row.success) + " (ended: " + fmt(s.row.end) + ")";
    const same = sa.row.success === sb.row.success;
    const outcomes = h("p", { id: "pair-outcomes-line", class: same ? "note" : null },
      "A: " + outcome(sa) + "; B: " + outcome(sb) + ". ",
      same ? (params && params.by === "trace"
        ? "No seed of this row changes the outcome: this pair has the same outcome under both and differs only in what the agent saw."
        : "The same outcome: the two differ only in what the agent saw.") : "The outcomes differ.");
    const parts = [
      h("p", {}, h("a", { href: "#/session/" + a }, "‹ session A"), " · ", h("a", { href: "#/session/" + b }, "session B ›")),
      h("h2", { id: "pair-title" }, sa.key.scenario + " · seed " + sa.key.seed + ": A " + label(sa) + " against B " + label(sb)),
      outcomes,
      banner,
    ];
    if (sa.trace && sb.trace) {
      const ta = new Map(sa.trace.steps.map((s) => [s.step, s]));
      const tb = new Map(sb.trace.steps.map((s) => [s.step, s]));
      const numbers = [...new Set([...ta.keys(), ...tb.keys()])].sort((x, y) => x - y);
      const same = (x, y) => compact(x ? x.seen : "<no step>") === compact(y ? y.seen : "<no step>");
      const rows = numbers.map((n) => {
        const x = ta.get(n), y = tb.get(n);
        const mark = d && d.seen === n ? h("span", { class: "marker" }, "◆ first divergence") : "";
        const act = (st) => (st ? h("div", {}, actionText(st.action), st.faults.length ? h("div", {}, faultChips({ faults: st.faults, notes: [] })) : null) : "–");
        return [h("span", {}, String(n), " ", mark), act(x), x ? seenText(x.seen) : "–", act(y), y ? seenText(y.seen) : "–"];
      });
      parts.push(table(["step", "A: action", "A: what the agent saw", "B: action", "B: what the agent saw"], rows, {
        id: "pair-steps", class: "pair",
        rowClass: (r, i) => (d && d.seen === numbers[i] ? "diverged" : d && d.seen !== null && numbers[i] > d.seen ? "after" : null),
        cellClass: (v, j, i) => ((j === 2 || j === 4) && !same(ta.get(numbers[i]), tb.get(numbers[i])) ? "differs" : null),
      }));
    }
    const cols = Object.keys(sa.row).filter((c) => !INFO.keys.includes(c) && c !== "wall_time_s");
    const onlyDiff = h("input", { type: "checkbox", id: "only-differing", checked: true });
    const outcomeTable = () => {
      const rows = cols.filter((c) => !onlyDiff.checked || compact(sa.row[c]) !== compact(sb.row[c])).map((c) => [c, sa.row[c], sb.row[c]]);
      return table(["column", "A", "B"], rows, { id: "pair-outcomes", rowClass: (r) => (compact(r[1]) !== compact(r[2]) ? "changed" : null) });
    };
    const holder = h("div", {}, outcomeTable());
    onlyDiff.addEventListener("change", () => holder.replaceChildren(outcomeTable()));
    parts.push(h("h3", {}, "Outcomes compared"), h("label", { class: "small" }, onlyDiff, " only the columns that differ"), holder);
    show(...parts);
    const marked = document.querySelector("#pair-steps tr.diverged");
    if (marked) marked.scrollIntoView({ block: "center" });
  }

  // -- bench and probe ------------------------------------------------------------------------

  function renderBench() {
    const figs = INFO.figures.map((name) => h("figure", {}, h("img", { src: figureSrc(name), alt: name }), h("figcaption", {}, name)));
    const m = INFO.machine || {};
    show(
      h("h2", {}, "Benchmark " + INFO.title),
      h("p", { class: "muted" }, "Python " + fmt(m.python) + " (" + fmt(m.implementation) + "), " + fmt(m.cpu) + ", " + fmt(m.cores) + " cores; " + fmt(m.datetime) +
        (INFO.quick ? "; a --quick run" : "")),
      INFO.failed && INFO.failed.length ? h("p", { class: "error" }, "failed cases: " + INFO.failed.join(", ")) : null,
      h("h3", {}, "Targets"),
      table(INFO.targets.columns, INFO.targets.rows, { id: "bench-targets" }),
      INFO.targets.notes.length ? h("p", { class: "note" }, INFO.targets.notes.join(" ")) : null,
      h("h3", {}, "Every figure (as harness bench --format markdown prints it)"),
      table(INFO.table.columns, INFO.table.rows, { id: "bench-table", cellClass: (v, j) => (j > 0 ? "num" : "mono") }),
      h("h3", {}, "Plots"),
      h("div", { class: "figures" }, figs),
    );
  }

  function verdictClass(v) {
    if (!v) return "";
    if (v.startsWith("as reference")) return "v-good";
    if (v === "as spec") return "v-spec";
    if (v === "differs") return "v-warn";
    if (v === "inconclusive") return "v-odd";
    return "v-bad";
  }

  function renderProbe() {
    const r = INFO;
    const server = r.server ? (r.server.name || "?") + " " + (r.server.version || "") : "no server info";
    const verdicts = r.summary ? Object.keys(r.summary) : [];
    const summaryRows = r.eras.map((e) => [e.era, e.spoken === false ? "no" : e.spoken ? "yes" : "–", ...verdicts.map((v) => (e.summary || {})[v] ?? "–")]);
    const sections = r.eras.map((e) => {
      const detail = h("div", {});
      const rows = e.rules.map((x) => [x.id, x.sent, h("span", { class: "chip " + verdictClass(x.verdict) }, x.verdict), x.basis || "", x.observed, x.reference, x.spec]);
      return h("section", { "data-era": e.era },
        h("h3", {}, e.title + (e.spoken === false ? " (not spoken)" : "")),
        e.evidence ? h("p", { class: "muted small" }, e.evidence) : null,
        rows.length ? table(["rule", "sent", "verdict", "basis", "observed", "reference", "spec"], rows, {
          class: "probe", onRow: (row, i) => detail.replaceChildren(h("pre", {}, JSON.stringify(e.rules[i], null, 2))),
        }) : h("p", { class: "muted" }, "no rules run in this era"),
        detail);
    });
    show(
      h("h2", {}, "Probe report " + r.title),
      h("dl", { class: "facts" }, h("dt", {}, "server"), h("dd", {}, server), h("dt", {}, "command"), h("dd", {}, h("code", {}, (r.command || []).join(" "))),
        h("dt", {}, "format"), h("dd", {}, r.format || "–")),
      r.not_mcp ? h("p", { class: "error" }, "Not an MCP server: " + compact(r.not_mcp)) : null,
      h("h3", {}, "Verdicts per era"),
      table(["era", "spoken", ...verdicts], summaryRows, { id: "probe-summary" }),
      ...sections,
    );
  }

  window.addEventListener("hashchange", render);
  render();
})();
