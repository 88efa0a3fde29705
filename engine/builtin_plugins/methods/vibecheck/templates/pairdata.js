/* What the explorer and the label view share: building elements, and reading a comparison's index and text
   chunks. The data files beside a page are scripts (a browser runs scripts from file://, so no server is
   needed); each chunk hands its rows to vibeExplorer.chunk gzipped in base64, and the browser inflates them with
   its own DecompressionStream. */
(function () {
  "use strict";

  // an element with attributes (text: its text, set as text; cls: its class) and children
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function inflate(text) {
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // A page's data: installs the hooks the data scripts call (vibeExplorer.index and vibeExplorer.chunk) and
  // returns the chunks they hand over and loadChunk(n), chunk n's rows, its script added to the page once. The
  // index arrives with one character per pair for each column on disk, decoded here into arrays; `start(index)`
  // runs once the page has loaded.
  function pageData(start) {
    var chunks = {}, waiting = {}, base = "";
    var verdict = {"+": 1, "-": -1, "0": 0, ".": null};
    window.vibeExplorer = {
      index: function (payload) {
        payload.split = Array.from(payload.split, Number);
        payload.label = Array.from(payload.label, Number);
        payload.vibes.forEach(function (v) {
          payload.nu[v.name] = Array.from(payload.nu[v.name], function (c) { return verdict[c]; });
          payload.disagree[v.name] = Array.from(payload.disagree[v.name], Number);
          payload.flip[v.name] = Array.from(payload.flip[v.name], Number);
        });
        base = document.currentScript.src.replace(/index\.js(\?.*)?$/, "");
        var begin = function () { start(payload); };
        if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", begin);
        else begin();
      },
      chunk: function (n, payload) { chunks[n] = typeof payload === "string" ? inflate(payload) : payload; }
    };
    function loadChunk(n) {
      if (chunks[n] && !chunks[n].then) return Promise.resolve(chunks[n]);
      if (!waiting[n]) {
        waiting[n] = new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = base + "chunk-" + n + ".js";
          script.charset = "utf-8";
          script.onload = function () {
            Promise.resolve(chunks[n]).then(function (rows) { chunks[n] = rows; resolve(rows); }, reject);
          };
          script.onerror = function () { reject(new Error("could not read " + script.src)); };
          document.head.appendChild(script);
        });
      }
      return waiting[n];
    }
    return {chunks: chunks, loadChunk: loadChunk};
  }

  window.vibePairData = {el: el, pageData: pageData};
})();
