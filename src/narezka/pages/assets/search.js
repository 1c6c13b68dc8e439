
// The search page's script (after common.js). The page works without it: the form is a plain
// GET and the server renders the results. With it, a search fetches the page for the new URL
// and swaps in only its results section (the server escaped everything in it; nothing in it
// runs), and the API key, when the server has one, travels as Authorization: Bearer from
// sessionStorage: this tab only, never in a URL or a cookie.
(function () {
  "use strict";
  const STORE = "narezka.apiKey";
  const form = document.getElementById("search");
  const keyForm = document.getElementById("key-form");
  const keyBox = document.getElementById("api-key");
  const forget = document.getElementById("forget-key");
  const view = document.getElementById("source-view");
  let key = null;
  let asked = 0;
  let searches = 0;

  try {
    key = sessionStorage.getItem(STORE);
  } catch (e) {
    key = null;  // storage refused (a private mode): the key lasts until the page is left
  }

  function authHeaders() {
    return key ? { Authorization: "Bearer " + key } : {};
  }

  function remember(value) {
    key = value || null;
    try {
      if (key) sessionStorage.setItem(STORE, key);
      else sessionStorage.removeItem(STORE);
    } catch (e) { /* kept in memory only */ }
  }

  // needed: the server answered without the key (ask for it); else a key in use shows only
  // its "forget" button.
  function showKeyState(needed) {
    const given = !needed && Boolean(key);
    document.body.dataset.key = needed ? "needed" : given ? "given" : "";
    keyForm.hidden = !needed && !given;
    for (const node of keyForm.querySelectorAll(".ask-key")) node.hidden = given;
    forget.hidden = !given;
  }

  function say(message, kind) {
    const status = window.narezka.el("p", {
      id: "status", class: "status " + (kind || ""), role: kind === "error" ? "alert" : "status",
    }, message);
    const results = document.getElementById("results");
    results.replaceChildren(status);
    results.dataset.state = kind || "message";
  }

  // The message of a JSON error the server answered instead of a page (its own fault, or a
  // guard's refusal), as text.
  function refusal(text) {
    try {
      return String(JSON.parse(text).error);
    } catch (e) {
      return "an unexpected reply";
    }
  }

  function painted() {
    // The frame after the one that laid the results out has painted them.
    requestAnimationFrame(function () {
      setTimeout(function () {
        performance.mark("narezka-painted");
        performance.measure("narezka-search", "narezka-submit", "narezka-painted");
        searches += 1;
        document.body.dataset.searched = String(searches);
      }, 0);
    });
  }

  // The form as the page for a URL of the history shows it (back and forward): the fields
  // are those its server-rendered form was filled with.
  function syncForm(doc) {
    const fresh = doc.getElementById("search");
    if (!fresh) return;
    for (const node of fresh.elements) {
      const mine = node.name && form.elements.namedItem(node.name);
      if (!mine) continue;
      if (node.type === "checkbox") {
        mine.checked = node.checked;
      } else if (node.tagName === "SELECT") {
        mine.replaceChildren(...Array.from(node.options, (o) => document.importNode(o, true)));
        mine.value = node.value;
      } else {
        mine.value = node.value;
      }
    }
  }

  async function load(url, push, fromHistory) {
    const mine = ++asked;
    performance.mark("narezka-submit");
    document.body.dataset.busy = "1";
    let doc = null;
    let text = "";
    try {
      const response = await fetch(url, { headers: authHeaders(), cache: "no-store" });
      text = await response.text();
      performance.mark("narezka-fetched");
      doc = new DOMParser().parseFromString(text, "text/html");
    } catch (e) {
      doc = null;
    }
    if (mine !== asked) return;  // a newer search was asked meanwhile
    delete document.body.dataset.busy;
    const fresh = doc && doc.getElementById("results");
    if (!fresh) {
      say(doc ? "The server cannot answer: " + refusal(text)
        : "The server did not answer. Is narezka serve still running?", "error");
      painted();
      return;
    }
    const needed = doc.body.dataset.key === "needed";
    document.getElementById("results").replaceWith(document.adoptNode(fresh));
    if (needed && key) {
      remember(null);
      say("The server did not accept this API key.", "error");
    }
    showKeyState(needed);
    if (fromHistory) syncForm(doc);
    if (push && !needed) history.pushState(null, "", url);
    document.title = doc.title;
    const status = document.getElementById("status");
    document.getElementById("announce").textContent = status ? status.textContent : "";
    performance.mark("narezka-swapped");
    painted();
  }

  function formURL() {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (String(value).trim() !== "" || name === "q") params.append(name, String(value));
    }
    return form.getAttribute("action") + "?" + params.toString();
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    load(formURL(), true);
  });

  keyForm.addEventListener("submit", function (event) {
    event.preventDefault();
    remember(keyBox.value.trim());
    keyBox.value = "";
    load(location.pathname + location.search, false);
  });

  forget.addEventListener("click", function () {
    remember(null);
    say("The key is forgotten.", "none");
    showKeyState(true);
    keyBox.focus();
  });

  // A source link needs the key too when the server has one: read it here and show it below.
  document.addEventListener("click", async function (event) {
    const link = event.target.closest && event.target.closest("a");
    // A click that opens another tab or window is the browser's to handle.
    const plain = event.button === 0 && !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey);
    if (!link || !plain || event.defaultPrevented) return;
    if (link.hasAttribute("data-swap")) {
      event.preventDefault();
      load(link.getAttribute("href"), true);
      return;
    }
    if (document.body.dataset.key !== "given" || !link.classList.contains("source")) return;
    event.preventDefault();
    const title = document.getElementById("source-title");
    const text = view.querySelector(".source-text");
    title.textContent = link.dataset.path;
    try {
      const response = await fetch(link.getAttribute("href"), { headers: authHeaders() });
      text.textContent = response.ok ? await response.text()
        : "The server refused: " + response.status;
    } catch (e) {
      text.textContent = "The server did not answer.";
    }
    view.hidden = false;
    title.focus();
  });

  document.getElementById("source-close").addEventListener("click", function () {
    view.hidden = true;
    form.querySelector("#q").focus();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !view.hidden) {
      view.hidden = true;
      form.querySelector("#q").focus();
    }
  });

  window.addEventListener("popstate", function () {
    load(location.pathname + location.search, false, true);
  });

  const needed = document.body.dataset.key === "needed";
  showKeyState(needed);
  if (needed && key) {
    load(location.pathname + location.search, false);  // the key of an earlier page of this tab
  } else if (needed) {
    keyBox.focus();
  }
  window.narezka.ready();
})();
