"use strict";
// The view's one script: the timeline, filters and search (the semantics of `agent-memory search`), a note's page,
// the sync comparisons and the sections. Everything a note holds is put in the page as text (textContent), except
// the HTML that markdown-it-py made of it with raw HTML off, which carries no element that can run or load anything.
(function () {
  const site = JSON.parse(document.getElementById("site-data").textContent);
  const PAGE = 50;
  const NEVER_RECALLED = 1, NOT_YET = 2; // a note's `n` (view/site.py `_recall`)
  const stores = { list: new Array(site.chunks), note: new Array(site.chunks) };
  const loading = {};
  const $ = (id) => document.getElementById(id);
  const state = { page: 0, results: null, key: "" };

  window.amChunk = function (kind, number, records) {
    if (!(kind in stores) || !Number.isInteger(number) || number < 0 || number >= site.chunks) return;
    if (!Array.isArray(records) || stores[kind][number]) return;
    if (kind === "list") records.forEach((r, at) => { r._n = number; r._at = at; });
    stores[kind][number] = records;
  };

  function load(kind, number) {
    if (stores[kind][number]) return Promise.resolve(stores[kind][number]);
    const key = kind + "-" + number;
    if (!loading[key]) {
      loading[key] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = "data/" + key + ".js";
        script.addEventListener("load", () => (stores[kind][number] ? resolve(stores[kind][number]) : reject(new Error(key))));
        script.addEventListener("error", () => reject(new Error("could not load " + script.src)));
        document.head.appendChild(script);
      });
    }
    return loading[key];
  }

  async function loadAll() {
    for (let n = 0; n < site.chunks; n++) {
      if (!stores.list[n]) $("summary").textContent = "Loading the notes: " + n + " of " + site.chunks + " files…";
      await load("list", n);
    }
    return stores.list.flat();
  }

  // -- the search of `agent-memory search` (memory/search.py): terms, tiers, partial matches, chains ----------
  function terms(query) {
    const parts = query.toLowerCase().split('"');
    const found = [];
    parts.forEach((part, index) => {
      const quoted = index % 2 === 1 && index !== parts.length - 1;
      const words = part.split(/\s+/).filter(Boolean);
      for (const term of quoted ? [words.join(" ")] : words) if (term && !found.includes(term)) found.push(term);
    });
    return found;
  }

  function searchText(r) {
    if (r._s === undefined) r._s = (r.t + "\n" + (r.b || "")).toLowerCase().replace(/[\x00\x01]/g, " ");
    return r._s;
  }

  function rank(words, phrase, r) {
    const text = searchText(r);
    const cut = text.indexOf("\n");
    const title = text.slice(0, cut), body = text.slice(cut + 1);
    if (title.includes(phrase)) return [0, words.length];
    if (body.includes(phrase)) return [1, words.length];
    const inTitle = words.map((w) => title.includes(w));
    if (inTitle.every(Boolean)) return [2, words.length];
    const found = words.filter((w, i) => inTitle[i] || body.includes(w)).length;
    return [found === words.length ? 3 : 4, found];
  }

  function compare(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function search(all, query, filters) {
    const words = terms(query), phrase = words.join(" ");
    const accepted = (r) =>
      (filters.kind === "setup" ? r.z : !r.z && (!filters.kind || r.k === filters.kind)) &&
      (!filters.agent || r.a === filters.agent) && (!filters.machine || r.m === filters.machine) &&
      (!filters.tag || r.g.includes(filters.tag)) && (!filters.project || r.p === filters.project);
    let found = [], partial = false;
    const scored = [];
    for (const r of all) if (accepted(r)) { const [tier, count] = rank(words, phrase, r); scored.push({ r, tier, count }); }
    found = scored.filter((s) => s.count === words.length);
    if (!found.length && words.length > 1) {
      const most = Math.max(0, ...scored.map((s) => s.count));
      if (most > 0) { found = scored.filter((s) => s.count === most); partial = true; }
    }
    found.sort((a, b) => b.count - a.count || a.tier - b.tier || compare(b.r.c, a.r.c) || compare(b.r.i, a.r.i));
    const corrections = new Map();
    for (const r of all) if (r.r) corrections.set(r.i, [r.r[0], r.c]);
    const newest = new Map();
    for (const [id, [target, created]] of corrections) {
      const now = newest.get(target);
      if (!now || compare(created, now[0]) > 0 || (created === now[0] && compare(id, now[1]) > 0)) newest.set(target, [created, id]);
    }
    if (filters.current) found = found.filter((s) => !newest.has(s.r.i));
    const placed = new Map();
    found.forEach((s, order) => {
      let root = s.r.i, depth = 0;
      const seen = new Set([root]);
      for (;;) {
        const next = corrections.get(root);
        const target = next ? next[0] : "";
        if (!target || seen.has(target)) break;
        seen.add(target); root = target; depth += 1;
      }
      if (!placed.has(root)) placed.set(root, []);
      placed.get(root).push([-depth, order, s]);
    });
    const ordered = [];
    for (const group of placed.values()) group.sort((a, b) => a[0] - b[0] || a[1] - b[1]).forEach((g) => ordered.push(g[2].r));
    return { notes: ordered, partial, words };
  }

  // -- the timeline -------------------------------------------------------------------------------------------
  function filters() {
    const found = {};
    document.querySelectorAll("select[data-facet]").forEach((s) => { found[s.dataset.facet] = s.value; });
    found.current = $("current").checked;
    return found;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function firstLines(r) {
    if (r.b === null) return "";
    let lines = r.b.split("\n").map((l) => l.trim()).filter(Boolean);
    if (lines.length && lines[0].replace(/^#+\s*/, "").replace(/\s*#*$/, "") === r.t) lines = lines.slice(1); // the title again
    lines = lines.slice(0, 3).join("\n");
    return lines.length > 280 ? lines.slice(0, 279) + "…" : lines;
  }

  function when(seconds) { return seconds ? new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC" : ""; }

  function flags(r, partial, words) {
    const found = [];
    if (r.d) found.push(["damaged: " + r.d, true]);
    if (r.q) found.push(["pending: not shared yet", true]);
    if (r.y.length) found.push(["corrected by " + r.y[0][0], true]);
    if (r.r) found.push(["corrects " + r.r[0], false]);
    if (r.n === NEVER_RECALLED) found.push(["never recalled in " + site.days + " days", false]);
    if (r.n === NOT_YET) found.push(["not recalled yet", false]);
    if (partial) found.push(["partial: without " + words.filter((w) => !searchText(r).includes(w)).join(", "), false]);
    return found;
  }

  function item(r, partial, words) {
    const li = el("li");
    const article = el("article");
    const heading = el("h3");
    const link = el("a", r.t || (r.d ? "Damaged note " + r.i : r.i));
    link.href = "#note=" + r._n + "/" + encodeURIComponent(r.i);
    heading.appendChild(link);
    article.appendChild(heading);
    const meta = [r.k || "?", (r.a || "unknown") + "@" + (r.m || "unknown"), r.c.replace("T", " ").replace("Z", " UTC")];
    if (site.projects.length > 1) meta.push("project " + r.p);
    if (r.g.length) meta.push("tags: " + r.g.join(", "));
    article.appendChild(el("p", meta.join(" · "), "meta"));
    const marks = flags(r, partial, words);
    if (marks.length) {
      const p = el("p");
      marks.forEach(([text, warn]) => p.appendChild(el("span", text, warn ? "flag warn" : "flag")));
      article.appendChild(p);
    }
    article.appendChild(el("p", r.b === null ? "(its cached copy is damaged: the next search fetches it again)" : firstLines(r), "excerpt"));
    li.appendChild(article);
    return li;
  }

  async function timeline() {
    const query = $("q").value, chosen = filters();
    const key = JSON.stringify([query, chosen]);
    const plain = !query.trim() && !Object.entries(chosen).some(([name, value]) => value && name !== "current") && !chosen.current;
    if (key !== state.key) { state.key = key; state.page = 0; state.results = null; }
    if (state.shown === key + "#" + state.page && $("results").childElementCount) return; // as it is: not redrawn
    let list, partial = false, words = [], total;
    if (plain) {
      // newest first as written: only the files that hold this page are loaded
      const want = (state.page + 1) * PAGE;
      const shown = [];
      for (let n = 0; n < site.chunks && shown.length < want; n++) (await load("list", n)).forEach((r) => { if (!r.z) shown.push(r); });
      list = shown.slice(state.page * PAGE, want);
      total = site.count - site.setup;
    } else {
      if (!state.results) state.results = search(await loadAll(), query, chosen);
      if (state.key !== key) return;
      ({ partial, words } = state.results);
      total = state.results.notes.length;
      list = state.results.notes.slice(state.page * PAGE, (state.page + 1) * PAGE);
    }
    if (state.key !== key) return; // typed on meanwhile: the newer search draws
    state.shown = key + "#" + state.page;
    const results = $("results");
    results.replaceChildren(...list.map((r) => item(r, partial, words)));
    results.dataset.shown = key; // what the list answers: the query and the filters it was drawn for
    const pages = Math.max(1, Math.ceil(total / PAGE));
    $("summary").textContent = (plain ? total + " notes, newest first" : total + " matching notes") +
      (partial ? " (no note holds every term: those holding the most of them)" : "") + ".";
    $("page-number").textContent = "Page " + (state.page + 1) + " of " + pages;
    $("newer").disabled = state.page === 0;
    $("older").disabled = state.page + 1 >= pages;
  }

  // -- a note's page --------------------------------------------------------------------------------------------
  function noteLink(id, chunk) {
    const a = el("a", id);
    a.href = chunk >= 0 ? "#note=" + chunk + "/" + encodeURIComponent(id) : "#timeline";
    return a;
  }

  async function showNote(chunk, id) {
    const list = await load("list", chunk);
    const at = list.findIndex((r) => r.i === id);
    if (at < 0) throw new Error("no such note in this site");
    const r = list[at];
    const shown = (await load("note", chunk))[at];
    $("note-title").textContent = r.t || (r.d ? "Damaged note " + r.i : r.i);
    const fields = $("note-fields");
    fields.replaceChildren();
    const rows = [["id", r.i], ["kind", r.k], ["agent", r.a], ["machine", r.m], ["created", r.c], ["project", r.p],
      ["tags", r.g.join(", ")], ["where it is", r.o + (shown.s === "pending" ? " (pending upload: only on this machine)" : " (this machine's verified copy)")]];
    if (r.d) rows.push(["damaged", r.d + " (its fields cannot be trusted)"]);
    for (const [name, value] of rows) { fields.appendChild(el("dt", name)); fields.appendChild(el("dd", value || "-")); }
    const chain = $("note-chain");
    chain.replaceChildren();
    if (r.r) { const p = el("p", "It corrects "); p.appendChild(noteLink(r.r[0], r.r[1])); chain.appendChild(p); }
    if (r.y.length) {
      const p = el("p", "Corrected by ");
      r.y.forEach(([other, at2], index) => { if (index) p.appendChild(document.createTextNode(", ")); p.appendChild(noteLink(other, at2)); });
      chain.appendChild(p);
    }
    if (!r.r && !r.y.length) chain.appendChild(el("p", "It corrects no note, and no note corrects it."));
    const banner = $("note-banner");
    banner.hidden = !r.y.length;
    banner.textContent = r.y.length ? "Corrected: " + r.y[0][0] + " corrects this note. Its text below is the old one." : "";
    const [found, read] = r.u;
    $("note-usage").textContent = (found ? "Last found by a search " + when(found) + ". " : "") +
      (read ? "Last read " + when(read) + ". " : "") +
      (r.n === NEVER_RECALLED ? "Never recalled: no session on this machine found or read it in the last " + site.days + " days." : "") +
      (r.n === NOT_YET ? "Not recalled yet: it was written in the last " + site.days + " days, and no session on this machine has found or read it since." : "");
    const body = $("note-body");
    body.classList.toggle("corrected", r.y.length > 0);
    if (shown.h !== null) {
      const template = document.createElement("template");
      template.innerHTML = shown.h; // markdown-it-py's HTML, raw HTML off: inert in a template, then moved in
      body.replaceChildren(template.content);
    } else if (r.b !== null) {
      body.replaceChildren(el("p", "Shown as text: its Markdown was not rendered within this site's time budget (agent-memory view --render-all renders every note)."), el("pre", r.b, "plain"));
    } else {
      body.replaceChildren(el("p", "Its cached copy is damaged: the next search fetches it again."));
    }
    $("note-front").textContent = shown.f || "(none)";
  }

  // -- sections and routes --------------------------------------------------------------------------------------
  const views = { timeline: "timeline-view", note: "note-view", sync: "sync-view", health: "health-view", picture: "picture-view" };

  async function route() {
    const hash = decodeURIComponent(location.hash.slice(1));
    let name = hash.split("=")[0] || "timeline";
    if (!(name in views)) name = "timeline";
    for (const [view, id] of Object.entries(views)) $(id).hidden = view !== name;
    try {
      if (name === "note") {
        const [chunk, ...rest] = hash.slice(5).split("/");
        await showNote(Number(chunk), rest.join("/"));
        $("note-title").focus();
      } else if (name === "timeline") {
        await timeline();
      } else {
        $(views[name]).querySelector("h2").focus();
      }
      document.body.dataset.state = "ready";
    } catch (error) {
      $("summary").textContent = "This page could not load its notes: " + error.message;
      document.body.dataset.state = "failed";
    }
  }

  let typing = null;
  $("q").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => route(), 200); });
  $("filters").addEventListener("submit", (event) => { event.preventDefault(); route(); });
  $("filters").addEventListener("change", (event) => { if (event.target.id !== "q") route(); }); // typing: "input"
  $("newer").addEventListener("click", () => { state.page -= 1; route(); });
  $("older").addEventListener("click", () => { state.page += 1; route(); });
  window.addEventListener("hashchange", route);

  document.querySelectorAll(".compare").forEach((box) => {
    const from = box.querySelector(".from"), to = box.querySelector(".to");
    const show = () => {
      let any = false;
      box.querySelectorAll(".pair").forEach((pair) => {
        const match = (pair.dataset.from === from.value && pair.dataset.to === to.value) ||
          (pair.dataset.from === to.value && pair.dataset.to === from.value);
        pair.hidden = !match || any;
        any = any || match;
      });
      box.querySelector(".no-pair").hidden = any || from.value === to.value;
    };
    from.addEventListener("change", show);
    to.addEventListener("change", show);
  });
  route();
})();
