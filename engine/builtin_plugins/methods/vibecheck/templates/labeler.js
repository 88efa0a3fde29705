/* The label view: a person labels a seeded sample of the explorer's pairs, blind, by keyboard, and downloads the
   labels as a file `validation: files:` reads (Inspect Scout's id,label_<vibe>,split shape, with who and when).
   It reads the explorer's own data scripts (index.js and chunk-N.js call vibeExplorer.index / .chunk), so it needs
   no server. Answers are shown as the report sanitized them; everything else is set as text. */
(function () {
  "use strict";
  var WORDS = {a: "a", b: "b", neither: "neither"};
  var data = null, store = null, storeKey = "", card = null;

  var el = vibePairData.el;

  // mulberry32: a small seeded generator, so a sample is the same for everyone who draws it with one seed
  function generator(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) | 0;
      var t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function shuffled(list, random) {
    var out = list.slice();
    for (var i = out.length - 1; i > 0; i--) {
      var j = Math.floor(random() * (i + 1)), keep = out[i];
      out[i] = out[j];
      out[j] = keep;
    }
    return out;
  }

  // `size` pairs stratified by the run's split and the panel's verdict on the first vibe asked, each stratum in
  // proportion to its share of the pairs (largest remainders), so the sample stays a fair one of all pairs; each
  // pair shown in a seeded random order, and every other unit of the shuffled sample a test label (the rest dev):
  // a unit is a pair, or a conversation where pairs are its turns (`data.unit`), whose turns share one side
  function draw(size, seed, vibe) {
    var random = generator(seed), groups = {};
    data.ids.forEach(function (_, i) {
      var key = data.split[i] + ":" + String(data.nu[vibe][i]);
      (groups[key] = groups[key] || []).push(i);
    });
    var keys = Object.keys(groups).sort(), total = data.ids.length, n = Math.min(size, total);
    var quota = keys.map(function (k) { return Math.floor(n * groups[k].length / total); });
    var left = n - quota.reduce(function (s, q) { return s + q; }, 0);
    keys.map(function (k, j) { return [n * groups[k].length / total - quota[j], j]; })
      .sort(function (x, y) { return y[0] - x[0] || x[1] - y[1]; })
      .slice(0, left).forEach(function (r) { quota[r[1]] += 1; });
    var chosen = [], sides = {}, units = 0;
    keys.forEach(function (k, j) { chosen = chosen.concat(shuffled(groups[k], random).slice(0, quota[j])); });
    return shuffled(chosen, random).map(function (i) {
      var unit = data.unit ? data.unit[i] : i;
      if (!(unit in sides)) { sides[unit] = units++ % 2 ? "test" : "dev"; }
      return {i: i, flip: random() < 0.5, split: sides[unit]};
    });
  }

  // `size` more pairs, none already drawn, where the learned judge of `vibe` is least sure (its odds nearest
  // even; ties in a seeded order): labels that teach it most. They are no random sample, so they are dev labels
  // marked "uncertain", which teach the judge and which no estimate reads; none from a conversation that holds a
  // test label, which the judge must not have learned from
  function drawUnsure(size, seed, vibe) {
    var taken = {}, tested = {}, random = generator(seed + 7919), unsure = data.unsure[vibe];
    store.sample.forEach(function (s) {
      taken[s.i] = true;
      if (s.split === "test" && data.unit) { tested[data.unit[s.i]] = true; }
    });
    var open = shuffled(data.ids.map(function (_, i) { return i; }), random).filter(function (i) {
      return !taken[i] && unsure[i] !== null && !(data.unit && tested[data.unit[i]]);
    });
    open.sort(function (x, y) { return unsure[x] - unsure[y]; });  // stable: the seeded order breaks ties
    return open.slice(0, size).map(function (i) {
      return {i: i, flip: random() < 0.5, split: "dev", stratum: "uncertain"};
    });
  }

  function save() {
    try { localStorage.setItem(storeKey, JSON.stringify(store)); } catch (err) { /* private mode: kept in memory */ }
  }

  function load() {
    try { return JSON.parse(localStorage.getItem(storeKey) || "null"); } catch (err) { return null; }
  }

  var pairs = vibePairData.pageData(function (index) { data = index; start(); });
  var chunks = pairs.chunks, loadChunk = pairs.loadChunk;

  function status(text) { document.getElementById("label-status").textContent = text; }

  function vibeOf(name) { return data.vibes.filter(function (v) { return v.name === name; })[0]; }

  // the next (pair, vibe) nobody has labelled, in sample order; null when every one is
  function next() {
    for (var k = 0; k < store.sample.length; k++) {
      var id = data.ids[store.sample[k].i], given = store.labels[id] || {};
      for (var v = 0; v < store.vibes.length; v++) if (!given[store.vibes[v]]) return {k: k, vibe: store.vibes[v]};
    }
    return null;
  }

  function side(word, flip) {  // the answer shown first or second, as the model's side (a or b)
    if (word === "neither") return "neither";
    return (word === "1") !== flip ? "a" : "b";
  }

  function shown(verdict, flip) {  // a verdict (+1: A higher) as the person saw the answers
    if (verdict === null || verdict === undefined) return "no verdict";
    if (verdict === 0) return "neither";
    return "answer " + ((verdict > 0) !== flip ? "1" : "2") + " higher";
  }

  function render() {
    var todo = next(), list = document.getElementById("label-card");
    list.textContent = "";
    var done = Object.keys(store.labels).length;
    document.getElementById("download").disabled = !done;
    if (!todo) {
      status("All " + store.sample.length + " pairs labelled. Download the file, or draw another sample.");
      card = null;
      return;
    }
    var s = store.sample[todo.k], i = s.i, vibe = vibeOf(todo.vibe);
    loadChunk(Math.floor(i / data.chunk)).then(function (rows) {
      var t = rows[i % data.chunk], first = s.flip ? "b" : "a", second = s.flip ? "a" : "b";
      status("Pair " + (todo.k + 1) + " of " + store.sample.length + (s.stratum ? " (chosen to teach the judge)" : "") +
             " · vibe “" + vibe.name + "” · keys: 1, 2, 0 (neither), ← (back)");
      card = {k: todo.k, vibe: todo.vibe};
      var answers = [first, second].map(function (key, n) {
        var body = el("div", {cls: "answer md", tabindex: "0"});  // it scrolls: the keyboard must reach it
        body.innerHTML = t[key + "_html"];
        return el("div", {cls: "answer-box"}, [el("h4", {text: "Answer " + (n + 1)}), body]);
      });
      list.appendChild(el("article", {cls: "pair labelling", "data-id": data.ids[i], "data-k": String(todo.k),
                                      "data-vibe": vibe.name}, [
        el("div", {cls: "prompt", tabindex: "0", text: (t.turn ? "turn " + t.turn + ": " : "") + t.prompt}),
        el("div", {cls: "outputs"}, answers),
        el("p", {}, [el("b", {text: vibe.name + ": "}), el("span", {cls: "low", text: vibe.low}),
                     document.createTextNode(" → "), el("span", {cls: "high", text: vibe.high})]),
        el("div", {cls: "label-buttons"}, [["1", "Answer 1 sits higher"], ["2", "Answer 2 sits higher"],
                                          ["0", "neither"]].map(function (b) {
          var button = el("button", {type: "button", text: "[" + b[0] + "] " + b[1], "data-key": b[0]});
          button.addEventListener("click", function () { give(b[0]); });
          return button;
        }))]));
    });
  }

  function give(key) {
    if (!card) return;
    var s = store.sample[card.k], id = data.ids[s.i];
    var word = key === "0" ? "neither" : side(key, s.flip);
    store.labels[id] = store.labels[id] || {};
    store.labels[id][card.vibe] = word;
    store.labels[id]["@at"] = new Date().toISOString();
    store.labels[id]["@split"] = s.split;
    store.labels[id]["@stratum"] = s.stratum || "random";
    save();
    // the panel's verdict is shown only now, once the person has given theirs
    document.getElementById("reveal").textContent = "Pair " + (card.k + 1) + ", " + card.vibe + ": you said " +
      (key === "0" ? "neither" : "answer " + key + " higher") + "; the panel said " +
      shown(data.nu[card.vibe][s.i], s.flip) + ".";
    render();
  }

  function back() {  // the last labelled pair of the sample loses its labels, to be given again
    for (var k = store.sample.length - 1; k >= 0; k--) {
      var id = data.ids[store.sample[k].i];
      if (store.labels[id]) {
        delete store.labels[id];
        save();
        // the panel's verdict on the pair comes off the screen too: it is about to be labelled again, blind
        document.getElementById("reveal").textContent = "Pair " + (k + 1) + ": its labels are undone; label it again.";
        render();
        return;
      }
    }
  }

  function csvCell(text) {
    text = String(text);
    return /[",\n\r]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  function download() {
    var vibes = store.vibes, lines = [["id"].concat(vibes.map(function (v) { return "label_" + v; }),
                                                    ["split", "labeller", "labelled_at", "run", "model_a", "model_b",
                                                     "stratum"]).join(",")];
    store.sample.forEach(function (s) {
      var id = data.ids[s.i], given = store.labels[id];
      if (!given) return;
      lines.push([id].concat(vibes.map(function (v) { return WORDS[given[v]] || ""; }),
                             [given["@split"], store.labeller, given["@at"], data.run, data.model_a,
                              data.model_b, given["@stratum"] || "random"]).map(csvCell).join(","));
    });
    var blob = new Blob([lines.join("\n") + "\n"], {type: "text/csv"});
    var link = el("a", {href: URL.createObjectURL(blob),
                        download: "labels-" + data.analysis + "-" + (store.labeller || "someone") + ".csv"});
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  function start() {
    var f = document.getElementById("label-setup");
    var boxes = f.querySelector(".vibes");
    data.vibes.forEach(function (v) {
      var box = el("input", {type: "checkbox", name: "vibe", value: v.name});
      box.checked = v.kept || !data.vibes.some(function (x) { return x.kept; });
      boxes.appendChild(el("label", {}, [box, document.createTextNode(" " + v.name)]));
    });
    storeKey = "vibe-labels:" + data.run + ":" + data.analysis + ":" + data.model_a + ":" + data.model_b;
    store = load();
    if (store) {
      f.elements.labeller.value = store.labeller;
      f.elements.size.value = store.size;
      f.elements.seed.value = store.seed;
    }
    f.addEventListener("submit", function (event) {
      event.preventDefault();
      var vibes = Array.from(f.querySelectorAll("input[name=vibe]:checked")).map(function (b) { return b.value; });
      if (!vibes.length) { status("Choose at least one vibe to label."); return; }
      var size = Math.max(1, Number(f.elements.size.value) || 20), seed = Number(f.elements.seed.value) || 0;
      store = {labeller: f.elements.labeller.value.trim() || "someone", size: size, seed: seed, vibes: vibes,
               sample: draw(size, seed, vibes[0]), labels: {}};
      save();
      document.getElementById("reveal").textContent = "";
      render();
    });
    document.getElementById("download").addEventListener("click", download);
    var teach = document.getElementById("teach"), taught = Object.keys(data.unsure || {});
    if (taught.length) {
      teach.hidden = false;
      teach.addEventListener("click", function () {
        if (!store) { status("Draw the sample and label it first: the estimates need it."); return; }
        var vibe = store.vibes.filter(function (v) { return taught.indexOf(v) >= 0; })[0];
        if (!vibe) { status("No vibe you are labelling has a learned judge to teach."); return; }
        var more = drawUnsure(store.size, store.seed, vibe);
        store.sample = store.sample.concat(more);
        save();
        status("Added " + more.length + " pairs where the learned judge of “" + vibe + "” is least sure.");
        render();
      });
    }
    document.addEventListener("keydown", function (event) {
      if (event.target && /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName)) return;
      if (event.key === "1" || event.key === "2" || event.key === "0") { event.preventDefault(); give(event.key); }
      else if (event.key === "ArrowLeft") { event.preventDefault(); back(); }
    });
    if (store) render(); else status("Choose who you are, how many pairs and which vibes, then start.");
    document.body.dataset.ready = "1";
  }
})();
