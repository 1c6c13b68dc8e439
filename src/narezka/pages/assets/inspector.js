// The chunk inspector: one document at a time, each run's chunks as bands over its exact
// text; two runs side by side with their scrolling kept on the same character offset.
(function () {
  "use strict";
  const { el, readJSON, num, meter, histogram, ready } = window.narezka;
  const index = readJSON("narezka-index");
  const runs = index.runs;
  const parsed = new Map();
  let current = -1;

  function docAt(n) {
    if (!parsed.has(n)) parsed.set(n, readJSON("part-" + n));
    return parsed.get(n);
  }

  function unitName(run) {
    return run.unit === "chars" ? "chars" : "tokens";
  }

  // The data leaves out what it can rebuild (see narezka/inspector/model.py).
  function prefixOf(c) {
    return c.p !== undefined ? c.p : c.sec.length ? c.sec.join(" > ") + "\n\n" : "";
  }

  function embedText(doc, c) {
    return c.x !== undefined ? c.x : prefixOf(c) + doc.text.slice(c.s, c.e);
  }

  function urlOf(doc, c) {
    return c.u !== undefined ? c.u : doc.source + "#" + c.a;
  }

  // Lines of embed_text that are not lines of the span: the breadcrumb, a split table's
  // repeated header, restored code fences.
  function embedLines(doc, c) {
    const spanLines = new Set(doc.text.slice(c.s, c.e).split("\n").map((l) => l.trim()));
    const crumb = c.sec.join(" > ");
    return embedText(doc, c).split("\n").map((line, n) => ({
      line,
      kind: n === 0 && crumb && line === crumb ? "crumb"
        : line.trim() && !spanLines.has(line.trim()) ? "added" : "span",
    }));
  }

  // --- summary and file list -------------------------------------------------------------
  function totalsTable(run) {
    const t = run.totals, unit = unitName(run);
    const rows = [
      ["files", num(t.files)],
      ["chunks", num(t.chunks)],
      ["p50/p95/max " + unit, t.p50 + " / " + t.p95 + " / " + t.max],
      ["limit", run.limit + " " + (run.unit === "chars" ? "chars" : run.tokenizer + " tokens")],
      ["over the limit", t.over === 0 ? "0" : t.over + " ⚠"],
      ["removed characters", num(t.removed)],
    ];
    if (t.display) {
      rows.splice(3, 0, [run.display + " tokens p50/p95/max",
        t.display.p50 + " / " + t.display.p95 + " / " + t.display.max]);
    }
    if (t.skipped.length) rows.push(["skipped files", String(t.skipped.length)]);
    if (t.empty.length) rows.push(["empty files", String(t.empty.length)]);
    return el("table", { class: "figures totals", "data-run": runs.indexOf(run) },
      el("tbody", {}, rows.map(([k, v]) => el("tr", {}, [el("th", { scope: "row" }, k), el("td", {}, v)]))));
  }

  function runHistogram(run) {
    const h = run.histogram, bins = h.counts.length - 1;
    const labels = h.counts.map((_, i) => i === bins ? "over " + run.limit
      : (i * h.width) + "–" + ((i + 1) * h.width - 1));
    return histogram(h.counts, labels, { mid: String(Math.round(run.limit / 2)), end: run.limit + " | over" },
      "chunk sizes (" + unitName(run) + ")", true);
  }

  function fileList() {
    const list = el("ul", { class: "files" });
    index.files.forEach((f, n) => {
      const over = f.over.some((x) => x > 0);
      list.append(el("li", {}, el("button", { type: "button", "data-file": n, title: f.source }, [
        el("span", { class: "name" }, f.source),
        el("span", { class: "count" }, f.chunks.join(" | ") + " chunks" + (over ? " ⚠ over" : "")),
      ])));
    });
    list.addEventListener("click", (ev) => {
      const button = ev.target.closest("button[data-file]");
      if (button) show(Number(button.dataset.file));
    });
    return list;
  }

  function filterBox(list) {
    const input = el("input", { class: "files-filter", type: "search", placeholder: "filter files",
      "aria-label": "filter files" });
    input.addEventListener("input", () => {
      const q = input.value.toLowerCase();
      for (const li of list.children) li.hidden = !li.textContent.toLowerCase().includes(q);
    });
    return input;
  }

  // --- a document as bands ---------------------------------------------------------------
  function firstAtom(atoms, pos) {
    let lo = 0, hi = atoms.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (atoms[mid][1] <= pos) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function spanNode(doc, c, overlapEnd) {
    const node = el("div", { class: "span", "data-start": c.s, "data-end": c.e });
    const cuts = new Set([c.s, c.e]);
    if (overlapEnd > c.s) cuts.add(Math.min(overlapEnd, c.e));
    const inside = [];
    for (let a = firstAtom(doc.atoms, c.s); a < doc.atoms.length && doc.atoms[a][0] < c.e; a++) {
      const [s, e] = doc.atoms[a];
      inside.push(doc.atoms[a]);
      if (s > c.s) cuts.add(s);
      if (e < c.e) cuts.add(e);
    }
    const points = [...cuts].sort((x, y) => x - y);
    for (let i = 0; i + 1 < points.length; i++) {
      const [s, e] = [points[i], points[i + 1]];
      const text = doc.text.slice(s, e);
      const atom = inside.find((a) => a[0] <= s && e <= a[1]);
      const overlap = e <= overlapEnd;
      if (!atom && !overlap) { node.append(text); continue; }
      const cls = [overlap ? "overlap" : "", atom ? "atom atom-" + atom[2] : ""];
      const attrs = {};
      if (atom && (s === atom[0] || s === c.s)) {
        const cut = atom[0] < c.s || atom[1] > c.e;
        cls.push("atom-start");
        attrs["data-label"] = atom[2] + (cut ? " (split)" : "");
      }
      if (overlap) attrs.title = "overlap: also in the previous chunk";
      attrs.class = cls.filter(Boolean).join(" ");
      node.append(el("span", attrs, text));
    }
    return node;
  }

  function band(doc, r, c, n, prevEnd) {
    const run = runs[r];
    const unit = unitName(run);
    const extra = c.d !== undefined ? " · " + c.d + " " + run.display + " tokens" : "";
    // Most embed_texts are the breadcrumb line and the span: nothing to compare line by line.
    const plain = c.x === undefined && c.p === undefined;
    const added = plain ? [] : embedLines(doc, c).filter((l) => l.kind === "added");
    return el("article", {
      class: "band band-" + (n % 2) + (c.t > run.limit ? " over" : ""),
      "data-index": c.i, "data-start": c.s, "data-end": c.e, tabindex: 0,
      "aria-label": "chunk " + c.i,
    }, [
      el("header", { class: "meta" }, [
        el("span", { class: "idx" }, "#" + c.i),
        el("span", { class: "crumb" }, c.sec.length ? c.sec.join(" › ") : "(no section)"),
        meter(c.t, run.limit, unit, run.unit === "chars" ? "" : " (" + c.c + " chars)"),
        el("span", { class: "chars" }, run.unit === "chars" ? extra.slice(3) : ""),
        el("span", { class: "where" }, "[" + c.s + "–" + c.e + ")"),
        urlOf(doc, c) ? el("code", { class: "url" }, urlOf(doc, c)) : null,
      ]),
      added.length ? el("div", { class: "added" }, [
        el("span", { class: "label" }, "embed_text adds:"),
        el("pre", {}, added.map((l) => l.line).join("\n")),
      ]) : null,
      spanNode(doc, c, prevEnd),
    ]);
  }

  function gap(doc, s, e) {
    const text = doc.text.slice(s, e);
    const blank = !text.trim();
    const why = s < doc.body ? "front matter (in meta, not in a chunk)" : "not in any chunk";
    return el("div", { class: "gap" + (blank ? " blank" : ""), "data-start": s, "data-end": e,
      "aria-hidden": blank ? "true" : null }, [blank ? null : el("span", { class: "label" }, why), text]);
  }

  function renderPane(pane, doc, r) {
    const body = pane.querySelector(".pane-body");
    const chunks = doc.runs[r];
    const frag = document.createDocumentFragment();
    frag.append(el("div", { class: "doc-title" }, [doc.source + " · " + chunks.length + " chunks",
      doc.stale ? el("span", { class: "stale" }, " · the file changed since it was chunked") : null]));
    let end = 0;
    chunks.forEach((c, n) => {
      if (c.s > end) frag.append(gap(doc, end, c.s));
      frag.append(band(doc, r, c, n, end));
      end = Math.max(end, c.e);
    });
    if (end < doc.text.length) frag.append(gap(doc, end, doc.text.length));
    body.replaceChildren(frag);
    body.scrollTop = 0;
  }

  // --- detail drawer ---------------------------------------------------------------------
  const detail = el("aside", { class: "detail", id: "detail", hidden: true, "aria-live": "polite" });

  function showDetail(r, n) {
    const doc = docAt(current), c = doc.runs[r][n], run = runs[r];
    const pre = el("pre", { class: "embed-text" });
    for (const l of embedLines(doc, c)) {
      pre.append(el("span", { class: "line-" + l.kind }, l.line), "\n");
    }
    pre.lastChild.remove();
    const close = el("button", { type: "button", class: "close" }, "close ✕");
    close.addEventListener("click", hideDetail);
    detail.replaceChildren(close,
      el("h2", {}, run.label + " · chunk #" + c.i),
      el("p", {}, [el("strong", {}, "breadcrumb: "), c.sec.join(" > ") || "(none)"]),
      el("p", {}, [el("strong", {}, "url: "), el("code", { class: "chunk-url" }, urlOf(doc, c) || "—")]),
      el("p", {}, [el("strong", {}, "span: "), "[" + c.s + "–" + c.e + ") of " + doc.source]),
      el("p", {}, [meter(c.t, run.limit, unitName(run)), " · " + c.c + " chars",
        c.d !== undefined ? " · " + c.d + " " + run.display + " tokens" : ""]),
      el("div", { class: "embed" }, [el("span", { class: "label" },
        "embed_text (what is embedded; + marks lines that are not in the span)"), pre]));
    detail.hidden = false;
    document.querySelector(".inspector").classList.add("with-detail");
    document.querySelectorAll(".band.selected").forEach((b) => b.classList.remove("selected"));
    const pane = document.querySelectorAll(".pane")[r];
    pane.querySelectorAll(".band")[n].classList.add("selected");
  }

  function hideDetail() {
    detail.hidden = true;
    const layout = document.querySelector(".inspector");
    if (layout) layout.classList.remove("with-detail");
  }

  // --- scroll kept in step -------------------------------------------------------------
  function childAtY(body, y) {
    const kids = body.children;
    let lo = 1, hi = kids.length - 1;  // kids[0] is the title
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (kids[mid].offsetTop <= y) lo = mid; else hi = mid - 1;
    }
    return kids[lo];
  }

  function childAtOffset(body, pos) {
    const kids = body.children;
    let lo = 1, hi = kids.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (Number(kids[mid].dataset.start) <= pos) lo = mid; else hi = mid - 1;
    }
    return kids[lo];
  }

  function syncScroll(bodies) {
    let leader = null, release = 0;
    bodies.forEach((body, i) => body.addEventListener("scroll", () => {
      if (leader !== null && leader !== i) return;
      leader = i;
      cancelAnimationFrame(release);
      release = requestAnimationFrame(() => requestAnimationFrame(() => { leader = null; }));
      const other = bodies[1 - i];
      const node = childAtY(body, body.scrollTop);
      if (!node || !node.dataset.start) return;
      const s = Number(node.dataset.start), e = Number(node.dataset.end);
      const frac = node.offsetHeight ? (body.scrollTop - node.offsetTop) / node.offsetHeight : 0;
      const pos = s + Math.max(0, Math.min(1, frac)) * (e - s);
      const target = childAtOffset(other, pos);
      if (!target || !target.dataset.start) return;
      const ts = Number(target.dataset.start), te = Number(target.dataset.end);
      const tf = te > ts ? Math.max(0, Math.min(1, (pos - ts) / (te - ts))) : 0;
      other.scrollTop = target.offsetTop + tf * target.offsetHeight;
    }));
  }

  // --- page ------------------------------------------------------------------------------
  function show(n) {
    if (n < 0 || n >= index.files.length) return;
    current = n;
    hideDetail();
    const doc = docAt(n);
    document.querySelectorAll(".pane").forEach((pane, r) => renderPane(pane, doc, r));
    document.querySelectorAll(".files button").forEach((b) => {
      b.setAttribute("aria-current", Number(b.dataset.file) === n ? "true" : "false");
    });
    if (location.hash !== "#file=" + n) history.replaceState(null, "", "#file=" + n);
  }

  function legend() {
    const item = (sample, text) => el("li", {}, [sample, " ", text]);
    return el("details", { class: "legend" }, [el("summary", {}, "How to read the bands"), el("ul", {}, [
      item(el("span", { class: "swatch band-0" }, "#0"), "a chunk: solid edge, then"),
      item(el("span", { class: "swatch band-1" }, "#1"), "the next: dashed edge; ✂ marks each boundary"),
      item(el("span", { class: "swatch overlap" }, "abc"), "hatched, dotted underline: overlap repeated from the chunk before"),
      item(el("span", { class: "swatch atom-mark" }, "code"), "boxed and labelled: a code block, table or HTML block (an atom); “split” when a chunk boundary cuts it"),
      item(el("span", { class: "swatch added-mark" }, "+"), "“embed_text adds”: lines embedded but not in the span (a split table's header, code fences)"),
      item(el("span", { class: "swatch" }, "▮▯"), "bar: size of embed_text against the limit; striped and “over limit” past it"),
      item(el("span", { class: "swatch" }, "click"), "a chunk: its full embed_text, breadcrumb and url"),
    ])]);
  }

  function build() {
    const app = document.getElementById("app");
    const list = fileList();
    const side = el("nav", { class: "side", "aria-label": "summary and files" }, [
      el("h1", {}, index.title),
      legend(),
      ...runs.flatMap((run) => [el("div", { class: "run-label" }, run.label), totalsTable(run), runHistogram(run)]),
      el("h2", {}, index.files.length + " files (chunks" + (runs.length > 1 ? " left | right" : "") + ")"),
      filterBox(list), list,
    ]);
    const panes = el("main", { class: "panes" + (runs.length > 1 ? " compare" : "") },
      runs.map((run, r) => el("section", { class: "pane", "data-run": r, "aria-label": run.label }, [
        el("h2", {}, run.label), el("div", { class: "pane-body" }),
      ])));
    panes.addEventListener("click", (ev) => {
      const b = ev.target.closest(".band");
      if (!b) return;
      const pane = b.closest(".pane");
      showDetail(Number(pane.dataset.run), [...pane.querySelectorAll(".band")].indexOf(b));
    });
    panes.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && ev.target.classList.contains("band")) ev.target.click();
    });
    document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") hideDetail(); });
    app.replaceChildren(el("div", { class: "inspector" }, [side, panes, detail]));
    if (runs.length > 1) syncScroll([...document.querySelectorAll(".pane-body")]);
    const asked = /^#file=(\d+)$/.exec(location.hash);
    if (index.files.length) show(asked ? Number(asked[1]) : 0);
    else panes.firstChild.querySelector(".pane-body").append(el("p", {}, "No documents were chunked."));
  }

  build();
  ready();
})();
