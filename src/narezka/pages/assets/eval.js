// The evaluation report: results, an SVG plot, sign tests, and a drill-down per question.
(function () {
  "use strict";
  const { el, svg, readJSON, num, pct, ready } = window.narezka;
  const index = readJSON("narezka-index");
  const S = index.settings, k = S.k, strategies = index.strategies;
  const spans = S.format === "spans";
  // Okabe–Ito colours, each line also with its own marker shape and dash.
  const COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"];
  const DASHES = ["", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 4"];

  function marker(shape, x, y, colour) {
    const r = 4.5;
    if (shape === 0) return svg("circle", { cx: x, cy: y, r, fill: colour });
    if (shape === 1) return svg("rect", { x: x - r, y: y - r, width: 2 * r, height: 2 * r, fill: colour });
    if (shape === 2) return svg("path", { d: `M${x} ${y - r - 1}L${x + r + 1} ${y + r}L${x - r - 1} ${y + r}Z`, fill: colour });
    if (shape === 3) return svg("path", { d: `M${x} ${y - r - 1}L${x + r + 1} ${y}L${x} ${y + r + 1}L${x - r - 1} ${y}Z`, fill: colour });
    return svg("circle", { cx: x, cy: y, r, fill: "#fff", stroke: colour, "stroke-width": 2 });
  }

  // metric(s) in [0, 1] against mean chunk tokens; one line per strategy group.
  function plot(title, metric) {
    const w = 520, h = 300, L = 48, R = 150, T = 24, B = 36;
    const groups = new Map();
    strategies.forEach((s) => { if (!groups.has(s.group)) groups.set(s.group, []); groups.get(s.group).push(s); });
    const xs = strategies.map((s) => s.tokens.mean);
    const x0 = Math.min(...xs) * 0.9, x1 = Math.max(...xs) * 1.1 || 1;
    const X = (v) => L + (w - L - R) * (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5);
    const Y = (v) => T + (h - T - B) * (1 - v);
    const nodes = [svg("text", { x: L, y: 14 }, title)];
    for (let t = 0; t <= 4; t++) {
      const v = t / 4;
      nodes.push(svg("line", { x1: L, x2: w - R, y1: Y(v), y2: Y(v), stroke: "#ddd" }),
        svg("text", { x: L - 6, y: Y(v) + 3, "text-anchor": "end" }, (100 * v) + "%"));
    }
    nodes.push(svg("text", { x: (L + w - R) / 2, y: h - 6, "text-anchor": "middle" }, "mean chunk size (tokens)"),
      svg("text", { x: L, y: h - 20 }, Math.round(x0)), svg("text", { x: w - R, y: h - 20, "text-anchor": "end" }, Math.round(x1)));
    [...groups.entries()].forEach(([name, items], g) => {
      const colour = COLOURS[g % COLOURS.length];
      const points = items.map((s) => [s.tokens.mean, metric(s)]).sort((a, b) => a[0] - b[0]);
      if (points.length > 1) {
        nodes.push(svg("polyline", { points: points.map(([x, y]) => X(x) + "," + Y(y)).join(" "), fill: "none",
          stroke: colour, "stroke-width": 2, "stroke-dasharray": DASHES[g % DASHES.length] || null }));
      }
      points.forEach(([x, y]) => nodes.push(marker(g % 5, X(x), Y(y), colour)));
      const ly = T + 14 * g;
      nodes.push(marker(g % 5, w - R + 14, ly, colour), svg("text", { x: w - R + 24, y: ly + 4 }, name));
    });
    return svg("svg", { class: "plot", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img",
      "aria-label": title + ": " + strategies.map((s) => s.label + " " + pct(metric(s))).join(", ") }, nodes);
  }

  function resultsTable() {
    const head = ["strategy", "chunks", "chars mean / p95", "tokens mean / p95", "over window",
      ...S.ks.map((x) => "hit@" + x), "MRR", "ceiling"];
    if (spans) head.push("full@" + k, "recall@" + k, "precision@" + k, "IoU@" + k);
    const rows = strategies.map((s) => {
      const sp = s.span[String(k)];
      const cells = [s.label + (s.label === index.best ? " ★ best" : ""), num(s.chunks),
        Math.round(s.chars.mean) + " / " + Math.round(s.chars.p95),
        Math.round(s.tokens.mean) + " / " + Math.round(s.tokens.p95), S.window === null ? "—" : String(s.over),
        ...S.ks.map((x) => pct(s.hits[String(x)])), s.mrr.toFixed(3), pct(s.ceiling)];
      if (spans) cells.push(...(sp ? [pct(sp.full), pct(sp.recall), pct(sp.precision), pct(sp.iou)] : ["—", "—", "—", "—"]));
      return el("tr", { class: s.label === index.best ? "best" : null }, cells.map((c) => el("td", {}, c)));
    });
    return el("table", { class: "figures results" }, [
      el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows)]);
  }

  const MAX_PAIRS = 10;

  function pairTable(pairs) {
    return el("table", { class: "figures signs" }, [
      el("thead", {}, el("tr", {}, ["A", "B", "only A hit", "only B hit", "both or neither", "p (two-sided)"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, pairs.map((c) => el("tr", {}, [c.a, c.b, c.aOnly, c.bOnly, c.ties,
        c.p.toFixed(3) + (c.p < 0.05 ? " (significant at 5%)" : "")].map((v) => el("td", {}, String(v)))))),
    ]);
  }

  // Many strategies make many pairs: the best against each other first, all of them folded.
  function signTests() {
    const pairs = index.comparisons.filter((c) => c.k === k);
    if (!pairs.length) return el("p", { class: "muted" }, "One strategy: no pairs to test.");
    if (pairs.length <= MAX_PAIRS) return pairTable(pairs);
    return el("div", {}, [
      el("p", {}, "The best strategy against each other one:"), pairTable(index.bestComparisons),
      el("details", {}, [el("summary", {}, "All " + pairs.length + " pairs"), pairTable(pairs)]),
    ]);
  }

  // How min_relevance trades correct answers kept against unanswerable questions refused.
  function refusalTable(r) {
    const share = (part, whole) => whole ? pct(part / whole) + " (" + part + "/" + whole + ")" : "—";
    return el("div", {}, [
      el("p", {}, r.unanswerable + " unanswerable questions; " + r.correct_at_1 + " of " + r.answerable
        + " answerable ones answered at rank 1 (" + r.strategy + "). AUROC (top-hit relevance): "
        + (r.auroc === null ? "—" : r.auroc.toFixed(3)) + "."),
      el("table", { class: "figures refusal" }, [
        el("thead", {}, el("tr", {}, ["min_relevance", "unanswerable refused", "correct dropped", "correct kept"]
          .map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, r.thresholds.map((t) => el("tr", { class: t.threshold === r.min_relevance ? "best" : null },
          [String(t.threshold) + (t.threshold === r.min_relevance ? " (in force)" : ""),
            share(t.unanswerable_refused, r.unanswerable), share(t.correct_dropped, r.correct_at_1),
            share(t.correct_kept, r.correct_at_1)].map((c) => el("td", {}, c))))),
      ]),
    ]);
  }

  function outcomeCell(o) {
    if (o.hit) return el("td", { class: "hit" }, "✓ hit at " + o.rank);
    return el("td", { class: "miss" }, ["✗ miss", el("span", { class: "cause" }, " — " + o.cause)]);
  }

  function questionsTable(drill) {
    const tbody = el("tbody");
    index.questions.forEach((q, n) => {
      const row = el("tr", { "data-question": n, tabindex: 0 }, [
        el("td", {}, String(q.line || n + 1)), el("td", {}, q.q), ...q.results.map(outcomeCell)]);
      tbody.append(row);
    });
    tbody.addEventListener("click", (ev) => {
      const row = ev.target.closest("tr[data-question]");
      if (row) openQuestion(Number(row.dataset.question), drill);
    });
    tbody.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault();  // Space would scroll the page instead
      ev.target.click();
    });
    return el("table", { class: "figures questions" }, [
      el("thead", {}, el("tr", {}, ["line", "question", ...strategies.map((s) => s.label + " @" + k)]
        .map((h) => el("th", { scope: "col" }, h)))), tbody]);
  }

  function marked(text, marks) {
    const node = el("div", { class: "text" });
    let at = 0;
    for (const [s, e] of marks) {
      if (s > at) node.append(text.slice(at, s));
      node.append(el("mark", {}, text.slice(s, e)));
      at = e;
    }
    if (at < text.length) node.append(text.slice(at));
    return node;
  }

  function openQuestion(n, drill) {
    const q = index.questions[n], part = readJSON("part-" + n);
    document.querySelectorAll(".questions tr.selected").forEach((r) => r.classList.remove("selected"));
    document.querySelector(`.questions tr[data-question="${n}"]`).classList.add("selected");
    const expected = spans
      ? el("ul", {}, q.refs.map((r) => el("li", {}, [el("code", {}, r.doc + " [" + r.start + "–" + r.end + ")"), " ", r.content || ""])))
      : el("ul", {}, q.expected.map((s) => el("li", {}, el("mark", {}, s))));
    const cols = strategies.map((s, i) => {
      const o = q.results[i];
      return el("section", { class: "strategy", "data-strategy": s.label }, [
        el("h3", {}, s.label),
        o.hit ? el("p", { class: "hit" }, "✓ hit at rank " + o.rank)
          : el("p", { class: "miss" }, ["✗ miss at k=" + k + " · cause: ", el("strong", { class: "cause" }, o.cause),
            o.rank ? " (first hit at rank " + o.rank + ")" : ""]),
        ...part.retrieved[i].map((x, r) => el("div", { class: "retrieved" + (x.answers ? " is-hit" : "") }, [
          el("div", { class: "muted" }, ["#" + (r + 1) + " ", el("code", {}, x.url || x.file),
            " · score " + x.score + " · " + x.tokens + " tokens", x.archived ? " · archived" : "",
            x.answers ? el("span", { class: "tag ok" }, "answers") : null]),
          marked(x.text, x.marks),
        ])),
      ]);
    });
    drill.replaceChildren(
      el("h2", {}, "Question " + (q.line ? "on line " + q.line : n + 1)),
      el("p", { class: "q" }, el("strong", {}, q.q)),
      q.category || q.source ? el("p", { class: "muted" }, [q.category ? "category " + q.category : "", q.source ? " · source " + q.source : ""]) : null,
      el("h3", {}, spans ? "Expected excerpts" : "Expected strings (all in one chunk)"), expected,
      el("div", { class: "cols" }, cols));
    drill.hidden = false;
    drill.querySelectorAll(".retrieved .text").forEach(clampCard);
    // The drill-down opens below the whole table: bring it into view and move the keyboard
    // there, or a click on a question low on the page seems to do nothing.
    drill.scrollIntoView({ block: "start" });
    drill.focus({ preventScroll: true });
  }

  // A long chunk shows its first CARD_LINES whole lines (the height is a whole number of
  // line boxes, so no line is cut in half) and a button that shows the rest.
  const CARD_LINES = 12;

  function clampCard(text) {
    const full = text.scrollHeight, line = parseFloat(getComputedStyle(text).lineHeight);
    if (full <= CARD_LINES * line + 1) return;
    text.classList.add("clamped");
    const button = el("button", { type: "button", class: "more", "aria-expanded": "false" },
      "show all " + Math.round(full / line) + " lines");
    button.addEventListener("click", () => {
      const open = text.classList.toggle("clamped") === false;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "show the first " + CARD_LINES + " lines" : "show all " + Math.round(full / line) + " lines";
    });
    text.after(button);
  }

  function build() {
    const app = document.getElementById("app");
    const drill = el("section", { class: "drill", id: "drill", hidden: true, tabindex: -1,
      "aria-live": "polite", "aria-label": "what each strategy retrieved for the question" });
    const misses = index.questions.filter((q) => q.results.some((o) => !o.hit)).length;
    const onlyMisses = el("input", { type: "checkbox", id: "only-misses" });
    const questions = questionsTable(drill);
    onlyMisses.addEventListener("change", () => {
      questions.querySelectorAll("tbody tr").forEach((row) => {
        const q = index.questions[Number(row.dataset.question)];
        row.hidden = onlyMisses.checked && q.results.every((o) => o.hit);
      });
    });
    const plots = [plot("hit@" + k, (s) => s.hits[String(k)])];
    if (spans) plots.push(plot("IoU@" + k + " (characters)", (s) => (s.span[String(k)] || { iou: 0 }).iou));
    app.replaceChildren(el("div", { class: "report" }, [
      el("h1", {}, index.title),
      el("p", { class: "settings" }, `Embedder ${S.embedder} (window ${S.window ?? "none"}) · mode ${S.mode} · `
        + `${index.questions.length} questions from ${S.golden} · archived pages ${S.archived ? "included" : "excluded"}`
        + (S.expand ? " · hits expanded to their " + S.expand : "") + ` · embedding cache ${S.cacheHits} hits, ${S.cacheMisses} embedded`),
      index.command ? el("pre", { class: "command" }, index.command) : null,
      el("h2", {}, "Results"), resultsTable(),
      el("h2", {}, "Plot"), el("div", { class: "plots" }, plots),
      index.plot ? el("img", { class: "plot", alt: "the --plot PNG", src: "data:image/png;base64," + index.plot }) : null,
      el("h2", {}, "Paired sign tests (hit@" + k + ")"), signTests(),
      index.refusal ? el("h2", {}, "Nothing relevant: min_relevance") : null,
      index.refusal ? refusalTable(index.refusal) : null,
      index.problems.length ? el("h2", {}, "Golden set problems") : null,
      index.problems.length ? el("ul", {}, index.problems.map((p) => el("li", {}, p))) : null,
      el("h2", {}, "Questions"),
      el("p", {}, [misses + " of " + index.questions.length + " questions missed by some strategy at k=" + k
        + ". Click a question for what each strategy retrieved. ", el("label", {}, [onlyMisses, " show misses only"])]),
      questions, drill,
    ]));
  }

  build();
  ready();
})();
