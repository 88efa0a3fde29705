/* The pair explorer (explorer.py beside this folder writes its data). No dependencies, no network: the index and
   the text chunks are scripts beside the page that call vibeExplorer.index / vibeExplorer.chunk.
   Everything shown is set as text, except answers' HTML, which the report sanitized with nh3 when it wrote it. */
(function () {
  "use strict";
  var PER_PAGE = 20;
  var FIELDS = ["vibe", "dir", "disagree", "flip", "split", "label", "cat", "lmin", "lmax", "sort", "q", "raw"];
  var LABELS = {a: 1, b: 2, tie: 3, none: 0};
  var data = null, haystack = null, state = {}, page = 0, rendering = 0;

  var el = vibePairData.el;

  function signed(v) { return v === null || v === undefined ? "—" : (v > 0 ? "+" + v : String(v)); }

  var VIEW = ["raw", "sort"];  // how the pairs are shown, not which: changing one keeps the selection
  var SORTS = ["vibe-a", "vibe-b", "disagree", "length"];

  function decoded(text) {
    try { return decodeURIComponent(text); } catch (err) { return null; }  // a link cut short mid-escape
  }

  // The fragment as a state, read the way the form reads its controls (trimmed), keeping only what names
  // something this run has; the rest is listed in `odd` for the notice.
  function readHash() {
    var out = {}, odd = [], text = location.hash.replace(/^#/, "");
    text.split("&").forEach(function (part) {
      if (!part) return;
      var at = part.indexOf("="), key = decoded(at < 0 ? part : part.slice(0, at));
      var value = at < 0 ? "1" : decoded(part.slice(at + 1));
      if (key === null || value === null) { odd.push("“" + part + "” (a broken escape)"); return; }
      value = value.trim();
      if (!value) return;
      var why = refused(key, value);
      if (why) odd.push(why); else out[key] = value;
    });
    return {state: out, odd: odd};
  }

  // What each field of a link may hold: a test of the value (after trimming), and what to say when it fails.
  function among(values) { return function (v) { return values().indexOf(v) >= 0; }; }
  function ratio(v) { return isFinite(Number(v)) && Number(v) >= 0; }
  function box(v) { return v === "1"; }
  var ACCEPTS = {
    vibe: [function (v) { return data.vibes.some(function (x) { return x.name === v; }); },
           "this run has no vibe of that name"],
    dir: [among(function () { return ["1", "-1", "0", "none"]; }), "a verdict is 1, -1, 0 or none"],
    split: [among(function () { return ["train", "test"]; }), "a split is train or test"],
    label: [function (v) { return LABELS.hasOwnProperty(v); }, "a label is a, b, tie or none"],
    cat: [among(function () { return data.categories; }), "this run has no category of that name"],
    pair: [among(function () { return data.ids; }), "this run has no pair with that id"],
    sort: [among(function () { return SORTS; }), "not a sort order"],
    lmin: [ratio, "not a length ratio"], lmax: [ratio, "not a length ratio"],
    page: [function (v) { return /^[1-9][0-9]*$/.test(v); }, "not a page number"],
    q: [function () { return true; }, ""],
    disagree: [box, "a box is 1 or absent"], flip: [box, "a box is 1 or absent"], raw: [box, "a box is 1 or absent"]
  };

  // Why a link's key=value is left out, or "" when it names something this run has.
  function refused(key, value) {
    if (!ACCEPTS.hasOwnProperty(key)) return "“" + key + "” (not a filter of this page)";
    return ACCEPTS[key][0](value) ? "" : key + " “" + value + "” (" + ACCEPTS[key][1] + ")";
  }

  function fromLink() {
    var hash = readHash();
    state = hash.state;
    page = state.page ? Number(state.page) - 1 : 0;
    delete state.page;
    var notice = document.getElementById("notice");
    notice.textContent = hash.odd.length ? "Left out of this link, not understood: " + hash.odd.join("; ") +
      ". The rest of the view is shown." : "";
    notice.hidden = !hash.odd.length;
  }

  function writeHash() {
    var parts = [];
    FIELDS.concat(["pair"]).forEach(function (key) {
      if (state[key]) parts.push(key + "=" + encodeURIComponent(state[key]));
    });
    if (page) parts.push("page=" + (page + 1));
    var hash = parts.length ? "#" + parts.join("&") : "";
    if (hash !== location.hash) history.replaceState(null, "", location.pathname + location.search + hash);
  }

  function form() { return document.getElementById("controls"); }

  function fromControls(keepPair) {
    var f = form(), next = {};
    FIELDS.forEach(function (key) {
      var input = f.elements[key];
      next[key] = input.type === "checkbox" ? (input.checked ? "1" : "") : input.value.trim();
    });
    next.pair = keepPair ? state.pair : "";
    return next;
  }

  function toControls() {
    var f = form();
    FIELDS.forEach(function (key) {
      var input = f.elements[key];
      if (input.type === "checkbox") input.checked = state[key] === "1";
      else input.value = state[key] || "";
    });
  }

  var pairs = vibePairData.pageData(function (index) { data = index; start(); });
  var chunks = pairs.chunks, loadChunk = pairs.loadChunk;

  function loadAll(progress) {
    var total = Math.ceil(data.ids.length / data.chunk), done = 0, jobs = [];
    for (var n = 0; n < total; n++) {
      jobs.push(loadChunk(n).then(function () { progress(++done, total); }));
    }
    return Promise.all(jobs);
  }

  function textOf(i) { return chunks[Math.floor(i / data.chunk)][i % data.chunk]; }

  function buildHaystack() {
    haystack = data.ids.map(function (_, i) {
      var t = textOf(i);
      return (t.prompt + "\n" + t.a + "\n" + t.b).toLowerCase();
    });
  }

  function matches(i) {
    var s = state, v = s.vibe;
    if (s.pair) return data.ids[i] === s.pair;
    if (v && s.dir) {
      var nu = data.nu[v][i];
      if (s.dir === "none" ? nu !== null : nu !== Number(s.dir)) return false;
    }
    if (s.disagree && !(v ? data.disagree[v][i] > 0 : data.vibes.some(function (x) { return data.disagree[x.name][i] > 0; }))) return false;
    if (s.flip && !(v ? data.flip[v][i] : data.vibes.some(function (x) { return data.flip[x.name][i]; }))) return false;
    if (s.split && data.split[i] !== (s.split === "test" ? 1 : 0)) return false;
    if (s.label && data.label[i] !== LABELS[s.label]) return false;
    if (s.cat && data.category[i] !== data.categories.indexOf(s.cat)) return false;
    if (s.lmin || s.lmax) {
      var ratio = data.chars[i][0] / Math.max(1, data.chars[i][1]);
      if (s.lmin && ratio < Number(s.lmin)) return false;
      if (s.lmax && ratio > Number(s.lmax)) return false;
    }
    if (s.q && haystack && haystack[i].indexOf(s.q.toLowerCase()) < 0) return false;
    return true;
  }

  function sortKey() {
    var v = state.vibe;
    switch (state.sort) {
      case "vibe-a": case "vibe-b":
        if (!v) return null;
        var sign = state.sort === "vibe-a" ? -1 : 1;
        return function (i) { var nu = data.nu[v][i]; return nu === null ? Infinity : sign * nu; };
      case "disagree":
        return function (i) {
          return -(v ? data.disagree[v][i] : data.vibes.reduce(function (s, x) { return s + data.disagree[x.name][i]; }, 0));
        };
      case "length":
        return function (i) { return -Math.abs(data.chars[i][0] - data.chars[i][1]); };
      default:
        return null;
    }
  }

  function selected() {
    var rows = [];
    for (var i = 0; i < data.ids.length; i++) if (matches(i)) rows.push(i);
    var key = sortKey();
    if (key) {
      var keys = {};
      rows.forEach(function (i) { keys[i] = key(i); });
      rows.sort(function (x, y) { return keys[x] - keys[y] || x - y; });
    }
    return rows;
  }

  function status(text) { document.getElementById("status").textContent = text; }

  function pager(total) {
    var pages = Math.max(1, Math.ceil(total / PER_PAGE));
    ["pager-top", "pager-bottom"].forEach(function (id) {
      var nav = document.getElementById(id);
      nav.textContent = "";
      nav.appendChild(el("span", {text: "page " + (page + 1) + " of " + pages}));
      if (page > 0) nav.appendChild(button("← previous", function () { page -= 1; update(false); }));
      if (page < pages - 1) nav.appendChild(button("next →", function () { page += 1; update(false); }));
    });
  }

  function button(text, onclick) {
    var b = el("button", {type: "button", text: text});
    b.addEventListener("click", onclick);
    return b;
  }

  function answer(side, t, name) {
    var box = el("div", {cls: "answer-box"});
    var body = el("div", {cls: "answer", tabindex: "0"});  // it scrolls: the keyboard must reach it
    var raw = state.raw === "1";
    function show() {
      body.textContent = "";
      if (raw) body.appendChild(el("pre", {cls: "raw", text: t[side]}));
      else { body.className = "answer md"; body.innerHTML = t[side + "_html"]; }
      toggle.textContent = raw ? "show rendered" : "show raw";
    }
    var toggle = button("", function () { raw = !raw; body.className = "answer"; show(); });
    toggle.className = "toggle";
    box.appendChild(el("h4", {cls: side === "a" ? "model-a" : "model-b", text: name}, [toggle]));
    // a conversation's turn: what came before it, collapsed, and this turn's tool traffic, as text only
    var before = t[side + "_before"] || [], tools = t[side + "_tools"] || [];
    if (before.length) box.appendChild(messages("earlier turns (" + before.length + " messages)", before, false));
    if (tools.length) box.appendChild(messages("tool calls in turn " + t.turn + " (" + tools.length + ")", tools, true));
    box.appendChild(body);
    show();
    return box;
  }

  function messages(title, rows, open) {
    var box = el("details", {cls: "messages"}, [el("summary", {cls: "small", text: title})]);
    box.open = open;
    rows.forEach(function (row) {
      var kind = row[0].indexOf("tool") === 0 ? "tool" : row[0];
      box.appendChild(el("div", {cls: "message message-" + kind}, [
        el("div", {cls: "small message-label", text: row[0]}), el("pre", {cls: "raw", text: row[1]})]));
    });
    return box;
  }

  function judgeCell(row) {
    // [judge, verdict, A-first verdict, B-first verdict, A-first reason, B-first reason]
    var kind = data.judges[row[0]] || "llm", cell = el("div", {cls: "judge"});
    cell.appendChild(el("span", {cls: "kind kind-" + kind, text: kind}));
    cell.appendChild(el("span", {cls: "mono", text: " " + row[0] + ": " + signed(row[1])}));
    if (row[2] !== null || row[3] !== null || row[4] || row[5]) {
      var flipped = row[2] !== null && row[3] !== null && row[2] !== row[3];
      cell.appendChild(el("span", {cls: "mono small" + (flipped ? " flipped" : ""),
        text: " (" + data.model_a + " shown first " + signed(row[2]) + ", " + data.model_b + " shown first " +
              signed(row[3]) + (flipped ? " ⇄" : "") + ")"}));
      [[row[4], data.model_a], [row[5], data.model_b]].forEach(function (r) {
        if (r[0]) cell.appendChild(el("p", {cls: "reason", text: "“" + r[0] + "” (" + r[1] + " shown first)"}));
      });
    }
    return cell;
  }

  function verdictTable(i, t) {
    var order = data.vibes.map(function (v) { return v.name; });
    if (state.vibe) order = [state.vibe].concat(order.filter(function (n) { return n !== state.vibe; }));
    var body = el("tbody");
    order.forEach(function (name) {
      var judges = el("td"), rows = t.judged[name] || [], m = t.measures[name];
      rows.forEach(function (row) { judges.appendChild(judgeCell(row)); });
      if (m) judges.appendChild(el("div", {cls: "small", text: "measured: " + m[0].toFixed(2) + " vs " + m[1].toFixed(2)}));
      var vibe = el("td", {text: name});
      body.appendChild(el("tr", {cls: name === state.vibe ? "focus" : ""}, [vibe,
        el("td", {cls: "mono", text: signed(data.nu[name][i])}), judges]));
    });
    (t.preferred || []).forEach(function (row) {
      var cell = el("td");
      cell.appendChild(judgeCell([row[0], null, row[1], row[2], row[3], row[4]]));
      body.appendChild(el("tr", {}, [el("td", {text: "which is better"}), el("td", {text: ""}), cell]));
    });
    return el("table", {cls: "verdicts"}, [el("thead", {}, [el("tr", {}, [el("th", {text: "vibe"}),
      el("th", {text: "panel"}), el("th", {text: "judges (+1: " + data.model_a + " higher)"})])]), body]);
  }

  function card(i) {
    var t = textOf(i), label = ["", data.model_a, data.model_b, "tie"][data.label[i]];
    var cat = data.category[i] >= 0 ? " · " + data.categories[data.category[i]] : "";
    var head = el("div", {cls: "small"}, [
      el("a", {href: "#pair=" + encodeURIComponent(data.ids[i]), cls: "mono", title: data.ids[i],
               text: data.ids[i].length > 40 ? data.ids[i].slice(0, 39) + "…" : data.ids[i]}),
      document.createTextNode(" · " + (data.split[i] ? "test" : "train") + " split" + cat +
        " · " + data.chars[i][0] + " vs " + data.chars[i][1] + " characters" +
        (label ? " · " + data.labelled_by + " preferred " + label : " · unlabelled"))]);
    return el("article", {cls: "pair", "data-id": data.ids[i],
                          "data-nu": state.vibe ? String(data.nu[state.vibe][i]) : ""}, [
      head, el("div", {cls: "prompt", tabindex: "0", text: (t.turn ? "turn " + t.turn + ": " : "") + t.prompt}),
      el("div", {cls: "outputs"}, [answer("a", t, data.model_a), answer("b", t, data.model_b)]),
      verdictTable(i, t)]);
  }

  // fromForm: the controls changed; view: only how the pairs are shown did (the selection and, for the raw
  // toggle, the page stay)
  function update(fromForm, view) {
    if (fromForm) {
      state = fromControls(view);
      if (view !== "raw") page = 0;
      document.getElementById("notice").hidden = true;
    }
    writeHash();
    var ticket = ++rendering;
    var ready = state.q && !haystack
      ? loadAll(function (done, total) { status("searching: read " + done + " of " + total + " text files…"); })
          .then(buildHaystack)
      : Promise.resolve();
    ready.then(function () {
      var rows = selected(), pages = Math.max(1, Math.ceil(rows.length / PER_PAGE));
      if (page >= pages) page = pages - 1;
      var shown = rows.slice(page * PER_PAGE, (page + 1) * PER_PAGE);
      var needed = {};
      shown.forEach(function (i) { needed[Math.floor(i / data.chunk)] = true; });
      return Promise.all(Object.keys(needed).map(Number).map(loadChunk)).then(function () {
        if (ticket !== rendering) return;
        var list = document.getElementById("pairs");
        list.textContent = "";
        shown.forEach(function (i) { list.appendChild(card(i)); });
        var note = (state.sort === "vibe-a" || state.sort === "vibe-b") && !state.vibe ? " (choose a vibe to sort by its verdict)" : "";
        status(rows.length + " of " + data.ids.length + " pairs" + note);
        document.getElementById("pairs").dataset.count = String(rows.length);
        pager(rows.length);
        document.body.dataset.ready = "1";
      });
    }).catch(function (err) { status("could not load the pairs: " + err.message); });
  }

  function fill(select, values, labels) {
    values.forEach(function (value, n) { select.appendChild(el("option", {value: value, text: labels[n]})); });
  }

  function start() {
    var f = form();
    fill(f.elements.vibe, data.vibes.map(function (v) { return v.name; }),
         data.vibes.map(function (v) { return v.name + (v.kept ? "" : " (dropped)"); }));
    fill(f.elements.cat, data.categories, data.categories);
    if (!data.categories.length) f.querySelector(".category").hidden = true;
    fromLink();
    toControls();
    var timer = null;
    f.addEventListener("submit", function (event) { event.preventDefault(); });
    f.addEventListener("change", function (event) {
      var name = event.target.name;
      update(true, VIEW.indexOf(name) >= 0 ? name : "");
    });
    f.elements.q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { update(true); }, 300);
    });
    document.getElementById("reset").addEventListener("click", function () {
      state = {}; page = 0; toControls(); document.getElementById("notice").hidden = true; update(false);
    });
    window.addEventListener("hashchange", function () { fromLink(); toControls(); update(false); });
    update(false);
  }
})();
