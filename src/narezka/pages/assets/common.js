// Helpers shared by narezka's pages. Text from documents only ever reaches the DOM as text
// nodes (textContent), never as markup.
performance.mark("narezka-start");  // the HTML and its data are parsed: our script begins
window.narezka = (function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";

  function fill(node, attrs, children) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child)) : child);
    }
  }

  function el(tag, attrs, children) {
    return fill(document.createElement(tag), attrs, children);
  }

  function svg(tag, attrs, children) {
    return fill(document.createElementNS(SVG, tag), attrs, children);
  }

  function readJSON(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function num(n) {
    return typeof n === "number" ? n.toLocaleString("en-US").replace(/,/g, " ") : String(n);
  }

  function pct(x) {
    return (100 * x).toFixed(1) + "%";
  }

  // A size bar: value against limit, with the numbers written out and "over" spelled out.
  function meter(value, limit, unit, extra) {
    const over = value > limit;
    const share = Math.min(1, limit > 0 ? value / limit : 0);
    const fillNode = el("span", { class: "fill" });
    fillNode.style.width = (100 * share).toFixed(1) + "%";
    return el("span", {
      class: "bar" + (over ? " over" : ""),
      role: "meter",
      "aria-valuemin": 0,
      "aria-valuemax": limit,
      "aria-valuenow": value,
      "aria-label": value + " of " + limit + " " + unit + (over ? ", over the limit" : ""),
    }, [
      el("span", { class: "track" }, fillNode),
      el("span", { class: "num" }, value + " / " + limit + " " + unit + (extra || "")),
      over ? el("span", { class: "tag over" }, "over limit") : null,
    ]);
  }

  // A vertical bar chart as SVG; the last bar can be flagged (e.g. over the limit).
  function histogram(counts, labels, axis, title, flagLast) {
    const w = 270, h = 96, pad = 16, bw = (w - 2) / counts.length;
    const top = Math.max(1, ...counts);
    const bars = counts.map((c, i) => {
      const bh = Math.round((h - 2 * pad) * c / top);
      const last = flagLast && i === counts.length - 1;
      return svg("rect", {
        x: (1 + i * bw).toFixed(1), y: h - pad - bh, width: Math.max(1, bw - 1).toFixed(1),
        height: bh, fill: last ? "#b3001b" : "#0072b2",
        stroke: last ? "#1b1b1b" : "none", "stroke-dasharray": last ? "2 1" : null,
      }, svg("title", {}, labels[i] + ": " + c + " chunks"));
    });
    const marks = [
      svg("text", { x: 1, y: h - 3 }, "0"),
      svg("text", { x: w / 2, y: h - 3, "text-anchor": "middle" }, axis.mid),
      svg("text", { x: w - 1, y: h - 3, "text-anchor": "end" }, axis.end),
      svg("text", { x: 1, y: 10 }, title + " · tallest bar " + top),
    ];
    return svg("svg", {
      class: "hist", width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img",
      "aria-label": title + ": " + counts.join(", "),
    }, [...bars, ...marks]);
  }

  function ready() {
    document.body.dataset.ready = "1";
    performance.mark("narezka-ready");
  }

  return { el, svg, readJSON, num, pct, meter, histogram, ready };
})();
